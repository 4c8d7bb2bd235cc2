/* What a command prints, captured while it runs.
 *
 * One pipe carries standard output and standard error joined; every byte read
 * from it goes through capture_feed().  The capture counts lines and bytes,
 * keeps a fixed head and a fixed tail of the stream (the middle is dropped as
 * it arrives, so `yes` costs a constant amount of memory), optionally appends
 * what arrived to a spool file for the full view, and says when the raw
 * stream passes the output ceiling (sandbox.limits.outputBytes).  */
#ifndef CRUCIBLE_CORE_CAPTURE_H
#define CRUCIBLE_CORE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/* The retained head+tail budget of a result: 30,000 encoded bytes less 256
 * kept for the notes.  The spec's example (41200 bytes, 11456 omitted) is
 * exactly this budget.  */
#define CAPTURE_RETAINED_BUDGET 29744

/* The raw-stream ceiling unless configured: 10 MiB.  */
#define CAPTURE_DEFAULT_CEILING ((uint64_t) 10 * 1024 * 1024)

struct capture_limits
{
  size_t head_bytes;      /* bytes kept from the start of the stream */
  size_t tail_bytes;      /* bytes kept from the end of the stream */
  uint64_t ceiling_bytes; /* raw bytes after which the command is stopped */
};

enum capture_status
{
  CAPTURE_OK,     /* keep reading */
  CAPTURE_CEILING /* the stream passed ceiling_bytes: stop the command */
};

struct capture;

/* Limits for a result: the retained budget split evenly, and the ceiling.  */
struct capture_limits capture_limits_for_result (uint64_t ceiling_bytes);

/* Make a capture.  spool_fd is a file the capture appends every arrived byte
 * to (up to the ceiling), or -1 for none; the capture takes ownership of it. */
struct capture *capture_new (const struct capture_limits *limits, int spool_fd);
void capture_free (struct capture *cap);

/* Take len bytes that arrived.  Bytes past the ceiling are counted but not
 * kept or spooled; once CAPTURE_CEILING is returned it is returned again for
 * every later call.  */
enum capture_status capture_feed (struct capture *cap, const void *data,
                                  size_t len);

/* Raw bytes that arrived, including any past the ceiling.  */
uint64_t capture_total_bytes (const struct capture *cap);

/* Lines: each '\n' ends one, and a last line without one counts too.  */
uint64_t capture_lines (const struct capture *cap);

/* Whether the ceiling was passed.  */
bool capture_over_ceiling (const struct capture *cap);

/* The retained head and tail.  When nothing was dropped the whole stream is
 * the head and the tail is empty.  Pointers are valid until the next feed or
 * free; *omitted is the number of bytes dropped between them.  */
void capture_retained (const struct capture *cap, const char **head,
                       size_t *head_len, const char **tail, size_t *tail_len,
                       uint64_t *omitted);

/* The spool descriptor (positioned anywhere), or -1.  Whether writing it
 * failed is said by capture_spool_failed(): the full view then says that
 * what it shows is incomplete.  */
int capture_spool_fd (const struct capture *cap);
bool capture_spool_failed (const struct capture *cap);

/* Open an anonymous spool file in dir (O_TMPFILE, falling back to a
 * created-and-unlinked file), mode 0600.  */
int capture_spool_open (const char *dir, struct cr_error **err);

/* The fallback capture_spool_open() uses where O_TMPFILE is not supported:
 * a file made with mkstemp in dir and unlinked at once, mode 0600.  */
int capture_spool_open_unlinked (const char *dir, struct cr_error **err);

#endif
