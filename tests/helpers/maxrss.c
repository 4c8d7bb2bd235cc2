/* maxrss: run a program and report its peak memory, status and wall time.
 *
 *   maxrss [-o FILE] -- PROGRAM ARG...
 *
 * Runs PROGRAM (found on PATH) and, once it has ended, writes one line to
 * standard error, or to FILE with -o:
 *
 *   maxrss_kib=<ru_maxrss> status=<exit code or 128+signal> wall_ms=<elapsed>
 *
 * then exits with that same status, so it can stand in front of a command
 * without changing what the caller sees.  ru_maxrss comes from wait4(): on
 * Linux it is the largest resident set, in KiB, of the program and of every
 * descendant the program itself waited for.  wall_ms runs from just before
 * the fork to the return of wait4().
 *
 * Used by bench/run (capture peak memory versus a raw pipe) and by the
 * integration tests that bound peak memory.  libc only, so a benchmark can
 * build it with a bare `cc`.  */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* maxrss's own failures, as env(1) and timeout(1) number them, so they
 * cannot be mistaken for the program's: 125 maxrss failed, 126 the program
 * could not be executed, 127 it was not found.  */
enum
{
  MAXRSS_FAILED = 125,
  MAXRSS_CANNOT_EXEC = 126,
  MAXRSS_NOT_FOUND = 127
};

/* Say how to call maxrss and exit.  */
static void
maxrss_usage (void)
{
  fputs ("usage: maxrss [-o FILE] -- PROGRAM ARG...\n", stderr);
  exit (MAXRSS_FAILED);
}

/* Milliseconds on the monotonic clock.  */
static long long
maxrss_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child: restore the signals the parent ignores, then become the
 * program.  Never returns.  */
static void
maxrss_exec (char **argv)
{
  signal (SIGINT, SIG_DFL);
  signal (SIGQUIT, SIG_DFL);
  execvp (argv[0], argv);
  int saved = errno;
  fprintf (stderr, "maxrss: %s: %s\n", argv[0], strerror (saved));
  _exit (saved == ENOENT ? MAXRSS_NOT_FOUND : MAXRSS_CANNOT_EXEC);
}

/* The status a shell would report for a wait status.  */
static int
maxrss_status (int wstatus)
{
  if (WIFEXITED (wstatus))
    return WEXITSTATUS (wstatus);
  if (WIFSIGNALED (wstatus))
    return 128 + WTERMSIG (wstatus);
  return MAXRSS_FAILED;
}

/* Finish writing the report: close a file, flush standard error.  Returns
 * -1 when any of the report failed to be written.  */
static int
maxrss_close (FILE *out)
{
  if (out == stderr)
    return fflush (out) == 0 && !ferror (out) ? 0 : -1;
  return fclose (out) == 0 ? 0 : -1;
}

int
main (int argc, char **argv)
{
  const char *out_path = NULL;
  FILE *out = stderr;
  int opt;

  /* '+': stop at the program's name, so its own options stay its own.  */
  while ((opt = getopt (argc, argv, "+o:")) != -1)
    {
      if (opt != 'o')
        maxrss_usage ();
      out_path = optarg;
    }
  if (optind >= argc)
    maxrss_usage ();

  /* Open the report before running anything, so a bad path fails fast
   * rather than after a long run; close-on-exec keeps it from the child.  */
  if (out_path != NULL && (out = fopen (out_path, "we")) == NULL)
    {
      fprintf (stderr, "maxrss: opening %s: %s\n", out_path, strerror (errno));
      return MAXRSS_FAILED;
    }

  /* Like time(1): a ^C or ^\ meant for the program must not kill the
   * parent first, or there would be no report.  */
  signal (SIGINT, SIG_IGN);
  signal (SIGQUIT, SIG_IGN);

  long long start = maxrss_now_ms ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "maxrss: fork: %s\n", strerror (errno));
      return MAXRSS_FAILED;
    }
  if (pid == 0)
    maxrss_exec (argv + optind);

  int wstatus;
  struct rusage ru;
  while (wait4 (pid, &wstatus, 0, &ru) < 0)
    if (errno != EINTR)
      {
        fprintf (stderr, "maxrss: wait4: %s\n", strerror (errno));
        return MAXRSS_FAILED;
      }
  long long wall_ms = maxrss_now_ms () - start;

  int status = maxrss_status (wstatus);
  fprintf (out, "maxrss_kib=%ld status=%d wall_ms=%lld\n", ru.ru_maxrss, status,
           wall_ms);
  if (maxrss_close (out) < 0)
    {
      fprintf (stderr, "maxrss: writing %s: %s\n",
               out_path != NULL ? out_path : "standard error",
               strerror (errno));
      return MAXRSS_FAILED;
    }
  return status;
}
