/* Tests for core/result.c: the exact text the model gets.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture.h"
#include "core/result.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

#define CAPTURE_NOTE_41200                                                     \
  "[process output was 41200 bytes; 11456 bytes omitted from the middle "      \
  "during capture]"
#define STILL_NOTE                                                             \
  "[output was still arriving: something the command left running holds it "   \
  "open]"

/* An input holding all of out as the head, ending with exit status 0.  */
static struct result_input
whole (const char *out, size_t len)
{
  struct result_input in = {
    .head = out,
    .head_len = len,
    .tail = "",
    .total_bytes = len,
    .ending = RESULT_EXITED,
  };
  return in;
}

/* Compose in and check it is NUL-terminated, fits and has the length said.  */
static char *
compose (const struct result_input *in, size_t *len)
{
  size_t n;
  char *text = result_compose (in, &n);
  assert_non_null (text);
  assert_int_equal (text[n], '\0');
  assert_true (result_json_size (text, n) <= RESULT_MAX_ENCODED);
  if (len != NULL)
    *len = n;
  return text;
}

/* Compose in and compare the whole text with want.  */
static void
assert_result (const struct result_input *in, const char *want)
{
  size_t len;
  char *text = compose (in, &len);
  assert_int_equal (len, strlen (want));
  assert_string_equal (text, want);
  free (text);
}

/* Compose in and compare the whole text, NULs included, with want.  */
static void
assert_result_mem (const struct result_input *in, const char *want,
                   size_t want_len)
{
  size_t len;
  char *text = compose (in, &len);
  assert_int_equal (len, want_len);
  assert_memory_equal (text, want, want_len);
  free (text);
}

/* Whether s is valid UTF-8, by iconv's reckoning rather than ours.  */
static int
valid_utf8 (const char *s, size_t len)
{
  iconv_t cd = iconv_open ("UTF-32LE", "UTF-8");
  assert_true (cd != (iconv_t) -1);
  char *out = xmalloc (len * 4 + 4);
  char *in = (char *) s, *o = out;
  size_t left = len, oleft = len * 4 + 4;
  size_t r = iconv (cd, &in, &left, &o, &oleft);
  iconv_close (cd);
  free (out);
  return r != (size_t) -1 && left == 0;
}

/* A succeeding command is just its output, less its final newline.  */
static void
test_success_is_output (void **state)
{
  const char *out = "   Compiling api v0.3.1\n    Finished\n";
  struct result_input in = whole (out, strlen (out));
  assert_result (&in, "   Compiling api v0.3.1\n    Finished");
  in = whole ("no newline", 10);
  assert_result (&in, "no newline");
}

/* Exactly one trailing newline is dropped, and a lone one stays.  */
static void
test_trailing_newline_rule (void **state)
{
  struct result_input in = whole ("a\n\n", 3);
  assert_result (&in, "a\n");
  in = whole ("\n", 1);
  assert_result (&in, "\n");
  in = whole ("\n", 1);
  in.exit_status = 1;
  assert_result (&in, "\n\n[exit status 1]");
  in = whole ("a\n\n", 3);
  in.exit_status = 1;
  assert_result (&in, "a\n\n[exit status 1]");
}

/* Nothing printed answers (no output), and notes still follow it.  */
static void
test_no_output (void **state)
{
  struct result_input in = whole ("", 0);
  assert_result (&in, "(no output)");
  in.exit_status = 1;
  assert_result (&in, "(no output)\n[exit status 1]");
  in.exit_status = 0;
  in.still_arriving = true;
  assert_result (&in, "(no output)\n" STILL_NOTE);
  in.head = NULL;
  in.tail = NULL;
  in.ending = RESULT_TIMED_OUT;
  assert_result (&in, "(no output)\n" STILL_NOTE
                      "\n[stopped: the command ran too long]");
}

/* Each ending has its note, on a line of its own under the output.  */
static void
test_ending_notes (void **state)
{
  struct result_input in = whole ("error: no such file\n", 20);
  in.exit_status = 1;
  assert_result (&in, "error: no such file\n[exit status 1]");
  in = whole ("partial line", 12);
  in.exit_status = 127;
  assert_result (&in, "partial line\n[exit status 127]");
  in = whole ("out\n", 4);
  in.ending = RESULT_SIGNALED;
  in.signal = 9;
  assert_result (&in, "out\n[the command was killed]");
  in = whole ("out", 3);
  in.ending = RESULT_TIMED_OUT;
  assert_result (&in, "out\n[stopped: the command ran too long]");
  in = whole ("out\n", 4);
  in.exit_status = 3; /* ignored: the command was stopped */
  in.ending = RESULT_TIMED_OUT;
  assert_result (&in, "out\n[stopped: the command ran too long]");
}

