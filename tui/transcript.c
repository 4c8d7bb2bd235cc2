/* The transcript.  */
#include <config.h>

#include "tui/transcript.h"

#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "tui/text.h"

void
transcript_init (struct transcript *t)
{
  memset (t, 0, sizeof *t);
}

void
transcript_clear (struct transcript *t)
{
  for (size_t i = 0; i < t->n; i++)
    free (t->lines[i].text);
  free (t->lines);
  transcript_init (t);
}

/* Add one line, dropping the oldest past the bound.  */
static void
transcript_push (struct transcript *t, struct transcript_line line)
{
  if (t->n == TRANSCRIPT_MAX_LINES)
    {
      free (t->lines[0].text);
      memmove (t->lines, t->lines + 1, (t->n - 1) * sizeof *t->lines);
      t->n--;
    }
  if (t->n == t->cap)
    {
      t->cap = t->cap ? t->cap * 2 : 64;
      t->lines = xrealloc (t->lines, t->cap * sizeof *t->lines);
    }
  t->lines[t->n++] = line;
}

void
transcript_add (struct transcript *t, enum theme_role role,
                enum transcript_kind kind, int indent, const char *text,
                size_t len)
{
  char *clean = text_clean (text, len, 1);
  for (char *p = clean, *nl;; p = nl + 1)
    {
      nl = strchr (p, '\n');
      size_t n = nl != NULL ? (size_t) (nl - p) : strlen (p);
      struct transcript_line line = {
        .text = xstrndup (p, n), .role = role, .kind = kind, .indent = indent
      };
      transcript_push (t, line);
      if (nl == NULL)
        break;
    }
  free (clean);
  /* A person reading back is not pulled down by what arrives.  */
}

void
transcript_scroll (struct transcript *t, int delta)
{
  t->scroll += delta;
  if (t->scroll < 0)
    t->scroll = 0;
}

/* Rows a line takes at cols columns.  */
static int
transcript_rows (const struct transcript_line *l, int cols)
{
  if (l->kind == TRANSCRIPT_ENDING)
    return 1;
  int rows = 0;
  const char *p = l->text;
  size_t len = strlen (p);
  int width = cols;
  do
    {
      size_t n;
      text_wrap_row (p, len, width, &n);
      p += n;
      len -= n;
      rows++;
      width = cols - l->indent > 1 ? cols - l->indent : cols;
    }
  while (len > 0);
  return rows;
}

char *
transcript_fit_ending (const char *line, int cols)
{
  size_t len = strlen (line);
  if (text_width (line, len) <= cols)
    return xstrdup (line);
  const char *mark = strstr (line, " ended on its own");
  if (mark == NULL)
    mark = strstr (line, " was stopped from the list");
  if (mark == NULL)
    return xstrndup (line, text_fit (line, len, cols, NULL));
  /* "✗ " stays, then as much of the label as fits, "…", and the rest.  */
  const char *label = strchr (line, ' ');
  label = label != NULL && label < mark ? label + 1 : line;
  int tail = text_width (mark, strlen (mark));
  int head = text_width (line, (size_t) (label - line));
  int room = cols - tail - head - 1;
  struct buf b = BUF_INIT;
  buf_append (&b, line, (size_t) (label - line));
  if (room > 0)
    buf_append (&b, label,
                text_fit (label, (size_t) (mark - label), room, NULL));
  buf_puts (&b, "\xe2\x80\xa6");
  buf_puts (&b, mark);
  char *out = buf_steal (&b, NULL);
  size_t fit = text_fit (out, strlen (out), cols, NULL);
  out[fit] = '\0';
  return out;
}

/* Draw one line's rows from row skip on, starting at y; returns rows drawn. */
static int
transcript_draw_line (const struct transcript_line *l, WINDOW *win, int y,
                      int skip, int max, int cols)
{
  int drawn = 0, row = 0;
  wattrset (win, theme_attr (l->role));
  if (l->kind == TRANSCRIPT_ENDING)
    {
      char *fit = transcript_fit_ending (l->text, cols);
      if (skip == 0 && max > 0)
        mvwaddstr (win, y, 0, fit), drawn = 1;
      free (fit);
      return drawn;
    }
  const char *p = l->text;
  size_t len = strlen (p);
  int width = cols, x = 0;
  do
    {
      size_t n;
      size_t shown = text_wrap_row (p, len, width, &n);
      if (row >= skip && drawn < max)
        mvwaddnstr (win, y + drawn++, x, p, (int) shown);
      p += n;
      len -= n;
      row++;
      width = cols - l->indent > 1 ? cols - l->indent : cols;
      x = cols - l->indent > 1 ? l->indent : 0;
    }
  while (len > 0);
  return drawn;
}

void
transcript_draw (struct transcript *t, WINDOW *win, int y, int rows, int cols)
{
  if (rows <= 0 || cols <= 0)
    return;
  /* Walk back from the end only as far as what is shown: a frame costs
   * the rows on screen, not the length of the session.  */
  int need = rows + t->scroll;
  size_t first = t->n;
  int above = 0;
  while (first > 0 && above < need)
    above += transcript_rows (&t->lines[--first], cols);
  if (above < need)
    {
      /* Scrolled back past the first line: stop at it.  */
      t->scroll = above > rows ? above - rows : 0;
      need = rows + t->scroll;
    }
  int skip = above > need ? above - need : 0;
  int at = above < rows ? rows - above + y : y;
  int left = rows - (at - y);
  for (size_t i = first; i < t->n && left > 0; i++)
    {
      int d = transcript_draw_line (&t->lines[i], win, at, skip, left, cols);
      skip = skip > 0 ? skip - transcript_rows (&t->lines[i], cols) : 0;
      if (skip < 0)
        skip = 0;
      at += d;
      left -= d;
    }
  wattrset (win, A_NORMAL);
}
