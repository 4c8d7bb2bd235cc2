/* The full view (Ctrl+O, or Enter in the list): the whole of what a
 * command has printed so far, live, or the whole of a finished result the
 * transcript cut down.  The raw bytes are kept in the command's spool and
 * parsed through libvterm only when this view is open, a bounded amount
 * per frame.  PgUp/PgDn/Home/End and the arrows move, `/` searches, n
 * finds again, Esc closes (the command carries on).  */
#ifndef CRUCIBLE_TUI_PAGER_H
#define CRUCIBLE_TUI_PAGER_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include <termkey.h>

/* Time a frame may spend parsing while the view is open, in ms, and the
 * bytes parsed between looks at the clock.  A time bound rather than a
 * byte bound: libvterm takes about 2 µs a line, so a megabyte of short
 * lines is seconds, and keys wait for the frame.  */
#define PAGER_PARSE_MS 15
#define PAGER_PARSE_CHUNK ((size_t) 4 * 1024)

struct pager;

/* A view on a spool file (fd is dup'ed) that may still grow; title is the
 * command's label.  */
struct pager *pager_new_spool (int spool_fd, const char *title,
                               bool incomplete);

/* A view on fixed text.  */
struct pager *pager_new_text (const char *text, size_t len, const char *title);

void pager_free (struct pager *p);

/* Parse what arrived since the last call (bounded).  Returns whether the
 * bound stopped it, so that more may be waiting in the spool.  */
bool pager_update (struct pager *p, int cols);

/* Whether a view of a spool has parsed none of it yet (its first frame
 * must, or it would say nothing was printed).  */
bool pager_unread (const struct pager *p);

/* A key; returns false when the view closes.  */
bool pager_key (struct pager *p, TermKey *tk, const TermKeyKey *key);

/* Draw the whole screen.  */
void pager_draw (struct pager *p, WINDOW *win, int rows, int cols);

#endif
