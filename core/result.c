/* The text the model gets for one command; doc/strings.md says why it reads
 * as it does.  */
#include <config.h>

#include "core/result.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

/* Texts the spec quotes.  */
#define RESULT_NO_OUTPUT "(no output)"
#define RESULT_EXIT_NOTE "[exit status %d]"
#define RESULT_KILLED_NOTE "[the command was killed]"
#define RESULT_TIMEOUT_NOTE "[stopped: the command ran too long]"
#define RESULT_STILL_ARRIVING_NOTE                                             \
  "[output was still arriving: something the command left running holds it "   \
  "open]"
#define RESULT_CAPTURE_NOTE                                                    \
  "[process output was %" PRIu64 " bytes; %" PRIu64                            \
  " bytes omitted from the middle during capture]"

/* Texts doc/strings.md writes down.  */
#define RESULT_CEILING_NOTE                                                    \
  "[stopped: the command printed more than %" PRIu64                           \
  " bytes, the output ceiling (sandbox.limits.outputBytes)]"
#define RESULT_ENCODED_NOTE                                                    \
  "[encoded output was %zu bytes; %zu encoded bytes omitted from the middle]"

/* U+FFFD, which stands for each byte that is not part of valid UTF-8.  */
#define RESULT_READ_FAILED_NOTE                                                \
  "[output is incomplete: reading it failed before the end]"
#define RESULT_UNREAD_NOTE                                                     \
  "[output is incomplete: it had not been read to the end when the command "   \
  "was reported]"

/* Bytes the JSON writer writes for s inside a string, quotes excluded.  */
size_t
result_json_size (const char *s, size_t len)
{
  return json_string_size (s, len);
}

/* Append s to a JSON string being built, escaped as result_json_size counts;
 * the writer's own encoding.  */
void
result_json_escape (struct buf *out, const char *s, size_t len)
{
  json_string_escape (out, s, len);
}

/* Length of the (valid) UTF-8 character whose lead byte is c.  */
static size_t
result_char_len (unsigned char c)
{
  return c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
}

/* Encoded bytes of the character at s.  */
static size_t
result_char_cost (const char *s)
{
  unsigned char c = (unsigned char) s[0];
  return c < 0x80 ? json_byte_size (c) : result_char_len (c);
}

/* The character boundary nearest past half of s's encoded size.  */
static size_t
result_middle (const char *s, size_t len)
{
  size_t half = result_json_size (s, len) / 2, acc = 0, i = 0;
  while (i < len && acc < half)
    {
      acc += result_char_cost (s + i);
      i += result_char_len ((unsigned char) s[i]);
    }
  return i;
}

/* Drop whole characters from the end of s until at least want encoded
 * bytes are gone (or s is empty); returns the encoded bytes dropped.  */
static size_t
result_trim_end (const char *s, size_t *len, size_t want)
{
  size_t removed = 0, n = *len;
  while (n > 0 && removed < want)
    {
      size_t start = n - 1;
      while (start > 0 && ((unsigned char) s[start] & 0xc0) == 0x80)
        start--;
      removed += result_char_cost (s + start);
      n = start;
    }
  *len = n;
  return removed;
}

/* Drop whole characters from the start of *s until at least want encoded
 * bytes are gone (or it is empty); returns the encoded bytes dropped.  */
static size_t
result_trim_start (const char **s, size_t *len, size_t want)
{
  size_t removed = 0, i = 0;
  while (i < *len && removed < want)
    {
      removed += result_char_cost (*s + i);
      i += result_char_len ((unsigned char) (*s)[i]);
    }
  *s += i;
  *len -= i;
  return removed;
}

/* The note for how the command ended, or NULL for an exit status of 0.  */
static char *
result_ending_note (const struct result_input *in)
{
  switch (in->ending)
    {
    case RESULT_EXITED:
      return in->exit_status ? xasprintf (RESULT_EXIT_NOTE, in->exit_status)
                             : NULL;
    case RESULT_SIGNALED:
      return xstrdup (RESULT_KILLED_NOTE);
    case RESULT_TIMED_OUT:
      return xstrdup (RESULT_TIMEOUT_NOTE);
    case RESULT_CEILING:
      return xasprintf (RESULT_CEILING_NOTE, in->ceiling_bytes);
    case RESULT_RUNNING:
      break;
    }
  return NULL;
}

