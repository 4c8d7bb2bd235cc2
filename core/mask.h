/* Masking secrets in a byte stream.
 *
 * A masker is given the secrets of one command (the proxy credential, the
 * credentials projected into its environment) and then the command's
 * output as it arrives, in reads of any size.  Every byte of every
 * occurrence of a secret -- overlapping and adjacent occurrences included,
 * and occurrences split across reads -- comes out as one '*', and every
 * other byte comes out as it went in, so the count of bytes never changes.
 *
 * The bytes at the end of a read that could still begin a secret (the
 * longest suffix that is a proper prefix of one) are held back until the
 * next bytes say whether they do; everything before them is released at
 * once.  At a cut (the end of the stream, the output ceiling, a stop) the
 * caller flushes: what is held comes out as '*', since no later byte can be
 * shown beside it.  The masker keeps its place across a flush, so bytes fed
 * after one that complete a secret begun before it are masked too: both
 * sides of the cut show none of it.
 *
 * Matching is Aho-Corasick over all secrets at once: linear in the bytes
 * fed, whatever the secrets and the stream.  Between the places where a
 * secret's first two bytes appear it looks at sixteen bytes at a time, so
 * ordinary output passes at a few times memcpy's cost.  */
#ifndef CRUCIBLE_CORE_MASK_H
#define CRUCIBLE_CORE_MASK_H

#include <stddef.h>

#include "lib/buf.h"
#include "lib/error.h"

/* Secrets one masker takes at most, and the longest one.  */
#define MASK_MAX_SECRETS 64
#define MASK_MAX_LEN ((size_t) 64 * 1024)

struct mask;

/* Make a masker with no secrets: it passes bytes through unchanged.  */
struct mask *mask_new (void);

/* Free a masker; the copies of its secrets are wiped first.  */
void mask_free (struct mask *m);

/* Add a secret (copied).  An empty one is ignored.  Refused past
 * MASK_MAX_SECRETS or MASK_MAX_LEN, and once bytes have been fed (the
 * stream is masked by one set of secrets from its first byte).  */
int mask_add (struct mask *m, const void *secret, size_t len,
              struct cr_error **err);

/* Feed raw bytes; the masked bytes that can no longer change are appended
 * to out (the same count as fed, overall); bytes that could begin a secret
 * are held back.  */
void mask_feed (struct mask *m, const void *in, size_t len, struct buf *out);

/* A cut (end of stream, the output ceiling, a stop): release what is held,
 * every held byte turned to '*'.  Feeding may go on after it.  */
void mask_flush (struct mask *m, struct buf *out);

/* Bytes held back now.  */
size_t mask_held (const struct mask *m);

#endif
