/* Tests for tui/pager.c's view of a command's output: it reads what the
 * capture holds, on demand; with the capture's spool that is every line
 * that arrived, and without one (none could be made, or past its bound)
 * it numbers its rows as the stream's lines across the row standing for
 * what was not kept.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tui/pager.c"

/* Columns the view interprets in: wider than a test line.  */
#define TEST_COLS 100

/* Feed lines first..last of the test stream ("%049d\n", 50 bytes each).  */
static void
feed_lines (struct capture *cap, long first, long last)
{
  char line[64];
  for (long k = first; k <= last; k++)
    {
      snprintf (line, sizeof line, "%049ld\n", k);
      capture_feed (cap, line, 50);
    }
}

/* Parse all the capture holds, however many frames it takes.  */
static void
update_all (struct pager *p)
{
  while (pager_update (p, TEST_COLS))
    ;
}

/* Every row but the gap's holds the line its number says, and the last
 * row is line last.  */
static void
assert_rows_numbered (struct pager *p, long last)
{
  struct buf line = BUF_INIT;
  long total = pager_total (p);
  assert_true (total > 0);
  for (long i = 0; i < total; i++)
    {
      if (i == p->gap_row)
        continue;
      pager_line (p, i, &line);
      buf_putc (&line, '\0');
      assert_int_equal (strtol (line.data, NULL, 10), pager_number (p, i));
    }
  assert_int_equal (pager_number_end (p, total - 1), last);
  buf_free (&line);
}

/* A capture spooling into a fresh anonymous file, as the session's
 * commands do.  */
static struct capture *
spooled_capture (void)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  return capture_new (&l, fd);
}

/* Every row is the line its number says, 1 to last, with no gap.  */
static void
assert_every_line (struct pager *p, long last)
{
  assert_int_equal (p->gap_row, -1);
  assert_int_equal (pager_total (p), last);
  assert_rows_numbered (p, last);
}

/* Opened after 200 kB with the spool: every line 1..4000, no gap's row,
 * nothing said to be incomplete.  */
static void
test_spooled_opened_after (void **state)
{
  (void) state;
  struct capture *cap = spooled_capture ();
  feed_lines (cap, 1, 4000);
  struct pager *p = pager_new_capture (cap, "t");
  update_all (p);
  assert_every_line (p, 4000);
  assert_false (p->over_ceiling);
  pager_free (p);
  capture_free (cap);
}

/* Open during a flood with the spool: bursts larger than the head and
 * tail between two frames lose nothing.  */
static void
test_spooled_open_during_flood (void **state)
{
  (void) state;
  struct capture *cap = spooled_capture ();
  struct pager *p = pager_new_capture (cap, "t");
  long fed = 0;
  for (int burst = 0; burst < 40; burst++)
    {
      long n = burst % 3 == 0 ? 1000 : 20; /* 50 kB, or 1 kB */
      feed_lines (cap, fed + 1, fed + n);
      fed += n;
      update_all (p);
      assert_every_line (p, fed);
    }
  pager_free (p);
  capture_free (cap);
}

/* A spool that cannot be written (full disk, here read-only) holds
 * nothing: the view is the head, a gap's row and the tail, as without
 * one.  */
static void
test_spool_failed_is_a_gap (void **state)
{
  (void) state;
  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&l, fd);
  feed_lines (cap, 1, 4000);
  assert_true (capture_spool_failed (cap));
  struct pager *p = pager_new_capture (cap, "t");
  update_all (p);
  assert_int_equal (p->gap_row, 297);
  assert_int_equal (p->gap_lines, 3406);
  assert_rows_numbered (p, 4000);
  pager_free (p);
  capture_free (cap);
}

/* A spool that stops part way (here the file size limit, as a full disk
 * would): every line it holds is in the view, and only the lines between
 * its end and the tail are the gap's row.  */
