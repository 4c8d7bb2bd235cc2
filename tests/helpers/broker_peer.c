/* broker_peer: the host's side of the broker's status channel, for tests.
 *
 *   broker_peer [OPTION...] -- COMMAND [ARG...]
 *
 * Makes a SOCK_SEQPACKET socket pair, runs COMMAND (normally
 * crucible-sandbox-broker --status-fd 3 -- ...) with the keeper's end at
 * descriptor --fd (default 3), and prints one line per event:
 *
 *   broker PID                  COMMAND was started
 *   started PID                 BROKER_MSG_STARTED
 *   failed stage=N errno=N      BROKER_MSG_FAILED
 *   exited status=exit N        BROKER_MSG_EXITED, a normal exit
 *   exited status=signal N      BROKER_MSG_EXITED, killed by a signal
 *   done                        BROKER_MSG_DONE
 *   message type=N value=N      anything else well-formed
 *   malformed N bytes           a record that is not a struct broker_msg
 *   stop N | closed             what the peer did
 *   eof                         the channel ended
 *   timeout                     --timeout passed; COMMAND is killed
 *   broker exit N | broker signal N   how COMMAND ended
 *
 * Options:
 *   -o FILE       write the lines to FILE (default stdout)
 *   --fd N        the keeper's end lands at descriptor N (default 3)
 *   --stop SIG    the action: send BROKER_MSG_STOP with SIG
 *   --close       the action: close the host's end of the channel
 *   --on EVENT    when to act: now (default), started, exited, or
 *                 file:PATH (once PATH exists)
 *   --after MS    wait MS milliseconds after EVENT before acting
 *   --leak-fds    leave /dev/null open at 9 and 63, inheritable, in COMMAND
 *   --timeout S   give up after S seconds (default 20)
 *
 * Exit status: 0 once COMMAND has ended, 1 on timeout or error, 2 on a bad
 * command line.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/status.h"

enum peer_action
{
  PEER_NOTHING,
  PEER_STOP,
  PEER_CLOSE
};

enum peer_event
{
  PEER_ON_NOW,
  PEER_ON_STARTED,
  PEER_ON_EXITED,
  PEER_ON_FILE
};

struct peer
{
  FILE *out;
  int child_fd;
  enum peer_action action;
  int stop_signal;
  enum peer_event on;
  const char *on_file;
  long after_ms;
  bool leak_fds;
  long timeout_ms;
  char **command;

  int channel;    /* the host's end, -1 once closed */
  pid_t child;    /* COMMAND, 0 once reaped */
  long triggered; /* when the event happened, -1 before */
  bool acted;
  bool eof;
};

/* Milliseconds on the monotonic clock.  */
static long
peer_now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Print a line and flush it, so a test can poll the file.  */
static void __attribute__ ((format (printf, 2, 3)))
peer_say (struct peer *p, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vfprintf (p->out, fmt, ap);
  va_end (ap);
  fputc ('\n', p->out);
  fflush (p->out);
}

/* Read a non-negative number or die with status 2.  */
static long
peer_number (const char *opt, const char *text)
{
  char *end;
  long v;

  errno = 0;
  v = strtol (text, &end, 10);
  if (errno != 0 || *text == '\0' || *end != '\0' || v < 0)
    {
      fprintf (stderr, "broker_peer: %s: bad number '%s'\n", opt, text);
      exit (2);
    }
  return v;
}

/* Read the --on value.  */
static void
peer_parse_on (struct peer *p, const char *text)
{
  if (strcmp (text, "now") == 0)
    p->on = PEER_ON_NOW;
  else if (strcmp (text, "started") == 0)
    p->on = PEER_ON_STARTED;
  else if (strcmp (text, "exited") == 0)
    p->on = PEER_ON_EXITED;
  else if (strncmp (text, "file:", 5) == 0 && text[5] != '\0')
    {
      p->on = PEER_ON_FILE;
      p->on_file = text + 5;
    }
  else
    {
      fprintf (stderr, "broker_peer: --on: unknown event '%s'\n", text);
      exit (2);
    }
}

/* Parse the command line into p.  */
static void
peer_parse (struct peer *p, int argc, char **argv)
{
  int i;

  for (i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    {
      const char *opt = argv[i];
      bool has_value = i + 1 < argc;
      if (strcmp (opt, "--close") == 0)
        p->action = PEER_CLOSE;
      else if (strcmp (opt, "--leak-fds") == 0)
        p->leak_fds = true;
      /* An option without its value ends the options, as an unknown one
       * does below.  */
      else if (!has_value)
        break; // NOLINT(bugprone-branch-clone)
      else if (strcmp (opt, "-o") == 0)
        {
          p->out = fopen (argv[++i], "we");
          if (p->out == NULL)
            {
              perror (argv[i]);
              exit (2);
            }
        }
      else if (strcmp (opt, "--fd") == 0)
        p->child_fd = (int) peer_number (opt, argv[++i]);
      else if (strcmp (opt, "--stop") == 0)
        {
          p->action = PEER_STOP;
          p->stop_signal = (int) peer_number (opt, argv[++i]);
        }
      else if (strcmp (opt, "--on") == 0)
        peer_parse_on (p, argv[++i]);
      else if (strcmp (opt, "--after") == 0)
        p->after_ms = peer_number (opt, argv[++i]);
      else if (strcmp (opt, "--timeout") == 0)
        p->timeout_ms = peer_number (opt, argv[++i]) * 1000L;
      else
        break;
    }
  if (i + 1 >= argc || strcmp (argv[i], "--") != 0)
    {
      fprintf (stderr, "usage: broker_peer [-o FILE] [--fd N] [--stop SIG | "
                       "--close] [--on EVENT] [--after MS] [--leak-fds] "
                       "[--timeout S] -- COMMAND [ARG...]\n");
      exit (2);
    }
  p->command = argv + i + 1;
}

/* In the forked child: put the keeper's end in place and run COMMAND.  */
static void __attribute__ ((noreturn)) peer_exec (struct peer *p, int end)
{
  if (end == p->child_fd)
    fcntl (end, F_SETFD, 0);
  else if (dup2 (end, p->child_fd) < 0)
    _exit (126);
  if (p->leak_fds)
    {
      int null = open ("/dev/null", O_RDONLY);
      if (null < 0 || dup2 (null, 9) < 0 || dup2 (null, 63) < 0)
        _exit (126);
    }
  execv (p->command[0], p->command);
  perror (p->command[0]);
  _exit (127);
}

/* Start COMMAND with the keeper's end of a fresh channel.  */
static void
peer_spawn (struct peer *p)
{
  int pair[2];

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      perror ("broker_peer: socketpair");
      exit (1);
    }
  p->child = fork ();
  if (p->child < 0)
    {
      perror ("broker_peer: fork");
      exit (1);
    }
  if (p->child == 0)
    peer_exec (p, pair[1]);
  close (pair[1]);
  p->channel = pair[0];
  peer_say (p, "broker %d", (int) p->child);
}

