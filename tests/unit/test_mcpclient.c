/* Unit tests for core/mcpclient.c: the client against a scripted peer
 * over two socketpairs, the test playing the server.  */
#include <config.h>

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "core/loop.h"
#include "core/mcpclient.h"
#include "core/result.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"

/* The client, its peer's ends, and what the client told.  */
struct peer
{
  struct loop *loop;
  struct mcpclient *c;
  int from_client, to_client; /* the peer's ends */
  int client_in, client_out;  /* the client's ends */
  struct buf got;             /* bytes read from the client, not yet lines */
  int ready, failed, changed, done;
  char *failure;
  char *added; /* the names tools_changed gave, comma-separated */
  char *text;  /* the last call's text */
  char *error; /* the last call's error, or NULL */
  bool is_error;
  char *elicited; /* the message an elicitation put to the person */
  struct mcpclient_elicitation *elicitation;
  bool free_on_ready;
};

static void
on_ready (void *data, struct mcpclient *c)
{
  struct peer *p = data;
  p->ready++;
  if (p->free_on_ready)
    {
      mcpclient_free (c);
      p->c = NULL;
    }
}

static void
on_failed (void *data, struct mcpclient *c, const struct cr_error *err)
{
  struct peer *p = data;
  p->failed++;
  free (p->failure);
  p->failure = xstrdup (err->msg);
}

static void
on_changed (void *data, struct mcpclient *c, const char *const *added, size_t n)
{
  struct peer *p = data;
  struct buf b = BUF_INIT;
  buf_append (&b, "", 0);
  for (size_t i = 0; i < n; i++)
    buf_printf (&b, "%s%s", i ? "," : "", added[i]);
  p->changed++;
  free (p->added);
  p->added = buf_steal (&b, NULL);
}

static void
on_done (void *data, const struct mcpclient_result *r)
{
  struct peer *p = data;
  p->done++;
  free (p->text);
  free (p->error);
  p->text = xstrndup (r->text, r->text_len);
  p->error = r->error != NULL ? xstrdup (r->error->msg) : NULL;
  p->is_error = r->is_error;
}

/* The hook: every "SECRET" becomes "******".  */
static void
hide_secret (void *data, char *s, size_t len)
{
  for (char *q = s; (q = memmem (q, len - (size_t) (q - s), "SECRET", 6));)
    memset (q, '*', 6);
}

static void
on_elicit (void *data, struct mcpclient *c, struct mcpclient_elicitation *e,
           const char *message, const char *schema)
{
  struct peer *p = data;
  free (p->elicited);
  p->elicited = xstrdup (message);
  p->elicitation = e;
}

/* Start a client over fresh socketpairs; frame_max 0 is the default.  */
static void
peer_start (struct peer *p, size_t frame_max, uint64_t handshake_ms,
            bool elicit)
{
  int a[2], b[2];
  memset (p, 0, sizeof *p);
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, a), 0);
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, b), 0);
  p->client_in = a[0];
  p->to_client = a[1];
  p->client_out = b[0];
  p->from_client = b[1];
  p->loop = loop_new (NULL);
  assert_non_null (p->loop);
  struct mcpclient_config cfg = {
    .server = "t",
    .loop = p->loop,
    .from_server = p->client_in,
    .to_server = p->client_out,
    .root = "/tmp/w s",
    .handshake_ms = handshake_ms,
    .frame_max = frame_max,
    .hide = hide_secret,
    .elicit = elicit ? on_elicit : NULL,
    .elicit_data = p,
    .listener = { .ready = on_ready,
                  .failed = on_failed,
                  .tools_changed = on_changed,
                  .data = p },
  };
  struct cr_error *err = NULL;
  p->c = mcpclient_new (&cfg, &err);
  assert_null (err);
  assert_non_null (p->c);
}