static void
test_spool_stopped_part_way (void **state)
{
  (void) state;
  struct rlimit old, small = { .rlim_cur = 100000 };
  assert_int_equal (getrlimit (RLIMIT_FSIZE, &old), 0);
  small.rlim_max = old.rlim_max;
  void (*was) (int) = signal (SIGXFSZ, SIG_IGN);
  assert_int_equal (setrlimit (RLIMIT_FSIZE, &small), 0);
  struct capture *cap = spooled_capture ();
  feed_lines (cap, 1, 4000);
  assert_int_equal (setrlimit (RLIMIT_FSIZE, &old), 0);
  signal (SIGXFSZ, was);
  assert_true (capture_spool_failed (cap));
  struct pager *p = pager_new_capture (cap, "t");
  update_all (p);
  /* 100000 bytes spooled: lines 1..2000; the tail's first whole line is
   * 3704.  */
  assert_int_equal (p->gap_row, 2000);
  assert_int_equal (p->gap_lines, 1703);
  assert_rows_numbered (p, 4000);
  pager_free (p);
  capture_free (cap);
}

/* Without a spool, opened after the output: the head, one row for the
 * middle, the tail; the tail's partial first line is in the gap's
 * count.  */
static void
test_opened_after (void **state)
{
  (void) state;
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&l, -1);
  feed_lines (cap, 1, 4000);
  struct pager *p = pager_new_capture (cap, "t");
  assert_true (pager_unread (p));
  update_all (p);
  assert_int_equal (p->gap_row, 297);
  assert_int_equal (p->gap_lines, 3406);
  assert_int_equal (p->gap_bytes, 3406 * 50);
  assert_int_equal (pager_total (p), 297 + 1 + 297);
  assert_rows_numbered (p, 4000);
  struct buf gap = BUF_INIT;
  pager_line (p, p->gap_row, &gap);
  buf_putc (&gap, '\0');
  assert_string_equal (
      gap.data, "\xe2\x80\xa6 3406 lines (170 kB) not kept \xe2\x80\xa6");
  buf_free (&gap);
  pager_free (p);
  capture_free (cap);
}

/* Without a spool, open during a flood: each time more arrives than the
 * capture holds between two frames, the rows read since the gap fold into
 * it, so there is one gap's row and the numbering holds throughout.  */
static void
test_open_during_flood (void **state)
{
  (void) state;
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&l, -1);
  struct pager *p = pager_new_capture (cap, "t");
  long fed = 0;
  for (int burst = 0; burst < 40; burst++)
    {
      long n = burst % 3 == 0 ? 1000 : 20; /* 50 kB, or 1 kB */
      feed_lines (cap, fed + 1, fed + n);
      fed += n;
      update_all (p);
      assert_rows_numbered (p, fed);
    }
  assert_true (p->gap_row >= 0);
  long gaps = 0;
  struct buf line = BUF_INIT;
  for (long i = 0; i < pager_total (p); i++)
    {
      pager_line (p, i, &line);
      buf_putc (&line, '\0');
      gaps += strstr (line.data, "not kept") != NULL;
    }
  buf_free (&line);
  assert_int_equal (gaps, 1);
  pager_free (p);
  capture_free (cap);
}

/* A capture whose command was cleaned up is the view's: it goes on
 * reading it (the spool's middle too) and frees it with itself.  */
static void
test_detach_keeps_the_rest (void **state)
{
  (void) state;
  struct capture *cap = spooled_capture ();
  feed_lines (cap, 1, 100);
  struct pager *p = pager_new_capture (cap, "t");
  update_all (p);
  feed_lines (cap, 101, 4000);
  pager_detach (p, cap);
  update_all (p);
  assert_every_line (p, 4000);
  pager_free (p);
}

/* Feed s[0..n) and parse it all, in a view that takes plain lines
 * straight (as the session's do) or in one that gives libvterm every
 * byte.  */
static struct pager *
parsed (const char *s, size_t n, bool plain)
{
  struct capture *cap = spooled_capture ();
  capture_feed (cap, s, n);
  struct pager *p = pager_new_capture (cap, "t");
  pager_make_vt (p, TEST_COLS);
  p->plain = plain;
  update_all (p);
  pager_detach (p, cap);
  return p;
}

/* The two views of s have the same rows.  */
static void
assert_alike (const char *s, size_t n)
{
  struct pager *fast = parsed (s, n, true), *slow = parsed (s, n, false);
  struct buf a = BUF_INIT, b = BUF_INIT;
  assert_int_equal (pager_total (fast), pager_total (slow));
  for (long i = 0; i < pager_total (fast); i++)
    {
      pager_line (fast, i, &a);
      pager_line (slow, i, &b);
      buf_putc (&a, '\0');
      buf_putc (&b, '\0');
      assert_string_equal (a.data, b.data);
    }
  buf_free (&a);
  buf_free (&b);
  pager_free (fast);
  pager_free (slow);
}

