/* The supervisor's texts beyond one result.  */
#include <config.h>

#include "core/notes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"

/* A label longer than this is cut, ending in "…".  */
#define NOTES_LABEL_MAX 80

#define NOTES_LEFT_RUNNING                                                     \
  "[left running as #%" PRIu64 "; ask bash_output what it has printed so "     \
  "far, and its output is handed over when it ends; do not poll or wait "      \
  "for it]"
#define NOTES_LEFT_RUNNING_KEY                                                 \
  "[left running as #%" PRIu64 "; the developer pressed ctrl+b to leave it "   \
  "running rather than keep waiting; carry on with what does not depend on "   \
  "it; ask bash_output what it has printed so far, and its output is "         \
  "handed over when it ends; do not poll or wait for it]"

/* Cut s to at most max bytes at a UTF-8 boundary, adding "…" when cut.  */
static char *
notes_cut (const char *s, size_t max)
{
  size_t len = strlen (s);
  if (len <= max)
    return xstrdup (s);
  size_t keep = max - 3;
  while (keep > 0 && ((unsigned char) s[keep] & 0xc0) == 0x80)
    keep--;
  char *out = xmalloc (keep + 4);
  memcpy (out, s, keep);
  memcpy (out + keep, "\xe2\x80\xa6", 4);
  return out;
}

char *
notes_label (const char *description, const char *line)
{
  if (description != NULL && description[0] != '\0')
    return notes_cut (description, NOTES_LABEL_MAX);
  char *bash = xasprintf ("Bash(%s)", line);
  /* A line of several lines is shown on one.  */
  for (char *p = bash; *p != '\0'; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  char *label = notes_cut (bash, NOTES_LABEL_MAX);
  free (bash);
  if (strlen (label) > 1 && label[strlen (label) - 1] != ')')
    {
      /* Keep the closing parenthesis readable after a cut.  */
      char *closed = xasprintf ("%s)", label);
      free (label);
      return closed;
    }
  return label;
}

char *
notes_refusal (const char *why)
{
  return xasprintf ("[refused: %s; nothing was run]", why);
}

/* "\n[#1 is listening on 127.0.0.1:5173]" after a note, when where.  */
static void
notes_put_where (struct buf *b, uint64_t number, const char *where)
{
  if (where != NULL)
    buf_printf (b, "\n[#%" PRIu64 " is %s]", number, where);
}

char *
notes_left_running (uint64_t number, enum notes_detach who, const char *where,
                    const char *so_far, size_t so_far_len, size_t *len)
{
  struct buf b = BUF_INIT;
  if (so_far != NULL && so_far_len > 0)
    {
      buf_append (&b, so_far, so_far_len);
      buf_puts (&b, "\n\n");
    }
  buf_printf (
      &b, who == NOTES_DETACH_KEY ? NOTES_LEFT_RUNNING_KEY : NOTES_LEFT_RUNNING,
      number);
  notes_put_where (&b, number, where);
  return buf_steal (&b, len);
}

/* "exit status N", "killed by signal N", or what crucible stopped it for.  */
static void
notes_put_how (struct buf *b, const struct notes_end *end)
{
  switch (end->ending)
    {
    case RESULT_EXITED:
      buf_printf (b, "exit status %d", end->exit_status);
      return;
    case RESULT_SIGNALED:
      buf_printf (b, "killed by signal %d", end->signal);
      return;
    case RESULT_TIMED_OUT:
      buf_puts (b, "ran too long");
      return;
    case RESULT_CEILING:
      buf_puts (b, "printed past the output ceiling");
      return;
    case RESULT_RUNNING:
      break;
    }
  buf_puts (b, "still running");
}

/* "LABEL ended on its own · exit status 1 · 96 lines", or how crucible
 * stopped it.  */
static void
notes_put_summary (struct buf *b, const struct notes_end *end)
{
  buf_puts (b, end->label);
  if (end->stopped)
    buf_puts (b, " was stopped from the list \xc2\xb7 ");
  else if (end->exiting)
    buf_puts (b, " was stopped because crucible is exiting \xc2\xb7 ");
  else
    buf_puts (b, " ended on its own \xc2\xb7 ");
  notes_put_how (b, end);
  buf_printf (b, " \xc2\xb7 %" PRIu64 " %s", end->lines,
              end->lines == 1 ? "line" : "lines");
}

char *
notes_ending_line (const struct notes_end *end)
{
  struct buf b = BUF_INIT;
  bool clean = end->ending == RESULT_EXITED && end->exit_status == 0;
  buf_puts (&b, clean ? "\xe2\x9c\x93 " : "\xe2\x9c\x97 ");
  notes_put_summary (&b, end);
  return buf_steal (&b, NULL);
}

char *
notes_ending_note (const struct notes_end *end, const char *printed,
                   size_t printed_len, size_t *len)
{
  struct buf b = BUF_INIT;
  buf_printf (&b, "[#%" PRIu64 " ", end->number);
  notes_put_summary (&b, end);
  buf_puts (&b, "; what it printed:]\n");
  buf_append (&b, printed, printed_len);
  return buf_steal (&b, len);
}

char *
notes_output_running (uint64_t number, const char *where, const char *so_far,
                      size_t so_far_len, uint64_t bytes, size_t *len)
{
  struct buf b = BUF_INIT;
  if (bytes == 0)
    buf_printf (&b, "[#%" PRIu64 " is running and has printed nothing yet]",
                number);
  else
    {
      buf_append (&b, so_far, so_far_len);
      buf_printf (&b, "\n[#%" PRIu64 " is still running]", number);
    }
  notes_put_where (&b, number, where);
  return buf_steal (&b, len);
}

char *
notes_output_unknown (int64_t number, char *const *running, size_t n)
{
  struct buf b = BUF_INIT;
  buf_printf (&b, "[no command is running as #%" PRId64 "; ", number);
  if (n == 0)
    buf_puts (&b, "nothing is running now");
  else
    {
      buf_puts (&b, "running now: ");
      for (size_t i = 0; i < n; i++)
        buf_printf (&b, "%s%s", i ? ", " : "", running[i]);
    }
  buf_puts (&b, "; a command that has ended leaves this list, and what it "
                "printed is handed over on its own]");
  return buf_steal (&b, NULL);
}
