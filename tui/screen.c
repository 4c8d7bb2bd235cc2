/* Layout and drawing of one frame.  */
#include <config.h>

#include "tui/screen.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "core/loop.h"
#include "tui/pager.h"
#include "tui/prompt.h"
#include "tui/sample.h"
#include "tui/text.h"
#include "tui/transcript.h"
#include "tui/ui_cmd.h"

/* Columns of the sample and count rows' indent.  */
#define SCREEN_INDENT 4

void
screen_lines_add (struct screen_lines *l, enum theme_role role, const char *fmt,
                  ...)
{
  va_list ap;
  va_start (ap, fmt);
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n].text = xvasprintf (fmt, ap);
  l->v[l->n].role = role;
  l->n++;
  va_end (ap);
}

void
screen_lines_free (struct screen_lines *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->v[i].text);
  free (l->v);
  l->v = NULL;
  l->n = 0;
}

char *
screen_rule (int cols)
{
  struct buf b = BUF_INIT;
  for (int i = 0; i < cols; i++)
    buf_puts (&b, "\xe2\x94\x80");
  return buf_steal (&b, NULL);
}

char *
screen_row_split (const char *left, const char *right, int cols)
{
  int rw = text_width (right, strlen (right));
  int room = cols - rw - 1;
  struct buf b = BUF_INIT;
  int lw = 0;
  if (room > 0)
    {
      size_t len = strlen (left);
      size_t n = text_fit (left, len, room, &lw);
      if (n < len)
        {
          /* Cut: one column less, and say so.  */
          n = text_fit (left, len, room - 1, &lw);
          lw++;
        }
      buf_append (&b, left, n);
      if (n < len)
        buf_puts (&b, "\xe2\x80\xa6");
    }
  for (int i = lw; i < cols - rw; i++)
    buf_putc (&b, ' ');
  buf_puts (&b, right);
  return buf_steal (&b, NULL);
}

char *
screen_count_row (const struct ui_cmd *c)
{
  const char *key = _ ("ctrl+b to leave it running");
  if (c->bytes == 0)
    return xstrdup (key);
  char lines[64];
  snprintf (lines, sizeof lines,
            P_ ("%" PRIu64 " line", "%" PRIu64 " lines", ui_cmd_lines (c)),
            ui_cmd_lines (c));
  return xasprintf ("%s \xc2\xb7 %s \xc2\xb7 %s", lines,
                    text_bytes (c->bytes, 0), key);
}

/* Draw text at y, x in role, cut to cols.  */
static void
screen_put (int y, int x, enum theme_role role, const char *text, int cols)
{
  if (cols <= 0)
    return;
  char *clean = text_clean (text, strlen (text), 0);
  attrset (theme_attr (role));
  mvaddnstr (y, x, clean, (int) text_fit (clean, strlen (clean), cols, NULL));
  attrset (A_NORMAL);
  free (clean);
}

/* The status row: the mode, and how many commands are left running.  */
static void
screen_status (const struct screen_view *v, int y, int cols)
{
  if (v->hint != NULL)
    {
      screen_put (y, 2, THEME_DIM, v->hint, cols - 2);
      return;
    }
  bool full = v->full_access;
  char *mode = xasprintf (_ ("%s mode on (shift+tab to cycle)"),
                          full ? "fullAccess" : "ask");
  screen_put (y, 2, full ? THEME_WARNING : THEME_DIM, mode, cols - 2);
  int x = 2 + text_width (mode, strlen (mode));
  free (mode);
  size_t n = v->left_running;
  if (n == 0)
    return;
  screen_put (y, x, THEME_DIM, " \xc2\xb7 ", cols - x);
  char count[64];
  snprintf (count, sizeof count, P_ ("%zu command", "%zu commands", n), n);
  screen_put (y, x + 3, THEME_ACCENT, count, cols - x - 3);
}

/* The box: a rule, the prompt, a rule; in a window of fewer than four rows
 * the prompt alone, so what is typed is still seen.  Returns the cursor's
 * column; the prompt's row is *prompt_y.  */
