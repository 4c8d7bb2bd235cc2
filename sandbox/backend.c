/* What every backend shares: feature names, the policy check, the vtable
 * calls.  */
#include <config.h>

#include "sandbox/backend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static const char *const sandbox_feature_names[SANDBOX_FEATURE_COUNT] = {
  [SANDBOX_FILESYSTEM] = "filesystem",
  [SANDBOX_NETWORK_DENY] = "network_deny",
  [SANDBOX_NETWORK_ALLOWLIST] = "network_allowlist",
  [SANDBOX_DESCRIPTOR_ISOLATION] = "descriptor_isolation",
  [SANDBOX_PROCESS_ISOLATION] = "process_isolation",
  [SANDBOX_KERNEL_SURFACE] = "kernel_surface",
  [SANDBOX_PRIVILEGE_ISOLATION] = "privilege_isolation",
  [SANDBOX_MATERIALIZATION] = "materialization",
  [SANDBOX_CPU_LIMIT] = "cpu_limit",
  [SANDBOX_MEMORY_LIMIT] = "memory_limit",
  [SANDBOX_DISK_LIMIT] = "disk_limit",
  [SANDBOX_PROCESS_LIMIT] = "process_limit",
  [SANDBOX_OPEN_FILE_LIMIT] = "open_file_limit",
  [SANDBOX_COMMAND_TIME_LIMIT] = "command_time_limit",
  [SANDBOX_SESSION_TIME_LIMIT] = "session_time_limit",
  [SANDBOX_OUTBOUND_BYTE_LIMIT] = "outbound_byte_limit",
  [SANDBOX_OUTPUT_LIMIT] = "output_limit",
  [SANDBOX_CONCURRENCY_LIMIT] = "concurrency_limit",
  [SANDBOX_COST_LIMIT] = "cost_limit",
  [SANDBOX_PTY] = "pty",
  [SANDBOX_FILE_OPERATIONS] = "file_operations",
  [SANDBOX_PERSISTENCE] = "persistence",
  [SANDBOX_SNAPSHOT] = "snapshot",
  [SANDBOX_RESUME] = "resume",
  [SANDBOX_AUDIT] = "audit",
  [SANDBOX_USAGE] = "usage",
};

const char *
sandbox_feature_name (enum sandbox_feature f)
{
  if ((unsigned) f >= SANDBOX_FEATURE_COUNT)
    return "unknown";
  return sandbox_feature_names[f];
}

const char *
sandbox_support_name (enum sandbox_support s)
{
  switch (s)
    {
    case SANDBOX_ENFORCED:
      return "enforced";
    case SANDBOX_OBSERVED:
      return "observed";
    case SANDBOX_UNSUPPORTED:
      break;
    }
  return "unsupported";
}

int
sandbox_refuse (struct cr_error **err, enum sandbox_feature feature,
                const char *backend_id)
{
  cr_error_set (err, 0,
                "the policy requires %s, which the %s backend does not enforce",
                sandbox_feature_name (feature), backend_id);
  if (err != NULL && *err != NULL)
    (*err)->refused_feature = (int) feature;
  return -1;
}

int
sandbox_check_policy (const struct sandbox_claims *claims,
                      const struct sandbox_policy *policy,
                      const char *backend_id, struct cr_error **err)
{
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (policy->requires[f] && claims->support[f] == SANDBOX_UNSUPPORTED)
      return sandbox_refuse (err, (enum sandbox_feature) f, backend_id);
  /* A root asked for that nothing projects is refused by its name, never
   * accepted and silently not applied.  */
  if (policy->enabled && policy->unheld_root != NULL)
    {
      cr_error_set (err, 0, "%s", policy->unheld_root);
      if (err != NULL && *err != NULL)
        (*err)->refused_feature = SANDBOX_FILESYSTEM;
      return -1;
    }
  /* A stated ceiling asks for its feature as surely as requires[] does.  */
  if (policy->memory_bytes != 0
      && claims->support[SANDBOX_MEMORY_LIMIT] == SANDBOX_UNSUPPORTED)
    return sandbox_refuse (err, SANDBOX_MEMORY_LIMIT, backend_id);
  if (policy->processes != 0
      && claims->support[SANDBOX_PROCESS_LIMIT] == SANDBOX_UNSUPPORTED)
    return sandbox_refuse (err, SANDBOX_PROCESS_LIMIT, backend_id);
  return 0;
}

void
sandbox_probe_clear (struct sandbox_probe *p)
{
  free (p->reason);
  free (p->version);
  p->reason = p->version = NULL;
}

const char *
sandbox_backend_id (const struct sandbox_backend *b)
{
  return b->ops->id != NULL ? b->ops->id : "unnamed";
}

void
sandbox_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  b->ops->claims (b, out);
}

