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
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/supervisor.h"
#include "lib/clock.h"
#include "sandbox/compat.h"

extern char **environ;

struct fixture
{
  struct loop *loop;
  struct sandbox_backend *backend;
  struct config *config;
  struct supervisor *sup;
  int answered, refused, left_running, cleaned, stop_failed, endings;
  char text[8192];
  char line[512];
  struct command_outcome last;
  struct command *cmd; /* the last command answered */
};

static void
on_answered (void *data, struct command *cmd,
             const struct command_answer *answer)
{
  struct fixture *f = data;
  f->answered++;
  f->refused += answer->refused;
  f->left_running += answer->left_running;
  if (answer->outcome != NULL)
    f->last = *answer->outcome;
  snprintf (f->text, sizeof f->text, "%.*s", (int) answer->text_len,
            answer->text);
  f->cmd = cmd;
}

static void
on_ended_on_its_own (void *data, struct command *cmd, const char *line)
{
  struct fixture *f = data;
  f->endings++;
  snprintf (f->line, sizeof f->line, "%s", line);
}

static void
on_stop_failed (void *data, struct command *cmd)
{
  struct fixture *f = data;
  f->stop_failed++;
}

static void
on_cleaned (void *data, struct command *cmd)
{
  struct fixture *f = data;
  f->cleaned++;
  if (f->cmd == cmd)
    f->cmd = NULL;
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
  l = (struct supervisor_listener){ .answered = on_answered,
                                    .ended_on_its_own = on_ended_on_its_own,
                                    .stop_failed = on_stop_failed,
                                    .cleaned = on_cleaned,
                                    .data = f };
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
  uint64_t start = clock_now_ms ();
  while (f->cleaned < n && clock_now_ms () - start < 10000)
    assert_int_equal (loop_run_once (f->loop, 100, &err), 0);
  assert_int_equal (f->cleaned, n);
}

static void
test_result_of_a_command (void **state)
{
  struct fixture *f = *state;
  start_ok (f, "printf 'a\\nb\\n'; exit 4");
  drive_until_cleaned (f, 1);
  assert_int_equal (f->answered, 1);
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
  struct command_request first
      = { .line = "sleep 0.3", .description = "waiting" };
  assert_int_equal (
      supervisor_start (f->sup, &first, listener_for (f), &cmd, &err), 0);
  start_ok (f, "sleep 0.3");
  assert_int_equal (supervisor_slots_held (f->sup), 2);
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), -1);
  assert_string_equal (err->msg,
                       "[refused: 2 commands are already running: waiting, "
                       "Bash(sleep 0.3); that is the most allowed at once "
                       "(sandbox.limits.concurrency); nothing was run]");
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

  /* 131072 bytes and the NUL pass the kernel's bound on one argument.  */
  size_t len = (size_t) 128 * 1024;
  char *line = malloc (len + 1);
  memset (line, ':', len);
  line[len] = '\0';
  struct command_request longer = { .line = line };
  assert_int_equal (
      supervisor_start (f->sup, &longer, listener_for (f), &cmd, &err), -1);
  assert_string_equal (
      err->msg,
      "[refused: the command is longer than 131071 bytes; nothing was run]");
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
  assert_int_equal (f->refused, 1);
  assert_int_equal (f->answered, 1);
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

/* Turn the loop for ms milliseconds.  */
static void
drive_for (struct fixture *f, uint64_t ms)
{
  struct cr_error *err = NULL;
  uint64_t start = clock_now_ms ();
  while (clock_now_ms () - start < ms)
    assert_int_equal (loop_run_once (f->loop, 20, &err), 0);
}

/* Turn the loop until cond is non-zero, bounded at ten seconds.  */
static void
drive_until (struct fixture *f, const int *cond)
{
  struct cr_error *err = NULL;
  uint64_t start = clock_now_ms ();
  while (*cond == 0 && clock_now_ms () - start < 10000)
    assert_int_equal (loop_run_once (f->loop, 50, &err), 0);
  assert_true (*cond != 0);
}

static struct command *
start_req (struct fixture *f, const struct command_request *req)
{
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (
      supervisor_start (f->sup, req, listener_for (f), &cmd, &err), 0);
  return cmd;
}

static void
test_background_failing_at_once_is_a_result (void **state)
{
  struct fixture *f = *state;
  struct command_request req
      = { .line = "echo 'npm: command not found'; exit 127",
          .background = true };
  start_req (f, &req);
  drive_until (f, &f->answered);
  assert_int_equal (f->left_running, 0);
  assert_string_equal (f->text, "npm: command not found\n[exit status 127]");
  drive_until_cleaned (f, 1);
}