/* Free the client and close every end.  */
static void
peer_stop (struct peer *p)
{
  mcpclient_free (p->c);
  loop_free (p->loop);
  close (p->client_in);
  close (p->client_out);
  close (p->from_client);
  if (p->to_client >= 0)
    close (p->to_client);
  buf_free (&p->got);
  free (p->failure);
  free (p->added);
  free (p->text);
  free (p->error);
  free (p->elicited);
}

/* Run the loop until *count passes was, or 10 s.  */
static void
peer_run_until (struct peer *p, int *count, int was)
{
  uint64_t end = clock_now_ms () + 10000;
  while (*count == was && clock_now_ms () < end)
    assert_int_equal (loop_run_once (p->loop, 50, NULL), 0);
  assert_int_not_equal (*count, was);
}

/* The next line the client sent, parsed (the caller frees it).  */
static yajl_val
peer_read (struct peer *p)
{
  uint64_t end = clock_now_ms () + 10000;
  char *nl;
  while ((nl = p->got.data ? memchr (p->got.data, '\n', p->got.len) : NULL)
         == NULL)
    {
      struct pollfd pfd = { .fd = p->from_client, .events = POLLIN };
      loop_run_once (p->loop, 0, NULL);
      if (poll (&pfd, 1, 20) == 1)
        {
          char chunk[65536];
          ssize_t n = read (p->from_client, chunk, sizeof chunk);
          assert_true (n > 0);
          buf_append (&p->got, chunk, (size_t) n);
        }
      assert_true (clock_now_ms () < end);
    }
  size_t len = (size_t) (nl - p->got.data);
  char *line = xstrndup (p->got.data, len);
  memmove (p->got.data, nl + 1, p->got.len - len - 1);
  p->got.len -= len + 1;
  char errbuf[128];
  yajl_val v = yajl_tree_parse (line, errbuf, sizeof errbuf);
  assert_non_null (v);
  free (line);
  return v;
}

