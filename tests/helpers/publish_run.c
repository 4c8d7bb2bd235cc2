/* publish_run: drive sandbox/publish directly, for the fault tests and the
 * publication benchmark, with an upper directory made by hand.
 *
 *   publish_run steps                       the log's steps = fault points
 *   publish_run faults                      exit 0 when built with faults
 *   publish_run publish STATEDIR ROOT UPPER take a baseline, then publish
 *   publish_run recover STATEDIR            recover abandoned transactions
 *   publish_run quarantine STATEDIR         list quarantine ids
 *
 * publish prints the status word, then the note when there is one.  The
 * environment variable PUBLISH_RUN_TOUCH, when set, names a file created
 * in ROOT between the baseline and the publication (a second writer);
 * PUBLISH_RUN_TIME, when set, has it print "publish_us=N" on stderr: the
 * publication alone, without the baseline.  */
#include <config.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/publish.h"
#include "sandbox/quarantine.h"
#include "sandbox/wal.h"

static const char *const status_words[] = {
  [PUBLISH_NOTHING] = "nothing",
  [PUBLISH_DONE] = "published",
  [PUBLISH_BUSY] = "busy",
  [PUBLISH_REFUSED_COUNT] = "refused-count",
  [PUBLISH_REFUSED_CHANGED] = "refused-changed",
  [PUBLISH_ROLLED_BACK] = "rolled-back",
  [PUBLISH_QUARANTINED] = "quarantined",
};

/* Take a baseline, let a second writer in if asked, publish.  */
static int
publish_run_publish (const char *statedir, const char *root, const char *upper)
{
  struct publish_baseline base;
  struct publish_report rep;
  struct cr_error *err = NULL;

  if (publish_baseline_take (statedir, root, PUBLISH_WAIT_SHORT_MS, &base, &err)
      < 0)
    goto fail;
  const char *touch = getenv ("PUBLISH_RUN_TOUCH");
  if (touch != NULL)
    {
      char path[4096];
      usleep (20000);
      snprintf (path, sizeof path, "%s/%s", root, touch);
      int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0)
        close (fd);
    }
  struct publish_request req = { .statedir = statedir,
                                 .root = root,
                                 .upper = upper,
                                 .call_id = "publish_run",
                                 .baseline = &base,
                                 .defer_tidy = true };
  struct timespec t0, t1, t2;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  for (int tries = 0;; tries++)
    {
      if (publish_run (&req, &rep, &err) < 0)
        goto fail;
      if (rep.status != PUBLISH_BUSY || tries > 500)
        break;
      usleep (10000);
    }
  clock_gettime (CLOCK_MONOTONIC, &t1);
  /* As the bwrap backend does: the committed transaction is removed after
   * the answer (sandbox/publish.h, defer_tidy).  */
  publish_tidy (&rep.tidy);
  clock_gettime (CLOCK_MONOTONIC, &t2);
  if (getenv ("PUBLISH_RUN_TIME") != NULL)
    fprintf (stderr, "publish_us=%lld\ntidy_us=%lld\n",
             (long long) (t1.tv_sec - t0.tv_sec) * 1000000
                 + (t1.tv_nsec - t0.tv_nsec) / 1000,
             (long long) (t2.tv_sec - t1.tv_sec) * 1000000
                 + (t2.tv_nsec - t1.tv_nsec) / 1000);
  printf ("%s\n", status_words[rep.status]);
  if (rep.note != NULL)
    printf ("%s\n", rep.note);
  int rc = rep.status == PUBLISH_DONE || rep.status == PUBLISH_NOTHING ? 0 : 3;
  publish_report_clear (&rep);
  return rc;
fail:
  fprintf (stderr, "publish_run: %s\n", err->msg);
  cr_error_free (err);
  return 2;
}

/* Recover under the lock, as a preparation does.  */
static int
publish_run_recover (const char *statedir)
{
  struct publish_baseline base;
  struct cr_error *err = NULL;
  if (publish_baseline_take (statedir, "/", PUBLISH_WAIT_SHORT_MS, &base, &err)
      < 0)
    {
      fprintf (stderr, "publish_run: %s\n", err->msg);
      cr_error_free (err);
      return 2;
    }
  return 0;
}

/* List quarantine ids, one a line.  */
static int
publish_run_quarantine (const char *statedir)
{
  struct quarantine_entry *e;
  size_t n;
  struct cr_error *err = NULL;
  if (quarantine_list (statedir, &e, &n, &err) < 0)
    {
      fprintf (stderr, "publish_run: %s\n", err->msg);
      cr_error_free (err);
      return 2;
    }
  for (size_t i = 0; i < n; i++)
    printf ("%s\n", e[i].id);
  quarantine_entries_free (e, n);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "steps") == 0)
    {
      for (int i = 0; i < WAL_STEP_COUNT; i++)
        printf ("%s\n", wal_step_name ((enum wal_step) i));
      return 0;
    }
  if (argc == 2 && strcmp (argv[1], "faults") == 0)
#ifdef CRUCIBLE_FAULT_INJECTION
    return 0;
#else
    return 1;
#endif
  if (argc == 5 && strcmp (argv[1], "publish") == 0)
    return publish_run_publish (argv[2], argv[3], argv[4]);
  if (argc == 3 && strcmp (argv[1], "recover") == 0)
    return publish_run_recover (argv[2]);
  if (argc == 3 && strcmp (argv[1], "quarantine") == 0)
    return publish_run_quarantine (argv[2]);
  fprintf (stderr, "usage: publish_run steps|faults|publish STATEDIR ROOT "
                   "UPPER|recover STATEDIR|quarantine STATEDIR\n");
  return 2;
}
