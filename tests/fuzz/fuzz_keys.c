/* libFuzzer target for the terminal input path (tui/keys.c into
 * tui/prompt.c): the input is what a terminal could send, read by the
 * session in chunks whose sizes the input's first bytes choose.  Whatever
 * arrives: every bracketed paste is handed over whole, the same bytes a
 * reading of the whole input at once finds between ESC[200~ and ESC[201~
 * (however the reads cut a marker), at most KEYS_PASTE_MAX of each; no
 * key libtermkey decodes crashes it (crucible never asks libtermkey to
 * name a key, so its naming is not exercised); and the line editor,
 * driven by the keys
 * and the pastes, keeps its cursor inside its text and its text within
 * its bound.  tests/fuzz/replay.c runs the same function over
 * tests/fuzz/corpus-keys without libFuzzer.  */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop.h"
#include "lib/buf.h"
#include "tui/keys.h"
#include "tui/prompt.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define MARK_LEN 6

/* What one input made: the pastes, joined with a separator the check
 * knows, and the editor.  */
struct run
{
  struct buf pastes;
  size_t n_pastes;
  struct prompt prompt;
  bool closed;
};

/* The editor's cursor is inside its text, which is within its bound.  */
static void
check_prompt (const struct prompt *p)
{
  if (p->cursor > p->text.len || p->text.len > PROMPT_MAX_BYTES)
    abort ();
}

/* A key: a character goes into the box, the editing keys edit.  */
static void
on_key (void *data, TermKey *tk, const TermKeyKey *key)
{
  struct run *r = data;
  (void) tk;
  if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    prompt_insert (&r->prompt, key->utf8, strlen (key->utf8));
  else if (key->type == TERMKEY_TYPE_KEYSYM)
    {
      static const struct
      {
        TermKeySym sym;
        enum prompt_edit edit;
      } map[] = {
        { TERMKEY_SYM_LEFT, PROMPT_LEFT },
        { TERMKEY_SYM_RIGHT, PROMPT_RIGHT },
        { TERMKEY_SYM_HOME, PROMPT_HOME },
        { TERMKEY_SYM_END, PROMPT_END },
        { TERMKEY_SYM_BACKSPACE, PROMPT_BACKSPACE },
        { TERMKEY_SYM_DEL, PROMPT_BACKSPACE },
        { TERMKEY_SYM_DELETE, PROMPT_DELETE },
        { TERMKEY_SYM_UP, PROMPT_HISTORY_UP },
        { TERMKEY_SYM_DOWN, PROMPT_HISTORY_DOWN },
      };
      for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (map[i].sym == key->code.sym)
          prompt_edit (&r->prompt,
                       key->modifiers & TERMKEY_KEYMOD_CTRL
                           ? (map[i].edit == PROMPT_LEFT ? PROMPT_WORD_LEFT
                                                         : PROMPT_WORD_RIGHT)
                           : map[i].edit);
    }
  else if (key->type == TERMKEY_TYPE_UNICODE
           && key->modifiers == TERMKEY_KEYMOD_CTRL)
    switch (key->code.codepoint)
      {
      case 'k':
        prompt_edit (&r->prompt, PROMPT_KILL_END);
        break;
      case 'u':
        prompt_edit (&r->prompt, PROMPT_KILL_HOME);
        break;
      case 'w':
        prompt_edit (&r->prompt, PROMPT_KILL_WORD);
        break;
      case 'a':
        prompt_edit (&r->prompt, PROMPT_HOME);
        break;
      default:
        break;
      }
  check_prompt (&r->prompt);
}

/* A paste: kept for the check, and put in the box.  */
static void
on_paste (void *data, const char *text, size_t len)
{
  struct run *r = data;
  if (len > KEYS_PASTE_MAX)
    abort ();
  buf_append (&r->pastes, text, len);
  buf_putc (&r->pastes, '\0');
  r->n_pastes++;
  prompt_insert (&r->prompt, text, len);
  check_prompt (&r->prompt);
}

static void
on_closed (void *data)
{
  struct run *r = data;
  r->closed = true;
}

/* The pastes in the whole of in, read at once, as on_paste joins them.  */
static size_t
reference_pastes (const char *in, size_t n, struct buf *out)
{
  size_t count = 0;
  const char *p = in, *end = in + n;
  for (;;)
    {
      const char *start = memmem (p, (size_t) (end - p), "\x1b[200~", MARK_LEN);
      if (start == NULL)
        return count;
      start += MARK_LEN;
      const char *stop
          = memmem (start, (size_t) (end - start), "\x1b[201~", MARK_LEN);
      if (stop == NULL)
        return count;
      size_t len = (size_t) (stop - start);
      buf_append (out, start, len < KEYS_PASTE_MAX ? len : KEYS_PASTE_MAX);
      buf_putc (out, '\0');
      count++;
      p = stop + MARK_LEN;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct loop *loop;
  if (loop == NULL && (loop = loop_new (NULL)) == NULL)
    abort ();
  if (size < 2)
    return 0;
  /* The first two bytes choose the read sizes: a cycle of 1..16.  */
  unsigned seed = data[0] | (unsigned) data[1] << 8;
  const char *in = (const char *) data + 2;
  size_t n = size - 2;

  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    abort ();
  struct run r = { .pastes = BUF_INIT };
  prompt_init (&r.prompt, NULL);
  struct keys_handler h
      = { .key = on_key, .paste = on_paste, .closed = on_closed, .data = &r };
  setenv ("TERM", "xterm-256color", 0);
  struct keys *k = keys_new (loop, sv[0], &h, NULL);
  if (k == NULL)
    abort ();
  for (size_t off = 0, i = 0; off < n; i++)
    {
      size_t chunk = 1 + ((seed >> (i % 13)) + i) % 16;
      if (chunk > n - off)
        chunk = n - off;
      if (write (sv[1], in + off, chunk) != (ssize_t) chunk)
        abort ();
      off += chunk;
      /* Each write is one read: the loop drains it before the next.  */
      if (loop_run_once (loop, 0, NULL) < 0)
        abort ();
    }
  close (sv[1]);
  while (!r.closed)
    if (loop_run_once (loop, 0, NULL) < 0)
      abort ();

  struct buf want = BUF_INIT;
  size_t count = reference_pastes (in, n, &want);
  if (count != r.n_pastes || want.len != r.pastes.len
      || (want.len > 0 && memcmp (want.data, r.pastes.data, want.len) != 0))
    abort ();
  buf_free (&want);
  keys_free (k);
  close (sv[0]);
  prompt_clear_all (&r.prompt);
  buf_free (&r.pastes);
  return 0;
}
