/* The per-user publication lock and the per-root publication counts, both
 * kept in this user's state directory.
 *
 * The lock is an flock on one file: the kernel drops it when its holder
 * dies, so a transaction found while holding it was provably abandoned.  */
#ifndef CRUCIBLE_SANDBOX_PUBLOCK_H
#define CRUCIBLE_SANDBOX_PUBLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lib/error.h"

#define PUBLOCK_BUSY 1

/* Take the lock in statedir, waiting at most wait_ms (0: one try).
 * Returns the descriptor holding it; PUBLOCK_BUSY is never a descriptor
 * here: *busy says the wait passed its ceiling.  */
int publock_take (const char *statedir, int64_t wait_ms, bool *busy,
                  struct cr_error **err);

/* Release it.  */
void publock_drop (int fd);

/* The number of publications into root so far and the instant of the
 * last (zero when none).  */
int publock_count_read (const char *statedir, const char *root, uint64_t *count,
                        struct timespec *last, struct cr_error **err);

/* Write the next count of root beside its count file, synced when sync
 * says so (otherwise the caller makes it durable, with a syncfs of the
 * state directory's filesystem), without counting it yet.  */
int publock_count_prepare (const char *statedir, const char *root, bool sync,
                           struct cr_error **err);

/* Count what publock_count_prepare wrote: it replaces the count file.  */
int publock_count_commit (const char *statedir, const char *root,
                          struct cr_error **err);

/* Count one more publication into root, now (prepare, synced, and
 * commit).  */
int publock_count_bump (const char *statedir, const char *root,
                        struct cr_error **err);

/* The coarse real-time clock, the one file timestamps are taken from.  */
struct timespec publock_now (void);

#endif
