/* The full view.  */
#include <config.h>

#include "tui/pager.h"

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vterm.h>

#include "core/capture.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/sample.h"
#include "tui/text.h"
#include "tui/theme.h"

struct pager
{
  const struct capture *cap; /* what it reads, or NULL: fixed text */
  struct capture *owned;     /* cap, once its command let go of it */
  uint64_t offset;           /* the stream offset read to */
  uint64_t line_start;       /* where the line being read began */
  char *title;
  VTerm *vt;
  VTermScreen *screen;
  /* Everything the interpreting terminal would have been given since its
   * last reset is plain (the flag plain below): printable ASCII in lines
   * no wider than it, each ended by a newline.  Such lines only scroll, so
   * they are not given to it: each goes straight into text, the last
   * plain_rows of them counted as still on its screen, the line not ended
   * yet kept as it came in partial.  The first byte that is not plain
   * gives the terminal those rows and that line (pager_unplain), and it
   * interprets from there on.  */
  struct buf partial;
  struct buf text; /* every finished line, each ending in '\n' */
  size_t *starts;  /* where each line begins in text */
  size_t n_lines, cap_lines;
  /* The one row standing for what the capture no longer held when it was
   * read (the middle of a long output, or what a flood pushed past while
   * the view was open), or -1.  Rows after it are only those read since
   * the last such gap: a later gap folds them into it too.  */
  long gap_row;
  uint64_t gap_lines; /* stream lines it stands for (numbering goes on after) */
  uint64_t gap_bytes;
  uint64_t gap_from; /* the stream offset where it begins */
  long top;          /* the first line shown */
  struct buf query;
  char *found; /* the last query searched for */
  long found_line;
  int cols;
  int plain_rows;
  bool plain;
  bool live;         /* a view of a command's output */
  bool over_ceiling; /* the capture stopped keeping at the ceiling */
  bool follow;       /* stay at the end as lines arrive */
  bool searching;
  bool not_found;
};

/* A line begins at the end of text.  */
static void
pager_begin_line (struct pager *p)
{
  if (p->n_lines == p->cap_lines)
    {
      p->cap_lines = p->cap_lines ? p->cap_lines * 2 : 1024;
      p->starts = xrealloc (p->starts, p->cap_lines * sizeof *p->starts);
    }
  p->starts[p->n_lines++] = p->text.len;
}

/* Append one finished line of n bytes.  */
static void
pager_add_line (struct pager *p, const char *s, size_t n)
{
  pager_begin_line (p);
  buf_append (&p->text, s, n);
  buf_putc (&p->text, '\n');
}

/* Append one line of cells as UTF-8 text, straight into text: this runs
 * for every row a command's output scrolls.  */
static void
pager_add_cells (struct pager *p, int cols, const VTermScreenCell *cells)
{
  size_t start = p->text.len;
  pager_begin_line (p);
  for (int i = 0; i < cols; i++)
    {
      if (cells[i].chars[0] == (uint32_t) -1)
        continue;
      /* A blank cell's other characters are not set: stop at the first
       * zero.  */
      for (int k = 0;
           k < VTERM_MAX_CHARS_PER_CELL && (k == 0 || cells[i].chars[k] != 0);
           k++)
        {
          uint32_t ch = cells[i].chars[k];
          if (ch == 0)
            {
              buf_putc (&p->text, ' ');
              break;
            }
          if (ch < 0x80)
            {
              buf_putc (&p->text, (char) ch);
              continue;
            }
          char u[MB_LEN_MAX];
          int n = wctomb (u, (wchar_t) ch);
          buf_append (&p->text, n > 0 ? u : "?", n > 0 ? (size_t) n : 1);
        }
      if (cells[i].width > 1)
        i += cells[i].width - 1;
    }
  /* Trailing blanks are the screen's, not the command's.  */
  while (p->text.len > start && p->text.data[p->text.len - 1] == ' ')
    p->text.len--;
  buf_putc (&p->text, '\n');
}

/* A row left the top of the interpreting screen.  */
static int
pager_on_pushline (int cols, const VTermScreenCell *cells, void *user)
{
  pager_add_cells (user, cols, cells);
  return 1;
}

/* Newline mode: a pipe's bare LF, which a terminal's line discipline
 * would have turned into CR LF.  */
static void
pager_newline_mode (struct pager *p)
{
  static const char newline_mode[] = "\x1b[20h";
  vterm_input_write (p->vt, newline_mode, sizeof newline_mode - 1);
}