static void
test_background_left_running_and_its_ending (void **state)
{
  struct fixture *f = *state;
  struct command_request req
      = { .line = "echo ready; sleep 0.6; echo bye; exit 1",
          .description = "starting the dev server",
          .background = true };
  uint64_t start = clock_now_ms ();
  struct command *cmd = start_req (f, &req);
  drive_until (f, &f->answered);
  uint64_t took = clock_now_ms () - start;
  assert_true (took >= 200 && took < 500);
  assert_int_equal (f->left_running, 1);
  assert_string_equal (f->text,
                       "ready\n\n[left running as #1; ask bash_output what it "
                       "has printed so far, and its output is handed over when "
                       "it ends; do not poll or wait for it]");
  assert_true (command_left_running (cmd));

  size_t len;
  char *out = supervisor_output (f->sup, 1, &len);
  assert_string_equal (out, "ready\n[#1 is still running]");
  free (out);
  out = supervisor_output (f->sup, 7, &len);
  assert_string_equal (out,
                       "[no command is running as #7; running now: #1 starting "
                       "the dev server; a command that has ended leaves this "
                       "list, and what it printed is handed over on its own]");
  free (out);
  assert_false (supervisor_has_endings (f->sup));

  drive_until (f, &f->endings);
  assert_string_equal (f->line,
                       "\xe2\x9c\x97 starting the dev server ended on its own "
                       "\xc2\xb7 exit status 1 \xc2\xb7 2 lines");
  char *note = supervisor_take_endings (f->sup, &len);
  assert_string_equal (
      note,
      "[#1 starting the dev server ended on its own \xc2\xb7 exit status 1 "
      "\xc2\xb7 2 lines; what it printed:]\nready\nbye\n[exit status 1]");
  free (note);
  /* Told exactly once.  */
  assert_null (supervisor_take_endings (f->sup, &len));
  drive_until_cleaned (f, 1);
  out = supervisor_output (f->sup, 1, &len);
  assert_string_equal (out, "[no command is running as #1; nothing is running "
                            "now; a command that has ended leaves this list, "
                            "and what it printed is handed over on its own]");
  free (out);
}

static void
test_output_of_a_quiet_command (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "sleep 5", .background = true };
  struct command *cmd = start_req (f, &req);
  drive_until (f, &f->answered);
  assert_string_equal (
      f->text,
      "[left running as #1; ask bash_output what it has printed so far, and "
      "its output is handed over when it ends; do not poll or wait for it]");
  size_t len;
  char *out = supervisor_output (f->sup, 1, &len);
  assert_string_equal (out, "[#1 is running and has printed nothing yet]");
  free (out);
  supervisor_stop (f->sup, cmd);
  drive_until_cleaned (f, 1);
  assert_int_equal (f->endings, 0); /* stopped from the list: no line */
  char *note = supervisor_take_endings (f->sup, &len);
  assert_string_equal (note,
                       "[#1 Bash(sleep 5) was stopped from the list \xc2\xb7 "
                       "killed by signal 9 \xc2\xb7 0 lines; what it "
                       "printed:]\n(no output)\n[the command was killed]");
  free (note);
}

static void
test_ctrl_b_leaves_it_running (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "echo compiling; sleep 5" };
  struct command *cmd = start_req (f, &req);
  drive_for (f, 150);
  assert_int_equal (f->answered, 0);
  assert_true (supervisor_detach (f->sup, cmd));
  assert_int_equal (f->answered, 1);
  assert_string_equal (
      f->text,
      "compiling\n\n[left running as #1; the developer pressed ctrl+b to leave "
      "it running rather than keep waiting; carry on with what does not depend "
      "on it; ask bash_output what it has printed so far, and its output is "
      "handed over when it ends; do not poll or wait for it]");
  assert_false (supervisor_detach (f->sup, cmd));
  supervisor_stop (f->sup, cmd);
  drive_until_cleaned (f, 1);
}

static void
test_timeout_with_background_is_refused (void **state)
{
  struct fixture *f = *state;
  struct command_request req
      = { .line = "npm run dev", .background = true, .timeout_seconds = 30 };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), -1);
  assert_string_equal (
      err->msg,
      "[refused: timeout and background were both sent, and a command left "
      "running has no deadline; send one or the other; nothing was run]");
  cr_error_free (err);
  assert_int_equal (supervisor_slots_held (f->sup), 0);
}

