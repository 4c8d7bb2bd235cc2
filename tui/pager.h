/* The full view (Ctrl+O, or Enter in the list): the whole of what a
 * command has printed so far, live, or the whole of a finished result the
 * transcript cut down.  A command's view keeps no copy of the stream: it
 * reads, on demand, what the command's capture holds (core/capture.h,
 * capture_read_all: the head and tail the result is made from, and the
 * middle from the capture's spool, every byte up to CAPTURE_SPOOL_MAX),
 * and parses it through libvterm only while open, a bounded amount per
 * frame.  Only what the spool does not hold (past its bound, after a
 * write to it failed, or with no spool) and the capture no longer held
 * when it was read is one row saying how many lines that was; the rows
 * are numbered as the stream's lines, so the count says how long the
 * output is.  PgUp/PgDn/Home/End and the arrows move, `/` searches, n
 * finds again, Esc closes (the command carries on).  */
#ifndef CRUCIBLE_TUI_PAGER_H
#define CRUCIBLE_TUI_PAGER_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include <termkey.h>

/* Time a frame may spend parsing while the view is open, in ms, and the
 * bytes parsed between looks at the clock.  A time bound rather than a
 * byte bound: libvterm takes about 7 µs a short line, so a megabyte of
 * them is seconds, and keys wait for the frame.  (Plain lines, printable
 * ASCII no wider than the view, only scroll, and are taken without it
 * until the first byte that is not: 1.5 million lines of `yes` are 0.08 s
 * rather than 11 s; pager.c, struct pager.)  */
/* Rows of the terminal the output is interpreted in; rows pushed off its
 * top become the view's lines (tests/helpers/pager_read's baseline is a
 * terminal of as many).  */
#define PAGER_VT_ROWS 50

#define PAGER_PARSE_MS 15
#define PAGER_PARSE_CHUNK ((size_t) 4 * 1024)

struct pager;

struct capture;

/* A view on what a command prints, read from its capture (borrowed until
 * pager_detach or pager_free) as it grows; title is the command's label.  */
struct pager *pager_new_capture (const struct capture *cap, const char *title);

/* A view on fixed text.  */
struct pager *pager_new_text (const char *text, size_t len, const char *title);

void pager_free (struct pager *p);

/* Parse what arrived since the last call (bounded).  Returns whether the
 * bound stopped it, so that more may be waiting in the capture.  */
bool pager_update (struct pager *p, int cols);

/* The capture's command is cleaned up and gives the capture (cap, the one
 * the view reads) to the view, which goes on reading it, a bounded amount
 * per frame, and frees it with the view.  A cap the view does not read is
 * freed at once.  */
void pager_detach (struct pager *p, struct capture *cap);

/* Whether a view of a command's output has parsed none of it yet (its
 * first frame must, or it would say nothing was printed).  */
bool pager_unread (const struct pager *p);

/* A key; returns false when the view closes.  */
bool pager_key (struct pager *p, TermKey *tk, const TermKeyKey *key);

/* Draw the whole screen.  */
void pager_draw (struct pager *p, WINDOW *win, int rows, int cols);

#endif
