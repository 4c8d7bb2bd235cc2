/* The live sample through libvterm.  */
#include <config.h>

#include "tui/sample.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "tui/theme.h"

/* The screen has a row more than the sample: output ending in a newline
 * leaves the cursor on an empty last row, and five rows of it are still
 * shown.  */
#define SAMPLE_VT_ROWS (SAMPLE_ROWS + 1)

struct sample
{
  VTerm *vt;
  VTermScreen *screen;
  int cols;
  /* The latest bytes not parsed yet: a ring of SAMPLE_PENDING_MAX, so a
   * feed costs one copy of what it keeps, however the reads are cut.  */
  char *ring;
  size_t ring_pos; /* where the next byte goes */
  size_t ring_len; /* bytes waiting, at most SAMPLE_PENDING_MAX */
  char *linear;    /* the waiting bytes made contiguous for a flush */
  bool cut;        /* older bytes were dropped: start again at a line */
  bool dirty;      /* damage since the last flush */
};

/* libvterm says part of the screen changed.  */
static int
sample_on_damage (VTermRect rect, void *user)
{
  struct sample *s = user;
  s->dirty = true;
  return 1;
}

/* A fresh screen in newline mode: output from a pipe has bare LF, which a
 * terminal's line discipline would have turned into CR LF.  */
static void
sample_reset (struct sample *s)
{
  static const char newline_mode[] = "\x1b[20h";
  vterm_screen_reset (s->screen, 1);
  vterm_input_write (s->vt, newline_mode, sizeof newline_mode - 1);
}

struct sample *
sample_new (int cols)
{
  static const VTermScreenCallbacks callbacks = { .damage = sample_on_damage };
  struct sample *s = xcalloc (1, sizeof *s);
  s->ring = xmalloc (SAMPLE_PENDING_MAX);
  s->linear = xmalloc (SAMPLE_PENDING_MAX);
  s->cols = cols < SAMPLE_MIN_COLS ? SAMPLE_MIN_COLS : cols;
  s->vt = vterm_new (SAMPLE_VT_ROWS, s->cols);
  vterm_set_utf8 (s->vt, 1);
  s->screen = vterm_obtain_screen (s->vt);
  /* The sample keeps no scrollback: a row pushed off the top is gone.  */
  vterm_screen_set_callbacks (s->screen, &callbacks, s);
  vterm_screen_set_damage_merge (s->screen, VTERM_DAMAGE_SCROLL);
  sample_reset (s);
  return s;
}

void
sample_free (struct sample *s)
{
  if (s == NULL)
    return;
  vterm_free (s->vt);
  free (s->ring);
  free (s->linear);
  free (s);
}

/* Keep bytes in the ring, the oldest dropped (and the screen then starts
 * again at a line).  */
void
sample_feed (struct sample *s, const char *bytes, size_t len)
{
  if (s->ring_len + len > SAMPLE_PENDING_MAX)
    s->cut = true;
  buf_ring_put (s->ring, SAMPLE_PENDING_MAX, &s->ring_pos, &s->ring_len, bytes,
                len);
}

/* Bytes between the last feed and the next were dropped unseen: what
 * waits goes too, and the screen starts again at a line.  */
void
sample_drop (struct sample *s)
{
  s->ring_len = 0;
  s->cut = true;
}

/* The waiting bytes, oldest first, contiguous.  */
static const char *
sample_waiting (struct sample *s)
{
  size_t start
      = (s->ring_pos + SAMPLE_PENDING_MAX - s->ring_len) % SAMPLE_PENDING_MAX;
  if (start + s->ring_len <= SAMPLE_PENDING_MAX)
    return s->ring + start;
  size_t older = SAMPLE_PENDING_MAX - start;
  memcpy (s->linear, s->ring + start, older);
  memcpy (s->linear + older, s->ring, s->ring_len - older);
  return s->linear;
}

/* Whether parsing p could change anything but the screen's text: an escape
 * sequence or a control character other than those that only move the
 * cursor on its row or down (LF, CR, tab, backspace, bell).  */
static bool
sample_has_controls (const char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) p[i];
      if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\b'
          && c != '\a')
        return true;
    }
  return false;
}

/* The last newline in p before at, or -1.  */
static long
sample_last_newline (const char *p, size_t at)
{
  while (at > 0)
    if (p[--at] == '\n')
      return (long) at;
  return -1;
}

/* Where parsing may begin in p without changing what the screen ends up
 * showing: at the (SAMPLE_VT_ROWS + 1)th newline from the end, when what
 * comes before it is plain text and the cursor is on the last row (or the
 * screen is fresh), so that nothing below it is waiting to show through.
 * From that newline on, newline mode puts every later line at column 0,
 * and the lines after it scroll all that was there before off the top;
 * plain text leaves no state (pen, modes, character sets) for the rest to
 * inherit.  So a flood is parsed a few lines per frame rather than
 * SAMPLE_PENDING_MAX bytes.  */
