/* Keys: termkey over bytes read from the loop, bracketed paste taken out
 * first.  */
#include <config.h>

#include "tui/keys.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/xalloc.h"

static const char keys_paste_start[] = "\x1b[200~";
static const char keys_paste_end[] = "\x1b[201~";
#define KEYS_MARK_LEN 6

/* Where the bytes given to termkey stand in a control sequence
 * (keys_filter).  */
enum keys_csi
{
  KEYS_CSI_NONE,  /* not in one */
  KEYS_CSI_ESC,   /* after ESC */
  KEYS_CSI_PARAM, /* after ESC [ or 0x9b, before any intermediate */
  KEYS_CSI_INTER  /* after an intermediate byte, which is dropped */
};

/* The final byte a sequence whose intermediates were dropped ends with:
 * one libtermkey knows no key for, so the sequence comes out as an
 * unknown one, which keys_drain drops.  */
#define KEYS_CSI_NEUTRAL 'z'

/* The most digits a parameter of a sequence has before the sequence is
 * ended as KEYS_CSI_NEUTRAL too: libtermkey reads a number past what a
 * long holds as a negative one and then crashes (CSI 465444...4 u); no
 * key a terminal sends needs more than a Unicode code point's seven.  */
#define KEYS_CSI_MAX_DIGITS 7

struct keys
{
  struct loop *loop;
  int fd;
  TermKey *tk;
  struct keys_handler handler;
  struct buf held;  /* bytes that may be the start of a marker */
  struct buf paste; /* the paste so far */
  bool in_paste;
  enum keys_csi csi;
  int utf8_left;  /* continuation bytes of a character still to come */
  int csi_digits; /* digits of the sequence's parameter so far */
  uint64_t force_timer;
  uint64_t held_timer; /* bytes held outside a paste go to termkey */
};

/* Hand over every whole key termkey has.  */
static void keys_drain (struct keys *k);

/* The wait for the rest of a sequence is over: a lone Esc is Esc.  */
static void
keys_on_force (struct loop *loop, void *data)
{
  struct keys *k = data;
  TermKeyKey key;
  k->force_timer = 0;
  if (termkey_getkey_force (k->tk, &key) == TERMKEY_RES_KEY)
    k->handler.key (k->handler.data, k->tk, &key);
  keys_drain (k);
}

static void
keys_drain (struct keys *k)
{
  TermKeyKey key;
  TermKeyResult r;
  loop_cancel_timer (k->loop, k->force_timer);
  k->force_timer = 0;
  while ((r = termkey_getkey (k->tk, &key)) == TERMKEY_RES_KEY)
    if (key.type != TERMKEY_TYPE_UNKNOWN_CSI)
      k->handler.key (k->handler.data, k->tk, &key);
  if (r == TERMKEY_RES_AGAIN)
    k->force_timer = loop_add_timer (
        k->loop, (uint64_t) termkey_get_waittime (k->tk), keys_on_force, k);
}

/* Copy p[0..n) to out (n bytes of room), leaving out what libtermkey
 * cannot take.  libtermkey 0.22 reads past its key table (and crashes)
 * on a control sequence with an intermediate byte (0x20-0x2f) before the
 * final byte of a cursor or function key, such as ESC [ , D, which any
 * terminal or paste can send.  Its reading of a sequence is followed
 * here: one starts at a key's first byte with ESC [ or ESC 0x9b (after
 * any number of ESCs) or with the 8-bit CSI 0x9b (a byte that is text
 * only inside a UTF-8 character), runs over every byte until a final one
 * (0x40-0x7f),
 * and may hold intermediates anywhere.  The intermediates are dropped and
 * such a sequence ends with KEYS_CSI_NEUTRAL instead of its own final, so
 * that no key is made up from it, as does one with a parameter longer
 * than KEYS_CSI_MAX_DIGITS; the state is kept across reads, so a
 * sequence cut between two reads is read the same.  Returns the bytes
 * copied.  */
static size_t
keys_filter (struct keys *k, const char *p, size_t n, char *out)
{
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) p[i];
      if (k->csi == KEYS_CSI_PARAM || k->csi == KEYS_CSI_INTER)
        {
          if (c >= 0x20 && c <= 0x2f)
            {
              k->csi = KEYS_CSI_INTER;
              continue;
            }
          /* An ESC or a CSI inside one libtermkey reads either as part of
           * it or as the start of another, depending on what came before;
           * dropped, both readings are the same.  */
          if (c == 0x1b || c == 0x9b)
            continue;
          if (c >= '0' && c <= '9' && ++k->csi_digits > KEYS_CSI_MAX_DIGITS)
            k->csi = KEYS_CSI_INTER;
          else if (c == ';' || c == ':')
            k->csi_digits = 0;
          if (c >= 0x40 && c <= 0x7f)
            {
              if (k->csi == KEYS_CSI_INTER)
                c = KEYS_CSI_NEUTRAL;
              k->csi = KEYS_CSI_NONE;
            }
          out[o++] = (char) c;
          continue;
        }
      k->csi_digits = 0;
      if (k->csi == KEYS_CSI_ESC)
        k->csi = c == '[' || c == 0x9b ? KEYS_CSI_PARAM
                 : c == 0x1b           ? KEYS_CSI_ESC
                                       : KEYS_CSI_NONE;
      else if (k->utf8_left > 0 && (c & 0xc0) == 0x80)
        k->utf8_left--;
      else
        {
          /* A key starts here.  */
          k->utf8_left = c >= 0xf0 && c <= 0xf7   ? 3
                         : c >= 0xe0 && c <= 0xef ? 2
                         : c >= 0xc0 && c <= 0xdf ? 1
                                                  : 0;
          if (c == 0x1b)
            k->csi = KEYS_CSI_ESC;
          else if (c == 0x9b)
            k->csi = KEYS_CSI_PARAM;
        }
      out[o++] = (char) c;
    }
  return o;
}

