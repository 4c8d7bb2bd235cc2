/* `crucible run`: the supervisor, the compatibility backend and a listener
 * that prints the result, exactly as the model would get it.  */
#include <config.h>

#include "tui/cmd_run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/notes.h"
#include "core/permit.h"
#include "core/supervisor.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "tui/host.h"
#include "tui/options.h"

/* How long crucible waits, after the result, for the scope to be confirmed
 * empty before it gives up and says so.  */
#define RUN_CLEANUP_MS 5000

struct run_state
{
  struct loop *loop;
  struct supervisor *sup;
  int exit_status;
  int host_signal; /* the signal that interrupted crucible, or 0 */
  bool reported;
  bool cleaned;
  bool cleanup_expired;
};

/* Write all of len bytes to standard output.  */
static bool
run_write_stdout (const char *s, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (STDOUT_FILENO, s, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      s += n;
      len -= (size_t) n;
    }
  return true;
}

/* Print the model's text and one newline.  */
static void
run_print_result (struct run_state *st, const char *text, size_t len)
{
  if (!run_write_stdout (text, len) || !run_write_stdout ("\n", 1))
    {
      fprintf (stderr,
               _ ("crucible: writing the result to standard output: %s\n"),
               strerror (errno));
      st->exit_status = RUN_EXIT_REFUSED;
    }
}

/* The exit status that says how the command ended.  */
static int
run_exit_status (const struct command_outcome *out)
{
  switch (out->ending)
    {
    case RESULT_EXITED:
      return out->exit_status;
    case RESULT_SIGNALED:
      return 128 + out->signal;
    case RESULT_TIMED_OUT:
      return RUN_EXIT_TIMEOUT;
    case RESULT_CEILING:
      return RUN_EXIT_CEILING;
    case RESULT_RUNNING:
      break;
    }
  return RUN_EXIT_REFUSED;
}

/* The call's answer: run never asks to be left running, so it is the
 * result or a refusal.  */
static void
run_on_answered (void *data, struct command *cmd,
                 const struct command_answer *answer)
{
  struct run_state *st = data;
  st->reported = true;
  st->exit_status = answer->outcome != NULL ? run_exit_status (answer->outcome)
                                            : RUN_EXIT_REFUSED;
  run_print_result (st, answer->text, answer->text_len);
}

static void
run_on_cleaned (void *data, struct command *cmd)
{
  struct run_state *st = data;
  st->cleaned = true;
}

/* SIGINT, SIGTERM or SIGHUP to crucible: stop the command, report it, and
 * leave with the signal's status.  */
static void
run_on_signal (struct loop *loop, int signo, void *data)
{
  struct run_state *st = data;
  if (st->host_signal == 0)
    st->host_signal = signo;
  supervisor_stop_all (st->sup);
}

/* The cleanup wait ran out.  */
static void
run_on_cleanup_timeout (struct loop *loop, void *data)
{
  struct run_state *st = data;
  st->cleanup_expired = true;
}

/* Print a person-facing error and return the refusal status.  */
static int
run_fail (struct cr_error *err)
{
  fprintf (stderr, "crucible: %s\n", err->msg);
  cr_error_free (err);
  return RUN_EXIT_REFUSED;
}

/* Print run's usage.  */
static void
run_usage (FILE *out)
{
  fputs (_ ("Usage: crucible run [--timeout S] [--env NAME=VALUE]... "
            "[--description TEXT] -- COMMAND\n"
            "Run COMMAND through sh -c in the current directory, as one bash "
            "call,\n"
            "and print exactly the result the model would get.\n"),
         out);
}

/* Print a refusal in the words the model is given.  */
static void
run_refuse (struct run_state *st, const char *why)
{
  char *text = notes_refusal (why);
  run_print_result (st, text, strlen (text));
  free (text);
}

/* Refuse a line the deny rules match (the person typed it, so nothing
 * else is asked).  */
static int
run_check (const struct rules *rules, const char *line, struct run_state *st)
{
  struct permit p;
  permit_decide (rules, line, true, false, &p);
  if (p.verdict == PERMIT_REFUSE)
    run_print_result (st, p.refusal, strlen (p.refusal));
  permit_clear (&p);
  return p.verdict == PERMIT_REFUSE ? -1 : 0;
}

