/* The conformance audit: one policy per feature, offered to prepare only,
 * and the claim and the answer read together.  */
#include <config.h>

#include "sandbox/conformance.h"

#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"

/* Ceiling values for the policies that state one: small, ordinary numbers,
 * since only whether a ceiling can be held is asked, not whether this one
 * suits a command.  */
#define CONFORMANCE_COMMAND_SECONDS 60.0
#define CONFORMANCE_OUTPUT_BYTES ((uint64_t) 1 << 20)
#define CONFORMANCE_CONCURRENCY 1

/* The most of a probe's reason for not confining that an audit keeps: the
 * record of deliberately unconfined execution carries a bounded reason.  */
#define CONFORMANCE_REASON_BYTES 256

/* The family of every feature (spec, "Conformance"): what a backend is
 * chosen by.  */
static const enum conformance_family conformance_families[SANDBOX_FEATURE_COUNT]
    = {
        [SANDBOX_FILESYSTEM] = CONFORMANCE_ISOLATION,
        [SANDBOX_NETWORK_DENY] = CONFORMANCE_NETWORK,
        [SANDBOX_NETWORK_ALLOWLIST] = CONFORMANCE_NETWORK,
        [SANDBOX_DESCRIPTOR_ISOLATION] = CONFORMANCE_ISOLATION,
        [SANDBOX_PROCESS_ISOLATION] = CONFORMANCE_ISOLATION,
        [SANDBOX_KERNEL_SURFACE] = CONFORMANCE_ISOLATION,
        [SANDBOX_PRIVILEGE_ISOLATION] = CONFORMANCE_ISOLATION,
        [SANDBOX_MATERIALIZATION] = CONFORMANCE_MATERIALIZATION,
        [SANDBOX_CPU_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_MEMORY_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_DISK_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_PROCESS_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_OPEN_FILE_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_COMMAND_TIME_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_SESSION_TIME_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_OUTBOUND_BYTE_LIMIT] = CONFORMANCE_NETWORK,
        [SANDBOX_OUTPUT_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_CONCURRENCY_LIMIT] = CONFORMANCE_RESOURCES,
        [SANDBOX_COST_LIMIT] = CONFORMANCE_COST,
        [SANDBOX_PTY] = CONFORMANCE_TERMINAL,
        [SANDBOX_FILE_OPERATIONS] = CONFORMANCE_MATERIALIZATION,
        [SANDBOX_PERSISTENCE] = CONFORMANCE_PERSISTENCE,
        [SANDBOX_SNAPSHOT] = CONFORMANCE_PERSISTENCE,
        [SANDBOX_RESUME] = CONFORMANCE_PERSISTENCE,
        [SANDBOX_AUDIT] = CONFORMANCE_ACCOUNTING,
        [SANDBOX_USAGE] = CONFORMANCE_ACCOUNTING,
      };

static const char *const conformance_family_names[CONFORMANCE_FAMILY_COUNT] = {
  [CONFORMANCE_ISOLATION] = "isolation",
  [CONFORMANCE_MATERIALIZATION] = "materialization",
  [CONFORMANCE_NETWORK] = "network",
  [CONFORMANCE_RESOURCES] = "resources",
  [CONFORMANCE_TERMINAL] = "terminal",
  [CONFORMANCE_PERSISTENCE] = "persistence",
  [CONFORMANCE_ACCOUNTING] = "accounting",
  [CONFORMANCE_COST] = "cost",
};

bool
conformance_askable (enum sandbox_feature f)
{
  /* Asked of a session, not of a policy: a bare policy offered in their
   * name would be accepted by every backend, and say nothing.  */
  return f != SANDBOX_PTY && f != SANDBOX_FILE_OPERATIONS
         && f != SANDBOX_RESUME;
}

enum conformance_family
conformance_family_of (enum sandbox_feature f)
{
  if ((unsigned) f >= SANDBOX_FEATURE_COUNT)
    return CONFORMANCE_ISOLATION;
  return conformance_families[f];
}