/* The pid of this process's newest child, the command's scope keeper (an
 * earlier test that failed may have left an older one behind).  */
static pid_t
keeper_pid (void)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int) getpid ());
  FILE *fp = fopen (path, "r");
  assert_non_null (fp);
  assert_non_null (fgets (buf, sizeof buf, fp));
  fclose (fp);
  pid_t newest = 0;
  for (char *p = buf, *end; *p != '\0'; p = end)
    {
      long pid = strtol (p, &end, 10);
      if (end == p)
        break;
      if (pid > newest)
        newest = (pid_t) pid;
    }
  assert_true (newest > 0);
  return newest;
}

static void
test_stop_failed_keeps_the_slot_and_retries (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "sleep 30", .background = true };
  struct command *cmd = start_req (f, &req);
  drive_until (f, &f->answered);
  supervisor_set_stop_ms (f->sup, 300);
  /* The keeper cannot answer while stopped: cleanup cannot finish.  */
  pid_t keeper = keeper_pid ();
  assert_int_equal (kill (keeper, SIGSTOP), 0);
  supervisor_stop (f->sup, cmd);
  drive_until (f, &f->stop_failed);
  assert_int_equal (f->cleaned, 0);
  assert_int_equal (supervisor_slots_held (f->sup), 1);
  assert_true (command_left_running (cmd));
  assert_false (supervisor_has_endings (f->sup));
  /* x again, once the keeper can answer.  */
  assert_int_equal (kill (keeper, SIGCONT), 0);
  supervisor_stop (f->sup, cmd);
  drive_until_cleaned (f, 1);
  assert_int_equal (f->stop_failed, 1);
  assert_int_equal (supervisor_slots_held (f->sup), 0);
}

/* --- publication: compat with a publish op -------------------------- */

/* What the fake publication does, shared with the child process each
 * publication runs in (core/pubjob): busy this many times (-1: always),
 * then done after sleeping sleep_ms; calls counts the attempts.  */
struct fake_publication
{
  int busy_left;
  int calls;
  int sleep_ms;
};
static struct fake_publication *shared;
static const struct sandbox_backend_ops *compat_ops;
static struct sandbox_backend_ops publishing_ops;

static int
fake_publish (struct sandbox_session *s, const char *call_id,
              struct sandbox_publication *out, struct cr_error **err)
{
  shared->calls++;
  if (shared->busy_left != 0)
    {
      if (shared->busy_left > 0)
        shared->busy_left--;
      out->busy = true;
      return 0;
    }
  if (shared->sleep_ms > 0)
    usleep ((useconds_t) shared->sleep_ms * 1000);
  out->note = strdup ("[published: the test says so]");
  out->outcome = "published";
  return 0;
}

/* compat's prepare, giving sessions that publish.  */
static int
publishing_prepare (struct sandbox_backend *b,
                    const struct sandbox_policy *policy,
                    struct sandbox_session **out, struct cr_error **err)
{
  int rc = compat_ops->prepare (b, policy, out, err);
  if (rc == 0)
    (*out)->ops = &publishing_ops;
  return rc;
}

