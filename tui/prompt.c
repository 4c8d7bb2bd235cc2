/* The box's line editor and its history.  */
#include <config.h>

#include "tui/prompt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "tui/text.h"

/* Add an entry to the history in memory.  */
static void
prompt_history_add (struct prompt *p, const char *text)
{
  if (p->n_history > 0 && strcmp (p->history[p->n_history - 1], text) == 0)
    return;
  if (p->n_history == PROMPT_HISTORY_MAX)
    {
      free (p->history[0]);
      memmove (p->history, p->history + 1,
               (p->n_history - 1) * sizeof *p->history);
      p->n_history--;
    }
  p->history = xrealloc (p->history, (p->n_history + 1) * sizeof *p->history);
  p->history[p->n_history++] = xstrdup (text);
}

/* One line of the history file back to its text: "\n" and "\\" are
 * escaped, so an entry of several lines stays one line.  */
static char *
prompt_unescape (const char *line)
{
  struct buf b = BUF_INIT;
  for (const char *s = line; *s != '\0' && *s != '\n'; s++)
    {
      if (*s == '\\' && (s[1] == 'n' || s[1] == '\\'))
        {
          buf_putc (&b, s[1] == 'n' ? '\n' : '\\');
          s++;
        }
      else
        buf_putc (&b, *s);
    }
  return buf_steal (&b, NULL);
}

/* Read the history file; one that cannot be read is an empty history.  */
static void
prompt_history_load (struct prompt *p)
{
  cleanup_fclose FILE *f = fopen (p->history_file, "re");
  if (f == NULL)
    return;
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      cleanup_free char *text = prompt_unescape (line);
      if (*text != '\0')
        prompt_history_add (p, text);
    }
  free (line);
}

/* Append one entry to the history file (mode 0600: what a person types can
 * hold secrets).  A file that cannot be written loses the entry only.  */
static void
prompt_history_append (struct prompt *p, const char *text)
{
  if (p->history_file == NULL)
    return;
  struct buf b = BUF_INIT;
  for (const char *s = text; *s != '\0'; s++)
    {
      if (*s == '\n')
        buf_puts (&b, "\\n");
      else if (*s == '\\')
        buf_puts (&b, "\\\\");
      else
        buf_putc (&b, *s);
    }
  buf_putc (&b, '\n');
  cleanup_free char *dir = xstrdup (p->history_file);
  char *slash = strrchr (dir, '/');
  if (slash != NULL && slash != dir)
    {
      *slash = '\0';
      mkdir (dir, 0700);
    }
  cleanup_close int fd
      = open (p->history_file,
              O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0 && write (fd, b.data, b.len) < 0)
    errno = 0;
  buf_free (&b);
}

char *
prompt_history_path (void)
{
  const char *env = getenv ("CRUCIBLE_HISTORY");
  if (env != NULL && *env != '\0')
    return xstrdup (env);
  const char *home = getenv ("HOME");
  if (home == NULL || *home == '\0')
    return NULL;
  return xasprintf ("%s/.crucible/history", home);
}

void
prompt_init (struct prompt *p, const char *history_file)
{
  memset (p, 0, sizeof *p);
  p->history_file = history_file != NULL ? xstrdup (history_file) : NULL;
  if (p->history_file != NULL)
    prompt_history_load (p);
  p->history_at = p->n_history;
  buf_puts (&p->text, "");
}

void
prompt_clear_all (struct prompt *p)
{
  for (size_t i = 0; i < p->n_history; i++)
    free (p->history[i]);
  free (p->history);
  free (p->draft);
  free (p->history_file);
  buf_free (&p->text);
  memset (p, 0, sizeof *p);
}

/* Replace the text, cursor at the end.  */
static void
prompt_set (struct prompt *p, const char *text)
{
  p->text.len = 0;
  buf_puts (&p->text, text);
  p->cursor = p->text.len;
}

void
prompt_insert (struct prompt *p, const char *text, size_t len)
{
  if (p->text.len + len > PROMPT_MAX_BYTES)
    len = PROMPT_MAX_BYTES - p->text.len;
  size_t tail = p->text.len - p->cursor;
  buf_append (&p->text, text, len); /* grow */
  memmove (p->text.data + p->cursor + len, p->text.data + p->cursor, tail);
  memcpy (p->text.data + p->cursor, text, len);
  p->text.data[p->text.len] = '\0';
  p->cursor += len;
}

/* The offset of the character before off.  */
static size_t
prompt_prev (const struct prompt *p, size_t off)
{
  if (off == 0)
    return 0;
  off--;
  while (off > 0 && ((unsigned char) p->text.data[off] & 0xc0) == 0x80)
    off--;
  return off;
}