/* The interpreting terminal was reset: nothing on its screen, and what
 * it is given next may be plain again.  */
static void
pager_plain_reset (struct pager *p)
{
  p->plain = true;
  p->plain_rows = 0;
  p->partial.len = 0;
}

/* Make the interpreting terminal, in newline mode.  */
static void
pager_make_vt (struct pager *p, int cols)
{
  static const VTermScreenCallbacks callbacks
      = { .sb_pushline = pager_on_pushline };
  /* Never narrower than a wide character (sample.h, SAMPLE_MIN_COLS).  */
  p->cols = cols < SAMPLE_MIN_COLS ? SAMPLE_MIN_COLS : cols;
  p->vt = vterm_new (PAGER_VT_ROWS, p->cols);
  vterm_set_utf8 (p->vt, 1);
  p->screen = vterm_obtain_screen (p->vt);
  vterm_screen_set_callbacks (p->screen, &callbacks, p);
  vterm_screen_reset (p->screen, 1);
  pager_newline_mode (p);
  pager_plain_reset (p);
}

/* Lines of the interpreting screen still on it (not pushed yet).  */
static int
pager_screen_rows (struct pager *p)
{
  if (p->vt == NULL)
    return 0;
  if (p->plain)
    return p->partial.len > 0 ? 1 : 0;
  VTermPos cursor;
  vterm_state_get_cursorpos (vterm_obtain_state (p->vt), &cursor);
  return cursor.row + (cursor.col > 0 ? 1 : 0);
}

/* Row row of the interpreting screen as text into out.  */
static void
pager_screen_line (struct pager *p, int row, struct buf *out)
{
  if (p->plain)
    {
      /* The line not ended yet, its trailing blanks the screen's.  */
      size_t n = p->partial.len;
      while (n > 0 && p->partial.data[n - 1] == ' ')
        n--;
      out->len = 0;
      buf_append (out, n > 0 ? p->partial.data : "", n);
      return;
    }
  VTermScreenCell cells[1024];
  int cols = p->cols < 1024 ? p->cols : 1024;
  for (int c = 0; c < cols; c++)
    {
      VTermPos pos = { .row = row, .col = c };
      vterm_screen_get_cell (p->screen, pos, &cells[c]);
    }
  struct pager tmp = { 0 };
  pager_add_cells (&tmp, cols, cells);
  out->len = 0;
  buf_append (out, tmp.text.data, tmp.text.len - 1);
  buf_free (&tmp.text);
  free (tmp.starts);
}

/* The gap's row: how much of the output it stands for.  */
static void
pager_gap_text (struct pager *p, struct buf *out)
{
  buf_printf (out,
              P_ ("\xe2\x80\xa6 %" PRIu64 " line (%s) not kept \xe2\x80\xa6",
                  "\xe2\x80\xa6 %" PRIu64 " lines (%s) not kept \xe2\x80\xa6",
                  p->gap_lines),
              p->gap_lines, text_bytes (p->gap_bytes, 0));
}

/* A view with nothing yet.  */
static struct pager *
pager_new (const char *title)
{
  struct pager *p = xcalloc (1, sizeof *p);
  p->title = xstrdup (title);
  p->follow = false;
  p->found_line = -1;
  p->gap_row = -1;
  return p;
}

struct pager *
pager_new_capture (const struct capture *cap, const char *title)
{
  struct pager *p = pager_new (title);
  p->cap = cap;
  p->live = true;
  return p;
}

struct pager *
pager_new_text (const char *text, size_t len, const char *title)
{
  struct pager *p = pager_new (title);
  char *clean = text_clean (text, len, 1);
  for (char *s = clean, *nl;; s = nl + 1)
    {
      nl = strchr (s, '\n');
      size_t n = nl != NULL ? (size_t) (nl - s) : strlen (s);
      pager_add_line (p, s, n);
      if (nl == NULL)
        break;
    }
  free (clean);
  return p;
}

void
pager_free (struct pager *p)
{
  if (p == NULL)
    return;
  if (p->vt != NULL)
    vterm_free (p->vt);
  capture_free (p->owned);
  buf_free (&p->text);
  buf_free (&p->partial);
  buf_free (&p->query);
  free (p->starts);
  free (p->found);
  free (p->title);
  free (p);
}

/* Take the rows still on the interpreting screen as finished lines, but
 * for a last line not ended yet (at a gap: what follows is not their
 * continuation, and the gap's row counts that line).  */