const char *
conformance_family_name (enum conformance_family family)
{
  if ((unsigned) family >= CONFORMANCE_FAMILY_COUNT)
    return "unknown";
  return conformance_family_names[family];
}

const char *
conformance_answer_name (enum conformance_answer answer)
{
  switch (answer)
    {
    case CONFORMANCE_ACCEPTED:
      return "accepted";
    case CONFORMANCE_REFUSED:
      return "refused";
    case CONFORMANCE_OVERCLAIMED:
      return "overclaimed";
    case CONFORMANCE_WITHHELD:
      return "withheld";
    case CONFORMANCE_UNREACHED:
      return "unreached";
    case CONFORMANCE_STATED:
      return "stated";
    case CONFORMANCE_ABSENT:
      break;
    }
  return "absent";
}

const char *
conformance_verdict_name (enum conformance_verdict verdict)
{
  switch (verdict)
    {
    case CONFORMANCE_HOLDS:
      return "holds";
    case CONFORMANCE_DOES_NOT_HOLD:
      return "does not hold";
    case CONFORMANCE_NOT_REACHED:
      return "unreached";
    case CONFORMANCE_NOT_TESTED:
      break;
    }
  return "not tested";
}

bool
conformance_is_fault (enum conformance_answer answer)
{
  return answer == CONFORMANCE_OVERCLAIMED || answer == CONFORMANCE_WITHHELD;
}

/* The smallest policy requiring exactly f, in the probed mode.  */
static void
conformance_policy (struct sandbox_policy *p, enum sandbox_feature f,
                    bool confined, const char *workspace)
{
  memset (p, 0, sizeof *p);
  p->enabled = confined;
  p->workspace = workspace;
  p->requires[f] = true;
  if (f == SANDBOX_COMMAND_TIME_LIMIT)
    p->command_seconds = CONFORMANCE_COMMAND_SECONDS;
  else if (f == SANDBOX_OUTPUT_LIMIT)
    p->output_bytes = CONFORMANCE_OUTPUT_BYTES;
  else if (f == SANDBOX_CONCURRENCY_LIMIT)
    p->concurrency = CONFORMANCE_CONCURRENCY;
  else if (f == SANDBOX_NETWORK_ALLOWLIST)
    {
      /* An allowlist names what it allows: a documentation name, never
       * reached (an audit starts nothing).  */
      static const char *const domains[] = { "example.com" };
      p->domains = domains;
      p->n_domains = 1;
    }
}

/* Drop a session prepared only to see whether it could be.  */
static void
conformance_drop (struct sandbox_session *s)
{
  struct cr_error *err = NULL;

  /* Nothing was started, so there is no scope to wait for; a backend that
   * will not dispose of an unstarted session is still made to let go.  */
  if (sandbox_dispose (s, NULL, &err) < 0)
    {
      cr_error_free (err);
      sandbox_abandon (s);
    }
}

/* Offer f's policy and read the answer against the claim.  */
static void
conformance_ask (struct sandbox_backend *b, const char *workspace,
                 bool confined, struct conformance_result *r)
{
  struct sandbox_policy policy;
  struct sandbox_session *s = NULL;
  struct cr_error *err = NULL;
  bool claimed = r->claim != SANDBOX_UNSUPPORTED;

  conformance_policy (&policy, r->feature, confined, workspace);
  if (sandbox_prepare (b, &policy, &s, &err) == 0)
    {
      if (s != NULL)
        conformance_drop (s);
      r->answer = claimed ? CONFORMANCE_ACCEPTED : CONFORMANCE_OVERCLAIMED;
      return;
    }
  /* A backend that fails hands out no session; one handed out anyway is
   * let go, never kept.  */
  if (s != NULL)
    sandbox_abandon (s);
  r->detail = xstrdup (err != NULL && err->msg != NULL
                           ? err->msg
                           : "prepare failed without saying why");
  if (err != NULL && err->refused_feature == (int) r->feature)
    r->answer = claimed ? CONFORMANCE_WITHHELD : CONFORMANCE_REFUSED;
  else
    r->answer = CONFORMANCE_UNREACHED;
  cr_error_free (err);
}