/* A string at a path in v ("a/b"), or NULL.  */
static const char *
peer_str (yajl_val v, const char *a, const char *b, const char *c)
{
  const char *path[] = { a, b, c, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  return s != NULL ? s->u.string : NULL;
}

/* The next message must be a request (or notification) of method; its id
 * is copied into id (when not NULL).  Returns the message.  */
static yajl_val
peer_expect (struct peer *p, const char *method, char *id, size_t idlen)
{
  yajl_val v = peer_read (p);
  assert_string_equal (peer_str (v, "method", NULL, NULL), method);
  if (id != NULL)
    snprintf (id, idlen, "%s", peer_str (v, "id", NULL, NULL));
  return v;
}

/* Write one line to the client.  */
static void
peer_send (struct peer *p, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *line = xvasprintf (fmt, ap);
  va_end (ap);
  size_t len = strlen (line);
  assert_int_equal (write (p->to_client, line, len), (ssize_t) len);
  assert_int_equal (write (p->to_client, "\n", 1), 1);
  free (line);
}

/* Answer initialize with version and a tools capability, then the first
 * listing with tools (a JSON array's text).  */
static void
peer_handshake (struct peer *p, const char *version, const char *tools)
{
  char id[64];
  yajl_val v = peer_expect (p, "initialize", id, sizeof id);
  yajl_tree_free (v);
  peer_send (
      p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"protocolVersion\":"
      "\"%s\",\"capabilities\":{\"tools\":{\"listChanged\":true}},"
      "\"serverInfo\":{\"name\":\"x\",\"version\":\"1\"}}}",
      id, version);
  yajl_tree_free (peer_expect (p, "notifications/initialized", NULL, 0));
  yajl_tree_free (peer_expect (p, "tools/list", id, sizeof id));
  peer_send (p, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":%s}}",
             id, tools);
  peer_run_until (p, &p->ready, 0);
}

#define TOOLS_AB                                                               \
  "[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"b\","   \
  "\"description\":\"B\",\"inputSchema\":{\"type\":\"object\"}}]"

/* initialize offers 2025-06-18 and roots, and elicitation only when
 * somebody can be asked; the listing follows its cursor; a tool whose
 * name cannot be mcp__s__<tool> is left out and named.  */
static void
test_handshake (void **state)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 2000, false);
  yajl_val v = peer_expect (&p, "initialize", id, sizeof id);
  assert_string_equal (peer_str (v, "params", "protocolVersion", NULL),
                       "2025-06-18");
  const char *roots[] = { "params", "capabilities", "roots", NULL };
  const char *elicit[] = { "params", "capabilities", "elicitation", NULL };
  assert_non_null (yajl_tree_get (v, roots, yajl_t_object));
  assert_null (yajl_tree_get (v, elicit, yajl_t_any));
  yajl_tree_free (v);
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"protocolVersion\":"
      "\"2025-03-26\",\"capabilities\":{\"tools\":{}}}}",
      id);
  yajl_tree_free (peer_expect (&p, "notifications/initialized", NULL, 0));
  v = peer_expect (&p, "tools/list", id, sizeof id);
  assert_null (peer_str (v, "params", "cursor", NULL));
  yajl_tree_free (v);
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[{\"name\":"
      "\"a\",\"inputSchema\":{\"type\":\"object\",\"x\":1e3}},{\"name\":"
      "\"bad name!\"}],\"nextCursor\":\"p2\"}}",
      id);
  v = peer_expect (&p, "tools/list", id, sizeof id);
  assert_string_equal (peer_str (v, "params", "cursor", NULL), "p2");
  yajl_tree_free (v);
  assert_int_equal (p.ready, 0);
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[{\"name\":"
      "\"b\"}]}}",
      id);
  peer_run_until (&p, &p.ready, 0);
  assert_true (mcpclient_ready (p.c));
  assert_string_equal (mcpclient_protocol (p.c), "2025-03-26");
  size_t n;
  const struct mcpclient_tool *t = mcpclient_tools (p.c, &n);
  assert_int_equal (n, 2);
  assert_string_equal (t[0].name, "a");
  /* The schema is handed on with its numbers as the server spelled them.  */
  assert_string_equal (t[0].input_schema, "{\"type\":\"object\",\"x\":1e3}");
  assert_string_equal (t[1].name, "b");
  const char *const *skipped = mcpclient_skipped (p.c, &n);
  assert_int_equal (n, 1);
  assert_string_equal (skipped[0], "bad name!");
  assert_int_equal (p.failed, 0);
  peer_stop (&p);
}

/* A version crucible does not speak fails the handshake, saying which;
 * 2024-11-05 is taken.  */
static void
test_versions (void **state)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 2000, true);
  yajl_val v = peer_expect (&p, "initialize", id, sizeof id);
  const char *elicit[] = { "params", "capabilities", "elicitation", NULL };
  assert_non_null (yajl_tree_get (v, elicit, yajl_t_object));
  yajl_tree_free (v);
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"protocolVersion\":"
      "\"2024-10-07\",\"capabilities\":{}}}",
      id);
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure,
                       "MCP server `t`: initialize: the server speaks protocol "
                       "version \"2024-10-07\"; crucible speaks 2025-06-18, "
                       "2025-03-26 and 2024-11-05");
  assert_int_equal (p.ready, 0);
  peer_stop (&p);

  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2024-11-05", TOOLS_AB);
  assert_string_equal (mcpclient_protocol (p.c), "2024-11-05");
  peer_stop (&p);
}

/* A server that never answers fails the handshake at its deadline.  */
static void
test_handshake_timeout (void **state)
{
  struct peer p;
  peer_start (&p, 0, 100, false);
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure,
                       "MCP server `t`: initialize: no answer within 0.1 s");
  peer_stop (&p);
}

/* Garbage on the server's output, and a line past the frame bound, each
 * fail the connection.  */