static int
screen_box (const struct screen_view *v, int y, int box_rows, int cols,
            int *prompt_y)
{
  if (box_rows == 3)
    {
      char *rule = screen_rule (cols);
      screen_put (y, 0, THEME_BORDER, rule, cols);
      screen_put (y + 2, 0, THEME_BORDER, rule, cols);
      free (rule);
      y++;
    }
  *prompt_y = y;
  attrset (theme_attr (THEME_PROMPT));
  mvaddstr (y, 0, "\xe2\x80\xba ");
  attrset (A_NORMAL);
  return prompt_draw (v->prompt, stdscr, y, 2, cols - 3);
}

/* The column a panel row's wrapped rows start at: under the text after
 * its leading blanks and a choice's "› 1. ", or two in from the blanks.  */
static int
screen_wrap_indent (const char *text)
{
  const char *p = text + strspn (text, " ");
  int indent = (int) (p - text);
  if (strncmp (p, "\xe2\x80\xba ", 4) == 0)
    p += 4, indent += 2;
  size_t digits = strspn (p, "0123456789");
  if (digits > 0 && strncmp (p + digits, ". ", 2) == 0)
    return indent + (int) digits + 2;
  return indent + 2;
}

/* Wrap the panel's rows wider than cols (a long path, a rule list, a
 * reason), so that nothing in a question is cut off the edge.  */
static void
screen_lines_wrap (struct screen_lines *l, int cols)
{
  struct screen_lines out = { 0 };
  for (size_t i = 0; i < l->n; i++)
    {
      const char *p = l->v[i].text;
      size_t len = strlen (p);
      if (cols < 8 || text_width (p, len) <= cols)
        {
          screen_lines_add (&out, l->v[i].role, "%s", p);
          continue;
        }
      int indent = screen_wrap_indent (p);
      if (indent > cols / 2)
        indent = 0;
      int width = cols, pad = 0;
      while (len > 0)
        {
          size_t n, shown = text_wrap_row (p, len, width, &n);
          screen_lines_add (&out, l->v[i].role, "%*s%.*s", pad, "", (int) shown,
                            p);
          p += n;
          len -= n;
          pad = indent;
          width = cols - indent;
        }
    }
  screen_lines_free (l);
  *l = out;
}

/* A panel taller than the rows it has gives up its blank rows, the last
 * first, then its top rule, before a row that says something is lost off
 * the top.  */
static void
screen_lines_squeeze (struct screen_lines *l, int rows)
{
  while ((int) l->n > rows)
    {
      size_t gone = l->n;
      for (size_t i = l->n; i > 0; i--)
        if (l->v[i - 1].text[0] == '\0')
          {
            gone = i - 1;
            break;
          }
      if (gone == l->n && l->n > 0 && l->v[0].role == THEME_BORDER)
        gone = 0;
      if (gone == l->n)
        return;
      free (l->v[gone].text);
      memmove (&l->v[gone], &l->v[gone + 1], (l->n - gone - 1) * sizeof *l->v);
      l->n--;
    }
}

/* Commands the running turn waits for, oldest first.  */
static size_t
screen_turn_cmds (const struct screen_view *v, struct ui_cmd **out, size_t max)
{
  size_t n = 0;
  for (struct ui_cmd *c = v->cmds; c != NULL; c = c->next)
    if (c->in_turn && n < max)
      out[n++] = c;
  for (size_t i = 0; i < n / 2; i++)
    {
      struct ui_cmd *t = out[i];
      out[i] = out[n - 1 - i];
      out[n - 1 - i] = t;
    }
  return n;
}

/* The running row: ✳ running (43s · ↓ 1.2k · esc to interrupt).  */
static void
screen_running_row (const struct screen_view *v, int y, int cols)
{
  char dur[32], down[32];
  text_duration (dur, sizeof dur, clock_now_ms () - v->turn_started_ms);
  text_short_count (down, sizeof down, v->turn_bytes);
  char *row = xasprintf ("\xe2\x9c\xb3 %s (%s \xc2\xb7 \xe2\x86\x93 %s "
                         "\xc2\xb7 %s)",
                         _ ("running"), dur, down, _ ("esc to interrupt"));
  screen_put (y, 0, THEME_ACCENT, row, cols);
  free (row);
}

/* Draw the running turn in rows rows from y.  A short window takes rows
 * back in this order: the blank row above the running row, the samples,
 * then the count rows; the call lines and the running row keep theirs
 * longest, the running row last of all.  */