/* Print one received record and note the events it stands for.  */
static void
peer_report (struct peer *p, const struct broker_msg *m)
{
  switch (m->type)
    {
    case BROKER_MSG_STARTED:
      peer_say (p, "started %d", m->value);
      if (p->on == PEER_ON_STARTED && p->triggered < 0)
        p->triggered = peer_now_ms ();
      return;
    case BROKER_MSG_EXITED:
      if (WIFEXITED (m->value))
        peer_say (p, "exited status=exit %d", WEXITSTATUS (m->value));
      else if (WIFSIGNALED (m->value))
        peer_say (p, "exited status=signal %d", WTERMSIG (m->value));
      else
        peer_say (p, "exited status=raw %d", m->value);
      if (p->on == PEER_ON_EXITED && p->triggered < 0)
        p->triggered = peer_now_ms ();
      return;
    case BROKER_MSG_FAILED:
      peer_say (p, "failed stage=%u errno=%d", m->stage, m->value);
      return;
    case BROKER_MSG_DONE:
      peer_say (p, "done");
      /* The host's side of the end: the broker stays until it sees this.  */
      shutdown (p->channel, SHUT_WR);
      return;
    default:
      peer_say (p, "message type=%u value=%d", m->type, m->value);
    }
}

/* Receive one record, or note the end of the channel.  */
static void
peer_receive (struct peer *p)
{
  struct broker_msg m;
  ssize_t n = recv (p->channel, &m, sizeof m, MSG_DONTWAIT | MSG_TRUNC);

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      peer_say (p, "eof");
      p->eof = true;
    }
  else if (n != (ssize_t) sizeof m || m.magic != BROKER_STATUS_MAGIC)
    peer_say (p, "malformed %zd bytes", n);
  else
    peer_report (p, &m);
}

/* Do the configured action once its time has come.  */
static void
peer_maybe_act (struct peer *p, long now)
{
  if (p->action == PEER_NOTHING || p->acted)
    return;
  if (p->triggered < 0 && p->on == PEER_ON_FILE
      && access (p->on_file, F_OK) == 0)
    p->triggered = now;
  if (p->triggered < 0 || now < p->triggered + p->after_ms)
    return;
  p->acted = true;
  if (p->action == PEER_CLOSE)
    {
      close (p->channel);
      p->channel = -1;
      peer_say (p, "closed");
      return;
    }
  struct broker_msg m = { .magic = BROKER_STATUS_MAGIC,
                          .type = BROKER_MSG_STOP,
                          .value = p->stop_signal };
  if (send (p->channel, &m, sizeof m, MSG_NOSIGNAL) != (ssize_t) sizeof m)
    peer_say (p, "stop failed errno=%d", errno);
  else
    peer_say (p, "stop %d", p->stop_signal);
}

/* Reap COMMAND if it has ended, and say how.  */
static void
peer_reap (struct peer *p, bool block)
{
  int status;

  if (p->child <= 0
      || waitpid (p->child, &status, block ? 0 : WNOHANG) != p->child)
    return;
  p->child = 0;
  if (WIFEXITED (status))
    peer_say (p, "broker exit %d", WEXITSTATUS (status));
  else
    peer_say (p, "broker signal %d", WTERMSIG (status));
}

/* Serve the channel until it ends and COMMAND is reaped, or time runs out.  */
static int
peer_run (struct peer *p)
{
  long deadline = peer_now_ms () + p->timeout_ms;

  if (p->on == PEER_ON_NOW)
    p->triggered = peer_now_ms ();
  while (p->child > 0)
    {
      long now = peer_now_ms ();
      peer_maybe_act (p, now);
      if (now >= deadline)
        {
          peer_say (p, "timeout");
          kill (p->child, SIGKILL);
          peer_reap (p, true);
          return 1;
        }
      struct pollfd pfd = { .fd = p->eof ? -1 : p->channel, .events = POLLIN };
      if (poll (&pfd, 1, 10) > 0)
        peer_receive (p);
      if (p->eof || p->channel < 0)
        peer_reap (p, false);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  struct peer p = { .out = stdout,
                    .child_fd = 3,
                    .stop_signal = SIGKILL,
                    .timeout_ms = 20000,
                    .channel = -1,
                    .triggered = -1 };

  peer_parse (&p, argc, argv);
  signal (SIGPIPE, SIG_IGN);
  peer_spawn (&p);
  return peer_run (&p);
}