static void
test_garbage_and_overlong (void **state)
{
  struct peer p;
  peer_start (&p, 0, 2000, false);
  peer_send (&p, "Starting server on stdio \x1b[31m...");
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure,
                       "MCP server `t`: initialize: the server wrote a line "
                       "that is not a JSON-RPC message on its standard output: "
                       "\"Starting server on stdio \\x1b[31m...\"");
  peer_stop (&p);

  peer_start (&p, 1024, 2000, false);
  char *big = xcalloc (2001, 1);
  memset (big, ' ', 2000);
  peer_send (&p, "%s", big);
  free (big);
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure, "MCP server `t`: initialize: the server "
                                  "wrote a message longer than 1024 bytes");
  peer_stop (&p);
}

/* A call's answer: its text, hidden (also where the reply escaped it);
 * an error answer names the server, the method and the tool, its code as
 * sent.  */
static void
test_call (void **state)
{
  struct peer p;
  char id[64];
  struct cr_error *err = NULL;
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_non_null (
      mcpclient_call (p.c, "a", "{\"x\":1}", 2000, on_done, &p, &err));
  yajl_val v = peer_expect (&p, "tools/call", id, sizeof id);
  assert_string_equal (peer_str (v, "params", "name", NULL), "a");
  const char *x[] = { "params", "arguments", "x", NULL };
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (v, x, yajl_t_number)), 1);
  yajl_tree_free (v);
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[{\"type\":"
      "\"text\",\"text\":\"token SECRET and S\\u0045CRET\"},{\"type\":"
      "\"image\",\"mimeType\":\"image/png\",\"data\":\"AAAA\"}],"
      "\"isError\":true}}",
      id);
  peer_run_until (&p, &p.done, 0);
  assert_null (p.error);
  assert_true (p.is_error);
  assert_string_equal (p.text, "token ****** and ******\n[image: image/png, 4 "
                               "bytes of base64]");

  assert_non_null (mcpclient_call (p.c, "b", NULL, 2000, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"error\":{\"code\":-3.2602e4,"
             "\"message\":\"bad SECRET\"}}",
             id);
  peer_run_until (&p, &p.done, 1);
  assert_string_equal (p.error, "MCP server `t`: tools/call `b`: the server "
                                "answered with error -3.2602e4: bad ******");

  assert_null (mcpclient_call (p.c, "zz", NULL, 2000, on_done, &p, &err));
  assert_string_equal (err->msg, "MCP server `t`: tools/call `zz`: the "
                                 "server lists no such tool");
  cr_error_clear (&err);
  assert_null (mcpclient_call (p.c, "a", "[1]", 2000, on_done, &p, &err));
  cr_error_clear (&err);
  peer_stop (&p);
}

/* A call past its deadline is cancelled at the server and failed once;
 * its late answer is ignored.  A call given up is cancelled and never
 * answered.  */
static void
test_call_timeout_and_cancel (void **state)
{
  struct peer p;
  char id[64];
  struct cr_error *err = NULL;
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_non_null (mcpclient_call (p.c, "a", NULL, 100, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  peer_run_until (&p, &p.done, 0);
  assert_string_equal (
      p.error, "MCP server `t`: tools/call `a`: no answer within 0.1 s");
  yajl_val v = peer_expect (&p, "notifications/cancelled", NULL, 0);
  assert_string_equal (peer_str (v, "params", "requestId", NULL), id);
  assert_string_equal (peer_str (v, "params", "reason", NULL), "timed out");
  yajl_tree_free (v);
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[]}}",
             id);
  for (int i = 0; i < 5; i++)
    loop_run_once (p.loop, 20, NULL);
  assert_int_equal (p.done, 1);
  assert_true (mcpclient_ready (p.c));

  struct mcpclient_call *call
      = mcpclient_call (p.c, "b", NULL, 2000, on_done, &p, &err);
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  mcpclient_cancel (p.c, call, "the person pressed Esc");
  v = peer_expect (&p, "notifications/cancelled", NULL, 0);
  assert_string_equal (peer_str (v, "params", "requestId", NULL), id);
  assert_string_equal (peer_str (v, "params", "reason", NULL),
                       "the person pressed Esc");
  yajl_tree_free (v);
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[]}}",
             id);
  for (int i = 0; i < 5; i++)
    loop_run_once (p.loop, 20, NULL);
  assert_int_equal (p.done, 1);
  peer_stop (&p);
}