static void
pager_take_screen (struct pager *p)
{
  if (p->plain)
    return;
  VTermPos cursor;
  vterm_state_get_cursorpos (vterm_obtain_state (p->vt), &cursor);
  int rows = cursor.row;
  struct buf line = BUF_INIT;
  for (int r = 0; r < rows; r++)
    {
      pager_screen_line (p, r, &line);
      pager_add_line (p, line.data != NULL ? line.data : "", line.len);
    }
  buf_free (&line);
}

/* The capture no longer held the bytes from p->offset to at, and
 * lines_before '\n's came before at: one row stands for them, the rows
 * read since an earlier gap folded into it, and what follows is
 * interpreted afresh.  */
static void
pager_gap (struct pager *p, uint64_t at, uint64_t lines_before)
{
  if (p->gap_row < 0)
    {
      pager_take_screen (p);
      p->gap_row = (long) p->n_lines;
      p->gap_from = p->line_start;
      pager_add_line (p, "", 0);
    }
  else
    {
      p->n_lines = (size_t) p->gap_row + 1;
      p->text.len = p->starts[p->gap_row] + 1;
    }
  /* Numbering goes on as the stream's lines: the rows before the gap
   * number 1..gap_row, the next row after it is line lines_before + 1.  */
  uint64_t before = (uint64_t) p->gap_row;
  p->gap_lines = lines_before > before ? lines_before - before : 0;
  p->gap_bytes = at - p->gap_from;
  vterm_screen_reset (p->screen, 1);
  pager_newline_mode (p);
  pager_plain_reset (p);
  if (p->found_line > p->gap_row)
    p->found_line = -1;
}

/* A plain line ended: into text as the terminal would have pushed it
 * (its trailing blanks trimmed), counted on its screen until a screen's
 * height of lines has come after it.  */
static void
pager_plain_line (struct pager *p)
{
  size_t n = p->partial.len;
  while (n > 0 && p->partial.data[n - 1] == ' ')
    n--;
  pager_add_line (p, n > 0 ? p->partial.data : "", n);
  p->partial.len = 0;
  if (p->plain_rows < PAGER_VT_ROWS - 1)
    p->plain_rows++;
}

/* A byte that is not plain came: the terminal is given the rows it would
 * still have on its screen, which leave text, and the line not ended.
 * (They fit on its screen, so none is pushed back while it is given
 * them; were one, it would follow them in text.)  */
static void
pager_unplain (struct pager *p)
{
  size_t first = p->n_lines - (size_t) p->plain_rows;
  struct buf rows = BUF_INIT;
  if (p->plain_rows > 0)
    {
      buf_append (&rows, p->text.data + p->starts[first],
                  p->text.len - p->starts[first]);
      p->text.len = p->starts[first];
      p->n_lines = first;
    }
  buf_append (&rows, p->partial.data, p->partial.len);
  p->plain = false;
  p->plain_rows = 0;
  p->partial.len = 0;
  if (rows.len > 0)
    vterm_input_write (p->vt, rows.data, rows.len);
  buf_free (&rows);
}

/* Take the plain bytes at the start of s[0..n) as lines; returns how
 * many were taken (all n unless one is not plain, which ends it).  */
static size_t
pager_take_plain (struct pager *p, const char *s, size_t n)
{
  size_t i = 0;
  while (i < n)
    {
      const char *nl = memchr (s + i, '\n', n - i);
      size_t end = nl != NULL ? (size_t) (nl - s) : n;
      size_t run = i;
      while (run < end && s[run] >= 0x20 && s[run] < 0x7f)
        run++;
      if (p->partial.len + (run - i) > (size_t) p->cols)
        {
          /* Wider than the terminal: it wraps, which it interprets.  */
          pager_unplain (p);
          return i;
        }
      buf_append (&p->partial, s + i, run - i);
      if (run < end)
        {
          pager_unplain (p);
          return run;
        }
      if (nl == NULL)
        return n;
      pager_plain_line (p);
      i = end + 1;
    }
  return n;
}

/* Read and interpret one chunk of what the capture holds past what was
 * read; returns false when there is nothing more yet.  */
