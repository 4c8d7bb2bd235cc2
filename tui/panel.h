/* The panels that take the box's place — the "Still running" list, a
 * question about a call, /sandbox — behind one table of operations, the
 * way tmux's window modes are.  Each panel owns its state, made by its own
 * constructor (tasks_panel_new, approval_panel_new, sandbox_panel_new),
 * and sees only the host below: what it may ask of the session that shows
 * it.  The host (tui/ui.c) holds one open panel at a time, hands it the
 * keys while the box would have them, and puts its lines where the box
 * was; a panel includes nothing of the host's.  */
#ifndef CRUCIBLE_TUI_PANEL_H
#define CRUCIBLE_TUI_PANEL_H

#include <stdbool.h>
#include <stddef.h>

#include <termkey.h>

#include "tui/theme.h"

struct screen_lines;
struct session_call;
struct ui_cmd;

/* What a panel may do to the session that shows it; data is the host's. */
struct panel_host
{
  /* Something the panel shows changed: draw it at the next frame.  */
  void (*dirty) (void *data);
  /* Add a notice line to the transcript.  */
  void (*notice) (void *data, enum theme_role role, const char *text);
  /* Open the full view on a command's output; the panel stays open under
   * it and comes back when the view closes.  */
  void (*open_full_view) (void *data, struct ui_cmd *c);
  /* The panel is done: the box comes back.  The panel is freed once the
   * call it made this from has returned, so it may still read its state. */
  void (*close) (void *data);

  /* For the list: the commands left running, oldest first (the array is
   * the caller's), and a stop of one (no confirmation).  */
  struct ui_cmd **(*left_running) (void *data, size_t *n);
  void (*stop) (void *data, struct ui_cmd *c);

  /* For a question: the call asked about (NULL once it was answered or
   * withdrawn), and the answer, which closes the panel.  */
  struct session_call *(*question) (void *data);
  void (*answer) (void *data, bool allowed);

  void *data;
};

/* One kind of panel.  */
struct panel_ops
{
  const char *name; /* "tasks", "approval", "sandbox" */
  /* Its lines where the box was, for cols columns (the screen wraps rows
   * wider than that and squeezes a panel taller than the window).  */
  void (*draw) (void *state, int cols, struct screen_lines *out);
  /* A key while it is open (and the full view is not).  */
  void (*key) (void *state, TermKey *tk, const TermKeyKey *key);
  /* The window changed size; NULL when draw alone answers for that.  */
  void (*resize) (void *state, int cols);
  /* The host's commands changed (a slot was freed); NULL when the panel
   * does not show them.  */
  void (*update) (void *state);
  /* It shows time passing: drawn once a second while it is in sight.  */
  bool ticks;
  void (*free) (void *state);
};

/* An open panel: its kind and its state.  ops is NULL for none.  */
struct panel
{
  const struct panel_ops *ops;
  void *state;
};

#endif