/* list_changed re-lists and says which tools are new.  */
static void
test_list_changed (void **state)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"method\":"
                 "\"notifications/tools/list_changed\"}");
  yajl_tree_free (peer_expect (&p, "tools/list", id, sizeof id));
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[{\"name\":"
      "\"b\"},{\"name\":\"c\"},{\"name\":\"a\"}]}}",
      id);
  peer_run_until (&p, &p.changed, 0);
  assert_string_equal (p.added, "c");
  size_t n;
  mcpclient_tools (p.c, &n);
  assert_int_equal (n, 3);
  peer_stop (&p);
}

/* The server's requests: ping answered, roots/list with the workspace as
 * a file:// URI, sampling refused, elicitation refused without anybody to
 * ask.  */
static void
test_server_requests (void **state)
{
  struct peer p;
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
  yajl_val v = peer_read (&p);
  const char *id[] = { "id", NULL };
  const char *result[] = { "result", NULL };
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (v, id, yajl_t_number)), 7);
  assert_non_null (yajl_tree_get (v, result, yajl_t_object));
  yajl_tree_free (v);
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}");
  v = peer_read (&p);
  const char *uri[] = { "result", "roots", NULL };
  yajl_val roots = yajl_tree_get (v, uri, yajl_t_array);
  assert_non_null (roots);
  assert_string_equal (peer_str (roots->u.array.values[0], "uri", NULL, NULL),
                       "file:///tmp/w%20s");
  yajl_tree_free (v);
  const char *code[] = { "error", "code", NULL };
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
                 "\"sampling/createMessage\",\"params\":{}}");
  v = peer_read (&p);
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (v, code, yajl_t_number)),
                    -32601);
  yajl_tree_free (v);
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
                 "\"elicitation/create\",\"params\":{\"message\":\"m\","
                 "\"requestedSchema\":{}}}");
  v = peer_read (&p);
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (v, code, yajl_t_number)),
                    -32601);
  yajl_tree_free (v);
  peer_stop (&p);
}

/* Elicitation goes to the callback, hidden, and its answer to the
 * server.  */
static void
test_elicitation (void **state)
{
  struct peer p;
  peer_start (&p, 0, 2000, true);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":"
                 "\"elicitation/create\",\"params\":{\"message\":\"Give "
                 "SECRET?\",\"requestedSchema\":{\"type\":\"object\"}}}");
  uint64_t end = clock_now_ms () + 10000;
  while (p.elicitation == NULL && clock_now_ms () < end)
    loop_run_once (p.loop, 20, NULL);
  assert_non_null (p.elicitation);
  assert_string_equal (p.elicited, "Give ******?");
  mcpclient_elicit_answer (p.c, p.elicitation, MCPCLIENT_ELICIT_ACCEPT,
                           "{\"ok\":true}");
  yajl_val v = peer_read (&p);
  assert_string_equal (peer_str (v, "id", NULL, NULL), "e1");
  assert_string_equal (peer_str (v, "result", "action", NULL), "accept");
  const char *ok[] = { "result", "content", "ok", NULL };
  assert_true (YAJL_IS_TRUE (yajl_tree_get (v, ok, yajl_t_any)));
  yajl_tree_free (v);
  /* Four may wait for the person; a fifth is refused.  */
  for (int i = 0; i < MCPCLIENT_ELICIT_MAX + 1; i++)
    peer_send (&p,
               "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
               "\"elicitation/create\",\"params\":{\"message\":\"q\","
               "\"requestedSchema\":{}}}",
               i);
  v = peer_read (&p);
  const char *id[] = { "id", NULL };
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (v, id, yajl_t_number)),
                    MCPCLIENT_ELICIT_MAX);
  assert_string_equal (peer_str (v, "error", "message", NULL),
                       "too many questions are waiting for the person");
  yajl_tree_free (v);
  peer_stop (&p);
}

