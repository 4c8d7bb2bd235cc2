/* Tests for sandbox/conformance.c: the audit over the compatibility backend
 * and over test backends that tell the truth, overclaim, withhold, fail for
 * their own reasons, or cannot be probed; the report's whole text.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "sandbox/compat.h"
#include "sandbox/conformance.h"

#define WS "/ws/project"

/* A test backend: what it says (claims) and what its prepare holds (truth)
 * can differ, which is what a lying backend is.  */
struct fake_backend
{
  struct sandbox_backend base;
  struct sandbox_claims said;
  struct sandbox_claims truth;
  bool usable;        /* what its probe says */
  bool confined;      /* what its probe says */
  bool own_failure;   /* prepare fails for its own reasons once the policy
                         passes its truth */
  bool silent;        /* ... and says nothing about it */
  bool probe_fails;   /* probe returns an error */
  bool terse;         /* probe gives no reason and no version */
  const char *reason; /* probe's reason, when set */
  int prepared;       /* sessions handed out */
  int disposed;       /* sessions disposed of */
  int started;        /* start calls: must stay 0 */
  bool saw_enabled;   /* policy.enabled of the last prepare */
  const char *saw_workspace;
};

struct fake_session
{
  struct sandbox_session base;
  struct fake_backend *backend;
};

static void
fake_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  *out = ((const struct fake_backend *) b)->said;
}

static int
fake_probe (struct sandbox_backend *b, struct sandbox_probe *out,
            struct cr_error **err)
{
  struct fake_backend *f = (struct fake_backend *) b;
  if (f->probe_fails)
    return cr_error_set (err, 0, "the fake engine's socket is gone");
  out->usable = f->usable;
  out->confined = f->confined;
  if (f->terse)
    return 0;
  out->reason = f->reason != NULL ? xstrdup (f->reason)
                : f->usable       ? NULL
                                  : xstrdup ("the fake engine is not running");
  out->version = xstrdup ("9.9");
  return 0;
}

static const struct sandbox_backend_ops fake_ops;

static int
fake_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
              struct sandbox_session **out, struct cr_error **err)
{
  struct fake_backend *f = (struct fake_backend *) b;

  f->saw_enabled = policy->enabled;
  f->saw_workspace = policy->workspace;
  if (sandbox_check_policy (&f->truth, policy, "fake", err) < 0)
    return -1;
  if (f->own_failure && f->silent)
    return -1;
  if (f->own_failure)
    return cr_error_set (err, 0, "the fake engine is not answering");
  struct fake_session *s = xcalloc (1, sizeof *s);
  s->base.ops = &fake_ops;
  s->backend = f;
  f->prepared++;
  *out = &s->base;
  return 0;
}

static int
fake_start (struct sandbox_session *s, const struct sandbox_command *cmd,
            struct cr_error **err)
{
  ((struct fake_session *) s)->backend->started++;
  return cr_error_set (err, 0, "the audit must not start a command");
}

static int
fake_dispose (struct sandbox_session *s, struct sandbox_usage *usage,
              struct cr_error **err)
{
  ((struct fake_session *) s)->backend->disposed++;
  free (s);
  return 0;
}

static void
fake_abandon (struct sandbox_session *s)
{
  free (s);
}

static void
fake_free (struct sandbox_backend *b)
{
  free (b);
}

static const struct sandbox_backend_ops fake_ops = {
  .id = "fake",
  .claims = fake_claims,
  .probe = fake_probe,
  .prepare = fake_prepare,
  .start = fake_start,
  .dispose = fake_dispose,
  .abandon = fake_abandon,
  .free = fake_free,
};

/* An honest, usable, confining fake that enforces isolation and the host
 * ceilings and observes usage.  */
