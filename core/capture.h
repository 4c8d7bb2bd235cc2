/* What a command prints, captured while it runs.
 *
 * One pipe carries standard output and standard error joined; every byte read
 * from it goes through capture_feed().  The capture counts lines and bytes,
 * keeps a fixed head and a fixed tail of the stream (the middle is dropped as
 * it arrives, so `yes` costs a constant amount of memory), optionally appends
 * what arrived to a spool file for a caller that wants every byte kept (from
 * the first feed that drops part of the middle on: until then the head and
 * tail are the whole stream and nothing is written), and
 * says when the raw stream passes the output ceiling
 * (sandbox.limits.outputBytes).  Views keep no copy of their own: the live
 * sample reads the head and tail on demand with capture_read(); the full
 * view reads with capture_read_all(), which takes the middle from the
 * spool, so it has every byte while a flood costs the session one write
 * per read beyond what capturing it does.
 *
 * A command with secrets (the proxy credential, projected credentials) has
 * them given with capture_add_secret() before its first byte.  Every byte
 * then goes through a masker (core/mask.h) before it is counted for lines,
 * kept in the head or tail, spooled, or handed on by capture_released():
 * each occurrence of a secret becomes one '*' per byte, counts unchanged.
 * Since the head/tail split and every later cut of a result are made on
 * masked bytes, none of them can show part of a secret.  Bytes that could
 * begin a secret are held back until the next read says whether they do;
 * capture_cut() (the end of the command, a stop, the ceiling) releases
 * them as '*'.  The ceiling is counted on raw bytes.  With no secret the
 * masker is not used at all.  */
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

/* The most of a stream a spool holds (the output ceiling is usually
 * lower; a raised one does not fill the disk): 256 MiB.  */
#define CAPTURE_SPOOL_MAX ((uint64_t) 256 * 1024 * 1024)

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

/* Make a capture.  spool_fd is a file the capture writes every arrived byte
 * to from offset 0 on (up to the ceiling and CAPTURE_SPOOL_MAX) once the
 * head and tail no longer hold them all, or -1 for none; the capture takes
 * ownership of it.  */
struct capture *capture_new (const struct capture_limits *limits, int spool_fd);
void capture_free (struct capture *cap);

/* Mask secret (copied; an empty one is ignored) in everything the capture
 * is fed.  Only before the first feed; refused past MASK_MAX_SECRETS or
 * MASK_MAX_LEN (core/mask.h).  */
int capture_add_secret (struct capture *cap, const void *secret, size_t len,
                        struct cr_error **err);

/* Take len bytes that arrived.  Bytes past the ceiling are counted but not
 * kept or spooled; once CAPTURE_CEILING is returned it is returned again for
 * every later call.  */
enum capture_status capture_feed (struct capture *cap, const void *data,
                                  size_t len);

/* A cut in what the views see (the command ended or is reported): bytes
 * held back because they could begin a secret are released, as '*'.
 * Feeding may go on after it, and a secret that began before the cut is
 * masked after it too.  Nothing to do without secrets.  */
void capture_cut (struct capture *cap);

/* The bytes the last capture_feed() or capture_cut() released, as every
 * view is to see them (masked; without secrets, exactly the bytes fed,
 * at no cost).  Over the stream they add up to what was fed, in order,
 * including bytes past the ceiling.  Valid until the next feed, cut or
 * free.  */
void capture_released (const struct capture *cap, const char **bytes,
                       size_t *len);

/* Raw bytes that arrived, including any past the ceiling.  */
uint64_t capture_total_bytes (const struct capture *cap);

/* Lines of what was released: each '\n' ends one, and a last line without
 * one counts too.  */
uint64_t capture_lines (const struct capture *cap);

/* The '\n' bytes in len bytes at data, counted a word at a time: what
 * capture_lines() counts with, for a view that counts what it is shown.  */
uint64_t capture_count_newlines (const void *data, size_t len);

/* Whether the ceiling was passed.  */
bool capture_over_ceiling (const struct capture *cap);

/* The retained head and tail (masked, of the released bytes).  When nothing
 * was dropped the whole stream is the head and the tail is empty.  Pointers are
 * valid until the next feed or free; *omitted is the number of bytes dropped
 * between them.  */
void capture_retained (const struct capture *cap, const char **head,
                       size_t *head_len, const char **tail, size_t *tail_len,
                       uint64_t *omitted);

/* Released bytes kept (up to the ceiling): the stream offset at which
 * capture_read() finds nothing more yet.  */
uint64_t capture_kept_bytes (const struct capture *cap);

/* What a view reads, on demand, instead of a copy of its own: the kept
 * bytes from stream offset from on, at most max of them, copied to dst
 * (masked, as capture_retained() holds them).  Bytes the capture dropped
 * from the middle are skipped: *at is where the copied bytes begin in the
 * stream (from itself, or the first byte still held after it), and
 * *lines_before (unless NULL) the '\n's of the kept stream before *at.
 * Returns how many bytes were copied; 0 when nothing past from is held
 * yet.  */
size_t capture_read (const struct capture *cap, uint64_t from, char *dst,
                     size_t max, uint64_t *at, uint64_t *lines_before);

/* What the full view reads: as capture_read(), but the middle the head
 * and tail do not hold comes from the spool (pread) as far as the spool
 * holds it (up to CAPTURE_SPOOL_MAX, and up to a write that failed), so
 * with a spool every byte that arrived is read, in order, up to that
 * bound; only past it is the middle skipped, as capture_read() skips it.
 * Bytes read from the spool are not counted for lines: *lines_before is
 * then UINT64_MAX (a skip never lands in the middle, so a reader that
 * wants the count at a skip has it).  */
size_t capture_read_all (const struct capture *cap, uint64_t from, char *dst,
                         size_t max, uint64_t *at, uint64_t *lines_before);

/* The spool descriptor (positioned anywhere; masked bytes; empty while the
 * head and tail hold the whole stream), or -1.  Whether
 * writing it failed is said by capture_spool_failed(): the full view then says
 * that what it shows is incomplete.  */
int capture_spool_fd (const struct capture *cap);
bool capture_spool_failed (const struct capture *cap);

/* Give up the capture's spool, for a later capture_new() to write over
 * from its start: the file's pages are allocated already, which is most
 * of what spooling a flood costs (a fresh page for every 4 KiB).  Returns
 * the descriptor, or -1 when there was none or writing it failed (that
 * one is closed, as is one that cannot be cut to this stream's length).
 * The capture reads no spool afterwards.  The spool given back holds this
 * stream's bytes only, cut to their length; the next capture writes over
 * them and every read of a capture stops at what it wrote itself.  */
int capture_spool_release (struct capture *cap);

/* Open an anonymous spool file in dir (O_TMPFILE, falling back to a
 * created-and-unlinked file), mode 0600.  */
int capture_spool_open (const char *dir, struct cr_error **err);

/* The fallback capture_spool_open() uses where O_TMPFILE is not supported:
 * a file made with mkstemp in dir and unlinked at once, mode 0600.  */
int capture_spool_open_unlinked (const char *dir, struct cr_error **err);

#endif
