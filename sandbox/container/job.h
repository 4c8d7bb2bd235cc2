/* One command's job for the container's job runner, and what comes back
 * of it: the host's side of sandbox/container/jobproto.h.
 *
 * job_write sends the whole job (V, L, E..., C, W..., G) onto a blocking
 * descriptor: the workspace root goes as a ustar archive in 'W' frames
 * (sandbox/container/workspace.h says what is left out and the bound).
 * After the runner's 'X', the frames that follow (D, U, Z) are given one
 * by one to a change set (job_changes_frame), which checks each as
 * publication checks an overlay's upper layer and stages what it accepts
 * as an upper directory in the state directory; job_changes_publish then
 * publishes that through sandbox/publish.c's one transaction, the same
 * as the bubblewrap backend's (baseline, lock, WAL, verify, rollback,
 * quarantine).  A refused stream publishes nothing and says why.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_JOB_H
#define CRUCIBLE_SANDBOX_CONTAINER_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <crucible/sandbox.h>

#include "lib/error.h"
#include "sandbox/container/jobproto.h"
#include "sandbox/publish.h"
#include "sandbox/pubguard.h"

/* The 'L' frame: each limit is sent only when nonzero (the runner leaves
 * an rlimit it is not given as the container has it).  */
struct job_limits
{
  uint64_t cpu_s;       /* RLIMIT_CPU, seconds */
  uint64_t as_bytes;    /* RLIMIT_AS */
  uint64_t fsize_bytes; /* RLIMIT_FSIZE */
  uint64_t nproc;       /* RLIMIT_NPROC */
  uint64_t nofile;      /* RLIMIT_NOFILE */
  uint64_t deadline_ms; /* from 'G' to the runner's own stop */
  uint64_t grace_ms;    /* from its SIGTERM to its SIGKILL */
  uint64_t changes_max; /* bytes of content the 'D' frames may carry */
  /* Standard streams of the command's own ("stdio=1"; jobproto.h): 0 or
   * 1, last so that a caller built before it lines up.  */
  uint64_t stdio;
  uint64_t allow_binding; /* 1: allowLocalBinding (bind, listen allowed) */
};

/* The default bounds when a job leaves them 0.  */
#define JOB_WORKSPACE_MAX_DEFAULT (UINT64_C (256) << 20) /* content bytes */
#define JOB_ENTRIES_MAX_DEFAULT 100000 /* workspace or changes entries */
#define JOB_CHANGES_MAX_DEFAULT (UINT64_C (256) << 20)

/* One command's job.  Nothing here is owned by the job.  */
struct job
{
  const char *line;  /* given to /bin/sh -c */
  char *const *envp; /* the built environment, NULL-terminated */
  struct job_limits limits;
  const char *root; /* the workspace root on the host, resolved */
  /* Patterns (fnmatch, FNM_PATHNAME, relative to root: "secrets/ *.pem"
   * without the space; a pattern without '/' matches a name at any
   * depth) of what is left out of the workspace archive: the configured
   * unreadable paths.  NULL-terminated, or NULL.  */
  const char *const *leave_out;
  uint64_t workspace_max; /* content bytes; 0: JOB_WORKSPACE_MAX_DEFAULT */
  size_t entries_max;     /* entries; 0: JOB_ENTRIES_MAX_DEFAULT */
};

/* A path of the workspace the archive does not hold, and why ("matches
 * the unreadable pattern P", "a socket", "a link out of the workspace").
 * The command never saw it, so no change may touch it or what is below.  */
struct job_left_out
{
  char *path; /* relative to the root; owned */
  char *why;  /* owned */
};

/* What job_write sent of the workspace.  */
struct job_sent
{
  uint64_t entries;
  uint64_t bytes; /* file content */
  struct job_left_out *left_out;
  size_t n_left_out;
};

void job_sent_clear (struct job_sent *sent);

/* Where job_put's bytes go: all of len, or fail (-1 with *err).  */
typedef int (*job_sink_fn) (void *data, const void *bytes, size_t len,
                            struct cr_error **err);

/* Send the whole job, V to G, through sink.  The workspace is walked as
 * it is sent, never held whole.  sent (may be NULL) gets what went.  */
int job_put (const struct job *job, job_sink_fn sink, void *sink_data,
             struct job_sent *sent, struct cr_error **err);

/* job_put onto a blocking descriptor.  A job that failed part way (a
 * workspace over its bound, say) has not reached 'G': close the stream,
 * which ends the runner without running anything.  */
int job_write (int fd, const struct job *job, struct job_sent *sent,
               struct cr_error **err);

/* A change set: the runner's answer after 'X', checked and staged.  */
struct job_changes;

/* Make an empty change set for job's root, staged under statedir (a pair
 * made with statedir_pair_create, so that statedir_recover removes one a
 * crucible that died left behind).  job->limits.changes_max bounds the
 * content bytes (0: JOB_CHANGES_MAX_DEFAULT), job->entries_max the
 * entries (0: JOB_ENTRIES_MAX_DEFAULT); what job->leave_out matches and
 * what sent (may be NULL) says was left out may not be touched.  Neither
 * job nor sent is kept after the call.  NULL with *err on failure.  */
struct job_changes *job_changes_new (const char *statedir,
                                     const struct job *job,
                                     const struct job_sent *sent,
                                     struct cr_error **err);

/* Take one frame the runner sent after 'X'.  Returns 0 to go on, 1 once
 * its 'Z' came and agreed with what came before, -1 when the stream is
 * refused (err says why; the change set then publishes nothing, saying
 * so, and takes no more frames).  Any frame but D, U and Z is refused.  */
int job_changes_frame (struct job_changes *ch, enum jobproto_type type,
                       const uint8_t *payload, size_t len,
                       struct cr_error **err);

/* Whether 'Z' came and everything before it was accepted.  */
bool job_changes_complete (const struct job_changes *ch);

/* Refuse the change set from outside (the stream ended before 'Z', the
 * runner said 'F'): why goes into the note publish gives.  */
void job_changes_refuse (struct job_changes *ch, const char *why);

/* Publish a complete change set into its root through publish_run, as
 * the backend's publish op (include/crucible/sandbox.h) fills out: busy
 * means ask again (the change set stays staged); a refused or incomplete
 * set publishes nothing and says why in out->note.  baseline is the one
 * taken when the command started; guard what publication keeps (NULL:
 * the protected names only).  */
int job_changes_publish (struct job_changes *ch, const char *call_id,
                         const struct publish_baseline *baseline,
                         const struct pubguard *guard,
                         struct sandbox_publication *out,
                         struct cr_error **err);

/* Remove what was staged and free the change set; NULL is allowed.  */
void job_changes_free (struct job_changes *ch);

#endif