/* The offset of the character after off.  */
static size_t
prompt_next (const struct prompt *p, size_t off)
{
  if (off >= p->text.len)
    return p->text.len;
  return off + text_char_len (p->text.data + off, p->text.len - off);
}

/* Remove text[from..to).  */
static void
prompt_cut (struct prompt *p, size_t from, size_t to)
{
  memmove (p->text.data + from, p->text.data + to, p->text.len - to);
  p->text.len -= to - from;
  p->text.data[p->text.len] = '\0';
  p->cursor = from;
}

/* The start of the word before off (blanks first, then the word).  */
static size_t
prompt_word_start (const struct prompt *p, size_t off)
{
  while (off > 0 && p->text.data[off - 1] == ' ')
    off--;
  while (off > 0 && p->text.data[off - 1] != ' ')
    off = prompt_prev (p, off);
  return off;
}

/* The end of the word after off.  */
static size_t
prompt_word_end (const struct prompt *p, size_t off)
{
  while (off < p->text.len && p->text.data[off] == ' ')
    off++;
  while (off < p->text.len && p->text.data[off] != ' ')
    off = prompt_next (p, off);
  return off;
}

/* Up and Down: browse the history, keeping what was typed as the draft. */
static void
prompt_browse (struct prompt *p, int dir)
{
  if (dir < 0 && p->history_at == 0)
    return;
  if (dir > 0 && p->history_at >= p->n_history)
    return;
  if (p->history_at == p->n_history)
    {
      free (p->draft);
      p->draft = xstrdup (p->text.data);
    }
  p->history_at = (size_t) ((long) p->history_at + dir);
  prompt_set (p, p->history_at < p->n_history ? p->history[p->history_at]
                                              : p->draft);
}

void
prompt_edit (struct prompt *p, enum prompt_edit edit)
{
  switch (edit)
    {
    case PROMPT_LEFT:
      p->cursor = prompt_prev (p, p->cursor);
      break;
    case PROMPT_RIGHT:
      p->cursor = prompt_next (p, p->cursor);
      break;
    case PROMPT_HOME:
      p->cursor = 0;
      break;
    case PROMPT_END:
      p->cursor = p->text.len;
      break;
    case PROMPT_BACKSPACE:
      prompt_cut (p, prompt_prev (p, p->cursor), p->cursor);
      break;
    case PROMPT_DELETE:
      prompt_cut (p, p->cursor, prompt_next (p, p->cursor));
      break;
    case PROMPT_KILL_END:
      prompt_cut (p, p->cursor, p->text.len);
      break;
    case PROMPT_KILL_HOME:
      prompt_cut (p, 0, p->cursor);
      break;
    case PROMPT_KILL_WORD:
      prompt_cut (p, prompt_word_start (p, p->cursor), p->cursor);
      break;
    case PROMPT_WORD_LEFT:
      p->cursor = prompt_word_start (p, p->cursor);
      break;
    case PROMPT_WORD_RIGHT:
      p->cursor = prompt_word_end (p, p->cursor);
      break;
    case PROMPT_HISTORY_UP:
      prompt_browse (p, -1);
      break;
    case PROMPT_HISTORY_DOWN:
      prompt_browse (p, 1);
      break;
    }
}

bool
prompt_empty (const struct prompt *p)
{
  return p->text.len == 0;
}

void
prompt_reset (struct prompt *p)
{
  prompt_set (p, "");
  p->history_at = p->n_history;
}

char *
prompt_take (struct prompt *p)
{
  char *text = xstrdup (p->text.data);
  if (text[strspn (text, " \t\n")] != '\0')
    {
      prompt_history_add (p, text);
      prompt_history_append (p, text);
    }
  prompt_reset (p);
  return text;
}

int
prompt_draw (struct prompt *p, WINDOW *win, int y, int x, int cols)
{
  /* Newlines of a paste show as spaces so the box stays one row.  */
  cleanup_free char *shown = text_clean (p->text.data, p->cursor, 0);
  cleanup_free char *after
      = text_clean (p->text.data + p->cursor, p->text.len - p->cursor, 0);
  int before_w = text_width (shown, strlen (shown));
  const char *start = shown;
  /* Scroll so that the cursor stays inside the box.  */
  while (before_w >= cols && *start != '\0')
    {
      size_t n = text_char_len (start, strlen (start));
      before_w -= text_width (start, n);
      start += n;
    }
  int used;
  size_t n = text_fit (start, strlen (start), cols, &used);
  mvwaddnstr (win, y, x, start, (int) n);
  if (used < cols)
    {
      size_t m = text_fit (after, strlen (after), cols - used, NULL);
      waddnstr (win, after, (int) m);
    }
  return x + before_w;
}