/* Drive the loop until the command is reported and its scope cleaned.
 * Every wait is bounded: the scope gets RUN_CLEANUP_MS after the result,
 * after an interrupting signal, and after the deadline, so a keeper that
 * stops answering cannot hold crucible forever.  */
static int
run_drive (struct run_state *st, uint64_t deadline_ms, struct cr_error **err)
{
  uint64_t backstop = loop_add_timer (st->loop, deadline_ms + RUN_CLEANUP_MS,
                                      run_on_cleanup_timeout, st);
  uint64_t cleanup_timer = 0;
  while (!st->cleaned && !st->cleanup_expired)
    {
      if (loop_run_once (st->loop, -1, err) < 0)
        return -1;
      if ((st->reported || st->host_signal != 0) && cleanup_timer == 0)
        cleanup_timer = loop_add_timer (st->loop, RUN_CLEANUP_MS,
                                        run_on_cleanup_timeout, st);
    }
  loop_cancel_timer (st->loop, cleanup_timer);
  loop_cancel_timer (st->loop, backstop);
  return 0;
}

/* Run one command once options, configuration and rules are in hand.  */
static int
run_command (const struct run_options *opts, struct host *h)
{
  static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  struct run_state st = { .exit_status = RUN_EXIT_REFUSED };
  struct cr_error *err = NULL;
  struct command *cmd = NULL;

  if (run_check (h->rules, opts->command, &st) < 0)
    return RUN_EXIT_REFUSED;
  int started = host_start (h, &err);
  if (started == HOST_REFUSED)
    {
      run_refuse (&st, h->refusal);
      return RUN_EXIT_REFUSED;
    }
  if (started < 0)
    return run_fail (err);
  st.loop = h->loop;
  st.sup = h->sup;
  supervisor_set_exits_after (st.sup, true);
  if (host_watch_signals (h, signals, sizeof signals / sizeof *signals,
                          run_on_signal, &st, &err)
      < 0)
    goto out;

  struct command_request req = { .line = opts->command,
                                 .description = opts->description,
                                 .timeout_seconds = opts->timeout_seconds,
                                 .env = opts->env,
                                 .n_env = opts->n_env };
  struct supervisor_listener listener
      = { .answered = run_on_answered, .cleaned = run_on_cleaned, .data = &st };
  int begun = supervisor_start (st.sup, &req, &listener, &cmd, &err);
  /* Retention (journal.keepDays) is nothing the command needs: it runs
   * while the command starts, not before (HOST_RETAIN_LATER).  */
  host_retain (h);
  if (begun < 0)
    {
      run_print_result (&st, err->msg, strlen (err->msg));
      st.exit_status = RUN_EXIT_REFUSED;
      cr_error_clear (&err);
      goto out;
    }
  if (run_drive (&st, supervisor_deadline_ms (h->cfg, opts->timeout_seconds),
                 &err)
      < 0)
    goto out;
  if (!st.cleaned)
    fprintf (stderr, _ ("crucible: could not confirm that every process the "
                        "command started has ended\n"));

out:
  if (err != NULL)
    st.exit_status = run_fail (err);
  if (st.host_signal != 0)
    return 128 + st.host_signal;
  return st.exit_status;
}

int
cmd_run (int argc, char **argv)
{
  struct run_options opts;
  struct cr_error *err = NULL;
  struct host h;

  if (run_options_parse (&opts, argc, argv, &err) < 0)
    {
      run_options_clear (&opts);
      fprintf (stderr, "crucible: run: %s\n", err->msg);
      run_usage (stderr);
      cr_error_free (err);
      return RUN_EXIT_REFUSED;
    }
  if (opts.help)
    {
      run_usage (stdout);
      run_options_clear (&opts);
      return 0;
    }
  int status = host_open (&h, HOST_RETAIN_LATER, NULL, &err) < 0
                   ? run_fail (err)
                   : run_command (&opts, &h);
  host_close (&h);
  run_options_clear (&opts);
  return status;
}