static struct fake_backend *
fake_new (void)
{
  static const enum sandbox_feature held[]
      = { SANDBOX_FILESYSTEM,         SANDBOX_NETWORK_DENY,
          SANDBOX_PROCESS_ISOLATION,  SANDBOX_CPU_LIMIT,
          SANDBOX_COMMAND_TIME_LIMIT, SANDBOX_OUTPUT_LIMIT };
  struct fake_backend *f = xcalloc (1, sizeof *f);

  f->base.ops = &fake_ops;
  for (size_t i = 0; i < sizeof held / sizeof *held; i++)
    f->said.support[held[i]] = SANDBOX_ENFORCED;
  f->said.support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
  f->said.support[SANDBOX_PTY] = SANDBOX_ENFORCED;
  f->truth = f->said;
  f->usable = f->confined = true;
  return f;
}

/* Run the audit over b, requiring success.  */
static struct conformance_audit *
audit (struct sandbox_backend *b)
{
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;
  int ret = conformance_run (b, WS, &a, &err);
  if (ret != 0)
    fail_msg ("audit failed: %s", err != NULL ? err->msg : "?");
  return a;
}

static void
test_compat_passes (void **state)
{
  struct sandbox_backend *b = compat_backend_new ();
  struct conformance_audit *a = audit (b);

  assert_int_equal (conformance_faults (a), 0);
  assert_int_equal (conformance_unreached (a), 0);
  assert_false (a->confined);
  assert_string_equal (a->backend_id, "compat");
  assert_int_equal (a->results[SANDBOX_COMMAND_TIME_LIMIT].answer,
                    CONFORMANCE_ACCEPTED);
  assert_int_equal (a->results[SANDBOX_FILESYSTEM].answer, CONFORMANCE_REFUSED);
  assert_non_null (
      strstr (a->results[SANDBOX_FILESYSTEM].detail, "requires filesystem"));
  assert_int_equal (a->results[SANDBOX_PTY].answer, CONFORMANCE_ABSENT);
  /* Disclaiming every isolation feature and refusing each is exact.  */
  assert_true (conformance_holds (a, CONFORMANCE_ISOLATION));
  assert_true (conformance_holds (a, CONFORMANCE_RESOURCES));
  assert_int_equal (conformance_family_verdict (a, CONFORMANCE_TERMINAL),
                    CONFORMANCE_NOT_TESTED);
  conformance_free (a);
  sandbox_backend_free (b);
}

