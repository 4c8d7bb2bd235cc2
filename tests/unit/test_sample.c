/* Unit tests for tui/sample.c: a frame parses only the last lines of a
 * plain-text flood, and the screen it ends up with is exactly the one a
 * parse of every byte gives.  The file is included whole, so that the
 * skip itself can be asked about.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tui/sample.c"

#define TEST_COLS 40

/* A libvterm screen fed every byte, set up as the sample sets up its own. */
static VTerm *
test_reference_new (void)
{
  VTerm *vt = vterm_new (SAMPLE_VT_ROWS, TEST_COLS);
  vterm_set_utf8 (vt, 1);
  VTermScreen *screen = vterm_obtain_screen (vt);
  vterm_screen_set_damage_merge (screen, VTERM_DAMAGE_SCROLL);
  vterm_screen_reset (screen, 1);
  vterm_input_write (vt, "\x1b[20h", 5);
  return vt;
}

/* Whether two cells show the same: characters, width, pen.  */
static bool
test_cells_equal (const VTermScreenCell *a, const VTermScreenCell *b)
{
  if (a->width != b->width || a->attrs.bold != b->attrs.bold
      || a->attrs.underline != b->attrs.underline
      || a->attrs.reverse != b->attrs.reverse)
    return false;
  for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL; i++)
    {
      if (a->chars[i] != b->chars[i])
        return false;
      if (a->chars[i] == 0)
        break;
    }
  return sample_colour (&a->fg, true) == sample_colour (&b->fg, true)
         && sample_colour (&a->bg, false) == sample_colour (&b->bg, false);
}

/* The sample's screen and the reference show the same cells, and their
 * cursors are on the same row.  */
static void
test_assert_same (struct sample *s, VTerm *ref)
{
  VTermScreen *rs = vterm_obtain_screen (ref);
  for (int row = 0; row < SAMPLE_VT_ROWS; row++)
    for (int col = 0; col < TEST_COLS; col++)
      {
        VTermPos pos = { .row = row, .col = col };
        VTermScreenCell a, b;
        vterm_screen_get_cell (s->screen, pos, &a);
        vterm_screen_get_cell (rs, pos, &b);
        if (!test_cells_equal (&a, &b))
          fail_msg ("row %d col %d: sample U+%04X, every byte U+%04X", row, col,
                    a.chars[0], b.chars[0]);
      }
  VTermPos ca, cb;
  vterm_state_get_cursorpos (vterm_obtain_state (s->vt), &ca);
  vterm_state_get_cursorpos (vterm_obtain_state (ref), &cb);
  assert_int_equal (ca.row, cb.row);
  assert_int_equal (ca.col, cb.col);
}

/* Feed text to both, the sample flushed once.  */
static void
test_feed_both (struct sample *s, VTerm *ref, const char *text, size_t len)
{
  sample_feed (s, text, len);
  vterm_input_write (ref, text, len);
  sample_flush (s);
  test_assert_same (s, ref);
}

/* A `yes` flood: every frame after the first parses a few lines only, and
 * shows what parsing all of it shows.  */
static void
test_flood_skips (void **state)
{
  struct sample *s = sample_new (TEST_COLS);
  VTerm *ref = test_reference_new ();
  char flood[16 * 1024];
  for (size_t i = 0; i < sizeof flood; i += 2)
    memcpy (flood + i, "y\n", 2);
  test_feed_both (s, ref, flood, sizeof flood);
  for (int frame = 0; frame < 5; frame++)
    {
      /* What this frame would parse: the last seven newlines of it.  */
      assert_int_equal (sample_skip (s, flood, sizeof flood, false),
                        sizeof flood - 2 * SAMPLE_VT_ROWS - 1);
      test_feed_both (s, ref, flood, sizeof flood);
    }
  vterm_free (ref);
  sample_free (s);
}

/* Lines of every length (wrapped ones, empty ones), carriage returns, tabs
 * and a partial last line, flushed at odd places: always the screen of
 * every byte.  */
static void
test_plain_text_same (void **state)
{
  struct sample *s = sample_new (TEST_COLS);
  VTerm *ref = test_reference_new ();
  unsigned seed = 7;
  char text[4096];
  for (int frame = 0; frame < 200; frame++)
    {
      size_t len = 0, want = 1 + (seed = seed * 1103515245 + 12345) % 4000;
      while (len < want)
        {
          seed = seed * 1103515245 + 12345;
          unsigned r = (seed >> 16) % 100;
          text[len++] = r < 8    ? '\n'
                        : r < 10 ? '\r'
                        : r < 11 ? '\t'
                                 : 'a' + r % 26;
        }
      test_feed_both (s, ref, text, len);
    }
  vterm_free (ref);
  sample_free (s);
}

/* A colour set early in the waiting bytes, or a cursor moved up, is not
 * skipped: the pen and the rows below the cursor are what they would be. */
static void
test_controls_not_skipped (void **state)
{
  struct sample *s = sample_new (TEST_COLS);
  VTerm *ref = test_reference_new ();
  const char *coloured = "\x1b[1;31mred\n1\n2\n3\n4\n5\n6\n7\n8\nstill red";
  assert_int_equal (sample_skip (s, coloured, strlen (coloured), true), 0);
  test_feed_both (s, ref, coloured, strlen (coloured));
  const char *up = "\x1b[0m\n\n\n\n\n\n\nbelow\x1b[3Aabove";
  test_feed_both (s, ref, up, strlen (up));
  const char *lines = "a\nb\nc\nd\ne\nf\ng\nh\ni";
  assert_int_equal (sample_skip (s, lines, strlen (lines), false), 0);
  test_feed_both (s, ref, lines, strlen (lines));
  vterm_free (ref);
  sample_free (s);
}

/* More than the ring holds between two frames: the oldest bytes go, and
 * the screen starts again at a line, showing the last lines.  */
static void
test_ring_keeps_the_latest (void **state)
{
  struct sample *s = sample_new (TEST_COLS);
  char line[32];
  for (int i = 0; i < 20000; i++)
    {
      int n = snprintf (line, sizeof line, "line %d\n", i);
      sample_feed (s, line, (size_t) n);
    }
  assert_true (s->cut);
  assert_int_equal (s->ring_len, SAMPLE_PENDING_MAX);
  sample_flush (s);
  VTermScreenCell cell;
  char row[16] = { 0 };
  for (int col = 0; col < 10; col++)
    {
      VTermPos pos = { .row = SAMPLE_VT_ROWS - 2, .col = col };
      vterm_screen_get_cell (s->screen, pos, &cell);
      row[col] = cell.chars[0] != 0 ? (char) cell.chars[0] : ' ';
    }
  assert_string_equal (row, "line 19999");
  sample_free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_flood_skips),
    cmocka_unit_test (test_plain_text_same),
    cmocka_unit_test (test_controls_not_skipped),
    cmocka_unit_test (test_ring_keeps_the_latest),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
