/* A ustar archive written into a buffer: what the engine is given to make
 * an image from (POST /images/create?fromSrc=-) or to build on (POST
 * /build's context).  Only what crucible puts in an image: directories,
 * regular files and symbolic links, owned by root.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_TAR_H
#define CRUCIBLE_SANDBOX_CONTAINER_TAR_H

#include <stddef.h>

#include "lib/buf.h"
#include "lib/error.h"

/* Append a directory, a file of len bytes, or a link to target.  Names
 * are relative ("bin/sh"), at most 100 bytes.  */
int tar_dir (struct buf *t, const char *name, unsigned mode,
             struct cr_error **err);
int tar_file (struct buf *t, const char *name, unsigned mode, const void *data,
              size_t len, struct cr_error **err);
int tar_symlink (struct buf *t, const char *name, const char *target,
                 struct cr_error **err);

/* Append the two zero blocks that end an archive.  */
void tar_end (struct buf *t);

#endif

/* --- appended for the job protocol (sandbox/container/jobproto.h) ---- */

#include <stdbool.h>
#include <stdint.h>

/* The bounds a reader holds an archive to.  */
#define TAR_NAME_MAX 4096 /* bytes of a name or a link's target */
#define TAR_PAX_MAX 65536 /* bytes of one pax extended header */

/* What an entry is.  */
enum tar_kind
{
  TAR_FILE,
  TAR_DIR,
  TAR_SYMLINK,
  TAR_OTHER /* anything else (hard link, device, fifo...): see type */
};

/* One entry as read or to be written.  */
struct tar_entry
{
  const char *name; /* as in the archive, a directory's trailing '/' off */
  enum tar_kind kind;
  char type;     /* the ustar type flag */
  unsigned mode; /* the mode field's 07777 bits */
  uint64_t size; /* bytes of content (TAR_FILE) */
  const char *link;
  int64_t mtime; /* seconds */
  uint64_t uid, gid;
};

/* Append an entry with a name or link of any length up to TAR_NAME_MAX
 * (a pax header before it when either does not fit ustar's fields),
 * keeping mtime.  For TAR_FILE, size bytes of content must follow
 * (tar_content), then tar_pad.  */
int tar_put_header (struct buf *t, const struct tar_entry *e,
                    struct cr_error **err);

/* The zero bytes that end a file's content of size bytes on a block.  */
void tar_pad (struct buf *t, uint64_t size);

/* A reader of an archive that comes in pieces.  */
struct tar_reader_ops
{
  /* An entry's header (the name and link already checked for length and
   * NUL bytes only).  */
  int (*entry) (void *data, const struct tar_entry *e, struct cr_error **err);
  /* A piece of the current TAR_FILE entry's content.  */
  int (*content) (void *data, const void *bytes, size_t len,
                  struct cr_error **err);
  /* The current TAR_FILE entry's content is whole.  */
  int (*content_end) (void *data, struct cr_error **err);
};

struct tar_reader
{
  struct buf block;   /* bytes of a header block or a pax header so far */
  uint64_t remaining; /* content bytes of the current entry to come */
  uint64_t pad;       /* padding bytes after them */
  bool in_pax;        /* the content being read is a pax header's */
  bool in_file;       /* the content being read is a TAR_FILE's */
  uint64_t pax_size;
  char *pax_path, *pax_link; /* from the last pax header; owned */
  int zeros;                 /* zero blocks seen in a row */
  bool ended;                /* the two zero blocks came */
  bool failed;
};

void tar_reader_init (struct tar_reader *r);
void tar_reader_clear (struct tar_reader *r);

/* Feed len bytes.  A bad checksum, a malformed number, an unknown pax
 * record, a name over TAR_NAME_MAX, a GNU or global extension, or bytes
 * after the end fail the reader.  */
int tar_reader_feed (struct tar_reader *r, const void *data, size_t len,
                     const struct tar_reader_ops *ops, void *ops_data,
                     struct cr_error **err);

/* Whether the archive ended with its zero blocks, and nothing is
 * pending.  */
bool tar_reader_done (const struct tar_reader *r);
