/* The job protocol of the container backend: what crucible sends a
 * container on its standard input and what the job runner inside
 * (container/runner/, baked into the image by `crucible sandbox image
 * build`) answers on its standard output.  "The job goes in on stdin and
 * the answer comes out on stdout": nothing is staged on the host, which is
 * what lets the engine live on another machine.
 *
 * Both directions are a sequence of frames: one type byte, the payload's
 * length as four bytes big-endian, the payload.  A payload is at most
 * JOBPROTO_FRAME_MAX bytes; a longer length, an unknown type or a frame
 * out of order ends the stream with an error on either side.  The same
 * code (jobproto.c) reads and writes frames in crucible and in the runner.
 *
 * crucible to the runner, in this order:
 *   'V'  "crucible-job 1": the protocol and its version, first.
 *   'L'  the limits, "key=value" lines (JOBPROTO_LIMIT_*): the runner sets
 *        them as rlimits on the command and reads back what the kernel
 *        holds in its 'R' frame.
 *   'E'  one environment entry, "NAME=VALUE", repeated: the command's
 *        built environment, credentials included.  They are never in the
 *        container's stored Env: only here, on the attached stream.
 *   'C'  the command line, given to `/bin/sh -c`.
 *   'W'  a piece of the workspace as a ustar archive (pax records for long
 *        names), repeated, in order; the runner unpacks it into the
 *        workspace tmpfs as it comes.
 *   'G'  the job is whole: the runner starts the command.
 * and afterwards, at any time:
 *   'K'  stop: payload the signal's number in decimal.  The runner sends
 *        it to the command's process group, then SIGKILL after
 *        JOBPROTO_LIMIT_GRACE_MS; a stopped command's changes are never
 *        sent.
 * The end of crucible's stream (its connection closed, crucible killed)
 * is the dead-man switch: the runner kills the command's process group at
 * once and exits without sending changes, and the container, made with
 * AutoRemove, goes.
 *
 * The runner to crucible:
 *   'R'  ready: the workspace is unpacked and the command is about to
 *        start; payload the hardening as seen from inside, "key=value"
 *        lines (JOBPROTO_FACT_*), which crucible checks against what it
 *        asked before believing any claim.
 *   'O'  output: bytes the command wrote, stdout and stderr joined on one
 *        pipe, in order.
 *   'X'  the command ended: "exit=N" or "signal=N", then " deadline=1"
 *        when the runner stopped it because its deadline came, or
 *        " stopped=1" after a 'K'.
 *   'D'  a piece of the changes: a ustar archive of what the command
 *        created or changed in the workspace (regular files with their
 *        content, new directories, new symbolic links), sent only after an
 *        ordinary exit (any status, no deadline, no stop).
 *   'U'  one path the command deleted, relative to the workspace.
 *   'Z'  the end: "changes=N bytes=M", the entries and content bytes sent.
 *        The runner exits after it.
 *   'F'  the runner failed a step (the workspace did not fit, an rlimit
 *        could not be set): payload the reason; it exits after it.
 * Everything the runner sends is written by code running beside the
 * workload in the container, so crucible believes none of it: the changes
 * are bounded and checked as publication checks an overlay's upper layer
 * (no "..", no absolute path, no link out, no device, no setuid bit, no
 * change of mode, owner or type of an existing path), and the facts are
 * claims to compare, not proof on their own.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_JOBPROTO_H
#define CRUCIBLE_SANDBOX_CONTAINER_JOBPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/error.h"

/* The first frame's payload.  */
#define JOBPROTO_VERSION "crucible-job 1"

/* The longest payload of one frame (1 MiB), and a frame's header.  */
#define JOBPROTO_FRAME_MAX ((uint32_t) 1 << 20)
#define JOBPROTO_HEADER 5

/* The frame types, as above.  */
enum jobproto_type
{
  JOB_VERSION = 'V',
  JOB_LIMITS = 'L',
  JOB_ENV = 'E',
  JOB_COMMAND = 'C',
  JOB_WORKSPACE = 'W',
  JOB_GO = 'G',
  JOB_STOP = 'K',
  ANS_READY = 'R',
  ANS_OUTPUT = 'O',
  ANS_EXIT = 'X',
  ANS_CHANGES = 'D',
  ANS_DELETED = 'U',
  ANS_END = 'Z',
  ANS_FAILED = 'F'
};

/* The keys of the 'L' frame.  Sizes in bytes, times in milliseconds;
 * cpu in seconds.  deadline_ms counts from 'G': the runner stops the
 * command (SIGTERM, then SIGKILL after grace_ms) when it comes, which is
 * before crucible's own outer kill.  */
#define JOBPROTO_LIMIT_CPU "cpu"
#define JOBPROTO_LIMIT_AS "as"
#define JOBPROTO_LIMIT_FSIZE "fsize"
#define JOBPROTO_LIMIT_NPROC "nproc"
#define JOBPROTO_LIMIT_NOFILE "nofile"
#define JOBPROTO_LIMIT_DEADLINE_MS "deadline_ms"
#define JOBPROTO_LIMIT_GRACE_MS "grace_ms"
#define JOBPROTO_LIMIT_CHANGES_MAX "changes_max" /* bytes of 'D' content */

