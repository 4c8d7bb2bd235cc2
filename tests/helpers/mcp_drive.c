/* A test-only driver of core/mcpclient.c (never installed): starts the
 * server command given after "--" on two pipes, speaks to it through the
 * client, and prints what it learns, one fact a line, for the integration
 * tests to assert on:
 *
 *   protocol VERSION · tool NAME · skipped NAME · elicited MESSAGE
 *   call TOOL ok|is_error, then the result's text, then "end"
 *   call TOOL error: MESSAGE · added NAME… (after list_changed)
 *   failed: MESSAGE · exit STATUS (the server's, after its input closed)
 *
 * The handshake and each call have 60 s unless told otherwise.
 *
 * mcp_drive [--handshake-ms N] [--call-ms N] [--frame-max N] [--root DIR]
 *           [--hide WORD] [--elicit accept|decline] [--wait-changed]
 *           [--call TOOL JSON]... -- COMMAND [ARG]...  */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/mcpclient.h"
#include "lib/clock.h"
#include "lib/xalloc.h"

#define DRIVE_MAX_CALLS 16

struct drive
{
  struct loop *loop;
  struct mcpclient *c;
  const char *hide;
  const char *elicit; /* "accept", "decline" or NULL */
  const char *tools[DRIVE_MAX_CALLS], *args[DRIVE_MAX_CALLS];
  size_t n_calls, next_call;
  uint64_t call_ms;
  bool wait_changed, changed, calling, failed, done;
};

/* Hide every occurrence of the word given with --hide.  */
static void
drive_hide (void *data, char *s, size_t len)
{
  struct drive *d = data;
  size_t n = strlen (d->hide);
  for (char *q = s;
       n > 0 && (q = memmem (q, len - (size_t) (q - s), d->hide, n));)
    memset (q, '*', n);
}

static void drive_next (struct drive *d);

/* A call's answer: printed, then the next call.  */
static void
drive_done (void *data, const struct mcpclient_result *r)
{
  struct drive *d = data;
  const char *tool = d->tools[d->next_call - 1];
  if (r->error != NULL)
    printf ("call %s error: %s\n", tool, r->error->msg);
  else
    printf ("call %s %s\n%.*s\nend\n", tool, r->is_error ? "is_error" : "ok",
            (int) r->text_len, r->text);
  fflush (stdout);
  d->calling = false;
}

/* Make the next call, or finish when every call was made (and, with
 * --wait-changed, list_changed was heard).  */
static void
drive_next (struct drive *d)
{
  struct cr_error *err = NULL;
  if (d->calling || d->failed)
    return;
  if (d->next_call == d->n_calls)
    {
      d->done = !d->wait_changed || d->changed;
      return;
    }
  size_t i = d->next_call++;
  d->calling = true;
  if (mcpclient_call (d->c, d->tools[i], d->args[i], d->call_ms, drive_done, d,
                      &err)
      == NULL)
    {
      printf ("call %s error: %s\n", d->tools[i], err->msg);
      fflush (stdout);
      cr_error_free (err);
      d->calling = false;
    }
}

static void
drive_ready (void *data, struct mcpclient *c)
{
  size_t n;
  const struct mcpclient_tool *t = mcpclient_tools (c, &n);
  printf ("protocol %s\n", mcpclient_protocol (c));
  for (size_t i = 0; i < n; i++)
    printf ("tool %s\n", t[i].name);
  const char *const *skipped = mcpclient_skipped (c, &n);
  for (size_t i = 0; i < n; i++)
    printf ("skipped %s\n", skipped[i]);
  fflush (stdout);
}

static void
drive_changed (void *data, struct mcpclient *c, const char *const *added,
               size_t n)
{
  struct drive *d = data;
  printf ("added");
  for (size_t i = 0; i < n; i++)
    printf (" %s", added[i]);
  printf ("\n");
  fflush (stdout);
  d->changed = true;
}

static void
drive_failed (void *data, struct mcpclient *c, const struct cr_error *err)
{
  struct drive *d = data;
  printf ("failed: %s\n", err->msg);
  fflush (stdout);
  d->failed = true;
}

