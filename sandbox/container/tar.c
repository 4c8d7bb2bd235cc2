/* A ustar archive in a buffer (sandbox/container/tar.h).  */
#include <config.h>

#include "sandbox/container/tar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

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

/* --- entries of any name length, and the reader ------------------------
 */

/* Fill a header's checksum (computed with its own field as spaces).  */
static void
tar_checksum (struct tar_header *h)
{
  memset (h->chksum, ' ', sizeof h->chksum);
  unsigned sum = 0;
  for (size_t i = 0; i < sizeof *h; i++)
    sum += ((unsigned char *) h)[i];
  snprintf (h->chksum, sizeof h->chksum, "%06o", sum);
}

/* One ustar header block for name (which fits) with e's other fields.  */
static void
tar_block (struct buf *t, const char *name, char type, unsigned mode,
           uint64_t size, const char *link, int64_t mtime, uint64_t uid,
           uint64_t gid)
{
  struct tar_header h;
  memset (&h, 0, sizeof h);
  memcpy (h.name, name, strnlen (name, sizeof h.name));
  snprintf (h.mode, sizeof h.mode, "%07o", mode & 07777);
  snprintf (h.uid, sizeof h.uid, "%07llo",
            (unsigned long long) (uid & 07777777));
  snprintf (h.gid, sizeof h.gid, "%07llo",
            (unsigned long long) (gid & 07777777));
  snprintf (h.size, sizeof h.size, "%011llo", (unsigned long long) size);
  snprintf (h.mtime, sizeof h.mtime, "%011llo",
            (unsigned long long) (mtime < 0 ? 0 : mtime & 077777777777LL));
  h.typeflag = type;
  if (link != NULL)
    memcpy (h.linkname, link, strnlen (link, sizeof h.linkname));
  memcpy (h.magic, "ustar", 6);
  memcpy (h.version, "00", 2);
  tar_checksum (&h);
  buf_append (t, &h, sizeof h);
}

/* One pax record, "LEN key=value\n", whose LEN counts itself.  */
static void
tar_pax_record (struct buf *p, const char *key, const char *value)
{
  size_t body = strlen (key) + strlen (value) + 3; /* ' ', '=', '\n' */
  size_t len = body + 1;
  char digits[24];
  /* The length's own digits are part of it.  */
  while ((size_t) snprintf (digits, sizeof digits, "%zu", len) + body != len)
    len = (size_t) snprintf (digits, sizeof digits, "%zu", len) + body;
  buf_printf (p, "%zu %s=%s\n", len, key, value);
}

int
tar_put_header (struct buf *t, const struct tar_entry *e, struct cr_error **err)
{
  static const char types[] = {
    [TAR_FILE] = '0', [TAR_DIR] = '5', [TAR_SYMLINK] = '2', [TAR_OTHER] = 0
  };
  char type = e->kind == TAR_OTHER ? e->type : types[e->kind];
  size_t nlen = strlen (e->name), llen = e->link ? strlen (e->link) : 0;
  bool dir = e->kind == TAR_DIR;
  if (nlen == 0 || nlen > TAR_NAME_MAX || llen > TAR_NAME_MAX)
    return cr_error_set (err, 0, "tar: the name %.64s is empty or too long",
                         e->name);
  /* A directory's name ends in '/'; it must fit with it.  */
  bool long_name = nlen + (dir ? 1 : 0) >= 100, long_link = llen >= 100;
  char short_name[101];
  snprintf (short_name, sizeof short_name, "%.*s%s", long_name ? 90 : 99,
            e->name, dir && !long_name ? "/" : "");
  if (long_name || long_link)
    {
      struct buf pax = BUF_INIT;
      if (long_name)
        tar_pax_record (&pax, "path", e->name);
      if (long_link)
        tar_pax_record (&pax, "linkpath", e->link);
      tar_block (t, "././@PaxHeader", 'x', 0644, pax.len, NULL, 0, 0, 0);
      buf_append (t, pax.data, pax.len);
      tar_pad (t, pax.len);
      buf_free (&pax);
    }
  tar_block (t, short_name, type, e->mode, e->kind == TAR_FILE ? e->size : 0,
             e->link, e->mtime, e->uid, e->gid);
  return 0;
}

void
tar_pad (struct buf *t, uint64_t size)
{
  static const char zeros[TAR_BLOCK];
  if (size % TAR_BLOCK != 0)
    buf_append (t, zeros, TAR_BLOCK - size % TAR_BLOCK);
}

void
tar_reader_init (struct tar_reader *r)
{
  memset (r, 0, sizeof *r);
}

void
tar_reader_clear (struct tar_reader *r)
{
  buf_free (&r->block);
  free (r->pax_path);
  free (r->pax_link);
  memset (r, 0, sizeof *r);
}

