/* A publication's plan: the changed paths of one root, found by scanning a
 * command's upper directory (pubscan), with what each was before (filled
 * when the transaction backs it up).  Shared by the scan, the transaction
 * and recovery, which reads it back from the write-ahead log.  */
#ifndef CRUCIBLE_SANDBOX_PUBPLAN_H
#define CRUCIBLE_SANDBOX_PUBPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "lib/error.h"
#include "sandbox/pubguard.h"
#include "sandbox/sha256.h"

/* A projected file larger than this is refused rather than digested.  */
#define PUBPLAN_MAX_BYTES (UINT64_C (8) << 30)

/* What a path becomes.  */
enum pubplan_kind
{
  PUBPLAN_FILE,
  PUBPLAN_DIR,
  PUBPLAN_LINK,
  PUBPLAN_DELETE
};

/* What a path was at the baseline.  */
enum pubplan_before
{
  PUBPLAN_WAS_ABSENT,
  PUBPLAN_WAS_FILE,   /* backed up as a file */
  PUBPLAN_WAS_LINK,   /* its target kept */
  PUBPLAN_WAS_TREE,   /* a directory replaced or deleted: backed up whole */
  PUBPLAN_WAS_DIRMETA /* a directory that stays one: mode and mtime */
};

struct pubplan_change
{
  char *path; /* relative to the root, no leading slash */
  enum pubplan_kind kind;
  bool opaque; /* a directory that replaces the one below it */
  mode_t mode; /* permission bits, setuid/setgid removed */
  uid_t uid;
  gid_t gid;
  struct timespec mtime;
  uint64_t size;
  char *target;                    /* PUBPLAN_LINK */
  char digest[SHA256_HEX_LEN + 1]; /* PUBPLAN_FILE: the staged content */
  /* PUBPLAN_FILE whose content the scan judged (a new repository's git
   * configuration): the digest of the bytes it read, which what is staged
   * must still be (a descriptor passed out of the sandbox can write the
   * upper after the command ended); empty for every other change.  Not
   * logged: it is checked while staging, before the staged record.  */
  char judged[SHA256_HEX_LEN + 1];

  enum pubplan_before before;
  mode_t before_mode;
  struct timespec before_mtime;
  char *before_target;
  char before_digest[SHA256_HEX_LEN + 1];
};

struct pubplan
{
  struct pubplan_change *changes; /* parents before children */
  size_t n;
  char **left_out; /* "PATH (why)", named in the result */
  size_t n_left_out;
};

void pubplan_clear (struct pubplan *plan);

/* Add a change (the plan takes path and target) and return it.  */
struct pubplan_change *pubplan_add (struct pubplan *plan, char *path,
                                    enum pubplan_kind kind);

/* Name a path that is left out, and why.  */
void pubplan_leave_out (struct pubplan *plan, const char *path,
                        const char *why);

/* Scan upper against the lower root (without following any link in
 * either) into plan.  What guard keeps (sandbox/pubguard.h; NULL: only
 * the protected names) is left out and named, never planned.  */
int pubplan_scan (const char *upper, const char *root,
                  const struct pubguard *guard, struct pubplan *plan,
                  struct cr_error **err);

/* The plan as text for the log, and back.  */
char *pubplan_serialize (const struct pubplan *plan, size_t *len);
int pubplan_parse (const char *text, size_t len, struct pubplan *plan,
                   struct cr_error **err);

/* The names in the open directory fd (without "." and ".."), sorted by
 * strcmp; *n gets how many, and each name and the array are the caller's
 * to free.  NULL (*n 0) when empty or unreadable.  fd keeps its own
 * position: the listing reads a duplicate, rewound.  */
char **pubplan_sorted_names (int fd, size_t *n);

/* Percent-encode a name for one line of text (the caller owns it), and
 * decode it back (NULL when malformed).  */
char *pubplan_escape (const char *s);
char *pubplan_unescape (const char *s);

#endif
