/* The host's end of the status channel (broker/status.h), as every backend
 * whose scope keeper speaks it reads and writes it: the compatibility
 * backend's forked keeper and the sandbox broker alike.  */
#ifndef CRUCIBLE_SANDBOX_CHANNEL_H
#define CRUCIBLE_SANDBOX_CHANNEL_H

#include <stdbool.h>

#include "broker/status.h"
#include "lib/error.h"
#include "sandbox/backend.h"

enum channel_read
{
  CHANNEL_NONE,    /* nothing waiting */
  CHANNEL_MESSAGE, /* *msg holds one well-formed record */
  CHANNEL_ENDED    /* the keeper's end closed (or reset) */
};

/* Read one record without waiting.  A malformed record or a read error is
 * -1 with *err naming who (the keeper's name in messages) and what.  */
int channel_read (int fd, const char *who, struct broker_msg *msg,
                  struct cr_error **err);

/* The event a record stands for; false for one that reports nothing to the
 * supervisor (STARTED).  An unknown type is -1 with *err.  */
int channel_event (const struct broker_msg *msg, const char *who,
                   struct sandbox_event *ev, struct cr_error **err);

/* Ask the keeper to end the scope with signo.  -1 with errno set when the
 * record could not be sent.  */
int channel_send_stop (int fd, int signo);

/* Tell a keeper started with --await that the command may run, handing it
 * the workload's output, its environment and its last arguments
 * (BROKER_MSG_GO, broker/status.h).  -1 with errno set when the record
 * could not be sent (EPIPE: the keeper has gone).  */
int channel_send_go (int fd, int output_fd, int env_fd, int args_fd);

/* The same for a workload with standard streams of its own: output_fd is
 * its stdout alone, input_fd its stdin and error_fd its stderr.  */
int channel_send_go_stdio (int fd, int output_fd, int env_fd, int args_fd,
                           int input_fd, int error_fd);

#endif