bool
tar_reader_done (const struct tar_reader *r)
{
  return r->ended && !r->failed;
}

/* Fail the reader for good; -1.  */
static int
tar_reader_fail (struct tar_reader *r, struct cr_error **err, const char *what)
{
  r->failed = true;
  return cr_error_set (err, 0, "tar: %s", what);
}

/* A numeric field: octal digits, led by spaces and ended by a space or
 * NUL (base-256 refused: no size a bound allows needs it).  */
static bool
tar_number (const char *f, size_t n, uint64_t *out)
{
  size_t i = 0;
  uint64_t v = 0;
  bool digits = false;
  while (i < n && f[i] == ' ')
    i++;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; i++)
    {
      if (v >> 60)
        return false;
      v = v * 8 + (uint64_t) (f[i] - '0');
      digits = true;
    }
  for (; i < n; i++)
    if (f[i] != ' ' && f[i] != '\0')
      return false;
  *out = v;
  return digits;
}

/* Whether a header block's checksum holds (unsigned, as POSIX says).  */
static bool
tar_checksum_ok (const struct tar_header *h)
{
  uint64_t want;
  if (!tar_number (h->chksum, sizeof h->chksum, &want))
    return false;
  struct tar_header c = *h;
  memset (c.chksum, ' ', sizeof c.chksum);
  uint64_t sum = 0;
  for (size_t i = 0; i < sizeof c; i++)
    sum += ((unsigned char *) &c)[i];
  return sum == want;
}

/* A string field as a C string, without its padding.  */
static char *
tar_field (const char *f, size_t n)
{
  return xstrndup (f, strnlen (f, n));
}

/* Take the records of a whole pax header held in r->block.  */
static int
tar_reader_pax (struct tar_reader *r, struct cr_error **err)
{
  const char *p = r->block.data, *end = p + r->block.len;
  while (p < end)
    {
      char *sp;
      unsigned long len = strtoul (p, &sp, 10);
      if (sp == p || *sp != ' ' || len < 5 || len > (size_t) (end - p)
          || p[len - 1] != '\n' || !(*p >= '1' && *p <= '9'))
        return tar_reader_fail (r, err, "a malformed pax record");
      const char *kv = sp + 1, *eq = memchr (kv, '=', (size_t) (p + len - kv));
      if (eq == NULL || memchr (kv, '\0', (size_t) (p + len - kv)) != NULL)
        return tar_reader_fail (r, err, "a malformed pax record");
      size_t klen = (size_t) (eq - kv);
      char *value = xstrndup (eq + 1, (size_t) (p + len - 1 - (eq + 1)));
      if (klen == 4 && memcmp (kv, "path", 4) == 0)
        free (r->pax_path), r->pax_path = value;
      else if (klen == 8 && memcmp (kv, "linkpath", 8) == 0)
        free (r->pax_link), r->pax_link = value;
      else if ((klen == 5 && memcmp (kv, "mtime", 5) == 0)
               || (klen == 5 && memcmp (kv, "atime", 5) == 0)
               || (klen == 5 && memcmp (kv, "ctime", 5) == 0))
        free (value); /* times beyond the header's seconds: not kept */
      else
        {
          free (value);
          return tar_reader_fail (r, err, "an unsupported pax record");
        }
      p += len;
    }
  buf_free (&r->block);
  return 0;
}

/* The kind of a ustar type flag.  */
static enum tar_kind
tar_kind_of (char type)
{
  if (type == '0' || type == '\0' || type == '7')
    return TAR_FILE;
  if (type == '5')
    return TAR_DIR;
  if (type == '2')
    return TAR_SYMLINK;
  return TAR_OTHER;
}

/* The full name of a header: the pax path, or prefix/name.  */
static char *
tar_reader_name (struct tar_reader *r, const struct tar_header *h)
{
  if (r->pax_path != NULL)
    return steal_pointer (&r->pax_path);
  cleanup_free char *name = tar_field (h->name, sizeof h->name);
  cleanup_free char *prefix = tar_field (h->prefix, sizeof h->prefix);
  if (*prefix != '\0' && memcmp (h->magic, "ustar", 5) == 0)
    return xasprintf ("%s/%s", prefix, name);
  return steal_pointer (&name);
}

