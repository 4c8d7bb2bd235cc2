/* A ustar archive in a buffer (sandbox/container/tar.h).  */
#include <config.h>

#include "sandbox/container/tar.h"

#include <stdio.h>
#include <string.h>

#define TAR_BLOCK 512

/* The ustar header, as POSIX lays it out.  */
struct tar_header
{
  char name[100];
  char mode[8];
  char uid[8];
  char gid[8];
  char size[12];
  char mtime[12];
  char chksum[8];
  char typeflag;
  char linkname[100];
  char magic[6];
  char version[2];
  char uname[32];
  char gname[32];
  char devmajor[8];
  char devminor[8];
  char prefix[155];
  char pad[12];
};

/* Append one header of type for name (root-owned, mtime 0 so that the same
 * input makes the same archive).  */
static int
tar_header (struct buf *t, const char *name, char type, unsigned mode,
            size_t size, const char *link, struct cr_error **err)
{
  struct tar_header h;
  if (strlen (name) >= sizeof h.name
      || (link != NULL && strlen (link) >= sizeof h.linkname))
    return cr_error_set (err, 0, "tar: the name %s is too long", name);
  memset (&h, 0, sizeof h);
  memcpy (h.name, name, strlen (name));
  snprintf (h.mode, sizeof h.mode, "%07o", mode & 07777);
  snprintf (h.uid, sizeof h.uid, "%07o", 0);
  snprintf (h.gid, sizeof h.gid, "%07o", 0);
  snprintf (h.size, sizeof h.size, "%011zo", size);
  snprintf (h.mtime, sizeof h.mtime, "%011o", 0);
  h.typeflag = type;
  if (link != NULL)
    memcpy (h.linkname, link, strlen (link));
  memcpy (h.magic, "ustar", 6);
  memcpy (h.version, "00", 2);
  memcpy (h.uname, "root", 4);
  memcpy (h.gname, "root", 4);
  /* The checksum is computed with its own field as spaces.  */
  memset (h.chksum, ' ', sizeof h.chksum);
  unsigned sum = 0;
  for (size_t i = 0; i < sizeof h; i++)
    sum += ((unsigned char *) &h)[i];
  snprintf (h.chksum, sizeof h.chksum, "%06o", sum);
  buf_append (t, &h, sizeof h);
  return 0;
}

int
tar_dir (struct buf *t, const char *name, unsigned mode, struct cr_error **err)
{
  char n[101];
  if (snprintf (n, sizeof n, "%s/", name) >= (int) sizeof n)
    return cr_error_set (err, 0, "tar: the name %s is too long", name);
  return tar_header (t, n, '5', mode, 0, NULL, err);
}

int
tar_file (struct buf *t, const char *name, unsigned mode, const void *data,
          size_t len, struct cr_error **err)
{
  static const char zeros[TAR_BLOCK];
  if (tar_header (t, name, '0', mode, len, NULL, err) < 0)
    return -1;
  buf_append (t, data, len);
  if (len % TAR_BLOCK != 0)
    buf_append (t, zeros, TAR_BLOCK - len % TAR_BLOCK);
  return 0;
}

int
tar_symlink (struct buf *t, const char *name, const char *target,
             struct cr_error **err)
{
  return tar_header (t, name, '2', 0777, 0, target, err);
}

void
tar_end (struct buf *t)
{
  static const char zeros[2 * TAR_BLOCK];
  buf_append (t, zeros, sizeof zeros);
}
