/* An example sandbox backend built outside crucible's tree, against the
 * installed libcrucible-sandbox:
 *
 *   cc -o example-backend example-backend.c \
 *       $(pkg-config --cflags --libs crucible-sandbox)
 *
 * The backend, "example-rlimit", runs a command as a plain child process
 * in its own process group with two per-process ceilings set before exec
 * (RLIMIT_CPU and RLIMIT_NOFILE), and observes what the child used.  It
 * confines nothing else, and its claims say exactly that: cpu_limit and
 * open_file_limit enforced, usage observed, everything else unsupported.
 * It serves only a workspace owned by the user running it, and fails for
 * its own reasons (not a refusal) on any other.
 *
 *   example-backend DIR             audit the backend over DIR: the report,
 *                                   exit 0 no fault, 1 a fault, 3 no backend
 *   example-backend DIR -- COMMAND  run COMMAND in DIR through the backend
 *                                   (prepare, start, wait, dispose)  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crucible/conformance.h>
#include <crucible/sandbox.h>

#define EXAMPLE_ID "example-rlimit"
#define EXAMPLE_CPU_SECONDS 3600
#define EXAMPLE_OPEN_FILES 1024

struct example_session
{
  struct sandbox_session base;
  pid_t pid;     /* 0 until started, -1 once reaped */
  int pidfd;     /* readable once the child has ended, or -1 */
  int status;    /* its wait status, once reaped */
  bool reported; /* EXITED was returned */
  struct rusage ru;
};

static const struct sandbox_backend_ops example_ops;

static void
example_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  (void) b;
  memset (out, 0, sizeof *out);
  out->support[SANDBOX_CPU_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_OPEN_FILE_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
}

/* Usable wherever pidfd_open is (Linux 5.3 and newer); never confined.  */
static int
example_probe (struct sandbox_backend *b, struct sandbox_probe *out,
               struct cr_error **err)
{
  (void) b;
  (void) err;
  int fd = (int) syscall (SYS_pidfd_open, getpid (), 0);
  memset (out, 0, sizeof *out);
  out->confined = false;
  if (fd < 0)
    {
      out->reason = strdup ("this kernel has no pidfd_open");
      return 0;
    }
  close (fd);
  out->usable = true;
  out->reason = strdup ("the example backend sets two ceilings and "
                        "confines nothing");
  out->version = strdup ("1");
  return 0;
}

/* Refuse what the claims do not hold, by name, then check the workspace:
 * a directory owned by this user, or a failure of the backend's own.  */
static int
example_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
                 struct sandbox_session **out, struct cr_error **err)
{
  struct sandbox_claims claims;
  struct stat st;

  example_claims (b, &claims);
  if (sandbox_check_policy (&claims, policy, EXAMPLE_ID, err) < 0)
    return -1;
  if (policy->workspace == NULL || stat (policy->workspace, &st) < 0)
    return cr_error_set (err, policy->workspace == NULL ? 0 : errno,
                         "the example backend needs a workspace it owns");
  if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid ())
    return cr_error_set (err, 0,
                         "the example backend serves only a directory "
                         "owned by the user running it");
  struct example_session *s = calloc (1, sizeof *s);
  if (s == NULL)
    return cr_error_set (err, ENOMEM, "preparing a session");
  s->base.ops = &example_ops;
  s->pidfd = -1;
  *out = &s->base;
  return 0;
}

/* In the child: own process group, ceilings, descriptors, then sh -c.  */
static void __attribute__ ((noreturn))
example_exec (const struct sandbox_command *cmd)
{
  struct rlimit cpu = { EXAMPLE_CPU_SECONDS, EXAMPLE_CPU_SECONDS };
  struct rlimit files = { EXAMPLE_OPEN_FILES, EXAMPLE_OPEN_FILES };
  int null = open ("/dev/null", O_RDONLY);

  setpgid (0, 0);
  if (setrlimit (RLIMIT_CPU, &cpu) < 0 || setrlimit (RLIMIT_NOFILE, &files) < 0
      || null < 0 || dup2 (null, 0) < 0 || dup2 (cmd->output_fd, 1) < 0
      || dup2 (cmd->output_fd, 2) < 0 || chdir (cmd->cwd) < 0)
    _exit (127);
  char *const argv[]
      = { (char *) "sh", (char *) "-c", (char *) cmd->line, NULL };
  execve (cmd->shell, argv, cmd->envp);
  _exit (127);
}

static int
example_start (struct sandbox_session *base, const struct sandbox_command *cmd,
               struct cr_error **err)
{
  struct example_session *s = (struct example_session *) base;
  pid_t pid = fork ();

  if (pid < 0)
    return cr_error_set (err, errno, "starting the command");
  if (pid == 0)
    example_exec (cmd);
  s->pid = pid;
  s->pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (s->pidfd < 0)
    {
      int saved = errno;
      kill (pid, SIGKILL);
      s->pid = waitpid (pid, &s->status, 0) == pid ? -1 : pid;
      return cr_error_set (err, saved, "watching the command");
    }
  return 0;
}

static int
example_status_fd (const struct sandbox_session *base)
{
  return ((const struct example_session *) base)->pidfd;
}

/* EXITED once the child has ended, then DONE: its group is what is left,
 * and it is killed, since nothing here can wait for it safely.  */