static void
screen_turn (const struct screen_view *v, struct ui_cmd **cmds, size_t n, int y,
             int rows, int cols)
{
  int avail = rows;
  int running = v->busy && avail > 0 ? 1 : 0;
  avail -= running;
  int calls = (int) n < avail ? (int) n : avail;
  avail -= calls;
  int counts = calls < avail ? calls : avail;
  avail -= counts;
  for (int i = 0; i < calls; i++)
    {
      struct ui_cmd *c = cmds[i];
      char *call = xasprintf ("\xe2\x97\x8f %s", c->label);
      screen_put (y++, 0, THEME_TEXT, call, cols);
      free (call);
      int give = sample_rows_used (c->sample);
      if (give > SAMPLE_ROWS)
        give = SAMPLE_ROWS;
      if (give > avail)
        give = avail;
      sample_draw (c->sample, stdscr, y, SCREEN_INDENT, give,
                   cols - SCREEN_INDENT);
      y += give;
      avail -= give;
      if (i < counts)
        {
          char *count = screen_count_row (c);
          screen_put (y++, SCREEN_INDENT, THEME_DIM, count,
                      cols - SCREEN_INDENT);
          free (count);
        }
    }
  /* The blank row before the running row goes before any sample row.  */
  if (running && calls > 0 && avail > 0)
    y++;
  if (running)
    screen_running_row (v, y, cols);
}

/* Rows the running turn wants.  */
static int
screen_turn_rows (const struct screen_view *v, struct ui_cmd **cmds, size_t n)
{
  int rows = v->busy ? 1 : 0;
  if (v->busy && n > 0)
    rows++;
  for (size_t i = 0; i < n; i++)
    {
      int used = sample_rows_used (cmds[i]->sample);
      rows += 2 + (used < SAMPLE_ROWS ? used : SAMPLE_ROWS);
    }
  return rows;
}

/* Draw the full view over the whole screen; returns whether it has more
 * to parse.  */
static bool
screen_full_view (struct pager *pager, bool parse, int rows, int cols)
{
  bool more = (parse || pager_unread (pager)) && pager_update (pager, cols);
  pager_draw (pager, stdscr, rows, cols);
  curs_set (0);
  wnoutrefresh (stdscr);
  doupdate ();
  return more;
}

bool
screen_draw (const struct screen_view *v)
{
  int rows = LINES, cols = COLS;
  erase ();
  if (v->pager != NULL)
    return screen_full_view (v->pager, v->parse, rows, cols);
  struct screen_lines panel = { 0 };
  for (size_t i = 0; v->panel != NULL && i < v->panel->n; i++)
    screen_lines_add (&panel, v->panel->v[i].role, "%s", v->panel->v[i].text);
  screen_lines_wrap (&panel, cols);
  screen_lines_squeeze (&panel, rows - 1);
  int box_rows = panel.n > 0 ? (int) panel.n : rows >= 4 ? 3 : 1;
  int status_y = rows - 1;
  int box_y = status_y - box_rows;
  struct ui_cmd *cmds[16];
  size_t n = screen_turn_cmds (v, cmds, 16);
  int turn_rows = screen_turn_rows (v, cmds, n);
  int above = box_y;
  int turn_give = turn_rows < above ? turn_rows : above;
  int turn_y = box_y - turn_give;
  transcript_draw (v->transcript, stdscr, 0, turn_y, cols);
  if (turn_give > 0)
    screen_turn (v, cmds, n, turn_y, turn_give, cols);
  int cursor_x = -1, prompt_y = 0;
  if (panel.n > 0)
    for (size_t i = 0; i < panel.n && box_y + (int) i < status_y; i++)
      {
        if (box_y + (int) i >= 0)
          screen_put (box_y + (int) i, 0, panel.v[i].role, panel.v[i].text,
                      cols);
      }
  else if (box_y >= 0)
    cursor_x = screen_box (v, box_y, box_rows, cols, &prompt_y);
  screen_lines_free (&panel);
  screen_status (v, status_y, cols);
  if (cursor_x >= 0)
    {
      curs_set (1);
      move (prompt_y, cursor_x < cols ? cursor_x : cols - 1);
    }
  else
    curs_set (0);
  wnoutrefresh (stdscr);
  doupdate ();
  return false;
}
