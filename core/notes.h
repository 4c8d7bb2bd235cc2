/* The texts the supervisor gives beyond one command's result: the answer
 * of a call left running, the line and the note of a command that ended on
 * its own, bash_output's answers, and a command's label.  Model-facing
 * texts are never translated; the exact words are in doc/strings.md.  */
#ifndef CRUCIBLE_CORE_NOTES_H
#define CRUCIBLE_CORE_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"

/* Who let go of a command left running.  */
enum notes_detach
{
  NOTES_DETACH_BACKGROUND, /* the call asked for background: true */
  NOTES_DETACH_KEY         /* the developer pressed ctrl+b */
};

/* How a command the model no longer waits for came to an end.  */
struct notes_end
{
  uint64_t number;
  const char *label; /* notes_label () */
  bool stopped;      /* ended by x in the list, not on its own */
  bool exiting;      /* stopped because crucible is exiting (its input
                        closed, /quit, a signal), not on its own */
  enum result_ending ending;
  int exit_status;
  int signal;
  uint64_t lines;
};

/* The words a command goes by: its description, or Bash(<line>), cut to a
 * bounded length.  The caller owns the string.  */
char *notes_label (const char *description, const char *line);

/* The answer to a call left running: what it printed so far (a result text
 * with no ending note, or NULL when nothing arrived), a blank line, then
 * the note naming its number.  The caller owns the string.  */
/* where: the command's servers (sandbox.network.ports, "listening on
 * 127.0.0.1:5173"), said after the note, or NULL.  */
char *notes_left_running (uint64_t number, enum notes_detach who,
                          const char *where, const char *so_far,
                          size_t so_far_len, size_t *len);

/* A refusal in the words the model is given: "[refused: WHY; nothing was
 * run]".  The caller owns the string.  */
char *notes_refusal (const char *why);

/* The person's line for an ending: "✗ LABEL ended on its own · exit status
 * 1 · 96 lines" (✓ for exit status 0).  The caller owns the string.  */
char *notes_ending_line (const struct notes_end *end);

/* The model's note for an ending: a header line, then what the command
 * printed (a result text bounded to a quarter of a result).  */
char *notes_ending_note (const struct notes_end *end, const char *printed,
                         size_t printed_len, size_t *len);

/* bash_output for a running command: what it printed so far, then a note
 * saying it is still running; or the note alone when nothing arrived.  */
/* where as for notes_left_running.  */
char *notes_output_running (uint64_t number, const char *where,
                            const char *so_far, size_t so_far_len,
                            uint64_t bytes, size_t *len);

/* bash_output for a number nothing answers to, naming what is running:
 * running is a list of "#N LABEL" strings.  */
char *notes_output_unknown (int64_t number, char *const *running, size_t n);

#endif
