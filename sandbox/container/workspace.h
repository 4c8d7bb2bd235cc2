/* The workspace root as a ustar archive, for the job's 'W' frames
 * (sandbox/container/jobproto.h), and what it leaves out.
 *
 * The archive holds the root's directories, regular files (hard links as
 * separate files) and symbolic links whose target stays inside
 * (jobproto_link_inside), with their permission bits (setuid, setgid and
 * sticky off) and mtimes; names are relative, in sorted order, parents
 * before children, long names in pax records.  Left out, each named in
 * job_sent.left_out with why: what an unreadable pattern matches (and all
 * below it), sockets, fifos, devices, links out of the workspace, and
 * whatever cannot be opened.  Nothing follows a link.  A workspace over
 * the content bound or the entry bound is not sent at all: the job fails,
 * saying which bound, rather than run on part of it.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_WORKSPACE_H
#define CRUCIBLE_SANDBOX_CONTAINER_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "sandbox/container/job.h"

/* Whether rel (relative to the root) or a directory above it matches one
 * of the patterns (struct job's leave_out).  */
bool workspace_pattern_hit (const char *const *patterns, const char *rel);

/* Walk root into an archive, handing it to fn in pieces of at most
 * JOBPROTO_FRAME_MAX bytes; sent gets what went and what was left out.  */
int workspace_archive (const char *root, const char *const *leave_out,
                       uint64_t bytes_max, size_t entries_max, job_sink_fn fn,
                       void *fn_data, struct job_sent *sent,
                       struct cr_error **err);

#endif