/* The ceiling note names the ceiling and the key that sets it.  */
static void
test_ceiling_note (void **state)
{
  struct result_input in = whole ("yyyy", 4);
  in.total_bytes = 20;
  in.ending = RESULT_CEILING;
  in.ceiling_bytes = 4;
  assert_result (&in, "yyyy\n[stopped: the command printed more than 4 bytes, "
                      "the output ceiling (sandbox.limits.outputBytes)]");
  in.ceiling_bytes = CAPTURE_DEFAULT_CEILING;
  assert_result (&in,
                 "yyyy\n[stopped: the command printed more than 10485760 "
                 "bytes, the output ceiling (sandbox.limits.outputBytes)]");
}

/* Still arriving is said whatever the status, before the ending note.  */
static void
test_still_arriving_order (void **state)
{
  struct result_input in = whole ("listening on :3000\n", 19);
  in.still_arriving = true;
  assert_result (&in, "listening on :3000\n" STILL_NOTE);
  in.exit_status = 2;
  assert_result (&in, "listening on :3000\n" STILL_NOTE "\n[exit status 2]");
  in.ending = RESULT_SIGNALED;
  assert_result (&in, "listening on :3000\n" STILL_NOTE
                      "\n[the command was killed]");
}

/* The capture note sits at the cut, on a line of its own.  */
static void
test_capture_note_at_cut (void **state)
{
  struct result_input in = {
    .head = "first\n",
    .head_len = 6,
    .tail = "last\n",
    .tail_len = 5,
    .total_bytes = 41200,
    .omitted_bytes = 11456,
    .ending = RESULT_EXITED,
  };
  assert_result (&in, "first\n" CAPTURE_NOTE_41200 "\nlast");
  in.head = "fir";
  in.head_len = 3;
  in.tail = "ast";
  in.tail_len = 3;
  in.exit_status = 1;
  in.still_arriving = true;
  assert_result (&in, "fir\n" CAPTURE_NOTE_41200 "\nast\n" STILL_NOTE
                      "\n[exit status 1]");
  in.tail_len = 0;
  in.exit_status = 0;
  in.still_arriving = false;
  assert_result (&in, "fir\n" CAPTURE_NOTE_41200);
}

/* Fill n bytes of p with lines of line_len ('\n' included) of letter c.  */
static void
fill_lines (char *p, size_t n, char c, size_t line_len)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (i + 1) % line_len == 0 ? '\n' : c;
}

/* The spec's example: 41200 bytes, 11456 omitted, fits with one note.  */
static void
test_spec_example_fits (void **state)
{
  struct capture_limits lim
      = capture_limits_for_result (CAPTURE_DEFAULT_CEILING);
  assert_int_equal (lim.head_bytes, 14872);
  assert_int_equal (lim.tail_bytes, 14872);
  char *head = xmalloc (14872), *tail = xmalloc (14872);
  fill_lines (head, 14872, 'h', 1000);
  fill_lines (tail, 14872, 't', 1000);
  tail[14871] = '\n';
  struct result_input in = {
    .head = head,
    .head_len = 14872,
    .tail = tail,
    .tail_len = 14872,
    .total_bytes = 41200,
    .omitted_bytes = 11456,
    .ending = RESULT_EXITED,
    .exit_status = 1,
  };
  struct buf want = BUF_INIT;
  buf_append (&want, head, 14872);
  buf_puts (&want, "\n" CAPTURE_NOTE_41200 "\n");
  buf_append (&want, tail, 14872);
  buf_puts (&want, "[exit status 1]");
  size_t len;
  char *text = compose (&in, &len);
  assert_int_equal (len, want.len);
  assert_memory_equal (text, want.data, len);
  assert_null (strstr (text, "[encoded output"));
  assert_true (result_json_size (text, len) <= 30000);
  free (text);
  buf_free (&want);
  free (head);
  free (tail);
}

/* Compose a cut output of hn copies of hc and tn of tc, exit status 1, and
 * check it is kh and kt of them around both notes, the second saying
 * encoded and omitted.  */