static size_t
sample_skip (struct sample *s, const char *p, size_t n, bool fresh)
{
  VTermPos cursor;
  vterm_state_get_cursorpos (vterm_obtain_state (s->vt), &cursor);
  if (!fresh && cursor.row != SAMPLE_VT_ROWS - 1)
    return 0;
  long at = (long) n;
  for (int found = 0; found < SAMPLE_VT_ROWS + 1; found++)
    {
      at = sample_last_newline (p, (size_t) at);
      if (at < 0)
        return 0;
    }
  return sample_has_controls (p, (size_t) at) ? 0 : (size_t) at;
}

bool
sample_flush (struct sample *s)
{
  const char *p = sample_waiting (s);
  size_t n = s->ring_len;
  bool fresh = s->cut;
  if (s->cut)
    {
      /* What was dropped could have ended mid-sequence: start at the next
       * line, on a clean screen.  */
      const char *nl = n > 0 ? memchr (p, '\n', n) : NULL;
      if (nl != NULL)
        {
          n -= (size_t) (nl + 1 - p);
          p = nl + 1;
        }
      sample_reset (s);
      s->cut = false;
      s->dirty = true;
    }
  size_t skip = sample_skip (s, p, n, fresh);
  if (n > skip)
    vterm_input_write (s->vt, p + skip, n - skip);
  s->ring_len = 0;
  vterm_screen_flush_damage (s->screen);
  bool changed = s->dirty;
  s->dirty = false;
  return changed;
}

void
sample_resize (struct sample *s, int cols)
{
  if (cols < SAMPLE_MIN_COLS)
    cols = SAMPLE_MIN_COLS;
  if (cols == s->cols)
    return;
  s->cols = cols;
  vterm_set_size (s->vt, SAMPLE_VT_ROWS, cols);
  s->dirty = true;
}

/* Whether a row of the screen is blank.  */
static bool
sample_row_blank (struct sample *s, int row)
{
  VTermScreenCell cell;
  for (int col = 0; col < s->cols; col++)
    {
      VTermPos pos = { .row = row, .col = col };
      if (vterm_screen_get_cell (s->screen, pos, &cell) && cell.chars[0] != 0
          && cell.chars[0] != ' ')
        return false;
    }
  return true;
}

int
sample_rows_used (struct sample *s)
{
  VTermPos cursor;
  vterm_state_get_cursorpos (vterm_obtain_state (s->vt), &cursor);
  int used = cursor.row + (cursor.col > 0 ? 1 : 0);
  for (int row = SAMPLE_VT_ROWS - 1; row >= used; row--)
    if (!sample_row_blank (s, row))
      return row + 1;
  return used;
}

/* A libvterm colour as an ANSI index, -1 for the default.  */
static int
sample_colour (const VTermColor *c, bool is_fg)
{
  /* libvterm 0.1.4 also calls the default colours RGB: test them first.  */
  if (is_fg ? VTERM_COLOR_IS_DEFAULT_FG (c) : VTERM_COLOR_IS_DEFAULT_BG (c))
    return -1;
  if (VTERM_COLOR_IS_INDEXED (c))
    return c->indexed.idx;
  /* The nearest colour of the 6x6x6 cube.  */
  int r = (c->rgb.red * 5 + 127) / 255, g = (c->rgb.green * 5 + 127) / 255,
      b = (c->rgb.blue * 5 + 127) / 255;
  return 16 + r * 36 + g * 6 + b;
}

int
sample_put_cell (WINDOW *win, int y, int x, const VTermScreenCell *cell)
{
  wchar_t wch[VTERM_MAX_CHARS_PER_CELL + 1];
  int n = 0;
  for (; n < VTERM_MAX_CHARS_PER_CELL && cell->chars[n] != 0; n++)
    wch[n] = (wchar_t) cell->chars[n];
  /* Control characters never reach curses.  */
  if (n == 0 || wch[0] < 0x20 || (wch[0] >= 0x7f && wch[0] < 0xa0))
    wch[0] = L' ', n = 1;
  wch[n] = L'\0';
  int attrs = theme_cell_attr (sample_colour (&cell->fg, true),
                               sample_colour (&cell->bg, false));
  if (cell->attrs.bold)
    attrs |= A_BOLD;
  if (cell->attrs.underline)
    attrs |= A_UNDERLINE;
  if (cell->attrs.reverse)
    attrs |= A_REVERSE;
  if (cell->attrs.italic)
    attrs |= A_ITALIC;
  cchar_t cc;
  setcchar (&cc, wch, (attr_t) (attrs & ~A_COLOR), (short) PAIR_NUMBER (attrs),
            NULL);
  mvwadd_wch (win, y, x, &cc);
  return cell->width > 1 ? cell->width : 1;
}

void
sample_draw (struct sample *s, WINDOW *win, int y, int x, int rows, int cols)
{
  int used = sample_rows_used (s);
  if (rows > SAMPLE_ROWS)
    rows = SAMPLE_ROWS;
  int first = used - rows < 0 ? 0 : used - rows;
  for (int row = first; row < used; row++, y++)
    {
      int col = 0;
      while (col < s->cols && col < cols)
        {
          VTermScreenCell cell;
          VTermPos pos = { .row = row, .col = col };
          if (!vterm_screen_get_cell (s->screen, pos, &cell))
            break;
          if (cell.width > 1 && col + cell.width > cols)
            break;
          col += sample_put_cell (win, y, x + col, &cell);
        }
    }
}