static int
example_next_event (struct sandbox_session *base, struct sandbox_event *ev,
                    struct cr_error **err)
{
  struct example_session *s = (struct example_session *) base;

  memset (ev, 0, sizeof *ev);
  if (s->pid > 0)
    {
      pid_t got = wait4 (s->pid, &s->status, WNOHANG, &s->ru);
      if (got < 0)
        return cr_error_set (err, errno, "waiting for the command");
      if (got == 0)
        return 0;
      kill (-s->pid, SIGKILL);
      s->pid = -1;
    }
  ev->kind = s->reported ? SANDBOX_EVENT_DONE : SANDBOX_EVENT_EXITED;
  ev->wait_status = s->status;
  s->reported = true;
  return 0;
}

static int
example_stop (struct sandbox_session *base, int signo, struct cr_error **err)
{
  struct example_session *s = (struct example_session *) base;
  if (s->pid > 0 && kill (-s->pid, signo) < 0 && errno != ESRCH)
    return cr_error_set (err, errno, "stopping the command");
  return 0;
}

static int
example_dispose (struct sandbox_session *base, struct sandbox_usage *usage,
                 struct cr_error **err)
{
  struct example_session *s = (struct example_session *) base;

  if (s->pid > 0)
    return cr_error_set (err, 0, "the command has not ended");
  if (usage != NULL && s->pidfd >= 0)
    {
      usage->known = true;
      usage->cpu_user_ms
          = s->ru.ru_utime.tv_sec * 1000 + s->ru.ru_utime.tv_usec / 1000;
      usage->cpu_system_ms
          = s->ru.ru_stime.tv_sec * 1000 + s->ru.ru_stime.tv_usec / 1000;
      usage->max_rss_kib = s->ru.ru_maxrss;
    }
  if (s->pidfd >= 0)
    close (s->pidfd);
  free (s);
  return 0;
}

static void
example_abandon (struct sandbox_session *base)
{
  struct example_session *s = (struct example_session *) base;
  if (s->pid > 0)
    {
      kill (-s->pid, SIGKILL);
      waitpid (s->pid, NULL, 0);
    }
  if (s->pidfd >= 0)
    close (s->pidfd);
  free (s);
}

static void
example_free (struct sandbox_backend *b)
{
  free (b);
}

static const struct sandbox_backend_ops example_ops = {
  .id = EXAMPLE_ID,
  .claims = example_claims,
  .probe = example_probe,
  .prepare = example_prepare,
  .start = example_start,
  .status_fd = example_status_fd,
  .next_event = example_next_event,
  .stop = example_stop,
  .dispose = example_dispose,
  .abandon = example_abandon,
  .free = example_free,
};

/* Audit the backend over dir and print the report.  */
static int
example_audit (struct sandbox_backend *b, const char *dir)
{
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;
  int ret = conformance_run (b, dir, &a, &err);

  if (ret < 0)
    {
      fprintf (stderr, "example-backend: %s\n", err->msg);
      cr_error_free (err);
      return ret == CONFORMANCE_NO_BACKEND ? 3 : 4;
    }
  char *text = conformance_report (a);
  fputs (text, stdout);
  free (text);
  ret = conformance_faults (a) > 0 ? 1 : 0;
  conformance_free (a);
  return ret;
}

/* Run line in dir through the backend; its output goes to ours.  */
static int
example_run (struct sandbox_backend *b, const char *dir, const char *line)
{
  struct sandbox_policy policy = { .workspace = dir };
  struct sandbox_session *s = NULL;
  struct sandbox_event ev = { 0 };
  struct cr_error *err = NULL;
  char *envp[] = { (char *) "PATH=/usr/bin:/bin", NULL };
  struct sandbox_command cmd = { .shell = "/bin/sh",
                                 .line = line,
                                 .cwd = dir,
                                 .envp = envp,
                                 .output_fd = STDOUT_FILENO };

  policy.requires[SANDBOX_CPU_LIMIT] = true;
  if (sandbox_prepare (b, &policy, &s, &err) < 0
      || sandbox_start (s, &cmd, &err) < 0)
    {
      fprintf (stderr, "example-backend: %s\n", err->msg);
      cr_error_free (err);
      if (s != NULL)
        sandbox_abandon (s);
      return 125;
    }
  while (ev.kind != SANDBOX_EVENT_DONE)
    {
      struct pollfd p = { .fd = sandbox_status_fd (s), .events = POLLIN };
      if (poll (&p, 1, -1) < 0 && errno != EINTR)
        break;
      if (sandbox_next_event (s, &ev, &err) < 0)
        break;
    }
  int status = ev.wait_status;
  if (err != NULL || sandbox_dispose (s, NULL, &err) < 0)
    {
      fprintf (stderr, "example-backend: %s\n", err->msg);
      cr_error_free (err);
      sandbox_abandon (s);
      return 125;
    }
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

int
main (int argc, char **argv)
{
  if (argc != 2 && !(argc == 4 && strcmp (argv[2], "--") == 0))
    {
      fputs ("usage: example-backend DIR [-- COMMAND]\n", stderr);
      return 2;
    }
  struct sandbox_backend *b = calloc (1, sizeof *b);
  if (b == NULL)
    return 4;
  b->ops = &example_ops;
  int ret = argc == 2 ? example_audit (b, argv[1])
                      : example_run (b, argv[1], argv[3]);
  sandbox_backend_free (b);
  return ret;
}