/* A server that goes away mid-call: the call is told, then the owner.  */
static void
test_exit_mid_call (void **state)
{
  struct peer p;
  char id[64];
  struct cr_error *err = NULL;
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_non_null (mcpclient_call (p.c, "a", NULL, 2000, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  close (p.to_client);
  p.to_client = -1;
  peer_run_until (&p, &p.failed, 0);
  assert_int_equal (p.done, 1);
  assert_string_equal (p.error, "MCP server `t`: tools/call `a`: reading its "
                                "output: the server closed its standard "
                                "output");
  assert_string_equal (p.failure, "MCP server `t`: reading its output: the "
                                  "server closed its standard output");
  assert_false (mcpclient_ready (p.c));
  peer_stop (&p);
}

/* A result larger than a command's ceiling is cut to it.  */
static void
test_result_ceiling (void **state)
{
  struct peer p;
  char id[64];
  struct cr_error *err = NULL;
  peer_start (&p, 0, 2000, false);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_non_null (mcpclient_call (p.c, "a", NULL, 2000, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  char *big = xcalloc (200001, 1);
  memset (big, 'x', 200000);
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[{"
             "\"type\":\"text\",\"text\":\"%s\"}]}}",
             id, big);
  free (big);
  peer_run_until (&p, &p.done, 0);
  assert_null (p.error);
  assert_true (strlen (p.text) < 200000);
  assert_true (result_json_size (p.text, strlen (p.text))
               <= RESULT_MAX_ENCODED);
  peer_stop (&p);
}

/* The owner may free the client from inside one of its callbacks.  */
static void
test_free_in_callback (void **state)
{
  struct peer p;
  peer_start (&p, 0, 2000, false);
  p.free_on_ready = true;
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_null (p.c);
  for (int i = 0; i < 3; i++)
    loop_run_once (p.loop, 10, NULL);
  peer_stop (&p);
}

/* Answer initialize with the JSON text answer (the part after the id;
 * after "jsonrpc" too unless it starts with '!') and require the
 * connection to fail with expected.  */
static void
expect_init_failure (const char *answer, const char *expected)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 2000, false);
  yajl_tree_free (peer_expect (&p, "initialize", id, sizeof id));
  if (answer[0] == '!')
    peer_send (&p, "{\"id\":\"%s\",%s}", id, answer + 1);
  else
    peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",%s}", id, answer);
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure, expected);
  peer_stop (&p);
}

/* Answer initialize, then the first listing with the JSON text page, and
 * require the connection to fail with expected.  */
static void
expect_list_failure (const char *page, const char *expected)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 2000, false);
  yajl_tree_free (peer_expect (&p, "initialize", id, sizeof id));
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"protocolVersion\":"
      "\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}",
      id);
  yajl_tree_free (peer_expect (&p, "notifications/initialized", NULL, 0));
  yajl_tree_free (peer_expect (&p, "tools/list", id, sizeof id));
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",%s}", id, page);
  peer_run_until (&p, &p.failed, 0);
  assert_string_equal (p.failure, expected);
  peer_stop (&p);
}

/* What a server gets wrong in the handshake, each message pinned.  */
static void
test_handshake_errors (void **state)
{
  expect_init_failure ("\"result\":{}",
                       "MCP server `t`: initialize: the answer has no "
                       "protocolVersion");
  expect_init_failure ("\"error\":{\"code\":-32600,\"message\":\"no\"}",
                       "MCP server `t`: initialize: the server answered with "
                       "error -32600: no");
  expect_init_failure ("!\"result\":{}",
                       "MCP server `t`: initialize: the server wrote a message "
                       "that is not JSON-RPC 2.0");
  expect_init_failure ("\"result\":{\"x\":\"a\\u0000b\"}",
                       "MCP server `t`: initialize: a string in the answer "
                       "holds a NUL character (\\u0000)");
  expect_list_failure ("\"result\":{}", "MCP server `t`: tools/list: the "
                                        "answer has no tools array");
  expect_list_failure ("\"result\":{\"tools\":[{\"description\":\"x\"}]}",
                       "MCP server `t`: tools/list: a tool has no name");
}

