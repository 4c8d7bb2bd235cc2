/* SHA-256 of a buffer or of a file, as lowercase hex: the identity the
 * report prints ("build sha256:...") and the pin a launch compares.  */
#ifndef CRUCIBLE_SANDBOX_SHA256_H
#define CRUCIBLE_SANDBOX_SHA256_H

#include <stddef.h>

#include "lib/error.h"

#define SHA256_HEX_LEN 64 /* characters, without the NUL */

/* The digest of n bytes at p into hex (SHA256_HEX_LEN + 1 bytes).  */
void sha256_buffer (const void *p, size_t n, char *hex);

/* The digest of everything readable from fd, from its current offset, into
 * hex.  The descriptor is left at its end.  */
int sha256_fd (int fd, char *hex, struct cr_error **err);

/* The digest of the whole file fd is open on, computed on a thread of its
 * own while the caller goes on (or at once, when no thread can be made):
 * read with pread from the start, so the descriptor's offset is neither
 * used nor moved, and fd stays open until sha256_file_finish.  */
struct sha256_job;
struct sha256_job *sha256_file_start (int fd);

/* Wait for job's digest and put it in hex; the job is freed.  -1 when the
 * file could not be read (hex then holds the digest of what was).  */
int sha256_file_finish (struct sha256_job *job, char *hex,
                        struct cr_error **err);

#endif