static bool
pager_read_chunk (struct pager *p)
{
  char chunk[PAGER_PARSE_CHUNK];
  uint64_t at, lines_before;
  size_t n = capture_read_all (p->cap, p->offset, chunk, sizeof chunk, &at,
                               &lines_before);
  p->over_ceiling = capture_over_ceiling (p->cap);
  if (n == 0)
    return false;
  size_t skip = 0;
  if (at != p->offset)
    {
      pager_gap (p, at, lines_before);
      /* What follows a gap begins mid-line (or mid-sequence): from the
       * next line on, which the gap's row counts.  */
      const char *nl = memchr (chunk, '\n', n);
      if (nl != NULL)
        {
          skip = (size_t) (nl + 1 - chunk);
          p->gap_lines++;
          p->gap_bytes += skip;
        }
    }
  size_t taken = p->plain ? pager_take_plain (p, chunk + skip, n - skip) : 0;
  if (skip + taken < n)
    vterm_input_write (p->vt, chunk + skip + taken, n - skip - taken);
  const char *nl = memrchr (chunk + skip, '\n', n - skip);
  if (nl != NULL)
    p->line_start = at + (uint64_t) (nl + 1 - chunk);
  p->offset = at + n;
  return true;
}

bool
pager_update (struct pager *p, int cols)
{
  if (p->cap == NULL)
    return false;
  if (p->vt == NULL)
    pager_make_vt (p, cols);
  uint64_t start = clock_now_ms ();
  while (clock_now_ms () - start < PAGER_PARSE_MS)
    if (!pager_read_chunk (p))
      return false;
  /* The frame's share is spent with the capture perhaps not read to its
   * end: a command that has gone quiet sends no more damage, so the
   * caller asks for the next frame itself.  */
  return true;
}

/* The capture's command is going: the view keeps the capture (its head,
 * tail and spool) and goes on reading it a frame's share at a time.  */
void
pager_detach (struct pager *p, struct capture *cap)
{
  if (p == NULL || p->cap != cap)
    {
      capture_free (cap);
      return;
    }
  p->owned = cap;
}

/* Whether a view of a command's output has read none of it yet.  */
bool
pager_unread (const struct pager *p)
{
  return p->cap != NULL && p->vt == NULL;
}

/* Every line the view has: finished ones, then the screen's.  */
static long
pager_total (struct pager *p)
{
  return (long) p->n_lines + pager_screen_rows (p);
}

/* Line i as text into out.  */
static void
pager_line (struct pager *p, long i, struct buf *out)
{
  out->len = 0;
  if (i == p->gap_row)
    {
      pager_gap_text (p, out);
      return;
    }
  if (i < (long) p->n_lines)
    {
      size_t end = i + 1 < (long) p->n_lines ? p->starts[i + 1] : p->text.len;
      buf_append (out, p->text.data + p->starts[i], end - p->starts[i] - 1);
      return;
    }
  pager_screen_line (p, (int) (i - (long) p->n_lines), out);
}

/* The stream line row i begins (from 1): past the gap's row the numbers
 * go on as the stream's, so the count says how long the output was.  */
static long
pager_number (const struct pager *p, long i)
{
  if (p->gap_row < 0 || i <= p->gap_row)
    return i + 1;
  return i + (long) p->gap_lines;
}

/* The stream line row i ends on.  */
static long
pager_number_end (const struct pager *p, long i)
{
  if (i == p->gap_row && p->gap_lines > 1)
    return i + (long) p->gap_lines;
  return pager_number (p, i);
}

/* Search from line from on (wrapping) for the query.  */
static void
pager_search (struct pager *p, long from, int rows)
{
  long total = pager_total (p);
  struct buf line = BUF_INIT;
  p->not_found = true;
  for (long k = 0; k < total && p->found != NULL && *p->found != '\0'; k++)
    {
      long i = (from + k) % total;
      if (i == p->gap_row)
        continue;
      pager_line (p, i, &line);
      if (line.data != NULL && strstr (line.data, p->found) != NULL)
        {
          p->found_line = i;
          p->top = i > rows / 2 ? i - rows / 2 : 0;
          p->follow = false;
          p->not_found = false;
          break;
        }
    }
  buf_free (&line);
}

