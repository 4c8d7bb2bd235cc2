/* The host's end of a confined command's net channel: the broker, inside
 * the command's network namespace, accepts each connection the workload
 * makes to the proxy's inside port and sends the accepted descriptor
 * here, one per SOCK_SEQPACKET record (SCM_RIGHTS, one byte of data).
 * What arrives is checked before the proxy sees it: a connected TCP
 * stream over IPv4 or IPv6, and nothing else.  The broker is inside the
 * boundary as far as trust goes (the workload cannot reach its channel,
 * but a record is still read as a stranger's), so anything else is
 * closed and refused, saying what it was.  */
#ifndef CRUCIBLE_SANDBOX_NETCHAN_H
#define CRUCIBLE_SANDBOX_NETCHAN_H

#include "broker/status.h"
#include "lib/error.h"
#include "sandbox/backend.h"

/* The byte each record carries: one accepted connection.  */
#define NETCHAN_CONNECTION BROKER_NET_CONNECTION

/* The most descriptors one record may arrive with before the excess is
 * the kernel's to drop (MSG_CTRUNC): what fits is closed here.  */
#define NETCHAN_MAX_FDS 8

enum netchan_take
{
  NETCHAN_NONE = 0, /* nothing waiting */
  NETCHAN_FD = 1,   /* *fd_out: a checked connection, close-on-exec and
                       non-blocking; the caller owns it */
  NETCHAN_ENDED = 2 /* the broker's end is closed: nothing more comes */
};

/* One record from the broker: a proxy connection (kind
 * NETCHAN_CONNECTION, fd set), or one of status.h's sandbox.network.ports
 * records (kind BROKER_NET_*, port and id as sent; fd set for CONNECTED
 * and ACCEPTED, -1 otherwise).  Only the shape and the descriptor are
 * checked here: whether the port and id are ones the host asked about is
 * the caller's to check (core/portfwd.c).  */
struct netchan_record
{
  int kind;
  unsigned port;
  uint32_t id;
  int fd; /* checked like netchan_take's, owned by the caller; or -1 */
};

/* Read one record of any kind from fd without waiting: NETCHAN_NONE,
 * NETCHAN_FD (*rec filled), NETCHAN_ENDED, or -1 with *err as
 * netchan_take.  */
int netchan_read (int fd, struct netchan_record *rec, struct cr_error **err);

/* Send one request (BROKER_NET_CONNECT, _FORWARD, _UNFORWARD) to the
 * broker without waiting.  */
int netchan_send (int fd, int kind, unsigned port, uint32_t id,
                  struct cr_error **err);

/* Read one record from fd without waiting.  -1 with *err when the record
 * was refused (every descriptor it carried closed; the channel is still
 * good for the next) or the read failed.  */
int netchan_take (int fd, int *fd_out, struct cr_error **err);

/* The same on a session's net channel (sandbox_network_fd); NETCHAN_ENDED
 * when it has none.  */
int sandbox_network_take (struct sandbox_session *s, int *fd_out,
                          struct cr_error **err);

#endif