static void
test_honest_fake (void **state)
{
  struct fake_backend *f = fake_new ();
  struct conformance_audit *a = audit (&f->base);

  assert_int_equal (conformance_faults (a), 0);
  assert_true (a->confined);
  assert_true (f->saw_enabled);
  assert_string_equal (f->saw_workspace, WS);
  /* Observed is claimed: bounded measurement is not refused.  */
  assert_int_equal (a->results[SANDBOX_USAGE].answer, CONFORMANCE_ACCEPTED);
  /* Unaskable: read, not tested, so never prepared.  */
  assert_int_equal (a->results[SANDBOX_PTY].answer, CONFORMANCE_STATED);
  assert_int_equal (a->results[SANDBOX_RESUME].answer, CONFORMANCE_ABSENT);
  assert_int_equal (a->results[SANDBOX_FILE_OPERATIONS].answer,
                    CONFORMANCE_ABSENT);
  /* Six enforced and one observed askable feature were accepted, each
   * prepared once, disposed of, and never started.  */
  assert_int_equal (f->prepared, 7);
  assert_int_equal (f->disposed, 7);
  assert_int_equal (f->started, 0);
  for (int i = 0; i < CONFORMANCE_FAMILY_COUNT; i++)
    if (i != CONFORMANCE_TERMINAL)
      assert_true (conformance_holds (a, (enum conformance_family) i));
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* Says network_allowlist is unsupported, yet takes a policy needing it.  */
static void
test_overclaim_caught (void **state)
{
  struct fake_backend *f = fake_new ();
  f->truth.support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_ENFORCED;
  struct conformance_audit *a = audit (&f->base);
  char *text = conformance_report (a);

  assert_int_equal (conformance_faults (a), 1);
  assert_int_equal (a->results[SANDBOX_NETWORK_ALLOWLIST].answer,
                    CONFORMANCE_OVERCLAIMED);
  assert_int_equal (conformance_family_verdict (a, CONFORMANCE_NETWORK),
                    CONFORMANCE_DOES_NOT_HOLD);
  assert_true (conformance_holds (a, CONFORMANCE_ISOLATION));
  assert_non_null (strstr (text, "\nfaults:\n  overclaimed  "
                                 "network_allowlist: claimed unsupported, "
                                 "but a policy requiring it was accepted\n"));
  /* The session it should not have made was dropped all the same.  */
  assert_int_equal (f->prepared, f->disposed);
  free (text);
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* Says cpu_limit is enforced, yet refuses a policy needing it.  */
static void
test_withhold_caught (void **state)
{
  struct fake_backend *f = fake_new ();
  f->truth.support[SANDBOX_CPU_LIMIT] = SANDBOX_UNSUPPORTED;
  struct conformance_audit *a = audit (&f->base);
  char *text = conformance_report (a);

  assert_int_equal (conformance_faults (a), 1);
  assert_int_equal (a->results[SANDBOX_CPU_LIMIT].answer, CONFORMANCE_WITHHELD);
  assert_false (conformance_holds (a, CONFORMANCE_RESOURCES));
  assert_true (conformance_holds (a, CONFORMANCE_NETWORK));
  assert_non_null (strstr (
      text, "\nfaults:\n  withheld     cpu_limit: claimed enforced, but a "
            "policy requiring it was refused: the policy requires cpu_limit, "
            "which the fake backend does not enforce\n"));
  free (text);
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* Fails for its own reasons: what it claims is unreached, never a fault;
 * what it disclaims is still refused by name.  */
static void
test_own_failure_unreached (void **state)
{
  struct fake_backend *f = fake_new ();
  f->own_failure = true;
  struct conformance_audit *a = audit (&f->base);
  char *text = conformance_report (a);

  assert_int_equal (conformance_faults (a), 0);
  assert_int_equal (conformance_unreached (a), 7);
  assert_int_equal (a->results[SANDBOX_FILESYSTEM].answer,
                    CONFORMANCE_UNREACHED);
  assert_int_equal (a->results[SANDBOX_DISK_LIMIT].answer, CONFORMANCE_REFUSED);
  assert_int_equal (conformance_family_verdict (a, CONFORMANCE_ISOLATION),
                    CONFORMANCE_NOT_REACHED);
  assert_true (conformance_holds (a, CONFORMANCE_COST));
  assert_non_null (strstr (text, "\nfaults: none\n"));
  assert_non_null (strstr (text, "\nunreached, not faults (the backend "
                                 "failed for its own reasons):\n  filesystem: "
                                 "the fake engine is not answering\n"));
  free (text);
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* No backend to probe: the probe's error instead of a table.  */
static void
test_no_backend (void **state)
{
  struct fake_backend *f = fake_new ();
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;

  f->usable = false;
  assert_int_equal (conformance_run (&f->base, WS, &a, &err),
                    CONFORMANCE_NO_BACKEND);
  assert_null (a);
  assert_string_equal (err->msg, "the fake backend cannot be used here: the "
                                 "fake engine is not running");
  assert_int_equal (f->prepared, 0);
  cr_error_free (err);
  sandbox_backend_free (&f->base);
}

/* A probe that fails, and one that gives no reason: no table either way.  */
static void
test_probe_errors (void **state)
{
  struct fake_backend *f = fake_new ();
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;

  f->probe_fails = true;
  assert_int_equal (conformance_run (&f->base, WS, &a, &err),
                    CONFORMANCE_NO_BACKEND);
  assert_string_equal (err->msg, "probing the fake backend: the fake "
                                 "engine's socket is gone");
  cr_error_clear (&err);
  f->probe_fails = false;
  f->usable = false;
  f->terse = true;
  assert_int_equal (conformance_run (&f->base, WS, &a, &err),
                    CONFORMANCE_NO_BACKEND);
  assert_string_equal (err->msg, "the fake backend cannot be used here: its "
                                 "probe gave no reason");
  assert_null (a);
  cr_error_free (err);
  sandbox_backend_free (&f->base);
}

/* A terse, unconfined backend failing without a word: the header says what
 * is not known, and the failure is still unreached, not a fault.  */
static void
test_terse_and_silent (void **state)
{
  struct fake_backend *f = fake_new ();
  f->terse = true;
  f->confined = false;
  f->own_failure = f->silent = true;
  struct conformance_audit *a = audit (&f->base);
  char *text = conformance_report (a);

  assert_false (f->saw_enabled);
  assert_int_equal (conformance_faults (a), 0);
  assert_non_null (strstr (text, "sandbox audit of fake\n"
                                 "  version   not reported\n"
                                 "  mode      unconfined\n"));
  assert_non_null (
      strstr (text, "\n  cpu_limit: prepare failed without saying why\n"));
  free (text);
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* A long reason for not confining is kept bounded, cut between characters
 * (here inside a two-byte "é" that straddles byte 256).  */
static void
test_reason_bounded (void **state)
{
  struct fake_backend *f = fake_new ();
  char reason[400];

  memset (reason, 'x', 255);
  snprintf (reason + 255, sizeof reason - 255, "%s", "\xc3\xa9 and then more");
  f->reason = reason;
  f->confined = false;
  struct conformance_audit *a = audit (&f->base);
  assert_int_equal (strlen (a->unconfined_reason), 255 + 3);
  assert_memory_equal (a->unconfined_reason, reason, 255);
  assert_string_equal (a->unconfined_reason + 255, "...");
  conformance_free (a);
  f->reason = "short";
  a = audit (&f->base);
  assert_string_equal (a->unconfined_reason, "short");
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

static void
test_relative_workspace (void **state)
{
  struct fake_backend *f = fake_new ();
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;

  assert_int_equal (conformance_run (&f->base, "ws", &a, &err), -1);
  assert_string_equal (err->msg, "auditing a sandbox backend: the workspace "
                                 "is not an absolute path");
  cr_error_free (err);
  sandbox_backend_free (&f->base);
}

/* The claims are read from the backend, not from a list the audit keeps:
 * a backend that starts claiming more, and holds it, still passes.  */
static void
test_claims_read_from_backend (void **state)
{
  struct fake_backend *f = fake_new ();
  f->said.support[SANDBOX_MEMORY_LIMIT] = SANDBOX_ENFORCED;
  f->truth.support[SANDBOX_MEMORY_LIMIT] = SANDBOX_ENFORCED;
  struct conformance_audit *a = audit (&f->base);

  assert_int_equal (conformance_faults (a), 0);
  assert_int_equal (a->results[SANDBOX_MEMORY_LIMIT].claim, SANDBOX_ENFORCED);
  assert_int_equal (a->results[SANDBOX_MEMORY_LIMIT].answer,
                    CONFORMANCE_ACCEPTED);
  conformance_free (a);
  sandbox_backend_free (&f->base);
}

/* The refusal is recognised by the feature it carries, not by words: a
 * failure naming the feature in its text only is the backend's own.  */
static void
test_refusal_by_field (void **state)
{
  struct cr_error *err = NULL;

  sandbox_refuse (&err, SANDBOX_DISK_LIMIT, "fake");
  assert_int_equal (err->refused_feature, SANDBOX_DISK_LIMIT);
  assert_string_equal (err->msg, "the policy requires disk_limit, which the "
                                 "fake backend does not enforce");
  cr_error_prefix (&err, "preparing");
  assert_int_equal (err->refused_feature, SANDBOX_DISK_LIMIT);
  cr_error_clear (&err);
  cr_error_set (&err, 0, "disk_limit is broken here");
  assert_int_equal (err->refused_feature, -1);
  cr_error_free (err);
}

/* The whole report of the compatibility backend.  */
static void
test_report_text (void **state)
{
  struct sandbox_backend *b = compat_backend_new ();
  struct conformance_audit *a = audit (b);
  char *text = conformance_report (a);
  char *expected = xasprintf (
      "sandbox audit of compat\n"
      "  version   %s\n"
      "  mode      unconfined: confinement is disabled (sandbox.enabled is "
      "false)\n"
      "  asked     23 policies, one feature each; every prepared session was "
      "dropped and no command was started\n"
      "\n"
      "features:\n"
      "  filesystem            unsupported  refused\n"
      "  network_deny          unsupported  refused\n"
      "  network_allowlist     unsupported  refused\n"
      "  descriptor_isolation  unsupported  refused\n"
      "  process_isolation     unsupported  refused\n"
      "  kernel_surface        unsupported  refused\n"
      "  privilege_isolation   unsupported  refused\n"
      "  materialization       unsupported  refused\n"
      "  cpu_limit             unsupported  refused\n"
      "  memory_limit          unsupported  refused\n"
      "  disk_limit            unsupported  refused\n"
      "  process_limit         unsupported  refused\n"
      "  open_file_limit       unsupported  refused\n"
      "  command_time_limit    enforced     accepted\n"
      "  session_time_limit    unsupported  refused\n"
      "  outbound_byte_limit   unsupported  refused\n"
      "  output_limit          enforced     accepted\n"
      "  concurrency_limit     enforced     accepted\n"
      "  cost_limit            unsupported  refused\n"
      "  pty                   unsupported  absent (read, not tested)\n"
      "  file_operations       unsupported  absent (read, not tested)\n"
      "  persistence           unsupported  refused\n"
      "  snapshot              unsupported  refused\n"
      "  resume                unsupported  absent (read, not tested)\n"
      "  audit                 observed     accepted\n"
      "  usage                 observed     accepted\n"
      "\n"
      "families:\n"
      "  isolation             holds\n"
      "  materialization       holds\n"
      "  network               holds\n"
      "  resources             holds\n"
      "  terminal              not tested\n"
      "  persistence           holds\n"
      "  accounting            holds\n"
      "  cost                  holds\n"
      "\n"
      "faults: none\n",
      PACKAGE_VERSION);

  assert_string_equal (text, expected);
  free (expected);
  free (text);
  conformance_free (a);
  sandbox_backend_free (b);
}

static void
test_names (void **state)
{
  assert_string_equal (conformance_answer_name (CONFORMANCE_OVERCLAIMED),
                       "overclaimed");
  assert_string_equal (conformance_answer_name (CONFORMANCE_WITHHELD),
                       "withheld");
  assert_string_equal (conformance_answer_name (CONFORMANCE_UNREACHED),
                       "unreached");
  assert_string_equal (conformance_answer_name (CONFORMANCE_STATED), "stated");
  assert_string_equal (conformance_verdict_name (CONFORMANCE_DOES_NOT_HOLD),
                       "does not hold");
  assert_int_equal (conformance_family_of (SANDBOX_OUTBOUND_BYTE_LIMIT),
                    CONFORMANCE_NETWORK);
  assert_int_equal (conformance_family_of (SANDBOX_USAGE),
                    CONFORMANCE_ACCOUNTING);
  assert_false (conformance_askable (SANDBOX_PTY));
  assert_true (conformance_askable (SANDBOX_PERSISTENCE));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_compat_passes),
    cmocka_unit_test (test_honest_fake),
    cmocka_unit_test (test_overclaim_caught),
    cmocka_unit_test (test_withhold_caught),
    cmocka_unit_test (test_own_failure_unreached),
    cmocka_unit_test (test_no_backend),
    cmocka_unit_test (test_probe_errors),
    cmocka_unit_test (test_terse_and_silent),
    cmocka_unit_test (test_reason_bounded),
    cmocka_unit_test (test_relative_workspace),
    cmocka_unit_test (test_claims_read_from_backend),
    cmocka_unit_test (test_refusal_by_field),
    cmocka_unit_test (test_report_text),
    cmocka_unit_test (test_names),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
