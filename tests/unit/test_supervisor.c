/* Unit tests for core/supervisor.c over the compatibility backend
 * (sandbox/compat.c): admission, refusals, endings and cleanup.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/supervisor.h"
#include "sandbox/compat.h"

extern char **environ;

struct fixture
{
  struct loop *loop;
  struct sandbox_backend *backend;
  struct config *config;
  struct supervisor *sup;
  int ended, cleaned, failed;
  char text[4096];
  struct command_outcome last;
};

static void
on_ended (void *data, struct command *cmd, const struct command_outcome *out)
{
  struct fixture *f = data;
  f->ended++;
  f->last = *out;
  snprintf (f->text, sizeof f->text, "%s", out->text);
  f->last.text = f->text;
}

static void
on_failed (void *data, struct command *cmd, const struct cr_error *err)
{
  struct fixture *f = data;
  f->failed++;
  snprintf (f->text, sizeof f->text, "%s", err->msg);
}

static void
on_cleaned (void *data, struct command *cmd)
{
  struct fixture *f = data;
  f->cleaned++;
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof *f);
  struct cr_error *err = NULL;
  f->loop = loop_new (&err);
  f->backend = compat_backend_new ();
  f->config = config_new_defaults ();
  f->sup = supervisor_new (f->loop, f->backend, f->config, "/", environ);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  supervisor_free (f->sup);
  config_free (f->config);
  sandbox_backend_free (f->backend);
  loop_free (f->loop);
  free (f);
  return 0;
}

static const struct supervisor_listener *
listener_for (struct fixture *f)
{
  static struct supervisor_listener l;
  l = (struct supervisor_listener){ on_ended, on_failed, on_cleaned, NULL };
  l.data = f;
  return &l;
}

/* Start a command; expect it admitted.  */
static void
start_ok (struct fixture *f, const char *line)
{
  struct command_request req = { .line = line };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), 0);
  assert_non_null (cmd);
}

/* Turn the loop until n commands are cleaned, bounded at ten seconds.  */
static void
drive_until_cleaned (struct fixture *f, int n)
{
  struct cr_error *err = NULL;
  uint64_t start = loop_now_ms ();
  while (f->cleaned < n && loop_now_ms () - start < 10000)
    assert_int_equal (loop_run_once (f->loop, 100, &err), 0);
  assert_int_equal (f->cleaned, n);
}

static void
test_result_of_a_command (void **state)
{
  struct fixture *f = *state;
  start_ok (f, "printf 'a\\nb\\n'; exit 4");
  drive_until_cleaned (f, 1);
  assert_int_equal (f->ended, 1);
  assert_int_equal (f->last.ending, RESULT_EXITED);
  assert_int_equal (f->last.exit_status, 4);
  assert_int_equal (f->last.lines, 2);
  assert_int_equal (f->last.bytes, 4);
  assert_string_equal (f->text, "a\nb\n[exit status 4]");
  assert_int_equal (supervisor_slots_held (f->sup), 0);
}

static void
test_concurrency_ceiling_refuses (void **state)
{
  struct fixture *f = *state;
  struct command_request req
      = { .line = "touch /nonexistent-dir/should-not-run" };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;

  f->config->concurrency = 2;
  start_ok (f, "sleep 0.3");
  start_ok (f, "sleep 0.3");
  assert_int_equal (supervisor_slots_held (f->sup), 2);
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), -1);
  assert_string_equal (
      err->msg, "[refused: 2 commands are already running, the most allowed at "
                "once (sandbox.limits.concurrency); nothing was run]");
  cr_error_free (err);
  drive_until_cleaned (f, 2);
  /* The slots are free again once both are cleaned.  */
  start_ok (f, "true");
  drive_until_cleaned (f, 3);
}

static void
test_refusals (void **state)
{
  struct fixture *f = *state;
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  struct command_request empty = { .line = "" };
  assert_int_equal (
      supervisor_start (f->sup, &empty, listener_for (f), &cmd, &err), -1);
  assert_string_equal (err->msg,
                       "[refused: the command is empty; nothing was run]");
  cr_error_clear (&err);

  size_t len = 128 * 1024 + 1;
  char *line = malloc (len + 1);
  memset (line, ':', len);
  line[len] = '\0';
  struct command_request longer = { .line = line };
  assert_int_equal (
      supervisor_start (f->sup, &longer, listener_for (f), &cmd, &err), -1);
  assert_string_equal (
      err->msg,
      "[refused: the command is longer than 131072 bytes; nothing was run]");
  cr_error_clear (&err);
  free (line);
  assert_int_equal (supervisor_slots_held (f->sup), 0);
}

