/* File operations for publication, on descriptors, following no link.  */
#include <config.h>

#include "sandbox/pubfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/wal.h"

#define PUBFS_MAX_DEPTH 256
#define PUBFS_CHUNK ((size_t) 1 << 20)
/* Files up to this size are copied through one buffer on the stack.  */
#define PUBFS_SMALL 65536

/* Open a directory below rootfd by a relative path, refusing any symlink
 * on the way and anything that would leave the root ("..", an absolute
 * path): the kernel checks it, so no race with the root's owner.  */
static int
pubfs_open_beneath (int rootfd, const char *rel)
{
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
                                     | RESOLVE_NO_MAGICLINKS };
  return (int) syscall (SYS_openat2, rootfd, rel, &how, sizeof how);
}

int
pubfs_open_parent (int rootfd, const char *rel, const char **base)
{
  const char *slash = strrchr (rel, '/');
  if (slash == NULL)
    {
      *base = rel;
      return pubfs_open_beneath (rootfd, ".");
    }
  *base = slash + 1;
  cleanup_free char *dir = xmalloc ((size_t) (slash - rel) + 1);
  memcpy (dir, rel, (size_t) (slash - rel));
  dir[slash - rel] = '\0';
  return pubfs_open_beneath (rootfd, dir);
}

void
pubfs_dir_init (struct pubfs_dir *d, int rootfd)
{
  d->rootfd = rootfd;
  d->rel = NULL;
  d->fd = -1;
}

void
pubfs_dir_forget (struct pubfs_dir *d)
{
  /* The descriptor is the cache's only while it names a directory (a
   * zeroed cache holds nothing, not descriptor 0).  */
  if (d->rel != NULL && d->fd >= 0)
    close (d->fd);
  free (d->rel);
  d->rel = NULL;
  d->fd = -1;
}

int
pubfs_dir_parent (struct pubfs_dir *d, const char *rel, const char **base)
{
  const char *slash = strrchr (rel, '/');
  size_t n = slash != NULL ? (size_t) (slash - rel) : 0;

  *base = slash != NULL ? slash + 1 : rel;
  if (d->rel != NULL && strlen (d->rel) == n && memcmp (d->rel, rel, n) == 0)
    {
      /* A directory found missing stays missing until forgotten.  */
      if (d->fd < 0)
        errno = ENOENT;
      return d->fd;
    }
  pubfs_dir_forget (d);
  int fd = pubfs_open_parent (d->rootfd, rel, base);
  if (fd < 0 && errno != ENOENT)
    return -1;
  d->fd = fd;
  d->rel = xmalloc (n + 1);
  memcpy (d->rel, rel, n);
  d->rel[n] = '\0';
  if (fd < 0)
    errno = ENOENT;
  return fd;
}

/* Copy len bytes of in at *off to out at the same offset.  */
static int
pubfs_copy_range (int in, int out, off_t off, off_t len, const char *phase)
{
  off_t in_off = off, out_off = off;
  while (len > 0)
    {
      if (phase != NULL && wal_fault_enospc (phase))
        return errno = ENOSPC, -1;
      size_t want = (size_t) len > PUBFS_CHUNK ? PUBFS_CHUNK : (size_t) len;
      ssize_t n = copy_file_range (in, &in_off, out, &out_off, want, 0);
      if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS))
        {
          char chunk[16384];
          n = pread (in, chunk, want < sizeof chunk ? want : sizeof chunk,
                     in_off);
          if (n > 0 && pwrite (out, chunk, (size_t) n, out_off) != n)
            return -1;
          in_off += n > 0 ? n : 0;
          out_off += n > 0 ? n : 0;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        return errno = EIO, -1; /* the file shrank under us */
      len -= n;
    }
  return 0;
}

/* Copy every byte of in (size bytes) to out, keeping holes as holes: a
 * sparse file stays sparse.  */
