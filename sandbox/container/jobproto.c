/* The container job protocol's frames (sandbox/container/jobproto.h):
 * compiled into crucible and, statically, into the job runner.  */
#include <config.h>

#include "sandbox/container/jobproto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/xalloc.h"

/* Whether type is one of enum jobproto_type's letters.  */
static bool
jobproto_known (uint8_t type)
{
  /* The letters after F were appended with the standard streams.  */
  static const char types[] = "VLECWGKROXDUZFINY";
  return type != 0 && memchr (types, type, sizeof types - 1) != NULL;
}

/* The five header bytes of a frame.  */
static void
jobproto_header (uint8_t h[JOBPROTO_HEADER], enum jobproto_type type,
                 size_t len)
{
  h[0] = (uint8_t) type;
  h[1] = (uint8_t) (len >> 24);
  h[2] = (uint8_t) (len >> 16);
  h[3] = (uint8_t) (len >> 8);
  h[4] = (uint8_t) len;
}

/* Refuse a frame that cannot be sent; -1.  */
static int
jobproto_check_out (enum jobproto_type type, size_t len, struct cr_error **err)
{
  if (!jobproto_known ((uint8_t) type))
    return cr_error_set (err, 0, "job protocol: no frame type %d", type);
  if (len > JOBPROTO_FRAME_MAX)
    return cr_error_set (err, 0,
                         "job protocol: a '%c' frame of %zu bytes is over "
                         "the %u-byte bound",
                         type, len, (unsigned) JOBPROTO_FRAME_MAX);
  return 0;
}

int
jobproto_put (struct buf *out, enum jobproto_type type, const void *data,
              size_t len, struct cr_error **err)
{
  uint8_t h[JOBPROTO_HEADER];
  if (jobproto_check_out (type, len, err) < 0)
    return -1;
  jobproto_header (h, type, len);
  buf_append (out, h, sizeof h);
  if (len > 0)
    buf_append (out, data, len);
  return 0;
}

