/* Keys from the terminal: libtermkey decodes them (created with
 * TERMKEY_FLAG_NOTERMIOS so that curses alone owns termios), and bracketed
 * paste, which termkey does not decode, is taken out first: what arrives
 * between ESC[200~ and ESC[201~ is handed over as one paste.  */
#ifndef CRUCIBLE_TUI_KEYS_H
#define CRUCIBLE_TUI_KEYS_H

#include <stddef.h>

#include <termkey.h>

#include "core/loop.h"
#include "lib/error.h"

/* Bytes read from the terminal per loop turn.  */
#define KEYS_READ_MAX 4096

/* The longest paste kept; the rest is dropped.  */
#define KEYS_PASTE_MAX ((size_t) 1 << 20)

struct keys;

struct keys_handler
{
  void (*key) (void *data, TermKey *tk, const TermKeyKey *key);
  void (*paste) (void *data, const char *text, size_t len);
  /* The terminal went away (end of file or an error reading it).  */
  void (*closed) (void *data);
  /* Every key and paste of one read has been handed over, before the
   * loop turns to anything else (optional): what they changed can be
   * drawn now.  */
  void (*read_done) (void *data);
  void *data;
};

/* Read keys from fd (the terminal) through loop.  */
struct keys *keys_new (struct loop *loop, int fd,
                       const struct keys_handler *handler,
                       struct cr_error **err);
void keys_free (struct keys *k);

/* Stop and start reading (around a suspend).  */
void keys_pause (struct keys *k, int paused);

#endif
