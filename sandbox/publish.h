/* Publication: what a confined command wrote into its private upper
 * directory reaches the workspace root after it has ended, transactionally
 * (doc/publication.md).
 *
 * publish_baseline_take runs when a command starts: under the per-user
 * lock it recovers any transaction an earlier process abandoned, then notes
 * the root's publication count and the instant.  publish_run runs after an
 * ordinary exit, once nothing of the command's scope is left: it scans the
 * upper, checks the root against the baseline, stages, journals, applies,
 * verifies, and rolls back (or quarantines) on failure.  */
#ifndef CRUCIBLE_SANDBOX_PUBLISH_H
#define CRUCIBLE_SANDBOX_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/error.h"
#include "sandbox/pubguard.h"

/* The wait ceilings of the spec, in milliseconds.  */
#define PUBLISH_WAIT_PREPARE_MS 60000 /* a command being prepared */
#define PUBLISH_WAIT_OVERDUE_MS 60000 /* a command past its own deadline */
#define PUBLISH_WAIT_SHORT_MS 5000    /* wherever somebody is waiting */

/* What a command recorded about a root when it started.  */
struct publish_baseline
{
  bool taken;
  uint64_t count;          /* publications into the root so far */
  struct timespec instant; /* the ctime instant on the root's filesystem */
  dev_t dev;               /* the root's filesystem */
  struct timespec foreign; /* the instant for paths on other filesystems */
};

/* Recover abandoned transactions and take root's baseline, holding the
 * per-user lock, waited for at most wait_ms.  */
int publish_baseline_take (const char *statedir, const char *root,
                           int64_t wait_ms, struct publish_baseline *out,
                           struct cr_error **err);

/* How a publication came out.  */
enum publish_status
{
  PUBLISH_NOTHING,         /* the command changed nothing in the root */
  PUBLISH_DONE,            /* every change (but those left out) published */
  PUBLISH_BUSY,            /* another publication holds the lock: retry */
  PUBLISH_REFUSED_COUNT,   /* another command published into the root */
  PUBLISH_REFUSED_CHANGED, /* something else changed the root */
  PUBLISH_ROLLED_BACK,     /* a step failed; the root is as it was */
  PUBLISH_QUARANTINED      /* a step failed; the rollback is unproved */
};

struct publish_request
{
  const char *statedir; /* this user's state directory */
  const char *root;     /* the writable root, resolved */
  const char *upper;    /* the command's upper directory */
  const char *call_id;  /* the tool call's identity, or NULL */
  const struct publish_baseline *baseline;
  /* What publication refuses beyond the protected names: the configured
   * protected and read-only roots; NULL for none.  */
  const struct pubguard *guard;
  /* Leave the committed transaction's directory in rep->tidy rather than
   * remove it before answering: its backups are the last links to the
   * files publication replaced, so its removal frees their blocks, which
   * the caller may do once the answer is given (publish_tidy).  */
  bool defer_tidy;
};

struct publish_report
{
  enum publish_status status;
  size_t published;    /* paths published */
  uint64_t bytes;      /* bytes of file content published */
  char *note;          /* the result's note, or NULL; owned */
  char *quarantine_id; /* PUBLISH_QUARANTINED: the entry kept; owned */
  char *tidy; /* defer_tidy: the committed transaction's directory; owned */
};

/* Publish what upper holds into root.  Returns 0 with rep filled (a
 * refusal or a rolled-back failure is a report, not an error), -1 when
 * publication could not even be attempted.  Never waits for the lock:
 * PUBLISH_BUSY says to try again.  */
int publish_run (const struct publish_request *req, struct publish_report *rep,
                 struct cr_error **err);

/* Free rep, removing what it left to tidy (publish_tidy) first.  */
void publish_report_clear (struct publish_report *rep);

/* Remove the committed transaction's directory *dir names (a report's
 * tidy, taken), if any, and free the name.  Without the lock: the
 * transaction is committed, so the root is as it will stay, and recovery
 * removes such a directory too (its log, removed first, is then missing
 * or says committed).  */
void publish_tidy (char **dir);

struct sandbox_publication;

/* Fill out, the backend interface's answer, from rep: its outcome's
 * journal word, counts, and note (taken from rep).  */
void publish_report_answer (struct publish_report *rep,
                            struct sandbox_publication *out);

/* The note when a wait for the lock passed its ceiling of ms.  Owned.  */
char *publish_note_wait_over (int64_t ms);

/* Recover every transaction abandoned in statedir (the caller holds the
 * lock).  Returns how many were recovered or quarantined.  */
int publish_recover (const char *statedir, struct cr_error **err);

#endif