/* A key while the search query is typed.  */
static void
pager_search_key (struct pager *p, const TermKeyKey *key)
{
  if (key->type == TERMKEY_TYPE_KEYSYM && key->code.sym == TERMKEY_SYM_ESCAPE)
    p->searching = false;
  else if (key->type == TERMKEY_TYPE_KEYSYM
           && key->code.sym == TERMKEY_SYM_ENTER)
    {
      p->searching = false;
      free (p->found);
      p->found
          = xstrndup (p->query.data != NULL ? p->query.data : "", p->query.len);
      pager_search (p, p->top, LINES - 2);
    }
  else if (key->type == TERMKEY_TYPE_KEYSYM
           && key->code.sym == TERMKEY_SYM_BACKSPACE)
    {
      while (p->query.len > 0
             && ((unsigned char) p->query.data[--p->query.len] & 0xc0) == 0x80)
        ;
      if (p->query.data != NULL)
        p->query.data[p->query.len] = '\0';
    }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    buf_puts (&p->query, key->utf8);
}

bool
pager_key (struct pager *p, TermKey *tk, const TermKeyKey *key)
{
  int page = LINES - 2 > 1 ? LINES - 2 : 1;
  if (p->searching)
    {
      pager_search_key (p, key);
      return true;
    }
  p->not_found = false;
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        return false;
      case TERMKEY_SYM_PAGEUP:
        p->top -= page, p->follow = false;
        break;
      case TERMKEY_SYM_PAGEDOWN:
        p->top += page;
        break;
      case TERMKEY_SYM_UP:
        p->top--, p->follow = false;
        break;
      case TERMKEY_SYM_DOWN:
        p->top++;
        break;
      case TERMKEY_SYM_HOME:
        p->top = 0, p->follow = false;
        break;
      case TERMKEY_SYM_END:
        p->follow = true;
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      if (key->code.codepoint == '/')
        {
          p->searching = true;
          p->query.len = 0;
          buf_puts (&p->query, "");
        }
      else if (key->code.codepoint == 'n' && p->found != NULL)
        pager_search (p, p->found_line + 1, page);
      else if (key->code.codepoint == 'q')
        return false;
    }
  else if (key->type == TERMKEY_TYPE_UNICODE
           && key->modifiers == TERMKEY_KEYMOD_CTRL
           && key->code.codepoint == 'o')
    return false;
  return true;
}

void
pager_draw (struct pager *p, WINDOW *win, int rows, int cols)
{
  int body = rows - 2 > 0 ? rows - 2 : 0;
  long total = pager_total (p);
  long max_top = total > body ? total - body : 0;
  if (p->follow || p->top > max_top)
    p->top = max_top;
  if (p->top >= max_top)
    p->follow = true;
  if (p->top < 0)
    p->top = 0;
  /* The title row: what this is and how far down we are.  */
  wattrset (win, theme_attr (THEME_ACCENT));
  char *title = text_clean (p->title, strlen (p->title), 0);
  mvwaddnstr (win, 0, 0, title,
              (int) text_fit (title, strlen (title), cols, NULL));
  free (title);
  struct buf line = BUF_INIT;
  for (int r = 0; r < body && p->top + r < total; r++)
    {
      long i = p->top + r;
      pager_line (p, i, &line);
      enum theme_role role = i == p->found_line ? THEME_SELECTED
                             : i == p->gap_row  ? THEME_DIM
                                                : THEME_TEXT;
      wattrset (win, theme_attr (role));
      const char *s = line.data != NULL ? line.data : "";
      mvwaddnstr (win, 1 + r, 0, s, (int) text_fit (s, line.len, cols, NULL));
    }
  buf_free (&line);
  /* The key row, or the search being typed.  */
  wattrset (win, theme_attr (THEME_DIM));
  struct buf foot = BUF_INIT;
  if (p->searching)
    buf_printf (&foot, "/%s", p->query.data != NULL ? p->query.data : "");
  else
    {
      if (p->not_found)
        buf_printf (&foot, _ ("not found: %s"), p->found);
      else if (total == 0)
        buf_puts (&foot, _ ("nothing has been printed yet"));
      else
        buf_printf (&foot, _ ("lines %ld-%ld of %ld"), pager_number (p, p->top),
                    pager_number_end (p, p->top + body < total
                                             ? p->top + body - 1
                                             : total - 1),
                    pager_number_end (p, total - 1));
      if (p->gap_row >= 0 || p->over_ceiling)
        buf_printf (&foot, " · %s", _ ("incomplete: not all of it was kept"));
      buf_printf (&foot, " · %s",
                  _ ("esc to close · pgup/pgdn/home/end to move · / to "
                     "search"));
    }
  mvwaddnstr (win, rows - 1, 0, foot.data,
              (int) text_fit (foot.data, foot.len, cols, NULL));
  buf_free (&foot);
  wattrset (win, A_NORMAL);
}
