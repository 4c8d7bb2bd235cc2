/* File operations publication needs, on descriptors, never following a
 * symbolic link: crucible may run as root, and a root or an upper holds
 * whatever the command chose to put there.  */
#ifndef CRUCIBLE_SANDBOX_PUBFS_H
#define CRUCIBLE_SANDBOX_PUBFS_H

#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/error.h"
#include "sandbox/sha256.h"

/* Open the directory holding rel below rootfd, resolving no symlink and
 * nothing outside; *base points into rel at the last component.  -1 with
 * errno on failure.  */
int pubfs_open_parent (int rootfd, const char *rel, const char **base);

/* The directory a run of changes last opened below a root: consecutive
 * paths of a plan (sorted, so a directory's files come together) share
 * one resolution of their parent instead of one each.  The descriptor
 * stays what it was resolved to, beneath the root and through no link, as
 * one resolution followed by several operations would; whoever changes
 * directories below the root in between forgets it first.  */
struct pubfs_dir
{
  int rootfd;
  char *rel; /* the directory's path below the root; NULL: none open */
  int fd;
};

/* A cache below rootfd, holding nothing yet.  */
void pubfs_dir_init (struct pubfs_dir *d, int rootfd);

/* pubfs_open_parent through the cache: the descriptor is the cache's (not
 * to be closed), valid until the next call or pubfs_dir_forget.  A
 * directory found missing (ENOENT) is remembered as missing too.  */
int pubfs_dir_parent (struct pubfs_dir *d, const char *rel, const char **base);

/* Close what the cache holds.  */
void pubfs_dir_forget (struct pubfs_dir *d);

/* Copy the regular file src/sname to dst/dname (created, replacing
 * nothing), with mode, owner (when root), mtime and user.* extended
 * attributes; hex gets the digest of what was written.  phase names the
 * ENOSPC fault a test build may inject.  -1 with errno.  */
struct pubfs_meta
{
  mode_t mode;
  uid_t uid;
  gid_t gid;
  struct timespec mtime;
  bool from_upper; /* the source is an overlay upper: its user.overlay.*
                      attributes are overlayfs's own, except the escaped
                      user.overlay.overlay.*, which are the user's */
};
int pubfs_copy_file (int src, const char *sname, int dst, const char *dname,
                     const struct pubfs_meta *meta, char *hex,
                     const char *phase);

/* Copy a whole tree (directories, files, links, fifos) from src/sname to
 * dst/dname.  -1 with errno.  */
int pubfs_copy_tree (int src, const char *sname, int dst, const char *dname,
                     const char *phase);

/* Change the mode of the directory dir/name, which must not be a link
 * (a name swapped for one is refused, not followed).  */
int pubfs_chmod_dir (int dir, const char *name, mode_t mode);

/* Remove dir/name and everything below it; absent is fine.  */
int pubfs_remove_tree (int dir, const char *name);

/* Whether two trees hold the same: types, modes, sizes, bytes, targets
 * (directory mtimes aside).  */
bool pubfs_same_tree (int a, const char *aname, int b, const char *bname);

/* The digest of the regular file dir/name, or -1.  */
int pubfs_digest (int dir, const char *name, char *hex);

#endif
