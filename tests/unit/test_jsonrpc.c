/* Unit tests for core/jsonrpc.c.  */
#include <config.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/jsonrpc.h"
#include "core/loop.h"

/* Nesting is counted over arrays and objects, never inside strings.  */
static void
test_depth (void **state)
{
  assert_false (jsonrpc_too_deep ("[[{}]]", 6, 3));
  assert_true (jsonrpc_too_deep ("[[{}]]", 6, 2));
  const char *in_string = "[\"[[[[\\\"[[[[\"]";
  assert_false (jsonrpc_too_deep (in_string, strlen (in_string), 1));
  const char *after = "[\"\\\\\",[[]]]";
  assert_true (jsonrpc_too_deep (after, strlen (after), 2));
  assert_false (jsonrpc_too_deep ("]]]][", 5, 1));
}

/* A tree deeper than the bound is never built; one at the bound is.  */
static void
test_parse (void **state)
{
  char errbuf[128];
  bool deep = false;
  size_t n = JSONRPC_MAX_DEPTH + 1;
  char *text = calloc (2 * n + 1, 1);
  memset (text, '[', n);
  memset (text + n, ']', n);
  assert_null (jsonrpc_parse (text, 2 * n, errbuf, sizeof errbuf, &deep));
  assert_true (deep);
  assert_string_equal (errbuf, "nested deeper than 64 levels");
  text[2 * n - 1] = '\0';
  yajl_val v
      = jsonrpc_parse (text + 1, 2 * n - 2, errbuf, sizeof errbuf, &deep);
  assert_non_null (v);
  assert_false (deep);
  yajl_tree_free (v);
  free (text);
}

static size_t overflowed;

/* Record the overflow.  */
static void
on_overflow (void *data, size_t queued)
{
  overflowed = queued;
  loop_quit (data);
}

/* What a peer does not read is bounded; passing the bound is told from the
 * loop, and nothing is queued after it.  */
static void
test_queue_bound (void **state)
{
  int fds[2];
  assert_int_equal (pipe (fds), 0);
  struct loop *loop = loop_new (NULL);
  struct jsonrpc_out *q
      = jsonrpc_out_new (loop, fds[1], 200000, on_overflow, loop, NULL);
  assert_non_null (q);
  assert_true (fcntl (fds[1], F_GETFL) & O_NONBLOCK);
  char msg[1000];
  memset (msg, 'x', sizeof msg);
  int sent = 0;
  while (jsonrpc_out_send (q, msg, sizeof msg) == 0)
    sent++;
  /* The pipe took its share, the queue the rest up to the bound.  */
  assert_true (sent > 200 && sent < 400);
  assert_int_equal (overflowed, 0);
  assert_int_equal (jsonrpc_out_pending (q), 0);
  assert_int_equal (jsonrpc_out_send (q, "y", 1), -1);
  assert_int_equal (loop_run (loop, NULL), 0);
  assert_true (overflowed > 200000 - 64 * 1024);
  jsonrpc_out_free (q);
  assert_false (fcntl (fds[1], F_GETFL) & O_NONBLOCK);
  loop_free (loop);
  close (fds[0]);
  close (fds[1]);
}

/* What the framing handed over.  */
struct lines_seen
{
  char got[8][16];
  int lines, overlong;
  int stop_after; /* stop reading after this many lines; 0: never */
};

/* Record a line.  */
static bool
on_line (void *data, const char *line, size_t len)
{
  struct lines_seen *seen = data;
  assert_true (len < sizeof seen->got[0]);
  memcpy (seen->got[seen->lines], line, len);
  seen->got[seen->lines][len] = '\0';
  seen->lines++;
  return seen->stop_after == 0 || seen->lines < seen->stop_after;
}

/* Record an over-long line.  */
static bool
on_overlong (void *data)
{
  struct lines_seen *seen = data;
  seen->overlong++;
  return true;
}

/* Lines are split across reads; one of max bytes is taken, a longer one is
 * refused once and skipped to its end; a callback can stop the reading.  */
static void
test_lines (void **state)
{
  struct jsonrpc_lines r = { .max = 4 };
  struct lines_seen seen = { 0 };
  jsonrpc_lines_take (&r, "ab", 2, on_line, on_overlong, &seen);
  jsonrpc_lines_take (&r, "cd\nabcde", 8, on_line, on_overlong, &seen);
  jsonrpc_lines_take (&r, "fgh\n\nx\n", 7, on_line, on_overlong, &seen);
  assert_int_equal (seen.overlong, 1);
  assert_int_equal (seen.lines, 3);
  assert_string_equal (seen.got[0], "abcd");
  assert_string_equal (seen.got[1], "");
  assert_string_equal (seen.got[2], "x");
  struct lines_seen stop = { .stop_after = 1 };
  jsonrpc_lines_take (&r, "a\nb\n", 4, on_line, on_overlong, &stop);
  assert_int_equal (stop.lines, 1);
  jsonrpc_lines_free (&r);
}