/* reason, cut to CONFORMANCE_REASON_BYTES at a UTF-8 character boundary
 * and then ending "...".  Owned.  */
static char *
conformance_bound (const char *reason)
{
  size_t len = strlen (reason);

  if (len <= CONFORMANCE_REASON_BYTES)
    return xstrdup (reason);
  len = CONFORMANCE_REASON_BYTES;
  while (len > 0 && ((unsigned char) reason[len] & 0xc0) == 0x80)
    len--;
  return xasprintf ("%.*s...", (int) len, reason);
}

/* Probe b; CONFORMANCE_NO_BACKEND when it cannot be used here.  */
static int
conformance_probe (struct sandbox_backend *b, struct conformance_audit *a,
                   struct cr_error **err)
{
  struct sandbox_probe probe = { 0 };
  const char *id = sandbox_backend_id (b);

  if (sandbox_probe (b, &probe, err) < 0)
    {
      sandbox_probe_clear (&probe);
      cr_error_prefix (err, "probing the %s backend", id);
      return CONFORMANCE_NO_BACKEND;
    }
  if (!probe.usable)
    {
      cr_error_set (err, 0, "the %s backend cannot be used here: %s", id,
                    probe.reason != NULL ? probe.reason
                                         : "its probe gave no reason");
      sandbox_probe_clear (&probe);
      return CONFORMANCE_NO_BACKEND;
    }
  a->backend_id = xstrdup (id);
  a->confined = probe.confined;
  a->version = probe.version;
  probe.version = NULL;
  if (!probe.confined && probe.reason != NULL)
    a->unconfined_reason = conformance_bound (probe.reason);
  sandbox_probe_clear (&probe);
  return 0;
}

int
conformance_run (struct sandbox_backend *backend, const char *workspace,
                 struct conformance_audit **out, struct cr_error **err)
{
  struct sandbox_claims claims;

  if (workspace == NULL || workspace[0] != '/')
    return cr_error_set (err, 0,
                         "auditing a sandbox backend: the workspace is not "
                         "an absolute path");
  struct conformance_audit *a = xcalloc (1, sizeof *a);
  int ret = conformance_probe (backend, a, err);
  if (ret < 0)
    {
      conformance_free (a);
      return ret;
    }
  /* The claims are read from the backend each time, never from a list
   * kept here: they are what is being audited.  */
  sandbox_claims (backend, &claims);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    {
      struct conformance_result *r = &a->results[f];
      r->feature = (enum sandbox_feature) f;
      r->claim = claims.support[f];
      if (!conformance_askable (r->feature))
        r->answer = r->claim != SANDBOX_UNSUPPORTED ? CONFORMANCE_STATED
                                                    : CONFORMANCE_ABSENT;
      else
        conformance_ask (backend, workspace, a->confined, r);
    }
  *out = a;
  return 0;
}

void
conformance_free (struct conformance_audit *a)
{
  if (a == NULL)
    return;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    free (a->results[f].detail);
  free (a->backend_id);
  free (a->version);
  free (a->unconfined_reason);
  free (a);
}

size_t
conformance_faults (const struct conformance_audit *a)
{
  size_t n = 0;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    n += conformance_is_fault (a->results[f].answer);
  return n;
}

size_t
conformance_unreached (const struct conformance_audit *a)
{
  size_t n = 0;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    n += a->results[f].answer == CONFORMANCE_UNREACHED;
  return n;
}

enum conformance_verdict
conformance_family_verdict (const struct conformance_audit *a,
                            enum conformance_family family)
{
  bool fault = false, unreached = false, asked = false;

  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    {
      const struct conformance_result *r = &a->results[f];
      if (conformance_family_of (r->feature) != family
          || !conformance_askable (r->feature))
        continue;
      asked = true;
      fault = fault || conformance_is_fault (r->answer);
      unreached = unreached || r->answer == CONFORMANCE_UNREACHED;
    }
  if (fault)
    return CONFORMANCE_DOES_NOT_HOLD;
  if (unreached)
    return CONFORMANCE_NOT_REACHED;
  return asked ? CONFORMANCE_HOLDS : CONFORMANCE_NOT_TESTED;
}

