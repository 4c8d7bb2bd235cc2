/* The full view.  */
#include <config.h>

#include "tui/pager.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vterm.h>

#include "lib/buf.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/sample.h"
#include "tui/text.h"
#include "tui/theme.h"

/* Rows of the terminal the output is interpreted in; rows pushed off its
 * top become the view's lines.  */
#define PAGER_VT_ROWS 50

struct pager
{
  int fd; /* the spool (our own descriptor), or -1 for fixed text */
  uint64_t offset;
  bool incomplete;
  char *title;
  VTerm *vt;
  VTermScreen *screen;
  int cols;
  struct buf text; /* every finished line, each ending in '\n' */
  size_t *starts;  /* where each line begins in text */
  size_t n_lines, cap_lines;
  long top;    /* the first line shown */
  bool follow; /* stay at the end as lines arrive */
  bool searching;
  struct buf query;
  char *found; /* the last query searched for */
  long found_line;
  bool not_found;
};

/* Append one line of cells as UTF-8 text.  */
static void
pager_add_cells (struct pager *p, int cols, const VTermScreenCell *cells)
{
  struct buf line = BUF_INIT;
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
          char u[MB_LEN_MAX];
          uint32_t ch = cells[i].chars[k];
          if (ch == 0)
            {
              buf_putc (&line, ' ');
              break;
            }
          int n = wctomb (u, (wchar_t) ch);
          buf_append (&line, n > 0 ? u : "?", n > 0 ? (size_t) n : 1);
        }
      if (cells[i].width > 1)
        i += cells[i].width - 1;
    }
  /* Trailing blanks are the screen's, not the command's.  */
  while (line.len > 0 && line.data[line.len - 1] == ' ')
    line.len--;
  if (p->n_lines == p->cap_lines)
    {
      p->cap_lines = p->cap_lines ? p->cap_lines * 2 : 1024;
      p->starts = xrealloc (p->starts, p->cap_lines * sizeof *p->starts);
    }
  p->starts[p->n_lines++] = p->text.len;
  buf_append (&p->text, line.data != NULL ? line.data : "", line.len);
  buf_putc (&p->text, '\n');
  buf_free (&line);
}

/* A row left the top of the interpreting screen.  */
static int
pager_on_pushline (int cols, const VTermScreenCell *cells, void *user)
{
  pager_add_cells (user, cols, cells);
  return 1;
}

/* Make the interpreting terminal, in newline mode (a pipe's bare LF).  */
static void
pager_make_vt (struct pager *p, int cols)
{
  static const VTermScreenCallbacks callbacks
      = { .sb_pushline = pager_on_pushline };
  static const char newline_mode[] = "\x1b[20h";
  /* Never narrower than a wide character (sample.h, SAMPLE_MIN_COLS).  */
  p->cols = cols < SAMPLE_MIN_COLS ? SAMPLE_MIN_COLS : cols;
  p->vt = vterm_new (PAGER_VT_ROWS, p->cols);
  vterm_set_utf8 (p->vt, 1);
  p->screen = vterm_obtain_screen (p->vt);
  vterm_screen_set_callbacks (p->screen, &callbacks, p);
  vterm_screen_reset (p->screen, 1);
  vterm_input_write (p->vt, newline_mode, sizeof newline_mode - 1);
}

/* A view with nothing yet.  */
static struct pager *
pager_new (const char *title)
{
  struct pager *p = xcalloc (1, sizeof *p);
  p->fd = -1;
  p->title = xstrdup (title);
  p->follow = false;
  p->found_line = -1;
  return p;
}

struct pager *
pager_new_spool (int spool_fd, const char *title, bool incomplete)
{
  struct pager *p = pager_new (title);
  p->fd = spool_fd >= 0 ? fcntl (spool_fd, F_DUPFD_CLOEXEC, 3) : -1;
  p->incomplete = incomplete || p->fd < 0;
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
      if (p->n_lines == p->cap_lines)
        {
          p->cap_lines = p->cap_lines ? p->cap_lines * 2 : 1024;
          p->starts = xrealloc (p->starts, p->cap_lines * sizeof *p->starts);
        }
      p->starts[p->n_lines++] = p->text.len;
      buf_append (&p->text, s, n);
      buf_putc (&p->text, '\n');
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
  if (p->fd >= 0)
    close (p->fd);
  if (p->vt != NULL)
    vterm_free (p->vt);
  buf_free (&p->text);
  buf_free (&p->query);
  free (p->starts);
  free (p->found);
  free (p->title);
  free (p);
}

/* A monotonic clock in ms, for the frame's parsing budget.  */
static uint64_t
pager_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

bool
pager_update (struct pager *p, int cols)
{
  if (p->fd < 0)
    return false;
  if (p->vt == NULL)
    pager_make_vt (p, cols);
  char chunk[PAGER_PARSE_CHUNK];
  uint64_t start = pager_now_ms ();
  while (pager_now_ms () - start < PAGER_PARSE_MS)
    {
      ssize_t n = pread (p->fd, chunk, sizeof chunk, (off_t) p->offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      vterm_input_write (p->vt, chunk, (size_t) n);
      p->offset += (uint64_t) n;
    }
  /* The frame's share is spent with the spool perhaps not read to its end:
   * a command that has gone quiet sends no more damage, so the caller asks
   * for the next frame itself.  */
  return true;
}

/* Whether a view of a spool has parsed none of it yet.  */
bool
pager_unread (const struct pager *p)
{
  return p->fd >= 0 && p->vt == NULL;
}

/* Lines of the interpreting screen still on it (not pushed yet).  */
static int
pager_screen_rows (struct pager *p)
{
  if (p->vt == NULL)
    return 0;
  VTermPos cursor;
  vterm_state_get_cursorpos (vterm_obtain_state (p->vt), &cursor);
  return cursor.row + (cursor.col > 0 ? 1 : 0);
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
  if (i < (long) p->n_lines)
    {
      size_t end = i + 1 < (long) p->n_lines ? p->starts[i + 1] : p->text.len;
      buf_append (out, p->text.data + p->starts[i], end - p->starts[i] - 1);
      return;
    }
  int row = (int) (i - (long) p->n_lines);
  VTermScreenCell cells[1024];
  int cols = p->cols < 1024 ? p->cols : 1024;
  for (int c = 0; c < cols; c++)
    {
      VTermPos pos = { .row = row, .col = c };
      vterm_screen_get_cell (p->screen, pos, &cells[c]);
    }
  struct pager tmp = { 0 };
  pager_add_cells (&tmp, cols, cells);
  buf_append (out, tmp.text.data, tmp.text.len - 1);
  buf_free (&tmp.text);
  free (tmp.starts);
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
      wattrset (win,
                theme_attr (i == p->found_line ? THEME_SELECTED : THEME_TEXT));
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
        buf_printf (&foot, _ ("lines %ld-%ld of %ld"),
                    total > 0 ? p->top + 1 : 0,
                    p->top + body < total ? p->top + body : total, total);
      if (p->incomplete)
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
