/* `crucible session`: the session engine with a line front end.  Lines on
 * standard input are prompts (or /cancel, /detach, /quit, or the answer to
 * a question); the transcript goes to standard output, one line per
 * event.  */
#include <config.h>

#include "tui/cmd_session.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/session.h"
#include "core/supervisor.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "tui/front.h"
#include "tui/host.h"
#include "tui/options.h"

extern char **environ;

/* The longest prompt line kept; the rest of a longer line is dropped.  */
#define SESSION_MAX_PROMPT ((size_t) 1 << 20)

/* Why a call cannot be asked about here: model-facing, never translated.  */
#define SESSION_NO_TERMINAL                                                    \
  "crucible session reads its prompts from a pipe, not a terminal, and was "   \
  "not started with --yes"

struct session_options_cli
{
  const char *agent; /* --agent, or NULL */
  const char *dir;   /* DIR, or NULL for the current directory */
  bool yes;
  bool help;
};

struct line_fe
{
  struct loop *loop;
  struct session *session;
  bool yes;
  bool tty;
  struct session_call *asking; /* a question waiting for a line */
  struct buf in;
  bool in_open;
  int host_signal;
  bool expired;
  uint64_t exit_timer;
};

/* Print text from a peer (the agent, a command, a project file) with each
 * line after the first indented; it goes through the shared sanitiser, so
 * no control sequence of theirs reaches the person's terminal.  */
static void
line_print_indented (const char *first, const char *text, size_t len,
                     const char *indent)
{
  struct buf shown = BUF_INIT;
  utf8_show (&shown, text, len, UTF8_SHOW_NEWLINES);
  fputs (first, stdout);
  for (size_t i = 0; i < shown.len; i++)
    {
      putchar (shown.data[i]);
      if (shown.data[i] == '\n' && i + 1 < shown.len)
        fputs (indent, stdout);
    }
  putchar ('\n');
  buf_free (&shown);
}

/* Print first, one line of text from a peer (sanitised, newlines shown as
 * \x0a) and a newline.  */
static void
line_print_one (const char *first, const char *text)
{
  cleanup_free char *shown = utf8_show_dup (text, 0);
  printf ("%s%s\n", first, shown);
}

/* A turn starts: the prompt, or why the agent is told something.  */
static void
line_turn_started (void *data, enum session_turn_reason reason,
                   const char *prompt)
{
  if (reason == SESSION_TURN_PROMPT)
    line_print_one ("› ", prompt);
  else
    printf ("› %s\n", _ ("(a command left running ended; the agent is told)"));
}

/* The agent's text.  */
static void
line_text (void *data, const char *text)
{
  line_print_indented ("◆ ", text, strlen (text), "  ");
}

/* A call is shown: ● Bash(LINE) · DESCRIPTION.  */
static void
line_call (void *data, const struct session_call *call)
{
  const char *desc = session_call_description (call);
  const char *label = session_call_label (call);
  line_print_indented ("● ", label, strlen (label), "  ");
  if (desc != NULL)
    line_print_one ("  · ", desc);
}

/* A call's answer, each line indented four columns.  */
static void
line_result (void *data, const struct session_call *call, const char *text,
             size_t len, bool is_error)
{
  line_print_indented ("    ", text, len, "    ");
}

/* Ask about a call: --yes allows it, a terminal answers it with the next
 * line, and a pipe cannot answer, so it is refused saying so.  */
static void
line_ask (void *data, struct session_call *call)
{
  struct line_fe *fe = data;
  const char *label = session_call_label (call);
  cleanup_free char *ask = xasprintf ("? %s ", _ ("allow"));
  line_print_one (ask, label);
  if (session_call_background (call))
    printf ("  %s\n", _ ("it will still be running after the turn ends"));
  if (fe->yes)
    {
      printf ("  %s\n", _ ("allowed (--yes)"));
      session_answer_approval (fe->session, call, true);
    }
  else if (!fe->tty || !fe->in_open)
    {
      printf ("  %s\n", _ ("refused: there is no terminal to ask on; start "
                           "crucible session with --yes to allow the agent's "
                           "calls"));
      session_cannot_ask (fe->session, call, SESSION_NO_TERMINAL);
    }
  else
    {
      printf ("  %s ", _ ("allow it? [y/N]"));
      fflush (stdout);
      fe->asking = call;
    }
}

