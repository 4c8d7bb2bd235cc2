/* The host's start-up, the same for every front end (the full-screen
 * session, `crucible session`, `crucible run`, `crucible mcp`): the
 * workspace, its configuration and rules, then the backend, the loop, the
 * supervisor and the journal.  struct host owns all it starts, and
 * host_close ends all of it.  */
#ifndef CRUCIBLE_TUI_HOST_H
#define CRUCIBLE_TUI_HOST_H

#include <stddef.h>

#include "core/config.h"
#include "core/journal.h"
#include "core/loop.h"
#include "core/rules.h"
#include "core/supervisor.h"
#include "lib/error.h"
#include "sandbox/backend.h"

/* How a front end starts.  */
enum host_flags
{
  /* The workspace is the DIR given to host_open (the current directory
   * when NULL), made absolute; without this flag it is the current
   * directory, as crucible run and crucible mcp take it.  */
  HOST_IN_DIR = 1 << 0,
  /* With no backend to be had, start all the same (every call is then
   * refused, quoting host.refusal); without this flag host_start stops
   * there and returns HOST_REFUSED.  */
  HOST_KEEP_REFUSED = 1 << 1,
  /* host_start opens the journal but leaves its retention to the front
   * end (host_retain), which runs it once the first command has started:
   * crucible run, whose one command would otherwise wait on it.  */
  HOST_RETAIN_LATER = 1 << 2,
};

/* What host_start returns when confinement is on and cannot be had.  */
#define HOST_REFUSED 1

struct host
{
  unsigned flags;
  char *workspace;
  struct config *cfg;
  struct rules *rules;
  struct sandbox_backend *backend; /* NULL while refused */
  char *refusal;                   /* why no command may run here, or NULL */
  struct loop *loop;
  struct supervisor *sup;
  struct journal *journal; /* NULL when the facts cannot be recorded */
};

/* Find the workspace (see HOST_IN_DIR), load its configuration and make
 * its rules.  On failure returns -1 with *err set; host_close frees what
 * was made.  */
int host_open (struct host *h, unsigned flags, const char *dir,
               struct cr_error **err);

/* Choose the backend the configuration asks for, then make the loop, the
 * supervisor over that backend and the journal it records to.  Returns 0,
 * HOST_REFUSED with h->refusal set (and nothing started) when the backend
 * cannot be had and HOST_KEEP_REFUSED was not given, or -1 with *err
 * set.  */
int host_start (struct host *h, struct cr_error **err);

/* Apply the configuration's journal retention (journal.keepDays) to the
 * directory of h's journal.  host_start does so itself unless
 * HOST_RETAIN_LATER was given.  */
void host_retain (struct host *h);

/* Send each of the n signals to fn, through the loop.  */
int host_watch_signals (struct host *h, const int *signals, size_t n,
                        loop_signal_fn fn, void *data, struct cr_error **err);

/* End everything host_open and host_start made, in the order that is safe:
 * the supervisor (abandoning what still runs), the journal, the backend,
 * the loop, the rules, the configuration.  The front end frees what it
 * made over these (its session, its timers) first.  */
void host_close (struct host *h);

#endif