/* Plain lines (printable ASCII no wider than the view) are taken without
 * libvterm, and what follows them is interpreted as if it had had every
 * byte: a cursor moving up over rows still on its screen, a carriage
 * return, a line the width of the screen or wider, colour, wide and
 * combining characters, a tab, a line not ended.  */
static void
test_plain_lines_read_as_interpreted (void **state)
{
  (void) state;
  struct buf s = BUF_INIT;
  for (int k = 0; k < 200; k++)
    buf_printf (&s, "line %d   \n", k);
  struct pager *p = parsed (s.data, s.len, true);
  assert_true (p->plain);
  assert_int_equal (p->plain_rows, PAGER_VT_ROWS - 1);
  pager_free (p);
  assert_alike (s.data, s.len);
  static const char *const tails[] = {
    "\x1b[48Atop\n",
    "\x1b[3A\x1b[2Kx\n",
    "\x1b[A\x1b[9Cz\n",
    "half\rover\n",
    "part\x1b[1;31mred\x1b[m\n",
    "\xe7\xba\xa2\xe8\x89\xb2 wide\ne\xcc\x81\n",
    "a\tb\n",
    "not ended",
    "\x1b[2J\x1b[Hafter\n",
  };
  for (size_t t = 0; t < sizeof tails / sizeof *tails; t++)
    {
      struct buf u = BUF_INIT;
      buf_append (&u, s.data, s.len);
      buf_puts (&u, tails[t]);
      p = parsed (u.data, u.len, true);
      assert_true (p->plain == (t == 7));
      pager_free (p);
      assert_alike (u.data, u.len);
      buf_free (&u);
    }
  /* Lines the width of the screen, and one wider (it wraps).  */
  struct buf w = BUF_INIT;
  for (int width = TEST_COLS - 1; width <= TEST_COLS + 1; width++)
    {
      for (int k = 0; k < width; k++)
        buf_putc (&w, (char) ('a' + k % 26));
      buf_puts (&w, "\n");
    }
  buf_puts (&w, "\x1b[2A<\n");
  assert_alike (w.data, w.len);
  buf_free (&w);
  buf_free (&s);
}

/* Random streams of plain and other bytes, across the chunks a frame
 * reads: the rows are those libvterm makes of every byte.  */
static void
test_plain_and_other_bytes_at_random (void **state)
{
  (void) state;
  static const char *const pieces[] = {
    "a", "word ", "  ", "\n", "\n", "\n", "\r", "\x1b[A", "\x1b[3A", "\x1b[K",
    "\x1b[1m", "\xc3\xa9", "\t", "\x1b[", "\b",
  };
  const size_t n_pieces = sizeof pieces / sizeof *pieces;
  unsigned seed = 1;
  for (int round = 0; round < 40; round++)
    {
      struct buf s = BUF_INIT;
      /* A plain start of a length that puts the first other byte
       * anywhere in or across a chunk.  */
      int plain = rand_r (&seed) % 600;
      for (int k = 0; k < plain; k++)
        buf_printf (&s, "%0*d\n", rand_r (&seed) % (TEST_COLS + 3), k);
      while (s.len < 3 * PAGER_PARSE_CHUNK)
        buf_puts (&s, pieces[(size_t) rand_r (&seed) % n_pieces]);
      assert_alike (s.data, s.len);
      buf_free (&s);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_spooled_opened_after),
    cmocka_unit_test (test_spooled_open_during_flood),
    cmocka_unit_test (test_spool_failed_is_a_gap),
    cmocka_unit_test (test_spool_stopped_part_way),
    cmocka_unit_test (test_opened_after),
    cmocka_unit_test (test_open_during_flood),
    cmocka_unit_test (test_detach_keeps_the_rest),
    cmocka_unit_test (test_plain_lines_read_as_interpreted),
    cmocka_unit_test (test_plain_and_other_bytes_at_random),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
