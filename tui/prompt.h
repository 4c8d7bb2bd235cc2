/* The box's line editor: UTF-8 text and a cursor, the editing keys
 * (Ctrl+A/E/K/U/W, arrows, Backspace, Delete), a paste taken whole, and
 * history with Up/Down, kept across sessions in a file of its own.  */
#ifndef CRUCIBLE_TUI_PROMPT_H
#define CRUCIBLE_TUI_PROMPT_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

/* Entries of history kept, in memory and in the file.  */
#define PROMPT_HISTORY_MAX 500

/* The longest text the box takes.  */
#define PROMPT_MAX_BYTES ((size_t) 1 << 20)

enum prompt_edit
{
  PROMPT_LEFT,
  PROMPT_RIGHT,
  PROMPT_HOME, /* Ctrl+A, Home */
  PROMPT_END,  /* Ctrl+E, End */
  PROMPT_BACKSPACE,
  PROMPT_DELETE,
  PROMPT_KILL_END,  /* Ctrl+K */
  PROMPT_KILL_HOME, /* Ctrl+U */
  PROMPT_KILL_WORD, /* Ctrl+W */
  PROMPT_WORD_LEFT,
  PROMPT_WORD_RIGHT,
  PROMPT_HISTORY_UP,
  PROMPT_HISTORY_DOWN
};

struct prompt
{
  struct buf text;
  size_t cursor; /* byte offset, on a character boundary */
  char **history;
  size_t n_history;
  size_t history_at; /* == n_history when not browsing */
  char *draft;       /* the text before browsing began */
  char *history_file;
};

/* An empty box whose history is read from history_file (NULL: none).  */
void prompt_init (struct prompt *p, const char *history_file);
void prompt_clear_all (struct prompt *p);

/* Insert text at the cursor (a key, or a paste, kept whole).  */
void prompt_insert (struct prompt *p, const char *text, size_t len);

void prompt_edit (struct prompt *p, enum prompt_edit edit);

/* Whether the box is empty.  */
bool prompt_empty (const struct prompt *p);

/* Clear the box.  */
void prompt_reset (struct prompt *p);

/* Take the text (owned by the caller), clear the box, and remember it in
 * the history and its file.  */
char *prompt_take (struct prompt *p);

/* Draw the text in cols columns at y, x, scrolled so the cursor shows;
 * returns the cursor's column.  */
int prompt_draw (struct prompt *p, WINDOW *win, int y, int x, int cols);

/* The history file: $CRUCIBLE_HISTORY, or ~/.crucible/history.  Owned by
 * the caller; NULL without HOME.  */
char *prompt_history_path (void);

#endif