static void
test_setup_failure_is_a_refusal (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "echo never" };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  struct supervisor *sup = supervisor_new (f->loop, f->backend, f->config,
                                           "/nonexistent/workspace", environ);
  assert_int_equal (supervisor_start (sup, &req, listener_for (f), &cmd, &err),
                    0);
  struct supervisor *saved = f->sup;
  f->sup = sup;
  drive_until_cleaned (f, 1);
  f->sup = saved;
  assert_int_equal (f->failed, 1);
  assert_int_equal (f->ended, 0);
  assert_string_equal (f->text, "[refused: setting up the command: No such "
                                "file or directory; nothing was run]");
  supervisor_free (sup);
}

static void
test_deadline_and_stop_all (void **state)
{
  struct fixture *f = *state;
  struct command_request req
      = { .line = "echo x; sleep 10", .timeout_seconds = 0.2 };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), 0);
  drive_until_cleaned (f, 1);
  assert_int_equal (f->last.ending, RESULT_TIMED_OUT);
  assert_string_equal (f->text, "x\n[stopped: the command ran too long]");

  start_ok (f, "sleep 10");
  supervisor_stop_all (f->sup);
  drive_until_cleaned (f, 2);
  assert_int_equal (f->last.ending, RESULT_SIGNALED);
  assert_int_equal (f->last.signal, 9);
}

static void
test_deadline_is_capped_by_config (void **state)
{
  struct fixture *f = *state;
  assert_int_equal (supervisor_deadline_ms (f->config, 0), 1200000);
  assert_int_equal (supervisor_deadline_ms (f->config, 1.5), 1500);
  assert_int_equal (supervisor_deadline_ms (f->config, 0.0001), 1);
  assert_int_equal (supervisor_deadline_ms (f->config, 99999), 1200000);
}

static void
test_compat_claims_and_policy (void **state)
{
  struct fixture *f = *state;
  struct sandbox_claims claims;
  struct sandbox_probe probe = { 0 };
  struct cr_error *err = NULL;
  struct sandbox_session *s = NULL;

  sandbox_claims (f->backend, &claims);
  assert_int_equal (claims.support[SANDBOX_PROCESS_ISOLATION],
                    SANDBOX_UNSUPPORTED);
  assert_int_equal (claims.support[SANDBOX_FILESYSTEM], SANDBOX_UNSUPPORTED);
  assert_int_equal (claims.support[SANDBOX_COMMAND_TIME_LIMIT],
                    SANDBOX_ENFORCED);
  assert_int_equal (claims.support[SANDBOX_OUTPUT_LIMIT], SANDBOX_ENFORCED);
  assert_int_equal (claims.support[SANDBOX_CONCURRENCY_LIMIT],
                    SANDBOX_ENFORCED);
  assert_int_equal (sandbox_probe (f->backend, &probe, &err), 0);
  assert_false (probe.confined);
  assert_string_equal (probe.reason,
                       "confinement is disabled (sandbox.enabled is false)");
  sandbox_probe_clear (&probe);

  struct sandbox_policy policy = { 0 };
  policy.requires[SANDBOX_PROCESS_ISOLATION] = true;
  assert_int_equal (sandbox_prepare (f->backend, &policy, &s, &err), -1);
  assert_null (s);
  assert_string_equal (err->msg, "the policy requires process_isolation, which "
                                 "the compat backend does not enforce");
  cr_error_free (err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_result_of_a_command, setup, teardown),
    cmocka_unit_test_setup_teardown (test_concurrency_ceiling_refuses, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_refusals, setup, teardown),
    cmocka_unit_test_setup_teardown (test_setup_failure_is_a_refusal, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_deadline_and_stop_all, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_deadline_is_capped_by_config, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_compat_claims_and_policy, setup,
                                     teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
