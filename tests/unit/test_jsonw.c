/* Unit tests for lib/jsonw.c, the one JSON writer.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/jsonw.h"

/* What the writer writes for the string s (len bytes), quotes included.  */
static char *
written (const char *s, size_t len, size_t *n)
{
  struct jsonw *w = jsonw_new ();
  jsonw_string (w, s, len);
  return jsonw_steal (w, n);
}

/* Control bytes are \u00xx in lower case; the short escapes are used; '/'
 * and DEL are written as they are.  */
static void
test_escapes (void **state)
{
  const char s[] = "\"\\/\b\f\n\r\t\x01\x1b\x1f\x7f";
  size_t n;
  char *text = written (s, sizeof s - 1, &n);
  assert_string_equal (text,
                       "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001b\\u001f\x7f\"");
  free (text);
  text = written ("a\0b", 3, &n);
  assert_int_equal (n, strlen ("\"a\\u0000b\""));
  assert_memory_equal (text, "\"a\\u0000b\"", n);
  free (text);
}

/* json_string_size counts what the writer writes, byte for byte, for
 * every byte; json_string_escape writes it without the quotes.  */
static void
test_size_is_written (void **state)
{
  for (unsigned c = 0; c < 256; c++)
    {
      char byte = (char) c;
      size_t n;
      char *text = written (&byte, 1, &n);
      assert_int_equal (json_string_size (&byte, 1), n - 2);
      struct buf b = BUF_INIT;
      json_string_escape (&b, &byte, 1);
      assert_int_equal (b.len, n - 2);
      assert_memory_equal (b.data, text + 1, n - 2);
      buf_free (&b);
      free (text);
    }
}

/* Objects, arrays, numbers, raw values and invalid UTF-8 made valid.  */
static void
test_document (void **state)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_key (w, "id");
  jsonw_raw (w, "\"a\\u0000b\"", 10);
  jsonw_key (w, "n");
  jsonw_int (w, -3);
  jsonw_key (w, "u");
  jsonw_uint (w, UINT64_MAX);
  jsonw_key (w, "list");
  jsonw_array_open (w);
  jsonw_bool (w, true);
  jsonw_null (w);
  jsonw_cstr (w, NULL);
  jsonw_text (w, "x\xffy", 3);
  jsonw_array_close (w);
  jsonw_object_close (w);
  char *text = jsonw_steal (w, NULL);
  assert_string_equal (text, "{\"id\":\"a\\u0000b\",\"n\":-3,"
                             "\"u\":18446744073709551615,"
                             "\"list\":[true,null,null,\"x\xef\xbf\xbdy\"]}");
  free (text);
}

/* The pretty writer: two-space indents and a final newline.  */
static void
test_pretty (void **state)
{
  struct jsonw *w = jsonw_new_pretty ();
  jsonw_object_open (w);
  jsonw_key (w, "a");
  jsonw_array_open (w);
  jsonw_int (w, 1);
  jsonw_array_close (w);
  jsonw_object_close (w);
  char *text = jsonw_steal (w, NULL);
  assert_string_equal (text, "{\n  \"a\": [\n    1\n  ]\n}\n");
  free (text);
}

/* The test's string hook: each string upper-cased, keys marked with '@'.  */
static void
upper_hook (void *data, struct jsonw *w, bool key, const char *s, size_t len)
{
  int *calls = data;
  char t[64];
  size_t n = 0;
  if (key)
    t[n++] = '@';
  for (size_t i = 0; i < len && n < sizeof t; i++)
    t[n++] = (char) (s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
  (*calls)++;
  jsonw_string (w, t, n);
}

/* A parsed value is written back with numbers as spelled; with a hook,
 * every string and every key goes through it, and nothing else does.  */
static void
test_value_hooked (void **state)
{
  const char *in = "{\"k\":[\"ab\",1.50,true,null,{\"x\":\"y\"}]}";
  yajl_val v = yajl_tree_parse (in, NULL, 0);
  assert_non_null (v);
  struct jsonw *w = jsonw_new ();
  jsonw_value (w, v);
  char *text = jsonw_steal (w, NULL);
  assert_string_equal (text, in);
  free (text);
  int calls = 0;
  w = jsonw_new ();
  jsonw_value_hooked (w, v, upper_hook, &calls);
  text = jsonw_steal (w, NULL);
  assert_string_equal (text, "{\"@K\":[\"AB\",1.50,true,null,{\"@X\":\"Y\"}]}");
  assert_int_equal (calls, 4);
  free (text);
  yajl_tree_free (v);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_escapes),
    cmocka_unit_test (test_size_is_written),
    cmocka_unit_test (test_document),
    cmocka_unit_test (test_pretty),
    cmocka_unit_test (test_value_hooked),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