int
sandbox_probe (struct sandbox_backend *b, struct sandbox_probe *out,
               struct cr_error **err)
{
  return b->ops->probe (b, out, err);
}

int
sandbox_probe_starting (struct sandbox_backend *b, struct sandbox_probe *out,
                        struct cr_error **err)
{
  if (b->ops->probe_starting != NULL)
    return b->ops->probe_starting (b, out, err);
  return b->ops->probe (b, out, err);
}

/* Fill id with SANDBOX_ID_LEN random hex digits.  getrandom blocks only
 * before the kernel's pool is first ready; a failure falls back on the
 * clock and the pid, which still tells this run's sandboxes apart.  */
static void
sandbox_new_id (char id[SANDBOX_ID_LEN + 1])
{
  uint64_t v = 0;
  size_t got = 0;

  while (got < sizeof v)
    {
      ssize_t n = getrandom ((char *) &v + got, sizeof v - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          struct timespec ts;
          clock_gettime (CLOCK_REALTIME, &ts);
          v ^= ((uint64_t) ts.tv_sec << 32) ^ (uint64_t) ts.tv_nsec
               ^ ((uint64_t) getpid () << 48);
          break;
        }
      got += (size_t) n;
    }
  snprintf (id, SANDBOX_ID_LEN + 1, "%016" PRIx64, v);
}

int
sandbox_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
                 struct sandbox_session **out, struct cr_error **err)
{
  if (b->ops->prepare (b, policy, out, err) < 0)
    return -1;
  sandbox_new_id ((*out)->id);
  return 0;
}

int
sandbox_start (struct sandbox_session *s, const struct sandbox_command *cmd,
               struct cr_error **err)
{
  return s->ops->start (s, cmd, err);
}

int
sandbox_status_fd (const struct sandbox_session *s)
{
  return s->ops->status_fd (s);
}

int
sandbox_next_event (struct sandbox_session *s, struct sandbox_event *ev,
                    struct cr_error **err)
{
  /* A backend that leaves a field alone leaves it empty, message too.  */
  memset (ev, 0, sizeof *ev);
  return s->ops->next_event (s, ev, err);
}

int
sandbox_stop (struct sandbox_session *s, int signo, struct cr_error **err)
{
  return s->ops->stop (s, signo, err);
}

int
sandbox_dispose (struct sandbox_session *s, struct sandbox_usage *usage,
                 struct cr_error **err)
{
  return s->ops->dispose (s, usage, err);
}

int
sandbox_dispose_leaving (struct sandbox_session *s, struct sandbox_usage *usage,
                         struct cr_error **err)
{
  if (s->ops->dispose_leaving != NULL)
    return s->ops->dispose_leaving (s, usage, err);
  return s->ops->dispose (s, usage, err);
}

void
sandbox_abandon (struct sandbox_session *s)
{
  s->ops->abandon (s);
}

bool
sandbox_keeps_writes (const struct sandbox_session *s)
{
  return s->ops->publish != NULL;
}

int
sandbox_publish (struct sandbox_session *s, const char *call_id,
                 struct sandbox_publication *out, struct cr_error **err)
{
  memset (out, 0, sizeof *out);
  if (s->ops->publish == NULL)
    return 0;
  return s->ops->publish (s, call_id, out, err);
}

void
sandbox_publish_tidy (struct sandbox_session *s)
{
  if (s->ops->publish_tidy != NULL)
    s->ops->publish_tidy (s);
}

void
sandbox_publication_clear (struct sandbox_publication *p)
{
  free (p->note);
  memset (p, 0, sizeof *p);
}

int
sandbox_network_fd (const struct sandbox_session *s)
{
  if (s->ops->network_fd == NULL)
    return -1;
  return s->ops->network_fd (s);
}

int
sandbox_prepare_ahead (struct sandbox_session *s, const char *cwd,
                       const char *shell, struct cr_error **err)
{
  if (s->ops->prepare_ahead == NULL)
    return 0;
  return s->ops->prepare_ahead (s, cwd, shell, err) < 0 ? -1 : 1;
}

bool
sandbox_ahead_current (const struct sandbox_session *s, const char *cwd,
                       const char *shell)
{
  return s->ops->ahead_current != NULL && s->ops->ahead_current (s, cwd, shell);
}

int
sandbox_publish_inline (struct sandbox_session *s,
                        struct sandbox_publication *out)
{
  memset (out, 0, sizeof *out);
  if (s->ops->publish == NULL || s->ops->publish_inline == NULL)
    return 0;
  return s->ops->publish_inline (s, out) == 1 ? 1 : 0;
}

void
sandbox_backend_free (struct sandbox_backend *b)
{
  if (b != NULL)
    b->ops->free (b);
}