/* Write all of len bytes to a blocking fd.  */
static int
jobproto_write_all (int fd, const uint8_t *p, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        return errno = EIO, -1;
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

int
jobproto_write (int fd, enum jobproto_type type, const void *data, size_t len,
                struct cr_error **err)
{
  uint8_t h[JOBPROTO_HEADER];
  if (jobproto_check_out (type, len, err) < 0)
    return -1;
  jobproto_header (h, type, len);
  if (jobproto_write_all (fd, h, sizeof h) < 0
      || (len > 0 && jobproto_write_all (fd, data, len) < 0))
    return cr_error_set (err, errno, "job protocol: writing a '%c' frame",
                         type);
  return 0;
}

void
jobproto_reader_init (struct jobproto_reader *r)
{
  memset (r, 0, sizeof *r);
}

void
jobproto_reader_clear (struct jobproto_reader *r)
{
  buf_free (&r->pending);
  r->failed = false;
}

/* The payload length in a header.  */
static uint32_t
jobproto_length (const uint8_t *h)
{
  return (uint32_t) h[1] << 24 | (uint32_t) h[2] << 16 | (uint32_t) h[3] << 8
         | (uint32_t) h[4];
}

/* Fail the reader for good; -1.  */
static int
jobproto_reader_fail (struct jobproto_reader *r, struct cr_error **err,
                      const uint8_t *h)
{
  r->failed = true;
  if (!jobproto_known (h[0]))
    return cr_error_set (err, 0, "job protocol: unknown frame type 0x%02x",
                         h[0]);
  return cr_error_set (err, 0,
                       "job protocol: a '%c' frame of %u bytes is over the "
                       "%u-byte bound",
                       h[0], jobproto_length (h),
                       (unsigned) JOBPROTO_FRAME_MAX);
}

/* Hand on every whole frame at the start of p; *used gets how many bytes
 * they took.  */
static int
jobproto_reader_frames (struct jobproto_reader *r, const uint8_t *p, size_t len,
                        size_t *used, jobproto_frame_fn fn, void *fn_data,
                        struct cr_error **err)
{
  size_t at = 0;
  *used = 0;
  while (len - at >= JOBPROTO_HEADER)
    {
      const uint8_t *h = p + at;
      uint32_t n = jobproto_length (h);
      if (!jobproto_known (h[0]) || n > JOBPROTO_FRAME_MAX)
        return jobproto_reader_fail (r, err, h);
      if (len - at - JOBPROTO_HEADER < n)
        break;
      at += JOBPROTO_HEADER + n;
      *used = at;
      int rc = fn (fn_data, (enum jobproto_type) h[0], h + JOBPROTO_HEADER, n,
                   err);
      if (rc != 0)
        return rc;
    }
  /* A header seen whole is checked at once, before its payload comes.  */
  if (len - at >= 1 && !jobproto_known (p[at]))
    {
      uint8_t h[JOBPROTO_HEADER] = { p[at] };
      return jobproto_reader_fail (r, err, h);
    }
  return 0;
}

int
jobproto_reader_feed (struct jobproto_reader *r, const void *data, size_t len,
                      jobproto_frame_fn fn, void *fn_data,
                      struct cr_error **err)
{
  size_t used;
  int rc;

  if (r->failed)
    return cr_error_set (err, 0, "job protocol: the stream already failed");
  if (r->pending.len == 0)
    {
      rc = jobproto_reader_frames (r, data, len, &used, fn, fn_data, err);
      if (used < len && !r->failed)
        buf_append (&r->pending, (const uint8_t *) data + used, len - used);
      return rc;
    }
  buf_append (&r->pending, data, len);
  /* The held bytes are taken out first, so that fn may feed again.  */
  size_t held_len;
  uint8_t *held = (uint8_t *) buf_steal (&r->pending, &held_len);
  rc = jobproto_reader_frames (r, held, held_len, &used, fn, fn_data, err);
  if (used < held_len && !r->failed)
    buf_append (&r->pending, held + used, held_len - used);
  free (held);
  return rc;
}

bool
jobproto_reader_partial (const struct jobproto_reader *r)
{
  return r->pending.len > 0;
}

/* Whether the payload is lines a lookup may read: no NUL, each nonempty
 * line holding '='.  */
static bool
jobproto_kv_valid (const uint8_t *p, size_t len)
{
  if (memchr (p, '\0', len) != NULL)
    return false;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++)
    if (i == len || p[i] == '\n')
      {
        if (i > start && memchr (p + start, '=', i - start) == NULL)
          return false;
        start = i + 1;
      }
  return true;
}

char *
jobproto_kv (const uint8_t *payload, size_t len, const char *key)
{
  size_t klen = strlen (key);
  if (!jobproto_kv_valid (payload, len))
    return NULL;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++)
    if (i == len || payload[i] == '\n')
      {
        const uint8_t *line = payload + start;
        size_t n = i - start;
        if (n > klen && memcmp (line, key, klen) == 0 && line[klen] == '=')
          return xstrndup ((const char *) line + klen + 1, n - klen - 1);
        start = i + 1;
      }
  return NULL;
}

bool
jobproto_path_ok (const char *name)
{
  size_t len = strlen (name);
  if (len == 0 || len > 4096 || name[0] == '/')
    return false;
  for (const char *p = name;;)
    {
      const char *slash = strchr (p, '/');
      size_t n = slash != NULL ? (size_t) (slash - p) : strlen (p);
      if (n == 0 || (n == 1 && p[0] == '.')
          || (n == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      if (slash == NULL)
        return true;
      p = slash + 1;
    }
}

bool
jobproto_link_inside (const char *name, const char *target)
{
  size_t above = 0, ups = 0;
  bool descended = false;
  if (target[0] == '\0' || target[0] == '/' || strlen (target) > 4096)
    return false;
  for (const char *p = name; *p != '\0'; p++)
    above += *p == '/';
  for (const char *p = target;;)
    {
      const char *slash = strchr (p, '/');
      size_t n = slash != NULL ? (size_t) (slash - p) : strlen (p);
      if (n == 2 && p[0] == '.' && p[1] == '.')
        {
          /* A ".." after a name could go up from wherever a link took
           * it.  */
          if (descended || ++ups > above)
            return false;
        }
      else if (n > 0 && !(n == 1 && p[0] == '.'))
        descended = true;
      if (slash == NULL)
        return true;
      p = slash + 1;
    }
}