static int
pubfs_copy_bytes (int in, int out, off_t size, const char *phase)
{
  off_t off = 0;
  while (off < size)
    {
      off_t data = lseek (in, off, SEEK_DATA);
      if (data < 0 && errno == ENXIO)
        break;
      if (data < 0)
        data = off; /* no hole support: copy it all */
      off_t hole = lseek (in, data, SEEK_HOLE);
      if (hole < 0 || hole > size)
        hole = size;
      if (pubfs_copy_range (in, out, data, hole - data, phase) < 0)
        return -1;
      off = hole;
    }
  return ftruncate (out, size);
}

/* Whether a file (seen as st) is copied through one buffer: small, and
 * with no holes to keep.  */
static bool
pubfs_small (const struct stat *st)
{
  return st->st_size <= PUBFS_SMALL
         && (off_t) st->st_blocks * 512 >= st->st_size;
}

/* Copy the size bytes of a small file in to out through one buffer; hex
 * (unless NULL) gets the digest of the bytes written, which are what out
 * holds: it was just made, in a directory nobody else writes.  */
static int
pubfs_copy_small (int in, int out, off_t size, char *hex, const char *phase)
{
  char data[PUBFS_SMALL];
  size_t got = 0;
  if (size > 0 && phase != NULL && wal_fault_enospc (phase))
    return errno = ENOSPC, -1;
  while (got < (size_t) size)
    {
      ssize_t n = read (in, data + got, (size_t) size - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        return errno = EIO, -1; /* the file shrank under us */
      got += (size_t) n;
    }
  for (size_t put = 0; put < got;)
    {
      ssize_t n = write (out, data + put, got - put);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      put += (size_t) n;
    }
  if (hex != NULL)
    sha256_buffer (data, got, hex);
  return 0;
}

/* Give fd its mode, owner (only root can, and only root needs to) and
 * mtime.  */
static int
pubfs_set_meta (int fd, const struct pubfs_meta *meta)
{
  struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, meta->mtime };
  uid_t euid = geteuid ();
  if (euid == 0 && fchown (fd, meta->uid, meta->gid) < 0)
    return -1;
  /* Not root: the group alone, which the kernel allows only to a group
   * the user holds, so a team's file changed in a sandbox that maps the
   * user's groups (sandbox/userns.h) keeps its team's group.  Best
   * effort: otherwise the user's own group, as before.  */
  if (euid != 0 && meta->gid != getegid ()
      && fchown (fd, (uid_t) -1, meta->gid) < 0)
    errno = 0;
  /* After the chown, which clears setuid and setgid: a backup keeps the
   * bits it had; a published file's mode has them removed already.  */
  if (fchmod (fd, meta->mode & 07777) < 0)
    return -1;
  return futimens (fd, times);
}

/* Copy the user.* extended attributes of in to out, best effort (a
 * filesystem without them keeps none).  Only user.*: security.* (file
 * capabilities among them) and trusted.* are never carried over.  From an
 * upper, overlayfs's own user.overlay.* are left behind and the user's
 * escaped user.overlay.overlay.NAME becomes user.overlay.NAME again.  */
static void
pubfs_copy_xattrs (int in, int out, bool from_upper)
{
  /* The most a Linux attribute list or value holds.  */
  enum
  {
    XATTR_BYTES = 65536
  };
  cleanup_free char *names = xmalloc (XATTR_BYTES);
  cleanup_free char *value = xmalloc (XATTR_BYTES);
  ssize_t n = flistxattr (in, names, XATTR_BYTES);

  for (ssize_t off = 0; off < n; off += (ssize_t) strlen (names + off) + 1)
    {
      const char *name = names + off;
      cleanup_free char *to = NULL;
      if (strncmp (name, "user.", 5) != 0)
        continue;
      if (from_upper && strncmp (name, "user.overlay.", 13) == 0)
        {
          if (strncmp (name, "user.overlay.overlay.", 21) != 0)
            continue;
          to = xasprintf ("user.%s", name + 13);
        }
      ssize_t len = fgetxattr (in, name, value, XATTR_BYTES);
      if (len >= 0)
        fsetxattr (out, to ? to : name, value, (size_t) len, 0);
    }
}