static void
assert_second_note (char hc, size_t hn, char tc, size_t tn, size_t kh,
                    size_t kt, const char *second_note)
{
  char *head = xmalloc (hn), *tail = xmalloc (tn);
  memset (head, hc, hn);
  memset (tail, tc, tn);
  struct result_input in = {
    .head = head,
    .head_len = hn,
    .tail = tail,
    .tail_len = tn,
    .total_bytes = 41200,
    .omitted_bytes = 11456,
    .ending = RESULT_EXITED,
    .exit_status = 1,
  };
  struct buf want = BUF_INIT;
  buf_append (&want, head, kh);
  buf_puts (&want, "\n" CAPTURE_NOTE_41200 "\n");
  buf_puts (&want, second_note);
  buf_putc (&want, '\n');
  buf_append (&want, tail, kt);
  if (want.data[want.len - 1] == '\n')
    want.len--; /* an empty tail leaves the notes' newline last */
  buf_puts (&want, "\n[exit status 1]");
  size_t len;
  char *text = compose (&in, &len);
  assert_int_equal (len, want.len);
  assert_memory_equal (text, want.data, len);
  size_t size = result_json_size (text, len);
  assert_true (size <= 30000);
  assert_true (size >= 30000 - 8);
  free (text);
  buf_free (&want);
  free (head);
  free (tail);
}

/* Escape-heavy output is cut again, equally from both sides of the cut,
 * with a second note giving exact numbers.  */
static void
test_escape_heavy_second_note (void **state)
{
  /* 14872 * 6 twice is 178464 encoded.  Allowed for output: 30000 less
     the notes (84 + 81 digits-worst + 15), their newlines (6) and both
     possible separators (4) = 29810, so 148654 goes: 74327 from each side,
     12388 bytes of 6 (74328) each.  Shown: 2484 * 6 * 2 = 29808.  */
  assert_second_note ('\x01', 14872, '\x1f', 14872, 2484, 2484,
                      "[encoded output was 178464 bytes; 148656 encoded "
                      "bytes omitted from the middle]");
  assert_int_equal (2484 * 6 * 2 + 148656, 178464);
}

/* When one side is smaller than its half, the rest comes from the other.  */
static void
test_escape_heavy_uneven (void **state)
{
  /* 89232 + 29744 = 118976; 89162 must go: all 29744 of the tail and
     59418 of the head (9903 bytes of 6, 59418).  */
  assert_second_note ('\x01', 14872, '"', 14872, 4969, 0,
                      "[encoded output was 118976 bytes; 89162 encoded "
                      "bytes omitted from the middle]");
  assert_int_equal (4969 * 6 + 89162, 118976);
}

/* Output never cut while capturing is cut at its middle when escapes make
 * it too big, and only the second note says so.  */
static void
test_escape_heavy_uncut_output (void **state)
{
  char *out = xmalloc (6000);
  memset (out, '\t', 6000); /* 12000 encoded: fits */
  struct result_input in = whole (out, 6000);
  size_t len;
  char *text = compose (&in, &len);
  assert_int_equal (len, 6000);
  free (text);
  memset (out, '\x1b', 6000); /* 36000 encoded */
  text = compose (&in, &len);
  /* Split at the middle (3000 | 3000).  Allowed for output: 30000 less
     the note (77 digits-worst), its newline and both possible separators
     = 29919, so 6081 goes: 3041 from the first half (507 bytes of 6) and
     3040 from the second (507), 6084 in all.  */
  struct buf want = BUF_INIT;
  buf_append (&want, out, 3000 - 507);
  buf_puts (&want, "\n[encoded output was 36000 bytes; 6084 encoded bytes "
                   "omitted from the middle]\n");
  buf_append (&want, out, 3000 - 507);
  assert_int_equal (len, want.len);
  assert_memory_equal (text, want.data, len);
  assert_true (result_json_size (text, len) <= 30000);
  free (text);
  buf_free (&want);
  free (out);
}

/* Many sizes, escapes and endings: always within the cap, always UTF-8.  */
static void
test_cap_invariant (void **state)
{
  static const char alphabet[] = "a\n\"\\\x01\x7f\xc3\xa9\xe2\x82\xac\xff\x00";
  unsigned seed = 12345;
  for (int round = 0; round < 300; round++)
    {
      size_t hl = (size_t) (rand_r (&seed) % 20000);
      size_t tl = (size_t) (rand_r (&seed) % 20000);
      char *head = xmalloc (hl + 1), *tail = xmalloc (tl + 1);
      for (size_t i = 0; i < hl; i++)
        head[i] = alphabet[rand_r (&seed) % (sizeof alphabet - 1)];
      for (size_t i = 0; i < tl; i++)
        tail[i] = alphabet[rand_r (&seed) % (sizeof alphabet - 1)];
      struct result_input in = {
        .head = head,
        .head_len = hl,
        .tail = tail,
        .tail_len = tl,
        .total_bytes = hl + tl + (round % 2 ? 99999999999ULL : 0),
        .omitted_bytes = round % 2 ? 99999999999ULL : 0,
        .ending = (enum result_ending) (round % 4),
        .exit_status = round,
        .ceiling_bytes = UINT64_MAX,
        .still_arriving = round % 3 == 0,
      };
      size_t len;
      char *text = compose (&in, &len);
      assert_true (valid_utf8 (text, len));
      free (text);
      free (head);
      free (tail);
    }
}