/* Take one header block.  */
static int
tar_reader_header (struct tar_reader *r, const struct tar_header *h,
                   const struct tar_reader_ops *ops, void *data,
                   struct cr_error **err)
{
  uint64_t size, mode, mtime, uid, gid;
  if (!tar_checksum_ok (h) || memcmp (h->magic, "ustar", 5) != 0
      || !tar_number (h->size, sizeof h->size, &size)
      || !tar_number (h->mode, sizeof h->mode, &mode)
      || !tar_number (h->mtime, sizeof h->mtime, &mtime)
      || !tar_number (h->uid, sizeof h->uid, &uid)
      || !tar_number (h->gid, sizeof h->gid, &gid))
    return tar_reader_fail (r, err, "a malformed header");
  r->pad = size % TAR_BLOCK ? TAR_BLOCK - size % TAR_BLOCK : 0;
  r->remaining = size;
  if (h->typeflag == 'x')
    {
      if (size > TAR_PAX_MAX || r->pax_path != NULL || r->pax_link != NULL)
        return tar_reader_fail (r, err, "an oversized or repeated pax header");
      r->in_pax = size > 0;
      r->pax_size = size;
      return 0;
    }
  if (h->typeflag == 'g' || h->typeflag == 'L' || h->typeflag == 'K')
    return tar_reader_fail (r, err, "an unsupported extension header");
  cleanup_free char *name = tar_reader_name (r, h);
  cleanup_free char *link = r->pax_link != NULL
                                ? steal_pointer (&r->pax_link)
                                : tar_field (h->linkname, sizeof h->linkname);
  size_t nlen = strlen (name);
  if (nlen > TAR_NAME_MAX || strlen (link) > TAR_NAME_MAX)
    return tar_reader_fail (r, err, "a name over the bound");
  struct tar_entry e = { .name = name,
                         .type = h->typeflag,
                         .kind = tar_kind_of (h->typeflag),
                         .mode = (unsigned) (mode & 07777),
                         .size = size,
                         .link = link,
                         .mtime = (int64_t) mtime,
                         .uid = uid,
                         .gid = gid };
  if (e.kind == TAR_DIR)
    while (nlen > 1 && name[nlen - 1] == '/')
      name[--nlen] = '\0';
  r->in_file = e.kind == TAR_FILE;
  if (e.kind != TAR_FILE)
    e.size = 0;
  int rc = ops->entry (data, &e, err);
  if (rc < 0)
    r->failed = true;
  if (rc == 0 && r->in_file && size == 0)
    {
      r->in_file = false;
      rc = ops->content_end (data, err);
    }
  return rc;
}

/* Take content bytes of the current entry; *used gets how many.  */
static int
tar_reader_content (struct tar_reader *r, const char *p, size_t len,
                    size_t *used, const struct tar_reader_ops *ops, void *data,
                    struct cr_error **err)
{
  size_t n = r->remaining < len ? (size_t) r->remaining : len;
  int rc = 0;
  *used = n;
  r->remaining -= n;
  if (r->in_pax)
    {
      buf_append (&r->block, p, n);
      if (r->remaining == 0)
        {
          r->in_pax = false;
          rc = tar_reader_pax (r, err);
        }
      return rc;
    }
  if (r->in_file && n > 0)
    rc = ops->content (data, p, n, err);
  if (rc == 0 && r->in_file && r->remaining == 0)
    {
      r->in_file = false;
      rc = ops->content_end (data, err);
    }
  if (rc < 0)
    r->failed = true;
  return rc;
}

/* Take one whole block of header position.  */
static int
tar_reader_block (struct tar_reader *r, const char *b,
                  const struct tar_reader_ops *ops, void *data,
                  struct cr_error **err)
{
  static const char zeros[TAR_BLOCK];
  if (memcmp (b, zeros, TAR_BLOCK) == 0)
    {
      if (r->pax_path != NULL || r->pax_link != NULL)
        return tar_reader_fail (r, err, "a pax header before nothing");
      r->ended = ++r->zeros >= 2;
      return 0;
    }
  if (r->ended || r->zeros > 0)
    return tar_reader_fail (r, err, "bytes after the end of the archive");
  return tar_reader_header (r, (const struct tar_header *) b, ops, data, err);
}

int
tar_reader_feed (struct tar_reader *r, const void *data, size_t len,
                 const struct tar_reader_ops *ops, void *ops_data,
                 struct cr_error **err)
{
  const char *p = data;
  if (r->failed)
    return cr_error_set (err, 0, "tar: the archive already failed");
  while (len > 0)
    {
      size_t used;
      if (r->remaining > 0)
        {
          if (tar_reader_content (r, p, len, &used, ops, ops_data, err) < 0)
            return -1;
        }
      else if (r->pad > 0)
        used = r->pad < len ? (size_t) r->pad : len, r->pad -= used;
      else
        {
          used
              = TAR_BLOCK - r->block.len < len ? TAR_BLOCK - r->block.len : len;
          buf_append (&r->block, p, used);
          if (r->block.len == TAR_BLOCK)
            {
              struct buf b = r->block;
              r->block = (struct buf) BUF_INIT;
              int rc = tar_reader_block (r, b.data, ops, ops_data, err);
              buf_free (&b);
              if (rc < 0)
                return -1;
            }
        }
      p += used;
      len -= used;
    }
  return 0;
}
