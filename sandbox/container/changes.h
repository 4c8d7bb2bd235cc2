/* The container's changes stream (the runner's D, U and Z frames) as a
 * change set staged for publication: the module behind job.h's
 * job_changes_* (sandbox/container/job.h).
 *
 * The stream is written by code beside the workload, so every entry is
 * checked before anything of it is written, and the first that fails
 * refuses the whole set (nothing of it publishes):
 *   - a name that is absolute, empty, or holds an empty, "." or ".."
 *     component (jobproto_path_ok), or is over 4096 bytes;
 *   - a kind other than a regular file, a directory or a symbolic link
 *     (hard links, devices, fifos, sockets, anything unknown);
 *   - a setuid or setgid bit;
 *   - a symbolic link whose target could leave the workspace
 *     (jobproto_link_inside), wherever it is;
 *   - a path the workspace archive left out (an unreadable pattern, or a
 *     path job_sent names), or anything above or below one;
 *   - a change of type or of permission bits of a path the root holds,
 *     unless a deletion of it came first ('U', then 'D': a replacement);
 *   - an entry below something that is not a directory, below a path it
 *     deleted, or whose directory neither the root holds nor the stream
 *     made; a path given twice;
 *   - more entries or content bytes than the bounds, a 'Z' whose counts
 *     disagree with what came, a malformed archive, frames after 'Z',
 *     any frame but D, U and Z.
 * Owners in the archive are never read: what is staged belongs to the
 * upper's owner (the root's, when crucible runs as root).
 *
 * What is accepted is staged as an overlay upper directory in the state
 * directory (deletions as whiteouts, a directory that replaces one as
 * opaque), which publish_run scans, checks and publishes like any other
 * command's upper: one transaction for both backends.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_CHANGES_H
#define CRUCIBLE_SANDBOX_CONTAINER_CHANGES_H

#include "sandbox/container/job.h"

/* Why the change set was refused, or NULL while it is not.  */
const char *changes_refusal (const struct job_changes *ch);

/* The staged upper directory (for tests).  */
const char *changes_upper (const struct job_changes *ch);

#endif
