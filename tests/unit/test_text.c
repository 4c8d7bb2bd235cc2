/* Unit tests for tui/text.c and the ending line of tui/transcript.c.  */
#include <config.h>

#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tui/text.h"
#include "tui/transcript.h"

/* Escape sequences go, tabs become spaces, controls become spaces, bad
 * UTF-8 becomes U+FFFD.  */
static void
test_clean (void **state)
{
  const char *raw = "\x1b[31mred\x1b[0m\tx\x07y\n\xff";
  char *s = text_clean (raw, strlen (raw), 1);
  assert_string_equal (s, "red    x y\n\xef\xbf\xbd");
  free (s);
  raw = "a\nb\x1b]0;title\x07";
  s = text_clean (raw, strlen (raw), 0);
  assert_string_equal (s, "a b");
  free (s);
}

/* Columns: wide characters take two.  */
static void
test_width_and_fit (void **state)
{
  const char *s = "ab\xe6\xbc\xa2\xe5\xad\x97"; /* ab漢字 */
  assert_int_equal (text_width (s, strlen (s)), 6);
  int used;
  assert_int_equal (text_fit (s, strlen (s), 3, &used), 2);
  assert_int_equal (used, 2);
  assert_int_equal (text_fit (s, strlen (s), 4, &used), 5);
  assert_int_equal (used, 4);
}

/* Sizes, counts and durations as the rows say them.  */
static void
test_numbers (void **state)
{
  assert_string_equal (text_bytes (292, 0), "292 B");
  assert_string_equal (text_bytes (3100, 0), "3.1 kB");
  assert_string_equal (text_bytes (48000, 0), "48 kB");
  assert_string_equal (text_bytes (12400000, 1), "12 MB");
  assert_string_equal (text_bytes (1200000000, 1), "1.2 GB");
  char out[32];
  text_short_count (out, sizeof out, 912);
  assert_string_equal (out, "912");
  text_short_count (out, sizeof out, 1234);
  assert_string_equal (out, "1.2k");
  text_short_count (out, sizeof out, 3400000);
  assert_string_equal (out, "3.4M");
  text_duration (out, sizeof out, 43999);
  assert_string_equal (out, "43s");
  text_duration (out, sizeof out, 252000);
  assert_string_equal (out, "4m 12s");
  text_duration (out, sizeof out, 3780000);
  assert_string_equal (out, "1h 03m");
}

/* An ending line in a narrow window gives up the label first.  */
static void
test_fit_ending (void **state)
{
  const char *line = "\xe2\x9c\x97 starting the dev server ended on its own "
                     "\xc2\xb7 exit status 1 \xc2\xb7 96 lines";
  char *fit = transcript_fit_ending (line, 200);
  assert_string_equal (fit, line);
  free (fit);
  fit = transcript_fit_ending (line, 55);
  assert_string_equal (fit,
                       "\xe2\x9c\x97 starting\xe2\x80\xa6 ended on its own "
                       "\xc2\xb7 exit status 1 \xc2\xb7 96 lines");
  assert_int_equal (text_width (fit, strlen (fit)), 55);
  free (fit);
}

int
main (void)
{
  setlocale (LC_ALL, "C.UTF-8");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_clean),
    cmocka_unit_test (test_width_and_fit),
    cmocka_unit_test (test_numbers),
    cmocka_unit_test (test_fit_ending),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
