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
