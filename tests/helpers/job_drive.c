/* job_drive: the host's side of the container job protocol without an
 * engine, for tests/integration/job-runner.sh: start the job runner as a
 * plain process on a scratch workspace, send it a job made from a root
 * (sandbox/container/job.h) or a raw archive, relay its output, take its
 * changes into a change set and publish them into the root.
 *
 *   job_drive --runner PATH --scratch DIR --root DIR --statedir DIR
 *             [--archive FILE] [--leave-out PATTERN]... [--env NAME=VALUE]...
 *             [--changes-max N] [--entries-max N] [--workspace-max N]
 *             [--deadline-ms N] [--grace-ms N] [--fsize N] [--nproc N]
 *             [--stop-ms N] [--close-ms N] [--touch NAME] [--via CMD]
 *             -- LINE
 *
 * --via runs `sh -c CMD` with the job on its standard input instead of
 * the runner on the scratch workspace (a runner in a container, say:
 * `podman run -i ... IMAGE /usr/local/lib/crucible/crucible-job-runner`).
 * The command's output goes to stdout; on stderr, one line each: "R: "
 * and the facts (newlines as spaces), "X: " and the ending, "F: " and a
 * failure, "left-out: PATH (why)", "publish: OUTCOME paths=N" and
 * "note: ...", and last "runner: exit=N ms=M" (M: from the moment the
 * input was closed with --close-ms, or from the start).  Exits 0 when
 * the protocol ran to its end (whatever it said), 1 on a usage or
 * set-up error.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/container/changes.h"
#include "sandbox/container/job.h"
#include "sandbox/container/jobproto.h"

struct drive
{
  const char *runner, *scratch, *root, *statedir, *archive, *touch, *via;
  const char *leave[16];
  size_t n_leave;
  char *env[16];
  size_t n_env;
  struct job job;
  int64_t stop_ms, close_ms;
  pid_t pid;
  int in, out;
  bool ready, exited, ended, ordinary;
  int64_t ready_at, closed_at, started_at;
  struct job_changes *changes;
};

/* Monotonic milliseconds.  */
static int64_t
drive_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Print a payload on one line of stderr, newlines as spaces.  */
static void
drive_line (const char *tag, const uint8_t *p, size_t len)
{
  fprintf (stderr, "%s: ", tag);
  for (size_t i = 0; i < len; i++)
    fputc (p[i] == '\n' ? ' ' : p[i], stderr);
  fputc ('\n', stderr);
}

/* One frame of the runner's answer.  */
static int
drive_frame (void *data, enum jobproto_type type, const uint8_t *p, size_t len,
             struct cr_error **err)
{
  struct drive *d = data;
  (void) err;
  switch (type)
    {
    case ANS_READY:
      d->ready = true;
      d->ready_at = drive_now ();
      drive_line ("R", p, len);
      return 0;
    case ANS_OUTPUT:
      fwrite (p, 1, len, stdout);
      fflush (stdout);
      return 0;
    case ANS_EXIT:
      d->exited = true;
      d->ordinary = memmem (p, len, "=1", 2) == NULL;
      drive_line ("X", p, len);
      return 0;
    case ANS_FAILED:
      drive_line ("F", p, len);
      if (d->changes != NULL)
        job_changes_refuse (d->changes, "the runner failed");
      d->ended = true;
      return 0;
    default:
      break;
    }
  if (d->ended)
    return 0; /* the change set has answered: what follows is not read */
  if (!d->exited || d->changes == NULL)
    {
      drive_line ("unexpected", (const uint8_t *) &type, 1);
      return 0;
    }
  if (getenv ("JOB_DRIVE_TRACE") != NULL)
    fprintf (stderr, "frame: %c %zu\n", (char) type, len);
  struct cr_error *cerr = NULL;
  int rc = job_changes_frame (d->changes, type, p, len, &cerr);
  if (rc < 0)
    fprintf (stderr, "changes: %s\n", cerr->msg);
  if (rc != 0)
    d->ended = true;
  cr_error_free (cerr);
  return 0;
}