/* Append a note on a line of its own after what b holds.  */
static void
result_put_note (struct buf *b, const char *note)
{
  if (b->len > 0)
    buf_putc (b, '\n');
  buf_puts (b, note);
}

/* Append the output: head, the notes at the cut (when there is one), tail,
 * less one final newline.  */
static void
result_put_output (struct buf *b, const struct result_input *in, const char *h,
                   size_t hl, const char *t, size_t tl,
                   const char *encoded_note)
{
  buf_append (b, h, hl);
  if (in->omitted_bytes > 0 || encoded_note != NULL)
    {
      if (hl > 0 && h[hl - 1] != '\n')
        buf_putc (b, '\n');
      if (in->omitted_bytes > 0)
        buf_printf (b, RESULT_CAPTURE_NOTE "\n", in->total_bytes,
                    in->omitted_bytes);
      if (encoded_note != NULL)
        buf_printf (b, "%s\n", encoded_note);
    }
  buf_append (b, t, tl);
  /* The one newline that ends the output is not part of what it says; a
     lone "\n" stays, so that the text is never empty.  */
  if (b->len > 1 && b->data[b->len - 1] == '\n')
    b->data[--b->len] = '\0';
}

/* The whole text from sanitized head h and tail t.  */
static char *
result_assemble (const struct result_input *in, const char *h, size_t hl,
                 const char *t, size_t tl, const char *encoded_note,
                 size_t *len)
{
  struct buf b = BUF_INIT;
  if (in->total_bytes == 0)
    buf_puts (&b, RESULT_NO_OUTPUT);
  else
    result_put_output (&b, in, h, hl, t, tl, encoded_note);
  if (in->still_arriving)
    result_put_note (&b, RESULT_STILL_ARRIVING_NOTE);
  if (in->incomplete == RESULT_INCOMPLETE_READ_FAILED)
    result_put_note (&b, RESULT_READ_FAILED_NOTE);
  else if (in->incomplete == RESULT_INCOMPLETE_UNREAD)
    result_put_note (&b, RESULT_UNREAD_NOTE);
  char *ending = result_ending_note (in);
  if (ending != NULL)
    result_put_note (&b, ending);
  free (ending);
  if (in->publication != NULL)
    result_put_note (&b, in->publication);
  if (in->ports != NULL)
    result_put_note (&b, in->ports);
  if (in->credentials != NULL)
    result_put_note (&b, in->credentials);
  if (in->process_isolation)
    result_put_note (&b, RESULT_PROCESS_ISOLATION_NOTE);
  return buf_steal (&b, len);
}

/* Encoded bytes the text can take beyond its head and tail once a second
 * note of an output of `encoded` bytes is at the cut: the notes with the
 * most digits the omitted count can have, plus a newline after a head that
 * lacks one and one before the end notes after a tail that lacks one.  */
static size_t
result_overhead_max (const struct result_input *in, size_t encoded)
{
  char *note = xasprintf (RESULT_ENCODED_NOTE, encoded, encoded);
  size_t len;
  char *text = result_assemble (in, "", 0, "", 0, note, &len);
  size_t size = result_json_size (text, len) + 4;
  free (text);
  free (note);
  return size;
}

/* The cap on this text's encoded size.  */
static size_t
result_cap (const struct result_input *in)
{
  return in->max_encoded ? in->max_encoded : RESULT_MAX_ENCODED;
}

/* Cut the middle of the output (head h, tail t) until the text fits in
 * RESULT_MAX_ENCODED, and say so at the cut.  */
