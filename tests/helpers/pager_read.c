/* pager_read: how long the full view (tui/pager.c) takes to read a
 * command's output, against libvterm alone interpreting the same bytes,
 * for bench/ui.
 *
 *   pager_read FILE COLS
 *
 * FILE's bytes are fed to a capture with a spool, as the session's
 * commands have; the view reads them to their end, a frame's share at a
 * time, in COLS columns.  The baseline is a terminal of the view's rows
 * and columns in newline mode given every byte, its pushed rows counted
 * and nothing more, in the view's chunks.  Prints "view_us=N vterm_us=N
 * lines=N".  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vterm.h>

#include "core/capture.h"
#include "lib/buf.h"
#include "lib/error.h"
#include "tui/pager.h"

static uint64_t
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int
count_pushline (int cols, const VTermScreenCell *cells, void *user)
{
  (void) cols;
  (void) cells;
  ++*(long *) user;
  return 1;
}

int
main (int argc, char **argv)
{
  char *end = NULL;
  long want = argc == 3 ? strtol (argv[2], &end, 10) : 0;
  if (argc != 3 || end == argv[2] || *end != '\0' || want < 2 || want > 1000)
    {
      fprintf (stderr, "usage: pager_read FILE COLS (2 to 1000)\n");
      return 2;
    }
  int cols = (int) want;
  struct cr_error *err = NULL;
  int spool = capture_spool_open ("/tmp", &err);
  if (spool < 0)
    {
      fprintf (stderr, "pager_read: no spool: %s\n", err->msg);
      cr_error_free (err);
      return 1;
    }
  FILE *f = fopen (argv[1], "rb");
  if (f == NULL)
    {
      fprintf (stderr, "pager_read: %s: %s\n", argv[1], strerror (errno));
      close (spool);
      return 1;
    }
  struct capture_limits limits = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&limits, spool);
  struct buf all = BUF_INIT;
  size_t n;
  char chunk[65536];
  while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
    {
      capture_feed (cap, chunk, n);
      buf_append (&all, chunk, n);
    }
  if (ferror (f))
    {
      fprintf (stderr, "pager_read: reading %s failed\n", argv[1]);
      return 1;
    }
  fclose (f);

  uint64_t t0 = now_us ();
  struct pager *p = pager_new_capture (cap, "pager_read");
  while (pager_update (p, cols))
    ;
  uint64_t view_us = now_us () - t0;
  pager_free (p);

  static const VTermScreenCallbacks callbacks
      = { .sb_pushline = count_pushline };
  long lines = 0;
  t0 = now_us ();
  VTerm *vt = vterm_new (PAGER_VT_ROWS, cols);
  vterm_set_utf8 (vt, 1);
  VTermScreen *screen = vterm_obtain_screen (vt);
  vterm_screen_set_callbacks (screen, &callbacks, &lines);
  vterm_screen_reset (screen, 1);
  vterm_input_write (vt, "\x1b[20h", 5);
  /* In the view's chunks: libvterm 0.1.4 given megabytes at once
   * overflows its stack.  */
  for (size_t at = 0; at < all.len; at += PAGER_PARSE_CHUNK)
    vterm_input_write (vt, all.data + at,
                       all.len - at < PAGER_PARSE_CHUNK ? all.len - at
                                                        : PAGER_PARSE_CHUNK);
  uint64_t vterm_us = now_us () - t0;
  vterm_free (vt);

  printf ("view_us=%llu vterm_us=%llu lines=%ld\n",
          (unsigned long long) view_us, (unsigned long long) vterm_us, lines);
  capture_free (cap);
  buf_free (&all);
  return 0;
}