bool
conformance_holds (const struct conformance_audit *a,
                   enum conformance_family family)
{
  return conformance_family_verdict (a, family) == CONFORMANCE_HOLDS;
}

/* The report's header: the backend, the mode, what was asked.  */
static void
conformance_report_header (struct buf *b, const struct conformance_audit *a)
{
  size_t asked = 0;

  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    asked += conformance_askable ((enum sandbox_feature) f);
  buf_printf (b, "sandbox audit of %s\n", a->backend_id);
  buf_printf (b, "  version   %s\n",
              a->version != NULL ? a->version : "not reported");
  if (a->confined)
    buf_puts (b, "  mode      confined\n");
  else
    buf_printf (b, "  mode      unconfined%s%s\n",
                a->unconfined_reason != NULL ? ": " : "",
                a->unconfined_reason != NULL ? a->unconfined_reason : "");
  buf_printf (b,
              "  asked     %zu policies, one feature each; every prepared "
              "session was dropped and no command was started\n",
              asked);
}

/* One row per feature: its claim and the answer.  */
static void
conformance_report_features (struct buf *b, const struct conformance_audit *a)
{
  buf_puts (b, "\nfeatures:\n");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    {
      const struct conformance_result *r = &a->results[f];
      bool read_only = !conformance_askable (r->feature);
      buf_printf (b, "  %-22s%-13s%s%s\n", sandbox_feature_name (r->feature),
                  sandbox_support_name (r->claim),
                  conformance_answer_name (r->answer),
                  read_only ? " (read, not tested)" : "");
    }
}

/* One row per family: its verdict.  */
static void
conformance_report_families (struct buf *b, const struct conformance_audit *a)
{
  buf_puts (b, "\nfamilies:\n");
  for (int i = 0; i < CONFORMANCE_FAMILY_COUNT; i++)
    buf_printf (b, "  %-22s%s\n",
                conformance_family_name ((enum conformance_family) i),
                conformance_verdict_name (conformance_family_verdict (
                    a, (enum conformance_family) i)));
}

/* The faults, each with the feature named and what the backend said.  */
static void
conformance_report_faults (struct buf *b, const struct conformance_audit *a)
{
  if (conformance_faults (a) == 0)
    {
      buf_puts (b, "\nfaults: none\n");
      return;
    }
  buf_puts (b, "\nfaults:\n");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    {
      const struct conformance_result *r = &a->results[f];
      const char *name = sandbox_feature_name (r->feature);
      if (r->answer == CONFORMANCE_OVERCLAIMED)
        buf_printf (b,
                    "  overclaimed  %s: claimed unsupported, but a policy "
                    "requiring it was accepted\n",
                    name);
      else if (r->answer == CONFORMANCE_WITHHELD)
        buf_printf (b,
                    "  withheld     %s: claimed %s, but a policy requiring it "
                    "was refused: %s\n",
                    name, sandbox_support_name (r->claim), r->detail);
    }
}

/* The unreached features and why: not faults.  */
static void
conformance_report_unreached (struct buf *b, const struct conformance_audit *a)
{
  if (conformance_unreached (a) == 0)
    return;
  buf_puts (b, "\nunreached, not faults (the backend failed for its own "
               "reasons):\n");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (a->results[f].answer == CONFORMANCE_UNREACHED)
      buf_printf (b, "  %s: %s\n", sandbox_feature_name (a->results[f].feature),
                  a->results[f].detail);
}

char *
conformance_report (const struct conformance_audit *a)
{
  struct buf b = BUF_INIT;

  conformance_report_header (&b, a);
  conformance_report_features (&b, a);
  conformance_report_families (&b, a);
  conformance_report_faults (&b, a);
  conformance_report_unreached (&b, a);
  return buf_steal (&b, NULL);
}
