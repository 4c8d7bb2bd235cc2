/* Unreadable patterns (sandbox.filesystem.unreadable) and the one scan
 * that finds what they name under a root.  libc only: the broker runs the
 * scan inside the sandbox, over the workspace's read-only lower, and the
 * host uses the same grammar check to refuse a bad pattern before any
 * launch.
 *
 * The grammar is deliberately small (doc/linux-confinement.md,
 * "Unreadable patterns"): a pattern is a relative path of '/'-separated
 * components, anchored at the root; in a component '*' matches any run of
 * characters other than '/' (dot files included); a component that is
 * exactly "**" matches zero or more whole components, and a pattern holds
 * at most one.  Nothing else is special.  Empty, "." and ".." components
 * are refused, and so is a '*' run inside "**" ("a**b").
 *
 * The scan follows no symlink (a link is neither entered nor hidden, so
 * what it points at is judged by its own name), crosses no mount (a
 * directory on another device is not entered: the overlay's lower does not
 * carry it either), reads each directory's names in byte order, and is
 * bounded: more than UNREADABLE_MAX_ENTRIES entries looked at, more than
 * UNREADABLE_MAX_HITS matches, or a directory deeper than
 * UNREADABLE_MAX_DEPTH that a pattern could reach, ends it with E2BIG or
 * ELOOP rather than hiding part of what was asked.  */
#ifndef CRUCIBLE_BROKER_UNREADABLE_H
#define CRUCIBLE_BROKER_UNREADABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define UNREADABLE_MAX_PATTERNS 256
#define UNREADABLE_MAX_ENTRIES 1000000
#define UNREADABLE_MAX_HITS 4096
#define UNREADABLE_MAX_DEPTH 128

/* Why pattern is not in the grammar, as a static phrase ("has an empty
 * component"), or NULL when it is.  */
const char *unreadable_check (const char *pattern);

/* Whether the relative path rel (plain components) matches pattern.  */
bool unreadable_match (const char *pattern, const char *rel);

/* One path the scan found to hide, relative to the root.  */
struct unreadable_hit
{
  char *rel;
  bool dir; /* a directory: covered with an empty one, not a file */
};

struct unreadable_scan
{
  /* In: the patterns (checked), and whether every socket whose relative
   * path is not in allowed is to be hidden as well.  */
  const char *const *patterns;
  size_t n_patterns;
  bool sockets;
  const char *const *allowed;
  size_t n_allowed;
  /* Out: what to hide, in the order found; how many entries were read.  */
  struct unreadable_hit *hits;
  size_t n_hits;
  size_t entries;
};

/* Scan the directory root_fd (kept open, not closed) into s.  A regular
 * file hidden for a pattern that has other hard links takes those with it:
 * a second pass over the whole tree hides every other name of the same
 * inode.  Returns 0, or -1 with errno set; on failure s holds nothing.  */
int unreadable_scan (int root_fd, struct unreadable_scan *s);
void unreadable_scan_free (struct unreadable_scan *s);

#endif