/* The keys of the 'R' frame: what the runner reads about itself.  */
#define JOBPROTO_FACT_UID "uid"
#define JOBPROTO_FACT_GID "gid"
#define JOBPROTO_FACT_GROUPS "groups"    /* supplementary, comma-separated */
#define JOBPROTO_FACT_NNP "no_new_privs" /* /proc/self/status NoNewPrivs */
#define JOBPROTO_FACT_CAPS "caps"        /* CapEff, CapPrm, CapBnd, CapAmb */
#define JOBPROTO_FACT_SECCOMP "seccomp"  /* /proc/self/status Seccomp */
#define JOBPROTO_FACT_ROOT_RO "root_ro"  /* / is mounted read-only */
#define JOBPROTO_FACT_WORKSPACE "workspace_mount" /* fstype,options */
#define JOBPROTO_FACT_TMP "tmp_mount"             /* fstype,options */
#define JOBPROTO_FACT_NET "net"                   /* interfaces other than lo */
#define JOBPROTO_FACT_RLIMITS "rlimits"       /* cpu,as,fsize,nproc,nofile */
#define JOBPROTO_FACT_MEMORY_MAX "memory_max" /* the cgroup's, or "none" */
#define JOBPROTO_FACT_SWAP_MAX "memsw_max"    /* memory+swap, or "none" */
#define JOBPROTO_FACT_PIDS_MAX "pids_max"     /* the cgroup's, or "none" */
/* Appended (ctattack): the runner's own seccomp filter ("crucible" or
 * "none"), whether a new user namespace is refused inside ("refused"),
 * and the runner's dumpable state (0: the command cannot ptrace it or
 * open its descriptors); 'L''s "bind=1": allowLocalBinding.  */
#define JOBPROTO_FACT_FILTER "filter"
#define JOBPROTO_FACT_USERNS "userns"
#define JOBPROTO_FACT_DUMPABLE "dumpable"
#define JOBPROTO_LIMIT_BIND "bind"

/* Append one frame to out.  */
int jobproto_put (struct buf *out, enum jobproto_type type, const void *data,
                  size_t len, struct cr_error **err);

/* Write one frame to fd, all of it (EINTR and short writes handled;
 * EAGAIN is an error: fd is blocking).  */
int jobproto_write (int fd, enum jobproto_type type, const void *data,
                    size_t len, struct cr_error **err);

/* A reader of frames from a byte stream that comes in pieces.  */
struct jobproto_reader
{
  struct buf pending; /* bytes of an incomplete frame */
  bool failed;
};

void jobproto_reader_init (struct jobproto_reader *r);
void jobproto_reader_clear (struct jobproto_reader *r);

/* What a frame is given to.  A nonzero return stops the reading and is
 * handed back from jobproto_reader_feed.  */
typedef int (*jobproto_frame_fn) (void *data, enum jobproto_type type,
                                  const uint8_t *payload, size_t len,
                                  struct cr_error **err);

/* Feed len bytes: each whole frame goes to fn, in order; what is left of
 * an incomplete one is kept for the next call.  An oversized length or a
 * type outside enum jobproto_type fails the reader (and every later
 * call).  */
int jobproto_reader_feed (struct jobproto_reader *r, const void *data,
                          size_t len, jobproto_frame_fn fn, void *fn_data,
                          struct cr_error **err);

/* Whether bytes of an unfinished frame are held: at the end of the stream
 * that is a truncated answer.  */
bool jobproto_reader_partial (const struct jobproto_reader *r);

/* Read "key=value" lines (an 'L' or 'R' payload): the value of key, as a
 * copy the caller owns, or NULL when it is not there.  A line without '='
 * or with a NUL byte makes every lookup fail.  */
char *jobproto_kv (const uint8_t *payload, size_t len, const char *key);

/* --- appended by the runner part: the names both directions may carry */

/* Whether name is a path the workspace may hold: relative, nonempty, at
 * most 4096 bytes, no empty, "." or ".." component, no trailing '/'.  */
bool jobproto_path_ok (const char *name);

/* Whether a symbolic link at name (jobproto_path_ok) with target stays in
 * the workspace whatever the links it goes through: a relative target
 * whose ".." components all come first, no more of them than name has
 * directories above it.  Every link of the workspace held to this, a
 * descent through links ends inside too.  */
bool jobproto_link_inside (const char *name, const char *target);

/* --- appended for workloads with standard streams of their own (an MCP
 * server: sandbox_command.stdio) ---------------------------------------
 *
 * A job whose 'L' frame says "stdio=1" gives the command a standard input
 * of its own and keeps its standard error apart.  Nothing above changes
 * meaning; without the key a job is as before (input /dev/null, stdout
 * and stderr joined in 'O').  With it, after 'G':
 *   crucible to the runner:
 *   'I'  input: bytes for the command's standard input, in order.
 *   'N'  no more input: the runner closes the command's standard input
 *        (once what 'I' gave is written).  'K' and the end of the
 *        stream keep their meaning.
 *   the runner to crucible:
 *   'O'  the command's standard output alone;
 *   'Y'  its standard error, in order.
 * The runner holds at most JOBPROTO_INPUT_MAX bytes of input the command
 * has not read; past that it stops reading crucible's stream until the
 * command reads (the engine's connection carries the back-pressure).  */
#define JOBPROTO_LIMIT_STDIO "stdio"
#define JOBPROTO_INPUT_MAX ((size_t) 1 << 20)

/* The frame types added with them (enum jobproto_type's values are the
 * letters; these are not in that enum so that nothing switching on it
 * changes).  */
#define JOB_INPUT ((enum jobproto_type) 'I')
#define JOB_INPUT_END ((enum jobproto_type) 'N')
#define ANS_ERROR_OUTPUT ((enum jobproto_type) 'Y')

#endif