static int
setup_publishing (void **state)
{
  setup (state);
  struct fixture *f = *state;
  compat_ops = f->backend->ops;
  publishing_ops = *compat_ops;
  publishing_ops.prepare = publishing_prepare;
  publishing_ops.publish = fake_publish;
  f->backend->ops = &publishing_ops;
  supervisor_set_publish_ms (f->sup, 300, 100);
  if (shared == NULL)
    {
      shared = mmap (NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      assert_true (shared != MAP_FAILED);
    }
  memset (shared, 0, sizeof *shared);
  return 0;
}

static void
test_publication_note_ends_the_result (void **state)
{
  struct fixture *f = *state;
  shared->busy_left = 3;
  start_ok (f, "echo hi");
  drive_until_cleaned (f, 1);
  assert_string_equal (f->text, "hi\n[published: the test says so]");
  assert_int_equal (shared->calls, 4);
}

/* The inline answer (sandbox_publish_inline) the fake gives when
 * inline_answers is set, counted in this process: a command that wrote
 * nothing is answered without a publishing process.  */
static bool inline_answers;
static int inline_calls;

static int
fake_publish_inline (struct sandbox_session *s, struct sandbox_publication *out)
{
  (void) s;
  inline_calls++;
  if (!inline_answers)
    return 0;
  out->note = strdup ("[unchanged: told inline]");
  out->outcome = "unchanged";
  return 1;
}

static void
test_publication_answered_inline (void **state)
{
  struct fixture *f = *state;
  publishing_ops.publish_inline = fake_publish_inline;
  inline_answers = true;
  inline_calls = 0;
  start_ok (f, "echo hi");
  drive_until_cleaned (f, 1);
  assert_string_equal (f->text, "hi\n[unchanged: told inline]");
  assert_int_equal (inline_calls, 1);
  /* No publishing process ran publish.  */
  assert_int_equal (shared->calls, 0);
}

static void
test_publication_inline_declined (void **state)
{
  struct fixture *f = *state;
  publishing_ops.publish_inline = fake_publish_inline;
  inline_answers = false;
  inline_calls = 0;
  start_ok (f, "echo hi");
  drive_until_cleaned (f, 1);
  assert_string_equal (f->text, "hi\n[published: the test says so]");
  assert_int_equal (inline_calls, 1);
  assert_int_equal (shared->calls, 1);
}

/* A tick of the loop while a publication runs.  */
static void
count_tick (struct loop *loop, void *data)
{
  int *ticks = data;
  (*ticks)++;
  loop_add_timer (loop, 20, count_tick, data);
}

/* A long publication runs beside the loop: timers (and so drawing, keys
 * and other commands' output) keep being served while it works.  */
static void
test_publication_leaves_the_loop_free (void **state)
{
  struct fixture *f = *state;
  int ticks = 0;
  shared->sleep_ms = 600;
  start_ok (f, "echo hi");
  loop_add_timer (f->loop, 20, count_tick, &ticks);
  uint64_t start = clock_now_ms ();
  drive_until_cleaned (f, 1);
  assert_true (clock_now_ms () - start >= 600);
  /* Ticks every 20 ms through a 600 ms publication: far more than the
   * one or two a loop held by the publication would have seen.  */
  assert_true (ticks >= 10);
  assert_string_equal (f->text, "hi\n[published: the test says so]");
  assert_int_equal (shared->calls, 1);
}

static void
test_publication_wait_keeps_the_slot (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "true" };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  shared->busy_left = -1;
  /* A long overdue ceiling, so that only the stops below can end it.  */
  supervisor_set_publish_ms (f->sup, 5000, 100);
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), 0);
  uint64_t start = clock_now_ms ();
  while (clock_now_ms () - start < 200)
    assert_int_equal (loop_run_once (f->loop, 50, &err), 0);
  /* Ended, waiting to publish: no answer yet, the slot still held.  */
  assert_int_equal (f->answered, 0);
  assert_int_equal (supervisor_slots_held (f->sup), 1);
  assert_true (shared->calls > 1);
  /* x in the list leaves it to be reported: past the short ceiling it
   * still waits, its slot held.  */
  supervisor_stop (f->sup, cmd);
  start = clock_now_ms ();
  while (clock_now_ms () - start < 150)
    assert_int_equal (loop_run_once (f->loop, 50, &err), 0);
  assert_int_equal (f->answered, 0);
  assert_int_equal (supervisor_slots_held (f->sup), 1);
  /* Esc does not stop it either, but cuts its wait to the short ceiling.  */
  supervisor_interrupt (f->sup, cmd);
  drive_until_cleaned (f, 1);
  assert_string_equal (
      f->text, "(no output)\n[published nothing: another publication held "
               "the workspace for longer than 1 seconds, so what the "
               "command wrote was discarded]");
  assert_int_equal (f->last.ending, RESULT_EXITED);
}

static void
test_publication_wait_past_the_deadline (void **state)
{
  struct fixture *f = *state;
  struct command_request req = { .line = "true", .timeout_seconds = 0.2 };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  shared->busy_left = -1;
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), 0);
  uint64_t start = clock_now_ms ();
  drive_until_cleaned (f, 1);
  /* Its deadline did not stop it; a ceiling past the deadline did.  */
  assert_true (clock_now_ms () - start >= 450);
  assert_int_equal (f->last.ending, RESULT_TIMED_OUT);
  assert_string_equal (
      f->text, "(no output)\n[stopped: the command ran too long]\n"
               "[published nothing: another publication held the "
               "workspace for longer than 1 seconds, so what the command "
               "wrote was discarded]");
}

/* --- a cleanup the backend cannot confirm ---------------------------- */

/* The keeper's words when it is gone without confirming the scope empty
 * (bwrap's broken status channel, a container still on its engine).  */