/* A question is no longer wanted.  */
static void
line_withdrawn (void *data, const struct session_call *call)
{
  struct line_fe *fe = data;
  if (fe->asking == call)
    fe->asking = NULL;
  printf ("  %s\n", _ ("(the question was withdrawn)"));
}

/* A command left running ended.  */
static void
line_ending (void *data, const char *line)
{
  line_print_one ("", line);
}

/* A person-facing notice.  */
static void
line_notice (void *data, const char *text)
{
  line_print_one ("! ", text);
}

/* The answer to a question, from the terminal.  */
static void
line_answer (struct line_fe *fe, const char *line)
{
  struct session_call *call = fe->asking;
  fe->asking = NULL;
  bool allow = strcmp (line, "y") == 0 || strcmp (line, "yes") == 0
               || strcmp (line, "Y") == 0;
  session_answer_approval (fe->session, call, allow);
}

/* One line from standard input.  */
static void
line_handle (struct line_fe *fe, const char *line)
{
  if (strcmp (line, "/cancel") == 0)
    {
      if (!session_cancel (fe->session))
        printf ("! %s\n", _ ("no turn is running"));
    }
  else if (strcmp (line, "/detach") == 0)
    {
      if (!session_detach (fe->session))
        printf ("! %s\n", _ ("no command of this turn is running"));
    }
  else if (strcmp (line, "/quit") == 0)
    session_close (fe->session);
  else if (fe->asking != NULL)
    line_answer (fe, line);
  else if (line[strspn (line, " \t")] != '\0')
    session_prompt (fe->session, line);
}

/* Split what arrived into lines.  */
static void
line_take (struct line_fe *fe, const char *data, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (data[i] != '\n')
        {
          if (fe->in.len < SESSION_MAX_PROMPT)
            buf_putc (&fe->in, data[i]);
          continue;
        }
      char *line = buf_steal (&fe->in, NULL);
      line_handle (fe, line);
      free (line);
    }
}

/* Standard input closed: the last partial line, then no more prompts.  */
static void
line_input_closed (struct line_fe *fe)
{
  loop_remove_fd (fe->loop, STDIN_FILENO);
  fe->in_open = false;
  if (fe->in.len > 0)
    {
      char *line = buf_steal (&fe->in, NULL);
      line_handle (fe, line);
      free (line);
    }
  if (fe->asking != NULL)
    line_answer (fe, "");
  session_close (fe->session);
}

/* Standard input is readable.  */
static void
line_on_input (struct loop *loop, int fd, short revents, void *data)
{
  struct line_fe *fe = data;
  char chunk[4096];
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      line_input_closed (fe);
      return;
    }
  line_take (fe, chunk, (size_t) n);
}

/* SIGINT cancels the running turn, or ends the session when none runs;
 * SIGTERM and SIGHUP end it now.  */
static void
line_on_signal (struct loop *loop, int signo, void *data)
{
  struct line_fe *fe = data;
  if (signo == SIGINT && session_cancel (fe->session))
    return;
  if (fe->host_signal == 0)
    fe->host_signal = signo;
  session_end_now (fe->session);
}

/* The wait for everything to be gone ran out.  */
static void
line_on_exit_timeout (struct loop *loop, void *data)
{
  struct line_fe *fe = data;
  fe->exit_timer = 0;
  fe->expired = true;
}

/* Run the loop until the session is done, bounding the final wait.  */
static int
line_drive (struct line_fe *fe, struct cr_error **err)
{
  while (!session_done (fe->session) && !fe->expired)
    {
      if (loop_run_once (fe->loop, -1, err) < 0)
        return -1;
      if (session_stopping (fe->session) && fe->exit_timer == 0)
        fe->exit_timer = loop_add_timer (fe->loop, SESSION_EXIT_WAIT_MS,
                                         line_on_exit_timeout, fe);
    }
  loop_cancel_timer (fe->loop, fe->exit_timer);
  return 0;
}

/* Watch standard input and the signals.  */
static int
line_watch (struct line_fe *fe, struct cr_error **err)
{
  const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    if (loop_add_signal (fe->loop, signals[i], line_on_signal, fe, err) < 0)
      return -1;
  if (loop_add_fd (fe->loop, STDIN_FILENO, POLLIN, line_on_input, fe, err) < 0)
    return -1;
  fe->in_open = true;
  return 0;
}

