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

#endif
