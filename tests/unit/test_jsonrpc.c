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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_depth),
    cmocka_unit_test (test_parse),
    cmocka_unit_test (test_queue_bound),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