/* Print a person-facing error and return the failure status.  */
static int
session_cli_fail (struct cr_error *err)
{
  cleanup_free char *shown = utf8_show_dup (err->msg, 0);
  fprintf (stderr, "crucible: session: %s\n", shown);
  cr_error_free (err);
  return SESSION_EXIT_FAILED;
}

/* Run the session once the workspace, configuration and rules are in
 * hand.  */
static int
session_cli_run (const struct session_options_cli *opts, struct host *h)
{
  struct line_fe fe = { .yes = opts->yes, .tty = isatty (STDIN_FILENO) };
  struct cr_error *err = NULL;
  int status = 0;

  int started = host_start (h, &err);
  if (started == HOST_REFUSED)
    cr_error_set (&err, 0, "%s", h->refusal);
  if (started != 0)
    return session_cli_fail (err);
  fe.loop = h->loop;
  /* The configured MCP servers, each turn a run of theirs.  */
  struct mcphost_config servers = { .loop = h->loop,
                                    .backend = h->backend,
                                    .config = h->cfg,
                                    .workspace = h->workspace,
                                    .host_env = environ,
                                    .journal = h->journal };
  struct session_options so
      = { .agent_command
          = opts->agent != NULL ? opts->agent : h->cfg->agent_command,
          .workspace = h->workspace,
          .agent_env = environ,
          .rules = h->rules,
          .servers = &servers };
  struct session_frontend sfe = { .turn_started = line_turn_started,
                                  .text = line_text,
                                  .call = line_call,
                                  .result = line_result,
                                  .ask = line_ask,
                                  .withdrawn = line_withdrawn,
                                  .ending = line_ending,
                                  .notice = line_notice,
                                  .data = &fe };
  fe.session = session_new (fe.loop, h->sup, &so, &sfe);
  if (line_watch (&fe, &err) < 0 || line_drive (&fe, &err) < 0)
    status = session_cli_fail (err);
  else if (!session_done (fe.session))
    {
      fprintf (stderr, _ ("crucible: could not confirm that every process "
                          "the session started has ended\n"));
      status = SESSION_EXIT_FAILED;
    }
  fflush (stdout);
  session_free (fe.session);
  buf_free (&fe.in);
  if (fe.host_signal != 0 && status == 0)
    return 128 + fe.host_signal;
  return status;
}

/* Print the usage.  */
static void
session_cli_usage (FILE *out)
{
  fputs (_ ("Usage: crucible session [--agent CMD] [--yes] [DIR]\n"
            "Run a session in DIR (default: the current directory), reading "
            "prompts\n"
            "from standard input, one per line, and writing the transcript to "
            "standard\n"
            "output.  Without an agent, each prompt line is one bash call.\n"),
         out);
}

/* crucible session's options.  */
enum session_cli_option
{
  SESSION_OPT_AGENT,
  SESSION_OPT_YES,
  SESSION_OPT_HELP
};

static const struct options_spec session_cli_specs[] = {
  { "--agent", NULL, SESSION_OPT_AGENT, true },
  { "--yes", "-y", SESSION_OPT_YES, false },
  { "--help", "-h", SESSION_OPT_HELP, false },
};

static const struct options_table session_cli_table
    = OPTIONS_TABLE (session_cli_specs, OPTIONS_OPERANDS);

/* Parse the options; errors say which option and why.  */
static int
session_cli_parse (struct session_options_cli *o, int argc, char **argv,
                   struct cr_error **err)
{
  struct options_parser p;
  int c;
  options_begin (&p, &session_cli_table, argc, argv);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case SESSION_OPT_AGENT:
        o->agent = p.value;
        break;
      case SESSION_OPT_YES:
        o->yes = true;
        break;
      case SESSION_OPT_HELP:
        o->help = true;
        break;
      default:
        return options_error (&p, c, err);
      }
  return front_session_operands (argc, argv, p.next, &o->dir, o->agent, err);
}

int
cmd_session (int argc, char **argv)
{
  struct session_options_cli opts = { 0 };
  struct cr_error *err = NULL;
  struct host h;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (session_cli_parse (&opts, argc, argv, &err) < 0)
    {
      session_cli_fail (err);
      session_cli_usage (stderr);
      return SESSION_EXIT_FAILED;
    }
  if (opts.help)
    {
      session_cli_usage (stdout);
      return 0;
    }
  int status = host_open (&h, HOST_IN_DIR, opts.dir, &err) < 0
                   ? session_cli_fail (err)
                   : session_cli_run (&opts, &h);
  host_close (&h);
  return status;
}
