/* crucible-job-runner: the program inside a container that takes one job
 * on its standard input and answers on its standard output
 * (sandbox/container/jobproto.h).  Linked statically (libc only), baked
 * into the image by `crucible sandbox image build`; it is the container's
 * entrypoint, PID 1.
 *
 * Everything it reads comes from crucible, and everything in the
 * workspace after the command ran comes from the workload; it trusts the
 * first for what to run and nothing of the second (it follows no link,
 * and crucible checks what it sends anyway).  */
#ifndef CRUCIBLE_RUNNER_H
#define CRUCIBLE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/error.h"
#include "sandbox/container/tar.h"

/* Where the workspace is in the container.  */
#define RUNNER_WORKSPACE "/workspace"

/* The most entries the workspace archive may hold (its bytes are bounded
 * by the workspace tmpfs).  */
#define RUNNER_ENTRIES_MAX (1u << 20)

/* One path of the workspace as the command found it.  */
struct runner_base
{
  char *path;
  mode_t mode; /* st_mode, type included */
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  char *target;  /* a link's */
  bool seen;     /* still there after the command, same kind */
  bool replaced; /* there with another kind: deleted, then made anew */
};

/* The workspace's baseline, sorted by path.  */
struct runner_baseline
{
  struct runner_base *v;
  size_t n;
};

/* The unpacking of the 'W' archive into the workspace.  */
struct runner_unpack
{
  int wsfd;
  struct tar_reader tar;
  bool started;
  size_t entries;
  int file_fd;
  struct tar_entry file;
  char *file_name;
  /* Directories made, whose modes and mtimes are set at the end (a
   * read-only one could take no entries otherwise).  */
  struct runner_dir
  {
    char *path;
    unsigned mode;
    int64_t mtime;
  } * dirs;
  size_t n_dirs;
};

/* runner_fs.c: the workspace in and the changes out.  */
void runner_unpack_init (struct runner_unpack *u, int wsfd);
int runner_unpack_feed (struct runner_unpack *u, const void *data, size_t len,
                        struct cr_error **err);
int runner_unpack_finish (struct runner_unpack *u, struct cr_error **err);
void runner_unpack_clear (struct runner_unpack *u);

int runner_baseline_take (int wsfd, struct runner_baseline *b,
                          struct cr_error **err);
void runner_baseline_clear (struct runner_baseline *b);

/* Walk the workspace against b and write D, U and Z frames to out_fd, at
 * most changes_max content bytes (more: an 'F' frame instead of 'Z').  */
int runner_changes_send (int wsfd, struct runner_baseline *b,
                         uint64_t changes_max, int out_fd,
                         struct cr_error **err);

/* runner_facts.c: the 'R' payload, what the runner reads about itself and
 * the command's limits (read back from the process pid).  */
char *runner_facts (const char *workspace, pid_t pid, size_t *len);

/* runner_filter.c: load crucible's own seccomp filter on the runner (and
 * so on the command it forks), bind(2) and listen(2) refused unless
 * allow_binding; 0, or -1 with errno (ENOSYS: no filter for this
 * architecture).  */
int runner_filter_load (bool allow_binding);

/* Whether a process of the container can make a new user namespace,
 * tried in a child: "refused", "allowed" or "unknown".  */
const char *runner_userns_probe (void);

/* What runner_facts reports of the filter: set by main before it.  */
extern const char *runner_filter_state; /* "crucible" or "none" */

#endif