/* Bytes outside valid UTF-8 each become U+FFFD; NUL and controls stay.  */
static void
test_invalid_utf8 (void **state)
{
  static const struct
  {
    const char *in, *out;
  } cases[] = {
    { "a\xff"
      "b",
      "a\xef\xbf\xbd"
      "b" },
    { "x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd" }, /* truncated € */
    { "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },   /* overlong '/' */
    { "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
    { "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
    { "\xf4\x90\x80\x80",
      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* > U+10FFFF */
    { "\xf5\x80", "\xef\xbf\xbd\xef\xbf\xbd" },
    { "\x80z", "\xef\xbf\xbdz" },
    { "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\x9f\xbf\xf4\x8f\xbf\xbf",
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\x9f\xbf\xf4\x8f\xbf\xbf" },
    { "\x1b[31mred\x1b[0m\x7f", "\x1b[31mred\x1b[0m\x7f" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct result_input in = whole (cases[i].in, strlen (cases[i].in));
      assert_result (&in, cases[i].out);
    }
  struct result_input in = whole ("a\0b\n", 4);
  assert_result_mem (&in, "a\0b", 3);
}

/* A character split by the capture's cut is invalid on both edges; one that
 * only spans head and tail (nothing omitted) is whole.  */
static void
test_split_character_at_cut (void **state)
{
  struct result_input in = {
    .head = "x\xe2\x82",
    .head_len = 3,
    .tail = "\xac"
            "y",
    .tail_len = 2,
    .total_bytes = 100,
    .omitted_bytes = 95,
    .ending = RESULT_EXITED,
  };
  assert_result (&in, "x\xef\xbf\xbd\xef\xbf\xbd\n[process output was 100 "
                      "bytes; 95 bytes omitted from the middle during "
                      "capture]\n\xef\xbf\xbdy");
  in.total_bytes = 5;
  in.omitted_bytes = 0;
  assert_result (&in, "x\xe2\x82\xacy");
}

/* The cut to fit never splits a character.  */
static void
test_fit_keeps_characters_whole (void **state)
{
  size_t n = (size_t) 40000 * 3 + 7;
  char *out = xmalloc (n);
  /* Output is bytes, not a string: no terminator is wanted.  */
  for (size_t i = 0; i < (size_t) 40000 * 3; i += 3)
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
    memcpy (out + i, "\xe2\x82\xac", 3);
  memset (out + n - 7, '\x01', 7);
  struct result_input in = whole (out, n);
  size_t len;
  char *text = compose (&in, &len);
  assert_true (valid_utf8 (text, len));
  assert_null (strstr (text, "\xef\xbf\xbd"));
  assert_non_null (strstr (text, "[encoded output was 120042 bytes; "));
  free (text);
  free (out);
}

/* Escaping matches result_json_size byte for byte.  */
static void
test_json_escape (void **state)
{
  struct buf b = BUF_INIT;
  const char s[] = "q\"b\\\b\f\n\r\t\x01\x1f\x7f\0\xc3\xa9 ";
  result_json_escape (&b, s, sizeof s - 1);
  const char want[] = "q\\\"b\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\\u0000"
                      "\xc3\xa9 ";
  assert_int_equal (b.len, sizeof want - 1);
  assert_memory_equal (b.data, want, b.len);
  assert_int_equal (result_json_size (s, sizeof s - 1), b.len);
  buf_free (&b);
  char all[128];
  for (int c = 0; c < 128; c++)
    all[c] = (char) c;
  result_json_escape (&b, all, 128);
  assert_int_equal (result_json_size (all, 128), b.len);
  assert_int_equal (b.len, 32 * 6 - 5 * 4 + 2 * 2 + 94);
  buf_free (&b);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_success_is_output),
    cmocka_unit_test (test_trailing_newline_rule),
    cmocka_unit_test (test_no_output),
    cmocka_unit_test (test_ending_notes),
    cmocka_unit_test (test_ceiling_note),
    cmocka_unit_test (test_still_arriving_order),
    cmocka_unit_test (test_capture_note_at_cut),
    cmocka_unit_test (test_spec_example_fits),
    cmocka_unit_test (test_escape_heavy_second_note),
    cmocka_unit_test (test_escape_heavy_uneven),
    cmocka_unit_test (test_escape_heavy_uncut_output),
    cmocka_unit_test (test_cap_invariant),
    cmocka_unit_test (test_invalid_utf8),
    cmocka_unit_test (test_split_character_at_cut),
    cmocka_unit_test (test_fit_keeps_characters_whole),
    cmocka_unit_test (test_json_escape),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
