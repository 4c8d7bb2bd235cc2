/* The host's start-up and teardown, shared by every front end.  */
#include <config.h>

#include "tui/host.h"

#include <stdlib.h>
#include <string.h>

#include "core/permit.h"
#include "tui/front.h"

extern char **environ;

int
host_open (struct host *h, unsigned flags, const char *dir,
           struct cr_error **err)
{
  memset (h, 0, sizeof *h);
  h->flags = flags;
  h->workspace = (flags & HOST_IN_DIR) ? front_workspace_dir (dir, err)
                                       : front_workspace (err);
  if (h->workspace == NULL)
    return -1;
  if (config_load (&h->cfg, NULL, h->workspace, err) < 0)
    return -1;
  h->rules = permit_rules (h->cfg, err);
  return h->rules != NULL ? 0 : -1;
}

int
host_start (struct host *h, struct cr_error **err)
{
  h->backend = front_backend (h->cfg, &h->refusal);
  if (h->backend == NULL && !(h->flags & HOST_KEEP_REFUSED))
    return HOST_REFUSED;
  h->loop = loop_new (err);
  if (h->loop == NULL)
    return -1;
  /* Without a backend (HOST_KEEP_REFUSED), the front end refuses every
   * call itself, quoting h->refusal.  */
  h->sup = supervisor_new (h->loop, h->backend, h->cfg, h->workspace, environ);
  h->journal = front_journal ();
  if (!(h->flags & HOST_RETAIN_LATER))
    host_retain (h);
  supervisor_set_journal (h->sup, h->journal);
  supervisor_set_process_isolation (
      h->sup, front_backend_process_isolation (h->cfg, h->backend));
  return 0;
}

void
host_retain (struct host *h)
{
  front_journal_retain (h->cfg, h->journal);
}

int
host_watch_signals (struct host *h, const int *signals, size_t n,
                    loop_signal_fn fn, void *data, struct cr_error **err)
{
  for (size_t i = 0; i < n; i++)
    if (loop_add_signal (h->loop, signals[i], fn, data, err) < 0)
      return -1;
  return 0;
}

void
host_close (struct host *h)
{
  supervisor_free (h->sup);
  journal_close (h->journal);
  sandbox_backend_free (h->backend);
  loop_free (h->loop);
  rules_free (h->rules);
  config_free (h->cfg);
  free (h->refusal);
  free (h->workspace);
  memset (h, 0, sizeof *h);
}