/* A request's id comes back as the client spelled it; one that is not
 * valid UTF-8 or not a scalar is refused; an id inside params is written
 * by the writer.  */
static void
test_ids (void **state)
{
  const char *line = "{\"jsonrpc\":\"2.0\",\"id\": \"a\\u0000b\",\"x\":1}";
  struct json_scan scan;
  bool deep, not_utf8;
  yajl_val v = jsonrpc_parse_line (line, strlen (line), &scan, NULL, 0, &deep);
  assert_non_null (v);
  const char *path[] = { "id", NULL };
  char *id = jsonrpc_request_id (&scan, yajl_tree_get (v, path, yajl_t_any),
                                 &not_utf8);
  assert_string_equal (id, "\"a\\u0000b\"");
  assert_false (not_utf8);
  free (id);
  yajl_tree_free (v);
  line = "{\"id\":[1]}";
  v = jsonrpc_parse_line (line, strlen (line), &scan, NULL, 0, &deep);
  assert_null (jsonrpc_request_id (&scan, yajl_tree_get (v, path, yajl_t_any),
                                   &not_utf8));
  yajl_tree_free (v);
  assert_null (jsonrpc_parse_line ("{}\0", 3, &scan, NULL, 0, &deep));
  v = yajl_tree_parse ("\"q\\\"\"", NULL, 0);
  id = jsonrpc_id_text (v);
  assert_string_equal (id, "\"q\\\"\"");
  free (id);
  yajl_tree_free (v);
}

/* The envelopes: an error, a result, a request and a notification.  */
static void
test_envelopes (void **state)
{
  char *t = jsonw_steal (
      jsonrpc_error_new ("7", JSONRPC_METHOD_NOT_FOUND, "no \xff"), NULL);
  assert_string_equal (t, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":"
                          "{\"code\":-32601,\"message\":\"no \xef\xbf\xbd\"}");
  free (t);
  struct jsonw *w = jsonrpc_result_begin ("\"x\"");
  jsonw_raw (w, "{}", 2);
  jsonw_object_close (w);
  t = jsonw_steal (w, NULL);
  assert_string_equal (t, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}");
  free (t);
  w = jsonrpc_notification_begin ("notifications/message");
  jsonw_null (w);
  jsonw_object_close (w);
  t = jsonw_steal (w, NULL);
  assert_string_equal (t, "{\"jsonrpc\":\"2.0\",\"method\":"
                          "\"notifications/message\",\"params\":null}");
  free (t);
}

/* An answer is taken once; a second one, or one to a request given up, is
 * a duplicate; one to an id never given is unknown.  */
static void
test_asks (void **state)
{
  struct jsonrpc_asks asks = { .prefix = "crucible-ask" };
  int a, b;
  const char *reason;
  const char *id_a = jsonrpc_ask (&asks, &a);
  assert_string_equal (id_a, "\"crucible-ask-1\"");
  char *id_b = strdup (jsonrpc_ask (&asks, &b));
  assert_string_equal (id_b, "\"crucible-ask-2\"");
  assert_ptr_equal (jsonrpc_answer_take (&asks, "\"crucible-ask-1\"", &reason),
                    &a);
  assert_null (jsonrpc_answer_take (&asks, "\"crucible-ask-1\"", &reason));
  assert_string_equal (reason, "duplicate");
  jsonrpc_ask_forget (&asks, &b);
  assert_null (jsonrpc_answer_take (&asks, id_b, &reason));
  assert_string_equal (reason, "duplicate");
  assert_null (jsonrpc_answer_take (&asks, "\"crucible-ask-3\"", &reason));
  assert_string_equal (reason, "unknown");
  assert_null (jsonrpc_answer_take (&asks, "\"crucible-ask-1x\"", &reason));
  assert_string_equal (reason, "unknown");
  assert_null (jsonrpc_answer_take (&asks, "1", &reason));
  assert_string_equal (reason, "unknown");
  free (id_b);
  jsonrpc_ask (&asks, &a);
  jsonrpc_asks_free (&asks);
  assert_null (asks.waiting);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_depth),       cmocka_unit_test (test_parse),
    cmocka_unit_test (test_queue_bound), cmocka_unit_test (test_lines),
    cmocka_unit_test (test_ids),         cmocka_unit_test (test_envelopes),
    cmocka_unit_test (test_asks),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