static char *
result_fit (const struct result_input *in, const char *h, size_t hl,
            const char *t, size_t tl, size_t *len)
{
  if (in->omitted_bytes == 0)
    {
      /* Nothing was cut while capturing: the whole output is h; its middle
         is cut instead.  */
      size_t mid = result_middle (h, hl);
      t = h + mid;
      tl = hl - mid;
      hl = mid;
    }
  size_t eh = result_json_size (h, hl), et = result_json_size (t, tl);
  size_t encoded = eh + et;
  size_t allowed = result_cap (in) - result_overhead_max (in, encoded);
  size_t need = encoded > allowed ? encoded - allowed : 0;
  size_t want_h = (need + 1) / 2 < eh ? (need + 1) / 2 : eh;
  size_t want_t = need - want_h;
  if (want_t > et)
    {
      want_t = et;
      want_h = need - et;
    }
  size_t removed = result_trim_end (h, &hl, want_h);
  removed += result_trim_start (&t, &tl, want_t);
  char *note = xasprintf (RESULT_ENCODED_NOTE, encoded, removed);
  char *text = result_assemble (in, h, hl, t, tl, note, len);
  free (note);
  assert (result_json_size (text, *len) <= result_cap (in));
  return text;
}

/* The output as valid UTF-8: head and tail apart when the capture cut
 * between them, joined when it did not (a character may span the join).  */
static void
result_sanitize_output (const struct result_input *in, struct buf *h,
                        struct buf *t)
{
  if (in->omitted_bytes > 0)
    {
      utf8_sanitize (h, in->head, in->head_len);
      utf8_sanitize (t, in->tail, in->tail_len);
      return;
    }
  struct buf raw = BUF_INIT;
  buf_append (&raw, in->head, in->head_len);
  buf_append (&raw, in->tail, in->tail_len);
  utf8_sanitize (h, raw.data, raw.len);
  buf_free (&raw);
}

/* s as valid UTF-8 whose encoded size is at most cap, its middle cut to
 * fit with the note saying so.  */
static char *
result_fit_text (const char *s, size_t len, size_t cap, size_t *out_len)
{
  struct buf clean = BUF_INIT;
  utf8_sanitize (&clean, s, len);
  buf_append (&clean, "", 0);
  if (result_json_size (clean.data, clean.len) <= cap || clean.len == 0)
    return buf_steal (&clean, out_len);
  /* An output of its own, with no ending note: result_fit cuts it.  */
  struct result_input in = { .head = clean.data,
                             .head_len = clean.len,
                             .total_bytes = clean.len,
                             .ending = RESULT_RUNNING,
                             .max_encoded = cap };
  char *fit = result_compose (&in, out_len);
  buf_free (&clean);
  return fit;
}

char *
result_join (const char *endings, size_t endings_len, const char *text,
             size_t text_len, size_t *len)
{
  size_t tl, el = 0;
  cleanup_free char *t
      = result_fit_text (text, text_len, RESULT_MAX_ENCODED, &tl);
  if (endings == NULL)
    {
      *len = tl;
      return steal_pointer (&t);
    }
  /* "\n\n" between them costs 4 encoded bytes.  */
  size_t quarter = RESULT_MAX_ENCODED / 4, cost_t = result_json_size (t, tl);
  size_t keep_t = cost_t < quarter ? cost_t : quarter;
  cleanup_free char *e = result_fit_text (endings, endings_len,
                                          RESULT_MAX_ENCODED - keep_t - 4, &el);
  size_t room = RESULT_MAX_ENCODED - result_json_size (e, el) - 4;
  if (cost_t > room)
    {
      free (t);
      t = result_fit_text (text, text_len, room, &tl);
    }
  struct buf b = BUF_INIT;
  buf_append (&b, e, el);
  buf_puts (&b, "\n\n");
  buf_append (&b, t, tl);
  assert (result_json_size (b.data, b.len) <= RESULT_MAX_ENCODED);
  return buf_steal (&b, len);
}

/* Compose the result text.  */
char *
result_compose (const struct result_input *in, size_t *len)
{
  struct buf h = BUF_INIT, t = BUF_INIT;
  result_sanitize_output (in, &h, &t);
  buf_append (&h, "", 0);
  buf_append (&t, "", 0);
  char *text = result_assemble (in, h.data, h.len, t.data, t.len, NULL, len);
  if (result_json_size (text, *len) > result_cap (in))
    {
      free (text);
      text = result_fit (in, h.data, h.len, t.data, t.len, len);
    }
  buf_free (&h);
  buf_free (&t);
  return text;
}
