/* The text the model gets for one command: what it printed and the notes
 * that say how it ended.  Never translated.  The exact texts, the encoding
 * of invalid UTF-8 and control bytes, the order of notes and the trailing
 * newline are written down in doc/strings.md.  */
#ifndef CRUCIBLE_CORE_RESULT_H
#define CRUCIBLE_CORE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The final tool result is capped at this many encoded JSON-string bytes,
 * escaping included.  */
#define RESULT_MAX_ENCODED 30000

enum result_ending
{
  RESULT_EXITED,    /* exited on its own with exit_status */
  RESULT_SIGNALED,  /* killed by signal `signal`, not by crucible */
  RESULT_TIMED_OUT, /* crucible stopped it at its deadline */
  RESULT_CEILING,   /* crucible stopped it at the output ceiling */
  RESULT_RUNNING    /* still running (bash_output): no ending note */
};

/* Why the output shown may be a prefix (the notes of a command that ended
 * on its own).  */
enum result_incomplete
{
  RESULT_COMPLETE,
  RESULT_INCOMPLETE_READ_FAILED, /* reading it failed before the end */
  RESULT_INCOMPLETE_UNREAD       /* not read to the end when it was reported */
};

struct result_input
{
  const char *head; /* retained start of the output */
  size_t head_len;
  const char *tail; /* retained end of the output; may be empty */
  size_t tail_len;
  uint64_t total_bytes;   /* raw bytes that arrived */
  uint64_t omitted_bytes; /* raw bytes dropped from the middle during capture */
  enum result_ending ending;
  int exit_status;        /* RESULT_EXITED */
  int signal;             /* RESULT_SIGNALED */
  uint64_t ceiling_bytes; /* RESULT_CEILING: the ceiling that was passed */
  bool still_arriving;    /* the command exited but something holds its pipe */
  enum result_incomplete incomplete;
  size_t max_encoded;      /* the cap on the text; 0: RESULT_MAX_ENCODED */
  const char *publication; /* the note on what became of its writes, or
                              NULL (sandbox/publish words it) */
  const char *ports;       /* sandbox.network.ports: a host port that was taken
                              (core/portfwd.c words it), or NULL */
  const char *credentials; /* sandbox.credentials withheld from the line
                              (core/credentials.c words it), or NULL */
  /* CRUCIBLE_ALLOW_PROCESS_ISOLATION: the command ran as a plain child
   * process where confinement was asked for; the result says so
   * (RESULT_PROCESS_ISOLATION_NOTE).  */
  bool process_isolation;
};

/* The warning every result of a run under process isolation carries
 * (doc/strings.md).  */
#define RESULT_PROCESS_ISOLATION_NOTE                                          \
  "[warning: not contained: no container engine was reachable and "            \
  "CRUCIBLE_ALLOW_PROCESS_ISOLATION=true ran this command as a plain child "   \
  "process, with no kernel boundary, no filesystem it cannot read and no "     \
  "network policy]"

/* Compose the result text.  The caller owns the returned string (valid
 * UTF-8, NUL-terminated; *len excludes the NUL).  Its encoded JSON-string
 * size never exceeds RESULT_MAX_ENCODED.  */
char *result_compose (const struct result_input *in, size_t *len);

/* One tool result made of the endings not yet told (NULL when none) and a
 * call's text, separated by a blank line, as valid UTF-8 whose encoded
 * size never exceeds RESULT_MAX_ENCODED: the text keeps at least a quarter
 * of the cap (all of itself when smaller), the endings the rest, and
 * either is cut in its middle to fit, saying so at the cut.  The caller
 * owns the returned string; *len excludes its NUL.  */
char *result_join (const char *endings, size_t endings_len, const char *text,
                   size_t text_len, size_t *len);

/* Bytes the JSON writer (lib/jsonw.h) writes for s inside a string, quotes
 * excluded:
 * '"' '\\' and \b \f \n \r \t cost 2, other bytes below 0x20 cost 6 (\u00XX),
 * everything else 1.  s must be valid UTF-8 (result_compose's output is).  */
size_t result_json_size (const char *s, size_t len);

/* Append s to a JSON string being built, as the JSON writer escapes it
 * (and so as result_json_size counts).  */
struct buf;
void result_json_escape (struct buf *out, const char *s, size_t len);

#endif