/* A cursor that never ends fails the listing at 64 pages.  */
static void
test_pages_bound (void **state)
{
  struct peer p;
  char id[64];
  peer_start (&p, 0, 5000, false);
  yajl_tree_free (peer_expect (&p, "initialize", id, sizeof id));
  peer_send (
      &p,
      "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"protocolVersion\":"
      "\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}",
      id);
  yajl_tree_free (peer_expect (&p, "notifications/initialized", NULL, 0));
  int pages = 0;
  while (p.failed == 0)
    {
      yajl_tree_free (peer_expect (&p, "tools/list", id, sizeof id));
      pages++;
      peer_send (&p,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[],"
                 "\"nextCursor\":\"again\"}}",
                 id);
      for (int i = 0; i < 3 && p.failed == 0; i++)
        loop_run_once (p.loop, 5, NULL);
    }
  assert_int_equal (pages, 64);
  assert_string_equal (p.failure,
                       "MCP server `t`: tools/list: more than 64 pages");
  peer_stop (&p);
}

/* What a call's answer or its asking gets wrong.  */
static void
test_call_errors (void **state)
{
  struct peer p;
  char id[64];
  struct cr_error *err = NULL;
  peer_start (&p, 0, 2000, false);
  assert_null (mcpclient_call (p.c, "a", NULL, 2000, on_done, &p, &err));
  assert_string_equal (err->msg, "MCP server `t`: tools/call `a`: the "
                                 "server is not ready");
  cr_error_clear (&err);
  peer_handshake (&p, "2025-06-18", TOOLS_AB);
  assert_null (mcpclient_call (p.c, "a", "[1]", 2000, on_done, &p, &err));
  assert_string_equal (err->msg, "MCP server `t`: tools/call `a`: the "
                                 "arguments must be a JSON object");
  cr_error_clear (&err);
  assert_non_null (mcpclient_call (p.c, "a", NULL, 2000, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  peer_send (&p,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":"
             "[{\"type\":\"text\",\"text\":\"a\\u0000b\"}]}}",
             id);
  peer_run_until (&p, &p.done, 0);
  assert_string_equal (p.error, "MCP server `t`: tools/call `a`: a string in "
                                "the answer holds a NUL character (\\u0000)");
  assert_non_null (mcpclient_call (p.c, "b", NULL, 2000, on_done, &p, &err));
  yajl_tree_free (peer_expect (&p, "tools/call", id, sizeof id));
  peer_send (&p, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\"}", id);
  peer_run_until (&p, &p.done, 1);
  assert_string_equal (p.error, "MCP server `t`: tools/call `b`: the answer "
                                "has no result");
  /* The connection stays up through both.  */
  assert_true (mcpclient_ready (p.c));
  peer_stop (&p);
}

/* A path as a file:// URI.  */
static void
test_file_uri (void **state)
{
  char *u = mcpclient_file_uri ("/home/me/my project/%é");
  assert_string_equal (u, "file:///home/me/my%20project/%25%C3%A9");
  free (u);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_handshake),
    cmocka_unit_test (test_versions),
    cmocka_unit_test (test_handshake_timeout),
    cmocka_unit_test (test_garbage_and_overlong),
    cmocka_unit_test (test_call),
    cmocka_unit_test (test_call_timeout_and_cancel),
    cmocka_unit_test (test_list_changed),
    cmocka_unit_test (test_server_requests),
    cmocka_unit_test (test_elicitation),
    cmocka_unit_test (test_exit_mid_call),
    cmocka_unit_test (test_result_ceiling),
    cmocka_unit_test (test_free_in_callback),
    cmocka_unit_test (test_file_uri),
    cmocka_unit_test (test_handshake_errors),
    cmocka_unit_test (test_pages_bound),
    cmocka_unit_test (test_call_errors),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