#define GONE_WORDS "the test's keeper is gone without confirming"
static struct sandbox_backend_ops unconfirmed_ops;

/* compat's next event, with its DONE (the scope confirmed empty) turned
 * into the failure a backend reports when it cannot confirm it.  */
static int
unconfirmed_next_event (struct sandbox_session *s, struct sandbox_event *ev,
                        struct cr_error **err)
{
  int rc = compat_ops->next_event (s, ev, err);
  if (rc == 0 && ev->kind == SANDBOX_EVENT_DONE)
    return cr_error_set (err, 0, "%s", GONE_WORDS);
  return rc;
}

/* compat's prepare, giving sessions that never confirm their cleanup.  */
static int
unconfirmed_prepare (struct sandbox_backend *b,
                     const struct sandbox_policy *policy,
                     struct sandbox_session **out, struct cr_error **err)
{
  int rc = compat_ops->prepare (b, policy, out, err);
  if (rc == 0)
    (*out)->ops = &unconfirmed_ops;
  return rc;
}

/* Sessions that keep their writes (as bwrap's and the container's do),
 * so that the result waits for the scope, and never confirm it empty.  */
static int
setup_unconfirmed (void **state)
{
  setup_publishing (state);
  struct fixture *f = *state;
  unconfirmed_ops = publishing_ops;
  unconfirmed_ops.prepare = unconfirmed_prepare;
  unconfirmed_ops.next_event = unconfirmed_next_event;
  f->backend->ops = &unconfirmed_ops;
  return 0;
}

/* An unconfirmed cleanup: the result comes back with its output, its
 * ending and the failure; the slot stays held, and the next command is
 * refused with the failure's words.  */
static void
test_unconfirmed_cleanup_reports_and_blocks (void **state)
{
  struct fixture *f = *state;
  struct cr_error *err = NULL;
  start_ok (f, "echo hi; exit 3");
  uint64_t start = clock_now_ms ();
  while (f->answered < 1 && clock_now_ms () - start < 10000)
    assert_int_equal (loop_run_once (f->loop, 100, &err), 0);
  assert_int_equal (f->answered, 1);
  assert_string_equal (f->text,
                       "hi\n[exit status 3]\n[cleanup failed: " GONE_WORDS
                       "; nothing the command wrote was published]");
  assert_int_equal (f->last.ending, RESULT_EXITED);
  assert_int_equal (f->last.exit_status, 3);
  assert_int_equal (shared->calls, 0);
  start = clock_now_ms ();
  while (clock_now_ms () - start < 200)
    assert_int_equal (loop_run_once (f->loop, 50, &err), 0);
  assert_int_equal (f->cleaned, 0);
  assert_int_equal (supervisor_slots_held (f->sup), 1);
  struct command_request req = { .line = "echo again" };
  struct command *cmd = NULL;
  assert_int_equal (
      supervisor_start (f->sup, &req, listener_for (f), &cmd, &err), -1);
  assert_non_null (strstr (err->msg, "an earlier command's cleanup was not "
                                     "confirmed (" GONE_WORDS
                                     "); no command is prepared again until "
                                     "crucible restarts"));
  cr_error_free (err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_result_of_a_command, setup, teardown),
    cmocka_unit_test_setup_teardown (test_publication_note_ends_the_result,
                                     setup_publishing, teardown),
    cmocka_unit_test_setup_teardown (test_publication_leaves_the_loop_free,
                                     setup_publishing, teardown),
    cmocka_unit_test_setup_teardown (test_publication_answered_inline,
                                     setup_publishing, teardown),
    cmocka_unit_test_setup_teardown (test_publication_inline_declined,
                                     setup_publishing, teardown),
    cmocka_unit_test_setup_teardown (test_publication_wait_keeps_the_slot,
                                     setup_publishing, teardown),
    cmocka_unit_test_setup_teardown (test_publication_wait_past_the_deadline,
                                     setup_publishing, teardown),
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
    cmocka_unit_test_setup_teardown (
        test_background_failing_at_once_is_a_result, setup, teardown),
    cmocka_unit_test_setup_teardown (
        test_background_left_running_and_its_ending, setup, teardown),
    cmocka_unit_test_setup_teardown (test_output_of_a_quiet_command, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_ctrl_b_leaves_it_running, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_timeout_with_background_is_refused,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (
        test_stop_failed_keeps_the_slot_and_retries, setup, teardown),
    cmocka_unit_test_setup_teardown (
        test_unconfirmed_cleanup_reports_and_blocks, setup_unconfirmed,
        teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
