/* Paths of a workspace that a confined command cannot change because of
 * the group they carry.  A sandbox maps the user's own group (root's 0, or
 * the owner's when root runs it over another user's workspace), and the
 * user's other groups where crucible can make the namespace with them
 * (sandbox/userns.h); every other group appears inside as the overflow
 * group, and overlayfs
 * cannot copy up a file or directory whose group it cannot map: writing
 * to it, or creating a name in it, fails with EOVERFLOW ("Value too large
 * for defined data type") where the same command unconfined succeeds.
 * The scan finds such paths before the command runs, so its result can
 * name one and the remedy instead of leaving a bare EOVERFLOW.
 *
 * Bounded: at most GROUPSCAN_MAX_ENTRIES entries looked at, and
 * GROUPSCAN_MAX_DEPTH directories deep; no symbolic link is followed and
 * no mount is crossed (neither is in the sandbox's view as a path the
 * command could change through the overlay).  */
#ifndef CRUCIBLE_SANDBOX_GROUPSCAN_H
#define CRUCIBLE_SANDBOX_GROUPSCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GROUPSCAN_MAX_ENTRIES 20000
#define GROUPSCAN_MAX_DEPTH 64

/* Who the command runs as outside the sandbox, and the groups the
 * sandbox maps.  */
struct groupscan_who
{
  uid_t uid;
  gid_t mapped_gid;    /* the user's own, which the remedy names */
  const gid_t *mapped; /* the other groups mapped (sandbox/userns.h) */
  size_t n_mapped;
  const gid_t *groups; /* the user's groups, for group write permission */
  size_t n_groups;
};

struct groupscan_result
{
  uint64_t count; /* paths found (the scan stops at 100) */
  char *first;    /* the first, relative to the workspace; owned */
  gid_t first_gid;
  bool bounded; /* the entry or depth bound ended the scan early */
};

/* Scan the directory root_fd (not closed) for entries the user could
 * change unconfined (owner with write permission, a group of theirs with
 * group write, or anyone's write; root: any) whose group is not a mapped
 * one.  Returns 0; -1 with errno when the root cannot be read.  */
int groupscan_run (int root_fd, const struct groupscan_who *who,
                   struct groupscan_result *out);

/* The result's note (doc/strings.md), or NULL when nothing was found.
 * mapped names the group the remedy suggests.  Owned.  */
char *groupscan_note (const struct groupscan_result *r, gid_t mapped);

void groupscan_result_clear (struct groupscan_result *r);

#endif