static void
drive_elicit (void *data, struct mcpclient *c, struct mcpclient_elicitation *e,
              const char *message, const char *schema)
{
  struct drive *d = data;
  printf ("elicited %s\n", message);
  fflush (stdout);
  mcpclient_elicit_answer (c, e,
                           strcmp (d->elicit, "accept") == 0
                               ? MCPCLIENT_ELICIT_ACCEPT
                               : MCPCLIENT_ELICIT_DECLINE,
                           "{}");
}

/* Start argv on two pipes: *to its input, *from its output.  */
static pid_t
drive_spawn (char **argv, int *to, int *from)
{
  int in[2], out[2];
  if (pipe (in) < 0 || pipe (out) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      close (in[0]);
      close (in[1]);
      close (out[0]);
      close (out[1]);
      execvp (argv[0], argv);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  *to = in[1];
  *from = out[0];
  return pid;
}

/* Close the server's input and wait for it (5 s, then SIGKILL).  */
static int
drive_reap (pid_t pid)
{
  int status = 0;
  for (int i = 0; i < 500; i++)
    {
      if (waitpid (pid, &status, WNOHANG) == pid)
        return WIFEXITED (status) ? WEXITSTATUS (status)
                                  : 128 + WTERMSIG (status);
      usleep (10000);
    }
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  return 128 + SIGKILL;
}

int
main (int argc, char **argv)
{
  struct drive d = { .call_ms = 60000 };
  uint64_t handshake_ms = 60000;
  size_t frame_max = 0;
  const char *root = "/";
  int i = 1;
  for (; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "--handshake-ms") == 0 && i + 1 < argc)
      handshake_ms = strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--call-ms") == 0 && i + 1 < argc)
      d.call_ms = strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--frame-max") == 0 && i + 1 < argc)
      frame_max = strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--root") == 0 && i + 1 < argc)
      root = argv[++i];
    else if (strcmp (argv[i], "--hide") == 0 && i + 1 < argc)
      d.hide = argv[++i];
    else if (strcmp (argv[i], "--elicit") == 0 && i + 1 < argc)
      d.elicit = argv[++i];
    else if (strcmp (argv[i], "--wait-changed") == 0)
      d.wait_changed = true;
    else if (strcmp (argv[i], "--call") == 0 && i + 2 < argc
             && d.n_calls < DRIVE_MAX_CALLS)
      {
        d.tools[d.n_calls] = argv[++i];
        d.args[d.n_calls++] = argv[++i];
      }
    else
      {
        fprintf (stderr, "mcp_drive: bad argument %s\n", argv[i]);
        return 2;
      }
  if (i + 1 >= argc)
    {
      fprintf (stderr, "mcp_drive: no server command after --\n");
      return 2;
    }
  signal (SIGPIPE, SIG_IGN);
  int to = -1, from = -1;
  pid_t pid = drive_spawn (argv + i + 1, &to, &from);
  struct cr_error *err = NULL;
  d.loop = loop_new (&err);
  if (pid < 0 || d.loop == NULL)
    return 2;
  struct mcpclient_config cfg = {
    .server = "test",
    .loop = d.loop,
    .from_server = from,
    .to_server = to,
    .root = root,
    .handshake_ms = handshake_ms,
    .frame_max = frame_max,
    .hide = d.hide != NULL ? drive_hide : NULL,
    .hide_data = &d,
    .elicit = d.elicit != NULL ? drive_elicit : NULL,
    .elicit_data = &d,
    .listener = { .ready = drive_ready,
                  .tools_changed = drive_changed,
                  .failed = drive_failed,
                  .data = &d },
  };
  d.c = mcpclient_new (&cfg, &err);
  if (d.c == NULL)
    {
      printf ("failed: %s\n", err->msg);
      return 1;
    }
  uint64_t end = clock_now_ms () + handshake_ms + d.n_calls * d.call_ms + 10000;
  while (!d.done && !d.failed && clock_now_ms () < end)
    {
      if (loop_run_once (d.loop, 100, &err) < 0)
        break;
      if (mcpclient_ready (d.c))
        drive_next (&d);
    }
  mcpclient_free (d.c);
  close (to);
  close (from);
  loop_free (d.loop);
  printf ("exit %d\n", drive_reap (pid));
  return d.failed ? 1 : 0;
}
