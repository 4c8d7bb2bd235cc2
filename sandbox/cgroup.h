/* The pids cgroup a confined command's processes are counted in, where
 * crucible can make one: the process cap that binds whoever runs
 * crucible, uid 0 included (RLIMIT_NPROC does not bind uid 0).
 *
 * Where: the cgroup crucible itself is in, on the hierarchy that has the
 * pids controller: a cgroup v1 "pids" mount, or cgroup v2 when crucible's
 * own cgroup hands the controller down (cgroup.subtree_control lists
 * "pids"), and only when that directory is writable by crucible.  Each
 * command gets a child named crucible-sandbox-<pid>-<n> with pids.max set;
 * bwrap's process joins it before it execs, so everything beneath the
 * broker is counted there and nothing outside is touched.  */
#ifndef CRUCIBLE_SANDBOX_CGROUP_H
#define CRUCIBLE_SANDBOX_CGROUP_H

#include <stdbool.h>

#include "lib/error.h"

#define CGROUP_PREFIX "crucible-sandbox-"

/* The directory a command's pids cgroup would be made in, or NULL when
 * there is none crucible can use.  Reads /proc/self/mountinfo and
 * /proc/self/cgroup and looks at the directory: it starts and writes
 * nothing.  Owned by the caller.  */
char *cgroup_pids_parent (void);

/* Open, for writing and close-on-exec, the file of the cgroup at dir
 * that a single-threaded process writes "0" to in order to join it:
 * cgroup v1's "tasks", else (cgroup v2, which has none) "cgroup.procs".
 * Both move the writer; "tasks" moves only the writing thread, which for a
 * process of one thread (the launch's child, before it executes bwrap) is
 * the whole process, and it does so without the system-wide lock that
 * moving a process through "cgroup.procs" takes: that lock waits for an
 * RCU grace period when it was not taken recently, which cost about 10 ms
 * of every confined start.  -1 with errno on failure.  */
int cgroup_pids_join_fd (const char *dir);

/* Make a child of parent with pids.max set to max.  *dir_out gets its path
 * (owned) and *procs_fd_out its cgroup_pids_join_fd descriptor: writing
 * "0" there moves the writer in.  */
int cgroup_pids_make (const char *parent, unsigned long max, char **dir_out,
                      int *procs_fd_out, struct cr_error **err);

/* Remove a command's cgroup once its processes are gone, retrying for a
 * short while; false when it is still there.  */
bool cgroup_pids_remove (const char *dir);

/* Whether a command's cgroup holds no process any more (its cgroup.procs
 * reads empty); false when it cannot be read.  */
bool cgroup_pids_empty (const char *dir);

/* Remove children of parent that crucible processes now gone left behind
 * (crucible-sandbox-<pid>-<n> whose pid no longer runs and which hold no
 * process: a cgroup with processes cannot be removed anyway).  */
void cgroup_pids_recover (const char *parent);

#endif