int
pubfs_digest (int dir, const char *name, char *hex)
{
  cleanup_close int fd
      = openat (dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct cr_error *err = NULL;
  if (fd < 0)
    return -1;
  if (sha256_fd (fd, hex, &err) < 0)
    {
      errno = err->code ? err->code : EIO;
      cr_error_free (err);
      return -1;
    }
  return 0;
}

int
pubfs_copy_file (int src, const char *sname, int dst, const char *dname,
                 const struct pubfs_meta *meta, char *hex, const char *phase)
{
  cleanup_close int in
      = openat (src, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (in < 0 || fstat (in, &st) < 0)
    return -1;
  if (!S_ISREG (st.st_mode))
    return errno = EINVAL, -1;
  cleanup_close int out = openat (
      dst, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return -1;
  bool small = pubfs_small (&st);
  if (small ? pubfs_copy_small (in, out, st.st_size, hex, phase) < 0
            : pubfs_copy_bytes (in, out, st.st_size, phase) < 0)
    return -1;
  struct pubfs_meta m = meta ? *meta
                             : (struct pubfs_meta){ .mode = st.st_mode,
                                                    .uid = st.st_uid,
                                                    .gid = st.st_gid,
                                                    .mtime = st.st_mtim };
  pubfs_copy_xattrs (in, out, m.from_upper);
  if (pubfs_set_meta (out, &m) < 0)
    return -1;
  if (hex != NULL && !small && pubfs_digest (dst, dname, hex) < 0)
    return -1;
  return 0;
}

static int pubfs_copy_at (int src, const char *sname, int dst,
                          const char *dname, const char *phase, int depth);

/* Copy the entries of one directory.  */
static int
pubfs_copy_dir (int src, const char *sname, int dst, const char *dname,
                const struct stat *st, const char *phase, int depth)
{
  if (depth > PUBFS_MAX_DEPTH)
    return errno = ELOOP, -1;
  if (mkdirat (dst, dname, 0700) < 0)
    return -1;
  cleanup_close int in
      = openat (src, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int out
      = openat (dst, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || out < 0)
    return -1;
  int dup_fd = dup (in);
  cleanup_closedir DIR *d = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  if (d == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return -1;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
        && pubfs_copy_at (in, de->d_name, out, de->d_name, phase, depth + 1)
               < 0)
      return -1;
  struct pubfs_meta m = { .mode = st->st_mode,
                          .uid = st->st_uid,
                          .gid = st->st_gid,
                          .mtime = st->st_mtim };
  return pubfs_set_meta (out, &m);
}

/* Copy one entry of any kind publication keeps.  */
static int
pubfs_copy_at (int src, const char *sname, int dst, const char *dname,
               const char *phase, int depth)
{
  struct stat st;
  if (fstatat (src, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (S_ISDIR (st.st_mode))
    return pubfs_copy_dir (src, sname, dst, dname, &st, phase, depth);
  if (S_ISREG (st.st_mode))
    return pubfs_copy_file (src, sname, dst, dname, NULL, NULL, phase);
  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX + 1];
      ssize_t n = readlinkat (src, sname, target, sizeof target - 1);
      if (n < 0)
        return -1;
      target[n] = '\0';
      struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };
      if (symlinkat (target, dst, dname) < 0)
        return -1;
      if (geteuid () == 0)
        fchownat (dst, dname, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      return utimensat (dst, dname, times, AT_SYMLINK_NOFOLLOW);
    }
  if (S_ISFIFO (st.st_mode))
    return mkfifoat (dst, dname, st.st_mode & 0777);
  /* A socket or a device cannot be copied: the copy would not be the
   * same, and verification says so.  */
  return 0;
}

int
pubfs_copy_tree (int src, const char *sname, int dst, const char *dname,
                 const char *phase)
{
  return pubfs_copy_at (src, sname, dst, dname, phase, 0);
}

int
pubfs_chmod_dir (int dir, const char *name, mode_t mode)
{
  char path[64];
  struct stat st;
  cleanup_close int fd
      = openat (dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    return -1;
  if (!S_ISDIR (st.st_mode))
    return errno = ENOTDIR, -1;
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  return chmod (path, mode & 07777);
}

static int pubfs_remove_at (int dir, const char *name, int depth);

/* Empty an open directory.  */
static int
pubfs_empty (int fd, int depth)
{
  int dup_fd = dup (fd);
  cleanup_closedir DIR *d = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  struct dirent *de;
  int rc = 0;
  if (d == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return -1;
    }
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
        && pubfs_remove_at (fd, de->d_name, depth + 1) < 0)
      rc = -1;
  return rc;
}

static int
pubfs_remove_at (int dir, const char *name, int depth)
{
  struct stat st;
  /* Most names are files: unlink first (never following a link: it
   * removes the link itself), and look only at what refused.  */
  if (unlinkat (dir, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR (st.st_mode))
    return unlinkat (dir, name, 0) < 0 && errno != ENOENT ? -1 : 0;
  if (depth > PUBFS_MAX_DEPTH)
    return errno = ELOOP, -1;
  /* A directory its owner cannot list (overlayfs's work/work is mode 000)
   * is made listable first.  */
  if ((st.st_mode & 0700) != 0700)
    pubfs_chmod_dir (dir, name, (st.st_mode & 07777) | 0700);
  cleanup_close int fd
      = openat (dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || pubfs_empty (fd, depth) < 0)
    return -1;
  return unlinkat (dir, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

int
pubfs_remove_tree (int dir, const char *name)
{
  return pubfs_remove_at (dir, name, 0);
}

static bool pubfs_same_at (int a, const char *an, int b, const char *bn,
                           int depth);

/* Whether two directories hold the same names with the same content.  */
static bool
pubfs_same_dir (int a, const char *an, int b, const char *bn, int depth)
{
  cleanup_close int fa
      = openat (a, an, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int fb
      = openat (b, bn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fa < 0 || fb < 0 || depth > PUBFS_MAX_DEPTH)
    return false;
  size_t na = 0, nb = 0;
  for (int pass = 0; pass < 2; pass++)
    {
      int dup_fd = dup (pass == 0 ? fa : fb);
      cleanup_closedir DIR *d = dup_fd < 0 ? NULL : fdopendir (dup_fd);
      struct dirent *de;
      if (d == NULL)
        {
          if (dup_fd >= 0)
            close (dup_fd);
          return false;
        }
      while ((de = readdir (d)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          if (pass == 1)
            nb++;
          else if (!pubfs_same_at (fa, de->d_name, fb, de->d_name, depth + 1))
            return false;
          else
            na++;
        }
    }
  return na == nb;
}

static bool
pubfs_same_at (int a, const char *an, int b, const char *bn, int depth)
{
  struct stat sa, sb;
  if (fstatat (a, an, &sa, AT_SYMLINK_NOFOLLOW) < 0
      || fstatat (b, bn, &sb, AT_SYMLINK_NOFOLLOW) < 0
      || (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
    return false;
  if (S_ISDIR (sa.st_mode))
    return (sa.st_mode & 07777) == (sb.st_mode & 07777)
           && pubfs_same_dir (a, an, b, bn, depth);
  if (S_ISLNK (sa.st_mode))
    {
      char ta[PATH_MAX + 1], tb[PATH_MAX + 1];
      ssize_t la = readlinkat (a, an, ta, sizeof ta);
      ssize_t lb = readlinkat (b, bn, tb, sizeof tb);
      return la >= 0 && la == lb && memcmp (ta, tb, (size_t) la) == 0;
    }
  if (!S_ISREG (sa.st_mode))
    return S_ISFIFO (sa.st_mode);
  char ha[SHA256_HEX_LEN + 1], hb[SHA256_HEX_LEN + 1];
  return (sa.st_mode & 07777) == (sb.st_mode & 07777)
         && sa.st_size == sb.st_size && pubfs_digest (a, an, ha) == 0
         && pubfs_digest (b, bn, hb) == 0 && strcmp (ha, hb) == 0;
}

bool
pubfs_same_tree (int a, const char *aname, int b, const char *bname)
{
  return pubfs_same_at (a, aname, b, bname, 0);
}