/* Give termkey bytes that are keys.  */
static void
keys_push (struct keys *k, const char *raw, size_t len)
{
  char filtered[KEYS_READ_MAX + KEYS_MARK_LEN];
  const char *p = filtered;
  size_t n = keys_filter (k, raw, len, filtered);
  while (n > 0)
    {
      size_t took = termkey_push_bytes (k->tk, p, n);
      keys_drain (k);
      /* (size_t) -1 is libtermkey's "its buffer is full" (ENOMEM): what
       * does not fit is dropped, as when it takes nothing.  */
      if (took == 0 || took > n)
        break;
      p += took;
      n -= took;
    }
}

/* How many bytes at the end of p[0..n) could start marker: a read may
 * end anywhere in one, its first byte (ESC) too.  */
static size_t
keys_partial_mark (const char *p, size_t n, const char *mark)
{
  for (size_t k = KEYS_MARK_LEN - 1; k >= 1; k--)
    if (n >= k && memcmp (p + n - k, mark, k) == 0)
      return k;
  return 0;
}

/* Find marker in p[0..n).  */
static const char *
keys_find (const char *p, size_t n, const char *mark)
{
  return memmem (p, n, mark, KEYS_MARK_LEN);
}

/* Nothing followed the bytes held outside a paste: they are keys.  */
static void
keys_on_held (struct loop *loop, void *data)
{
  struct keys *k = data;
  size_t len;
  k->held_timer = 0;
  char *held = buf_steal (&k->held, &len);
  keys_push (k, held, len);
  free (held);
  keys_on_force (loop, k);
}

/* Take bytes from the terminal: keys to termkey, a paste to the paste.  */
static void
keys_take (struct keys *k, const char *p, size_t n)
{
  while (n > 0)
    {
      const char *mark
          = keys_find (p, n, k->in_paste ? keys_paste_end : keys_paste_start);
      size_t upto = mark != NULL ? (size_t) (mark - p) : n;
      size_t hold
          = mark != NULL
                ? 0
                : keys_partial_mark (
                    p, n, k->in_paste ? keys_paste_end : keys_paste_start);
      upto -= hold;
      if (k->in_paste)
        {
          size_t room = KEYS_PASTE_MAX - k->paste.len;
          buf_append (&k->paste, p, upto < room ? upto : room);
        }
      else
        keys_push (k, p, upto);
      if (mark == NULL)
        {
          buf_append (&k->held, p + upto, hold);
          /* Outside a paste they may be a key as well (a lone Esc, an
           * Alt+[): if nothing follows within termkey's own wait, they
           * are given to termkey after all.  */
          if (hold > 0 && !k->in_paste)
            k->held_timer = loop_add_timer (
                k->loop, (uint64_t) termkey_get_waittime (k->tk), keys_on_held,
                k);
          return;
        }
      if (k->in_paste)
        {
          size_t len;
          char *text = buf_steal (&k->paste, &len);
          k->handler.paste (k->handler.data, text, len);
          free (text);
        }
      k->in_paste = !k->in_paste;
      p = mark + KEYS_MARK_LEN;
      n -= upto + KEYS_MARK_LEN;
    }
}

/* The terminal is readable.  */
static void
keys_on_readable (struct loop *loop, int fd, short revents, void *data)
{
  struct keys *k = data;
  char chunk[KEYS_READ_MAX + KEYS_MARK_LEN];
  loop_cancel_timer (loop, k->held_timer);
  k->held_timer = 0;
  size_t held = k->held.len;
  memcpy (chunk, k->held.data != NULL ? k->held.data : "", held);
  k->held.len = 0;
  ssize_t n = read (fd, chunk + held, KEYS_READ_MAX);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    {
      buf_append (&k->held, chunk, held);
      return;
    }
  if (n <= 0)
    {
      loop_remove_fd (loop, fd);
      k->handler.closed (k->handler.data);
      return;
    }
  keys_take (k, chunk, held + (size_t) n);
  if (k->handler.read_done != NULL)
    k->handler.read_done (k->handler.data);
}

struct keys *
keys_new (struct loop *loop, int fd, const struct keys_handler *handler,
          struct cr_error **err)
{
  struct keys *k = xcalloc (1, sizeof *k);
  k->loop = loop;
  k->fd = fd;
  k->handler = *handler;
  k->tk = termkey_new_abstract (getenv ("TERM"), TERMKEY_FLAG_NOTERMIOS
                                                     | TERMKEY_FLAG_UTF8
                                                     | TERMKEY_FLAG_CTRLC);
  if (k->tk == NULL)
    {
      free (k);
      cr_error_set (err, errno, "starting libtermkey");
      return NULL;
    }
  termkey_set_canonflags (k->tk, TERMKEY_CANON_DELBS);
  if (loop_add_fd (loop, fd, POLLIN, keys_on_readable, k, err) < 0)
    {
      termkey_destroy (k->tk);
      free (k);
      return NULL;
    }
  return k;
}

void
keys_pause (struct keys *k, int paused)
{
  loop_set_events (k->loop, k->fd, paused ? 0 : POLLIN);
}

void
keys_free (struct keys *k)
{
  if (k == NULL)
    return;
  loop_cancel_timer (k->loop, k->force_timer);
  loop_cancel_timer (k->loop, k->held_timer);
  loop_remove_fd (k->loop, k->fd);
  termkey_destroy (k->tk);
  buf_free (&k->held);
  buf_free (&k->paste);
  free (k);
}