/* Start the runner on the scratch workspace, its streams as pipes.  */
static int
drive_spawn (struct drive *d)
{
  int in[2], out[2];
  if (pipe (in) < 0 || pipe (out) < 0)
    return -1;
  d->pid = fork ();
  if (d->pid < 0)
    return -1;
  if (d->pid == 0)
    {
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      close (in[0]), close (in[1]), close (out[0]), close (out[1]);
      if (d->via != NULL)
        execl ("/bin/sh", "sh", "-c", d->via, (char *) NULL);
      else
        execl (d->runner, "crucible-job-runner", "--workspace", d->scratch,
               (char *) NULL);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  d->in = in[1];
  d->out = out[0];
  return 0;
}

/* Write all of a buffer to the runner.  */
static int
drive_write_all (int fd, const void *p, size_t len)
{
  const char *c = p;
  while (len > 0)
    {
      ssize_t n = write (fd, c, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      c += n;
      len -= (size_t) n;
    }
  return 0;
}

/* The job with a raw archive as its workspace (a hostile one).  */
static int
drive_send_archive (struct drive *d, struct cr_error **err)
{
  FILE *f = fopen (d->archive, "rb");
  struct buf b = BUF_INIT;
  char chunk[65536];
  size_t n;
  if (f == NULL)
    return cr_error_set (err, errno, "opening %s", d->archive);
  jobproto_put (&b, JOB_VERSION, JOBPROTO_VERSION, strlen (JOBPROTO_VERSION),
                err);
  jobproto_put (&b, JOB_LIMITS, "", 0, err);
  jobproto_put (&b, JOB_COMMAND, d->job.line, strlen (d->job.line), err);
  while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
    jobproto_put (&b, JOB_WORKSPACE, chunk, n, err);
  fclose (f);
  jobproto_put (&b, JOB_GO, "", 0, err);
  int rc = drive_write_all (d->in, b.data, b.len);
  buf_free (&b);
  return rc;
}

/* What poll may wait for the next timed action, in ms (-1: none).  */
static int
drive_wait (const struct drive *d)
{
  int64_t next = 0, now = drive_now ();
  if (d->ready && d->stop_ms >= 0)
    next = d->ready_at + d->stop_ms;
  if (d->ready && d->close_ms >= 0 && d->in >= 0
      && (next == 0 || d->ready_at + d->close_ms < next))
    next = d->ready_at + d->close_ms;
  if (next == 0)
    return 1000;
  return next <= now ? 0 : (int) (next - now);
}

/* The timed actions: a stop, the input closed, a second writer.  */
static void
drive_timed (struct drive *d)
{
  struct cr_error *err = NULL;
  int64_t now = drive_now ();
  if (!d->ready)
    return;
  if (d->touch != NULL)
    {
      char path[4096];
      snprintf (path, sizeof path, "%s/%s", d->root, d->touch);
      int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0)
        close (fd);
      d->touch = NULL;
    }
  if (d->stop_ms >= 0 && now >= d->ready_at + d->stop_ms)
    {
      d->stop_ms = -1;
      if (jobproto_write (d->in, JOB_STOP, "15", 2, &err) < 0)
        cr_error_clear (&err);
    }
  if (d->close_ms >= 0 && d->in >= 0 && now >= d->ready_at + d->close_ms)
    {
      close (d->in);
      d->in = -1;
      d->closed_at = now;
    }
}

/* Read the answer to its end.  */
static void
drive_read (struct drive *d)
{
  struct jobproto_reader r;
  char chunk[65536];
  jobproto_reader_init (&r);
  for (;;)
    {
      struct pollfd p = { d->out, POLLIN, 0 };
      if (poll (&p, 1, drive_wait (d)) < 0 && errno != EINTR)
        break;
      drive_timed (d);
      if (!p.revents)
        continue;
      ssize_t n = read (d->out, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      struct cr_error *err = NULL;
      if (jobproto_reader_feed (&r, chunk, (size_t) n, drive_frame, d, &err)
          < 0)
        {
          fprintf (stderr, "protocol: %s\n", err->msg);
          cr_error_free (err);
          break;
        }
    }
  if (d->changes != NULL && !d->ended)
    job_changes_refuse (d->changes, "the stream ended before its end");
  jobproto_reader_clear (&r);
}

/* Publish what the runner sent back, after an ordinary exit.  */
static void
drive_publish (struct drive *d, const struct publish_baseline *base)
{
  struct sandbox_publication pub;
  struct cr_error *err = NULL;
  if (d->changes == NULL || !d->exited || !d->ordinary)
    {
      fprintf (stderr, "publish: discarded\n");
      return;
    }
  if (job_changes_publish (d->changes, "drive", base, NULL, &pub, &err) < 0)
    {
      fprintf (stderr, "publish: error %s\n", err->msg);
      cr_error_free (err);
      return;
    }
  fprintf (stderr, "publish: %s paths=%llu\n", pub.outcome,
           (unsigned long long) pub.paths);
  if (pub.note != NULL)
    fprintf (stderr, "note: %s\n", pub.note);
  free (pub.note);
}

/* Read the options into d.  */
static int
drive_options (struct drive *d, int argc, char **argv)
{
  static const struct option opts[] = { { "runner", 1, 0, 'r' },
                                        { "scratch", 1, 0, 's' },
                                        { "root", 1, 0, 'o' },
                                        { "statedir", 1, 0, 'd' },
                                        { "archive", 1, 0, 'a' },
                                        { "leave-out", 1, 0, 'l' },
                                        { "env", 1, 0, 'e' },
                                        { "changes-max", 1, 0, 'c' },
                                        { "entries-max", 1, 0, 'n' },
                                        { "workspace-max", 1, 0, 'w' },
                                        { "deadline-ms", 1, 0, 'D' },
                                        { "grace-ms", 1, 0, 'g' },
                                        { "fsize", 1, 0, 'f' },
                                        { "nproc", 1, 0, 'p' },
                                        { "stop-ms", 1, 0, 'k' },
                                        { "close-ms", 1, 0, 'x' },
                                        { "touch", 1, 0, 't' },
                                        { "via", 1, 0, 'v' },
                                        { 0, 0, 0, 0 } };
  int c;
  d->stop_ms = d->close_ms = -1;
  while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1)
    switch (c)
      {
      case 'r':
        d->runner = optarg;
        break;
      case 's':
        d->scratch = optarg;
        break;
      case 'o':
        d->root = optarg;
        break;
      case 'd':
        d->statedir = optarg;
        break;
      case 'a':
        d->archive = optarg;
        break;
      case 'l':
        if (d->n_leave < 15)
          d->leave[d->n_leave++] = optarg;
        break;
      case 'e':
        if (d->n_env < 15)
          d->env[d->n_env++] = optarg;
        break;
      case 'c':
        d->job.limits.changes_max = strtoull (optarg, NULL, 10);
        break;
      case 'n':
        d->job.entries_max = strtoull (optarg, NULL, 10);
        break;
      case 'w':
        d->job.workspace_max = strtoull (optarg, NULL, 10);
        break;
      case 'D':
        d->job.limits.deadline_ms = strtoull (optarg, NULL, 10);
        break;
      case 'g':
        d->job.limits.grace_ms = strtoull (optarg, NULL, 10);
        break;
      case 'f':
        d->job.limits.fsize_bytes = strtoull (optarg, NULL, 10);
        break;
      case 'p':
        d->job.limits.nproc = strtoull (optarg, NULL, 10);
        break;
      case 'k':
        d->stop_ms = strtoll (optarg, NULL, 10);
        break;
      case 'x':
        d->close_ms = strtoll (optarg, NULL, 10);
        break;
      case 't':
        d->touch = optarg;
        break;
      case 'v':
        d->via = optarg;
        break;
      default:
        return -1;
      }
  if (optind != argc - 1 || !d->runner || !d->scratch || !d->root
      || !d->statedir)
    return -1;
  d->job.line = argv[optind];
  d->job.root = d->root;
  d->job.envp = d->env;
  d->job.leave_out = d->n_leave ? d->leave : NULL;
  return 0;
}

int
main (int argc, char **argv)
{
  struct drive d = { 0 };
  struct publish_baseline base;
  struct job_sent sent = { 0 };
  struct cr_error *err = NULL;
  int status;

  signal (SIGPIPE, SIG_IGN);
  if (drive_options (&d, argc, argv) < 0)
    {
      fprintf (stderr, "usage: see tests/helpers/job_drive.c\n");
      return 1;
    }
  if (publish_baseline_take (d.statedir, d.root, PUBLISH_WAIT_SHORT_MS, &base,
                             &err)
          < 0
      || drive_spawn (&d) < 0)
    {
      fprintf (stderr, "job_drive: %s\n", err ? err->msg : strerror (errno));
      return 1;
    }
  d.started_at = drive_now ();
  int sent_rc = d.archive != NULL ? drive_send_archive (&d, &err)
                                  : job_write (d.in, &d.job, &sent, &err);
  if (sent_rc < 0)
    {
      /* A job not sent whole is never started: the end of its input
       * ends the runner.  */
      fprintf (stderr, "send: %s\n", err ? err->msg : "the runner went away");
      close (d.in);
      d.in = -1;
    }
  cr_error_clear (&err);
  for (size_t i = 0; i < sent.n_left_out; i++)
    fprintf (stderr, "left-out: %s (%s)\n", sent.left_out[i].path,
             sent.left_out[i].why);
  d.changes = job_changes_new (d.statedir, &d.job, &sent, &err);
  if (d.changes == NULL)
    {
      fprintf (stderr, "job_drive: %s\n", err->msg);
      return 1;
    }
  drive_read (&d);
  drive_publish (&d, &base);
  if (d.in >= 0)
    close (d.in);
  waitpid (d.pid, &status, 0);
  int64_t since = d.closed_at ? d.closed_at : d.started_at;
  fprintf (stderr, "runner: exit=%d ms=%lld\n",
           WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status),
           (long long) (drive_now () - since));
  job_changes_free (d.changes);
  job_sent_clear (&sent);
  return 0;
}
