/* Tests for sandbox/httpreq.c: request and response heads (forms, bounds
 * at and past each limit, the smuggling shapes), body framing (lengths,
 * chunked with extensions and trailers, the response rules) and the
 * forwarded head.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/httpreq.h"

/* Feed text to a fresh parser of kind, whole or one byte at a time;
 * return the parser and the step, *used the bytes the head took.  */
static struct httpreq_parser *
feed (enum httpreq_kind kind, const char *text, size_t len, bool bytewise,
      enum httpreq_step *step, size_t *used)
{
  struct httpreq_parser *p = httpreq_parser_new (kind);
  size_t u = 0;
  *used = 0;
  *step = HTTPREQ_MORE;
  if (!bytewise)
    {
      *step = httpreq_parser_feed (p, text, len, &u);
      *used = u;
      return p;
    }
  for (size_t i = 0; i < len && *step == HTTPREQ_MORE; i++)
    {
      *step = httpreq_parser_feed (p, text + i, 1, &u);
      *used += u;
    }
  return p;
}

/* Parse a whole request head, requiring DONE both ways with all its bytes
 * used; the caller frees the parser.  */
static struct httpreq_parser *
request (const char *text)
{
  enum httpreq_step step;
  size_t used;
  struct httpreq_parser *p
      = feed (HTTPREQ_REQUEST, text, strlen (text), true, &step, &used);
  if (step != HTTPREQ_DONE)
    fail_msg ("bytewise: step %d (%s) for `%s`", step,
              step == HTTPREQ_ERROR ? httpreq_parser_error (p)->reason : "",
              text);
  assert_int_equal (used, strlen (text));
  httpreq_parser_free (p);
  p = feed (HTTPREQ_REQUEST, text, strlen (text), false, &step, &used);
  if (step != HTTPREQ_DONE)
    fail_msg ("step %d (%s) for `%s`", step,
              step == HTTPREQ_ERROR ? httpreq_parser_error (p)->reason : "",
              text);
  assert_int_equal (used, strlen (text));
  assert_non_null (httpreq_parser_head (p));
  assert_null (httpreq_parser_error (p));
  return p;
}

/* Parse text of kind, requiring ERROR with status both ways, and a reason
 * holding want.  */
static void
refuse_len (enum httpreq_kind kind, const char *text, size_t len, int status,
            const char *want)
{
  for (int bytewise = 0; bytewise < 2; bytewise++)
    {
      enum httpreq_step step;
      size_t used;
      struct httpreq_parser *p = feed (kind, text, len, bytewise, &step, &used);
      if (step != HTTPREQ_ERROR)
        fail_msg ("step %d, not an error, for `%.200s`", step, text);
      const struct httpreq_error *e = httpreq_parser_error (p);
      assert_non_null (e);
      assert_null (httpreq_parser_head (p));
      if (e->status != status || strstr (e->reason, want) == NULL)
        fail_msg ("`%.200s`: %d %s, not %d ...%s...", text, e->status,
                  e->reason, status, want);
      /* Further feeds repeat the error and use nothing.  */
      assert_int_equal (httpreq_parser_feed (p, "x", 1, &used), HTTPREQ_ERROR);
      assert_int_equal (used, 0);
      httpreq_parser_free (p);
    }
}

/* refuse_len for a request given as a C string.  */
static void
refuse (const char *text, int status, const char *want)
{
  refuse_len (HTTPREQ_REQUEST, text, strlen (text), status, want);
}

/* refuse_len for a response given as a C string.  */
static void
refuse_resp (const char *text, int status, const char *want)
{
  refuse_len (HTTPREQ_RESPONSE, text, strlen (text), status, want);
}

#define AUTH "Proxy-Authorization: Basic Y3J1Y2libGU6eA==\r\n"

/* --- request forms -------------------------------------------------- */

static void
test_connect (void **state)
{
  struct httpreq_parser *p = request ("CONNECT allowed.test:443 HTTP/1.1\r\n"
                                      "Host: allowed.test:443\r\n" AUTH
                                      "User-Agent: curl/7.88.1\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_string_equal (h->method, "CONNECT");
  assert_int_equal (h->form, HTTPREQ_FORM_AUTHORITY);
  assert_string_equal (h->authority.host, "allowed.test");
  assert_int_equal (h->authority.port, 443);
  assert_null (h->path);
  assert_int_equal (h->version_minor, 1);
  assert_int_equal (h->n_fields, 3);
  assert_string_equal (h->fields[0].name, "Host");
  assert_string_equal (h->fields[2].value, "curl/7.88.1");
  assert_string_equal (h->proxy_authorization, "Basic Y3J1Y2libGU6eA==");
  assert_string_equal (httpreq_head_field (h, "user-agent"), "curl/7.88.1");
  assert_null (httpreq_head_field (h, "Accept"));
  assert_true (httpreq_head_keep_alive (h));
  uint64_t len;
  assert_int_equal (httpreq_request_body (h, &len), HTTPREQ_BODY_NONE);
  httpreq_parser_free (p);

  p = request ("CONNECT [2001:db8::10]:8443 HTTP/1.0\r\n\r\n");
  h = httpreq_parser_head (p);
  assert_string_equal (h->authority.host, "2001:db8::10");
  assert_true (h->authority.bracketed);
  assert_int_equal (h->authority.port, 8443);
  assert_int_equal (h->version_minor, 0);
  assert_false (httpreq_head_keep_alive (h));
  httpreq_parser_free (p);

  /* A CONNECT may say Content-Length: 0 (some clients do), no more.  */
  p = request ("CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  httpreq_parser_free (p);
  refuse ("CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 400,
          "CONNECT request with a body");
  refuse ("CONNECT a.test:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
          400, "CONNECT request with a body");
  refuse ("CONNECT a.test HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT a.test:0 HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT a.test:65536 HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT user@a.test:443 HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT [2001:db8::1:443 HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT http://a.test:443/ HTTP/1.1\r\n\r\n", 400, "host:port");
  refuse ("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "host:port");
}

static void
test_absolute (void **state)
{
  struct httpreq_parser *p
      = request ("GET http://Allowed.Test/a/b?c=d HTTP/1.1\r\n"
                 "Host: allowed.test\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_int_equal (h->form, HTTPREQ_FORM_ABSOLUTE);
  assert_string_equal (h->authority.host, "Allowed.Test");
  assert_int_equal (h->authority.port, 80);
  assert_string_equal (h->path, "/a/b?c=d");
  assert_string_equal (h->target, "http://Allowed.Test/a/b?c=d");
  httpreq_parser_free (p);

  static const struct
  {
    const char *target, *host, *path;
    uint16_t port;
  } forms[] = {
    { "http://a.test", "a.test", "/", 80 },
    { "http://a.test/", "a.test", "/", 80 },
    { "http://a.test?q", "a.test", "/?q", 80 },
    { "HTTP://a.test:8080/x", "a.test", "/x", 8080 },
    { "http://[2001:db8::10]:81/x", "2001:db8::10", "/x", 81 },
    { "http://[::1]/", "::1", "/", 80 },
    { "http://192.0.2.10/", "192.0.2.10", "/", 80 },
    { "http://a.test/x:y@z", "a.test", "/x:y@z", 80 },
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
    {
      char text[256];
      snprintf (text, sizeof text, "POST %s HTTP/1.1\r\n\r\n", forms[i].target);
      p = request (text);
      h = httpreq_parser_head (p);
      assert_string_equal (h->method, "POST");
      assert_string_equal (h->authority.host, forms[i].host);
      assert_string_equal (h->path, forms[i].path);
      assert_int_equal (h->authority.port, forms[i].port);
      httpreq_parser_free (p);
    }
  refuse ("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, "origin-form");
  refuse ("GET /x HTTP/1.1\r\n\r\n", 400, "origin-form");
  refuse ("OPTIONS * HTTP/1.1\r\n\r\n", 400, "not an absolute http URL");
  refuse ("GET https://a.test/ HTTP/1.1\r\n\r\n", 400, "use CONNECT");
  refuse ("GET HTTPS://a.test/ HTTP/1.1\r\n\r\n", 400, "use CONNECT");
  refuse ("GET ftp://a.test/ HTTP/1.1\r\n\r\n", 400, "scheme is not http");
  refuse ("GET httpx://a.test/ HTTP/1.1\r\n\r\n", 400, "scheme is not http");
  refuse ("GET a.test:80 HTTP/1.1\r\n\r\n", 400, "not an absolute http URL");
  refuse ("GET http:///x HTTP/1.1\r\n\r\n", 400, "authority");
  refuse ("GET http://u:p@a.test/ HTTP/1.1\r\n\r\n", 400, "authority");
  refuse ("GET http://a.test:0/ HTTP/1.1\r\n\r\n", 400, "authority");
  refuse ("GET http://a.test:/ HTTP/1.1\r\n\r\n", 400, "authority");
  refuse ("GET http://a.test/#frag HTTP/1.1\r\n\r\n", 400, "character");
  refuse ("GET http://a.test/\x7f HTTP/1.1\r\n\r\n", 400, "character");
  refuse ("GET http://a%2etest/ HTTP/1.1\r\n\r\n", 400, "authority");
}

static void
test_request_line (void **state)
{
  refuse ("GET  http://a.test/ HTTP/1.1\r\n\r\n", 400, "request line");
  refuse ("GET http://a.test/  HTTP/1.1\r\n\r\n", 400, "request line");
  refuse ("GET http://a.test/ HTTP/1.1 \r\n\r\n", 400, "request line");
  refuse (" GET http://a.test/ HTTP/1.1\r\n\r\n", 400, "request line");
  refuse (" http://a.test/ HTTP/1.1\r\n\r\n", 400, "method");
  refuse ("GET\thttp://a.test/ HTTP/1.1\r\n\r\n", 400, "request line");
  refuse ("GET http://a.test/\r\n\r\n", 400, "request line");
  refuse ("GET\r\n\r\n", 400, "request line");
  refuse ("G(T http://a.test/ HTTP/1.1\r\n\r\n", 400, "method");
  refuse ("GET http://a.test/ http/1.1\r\n\r\n", 400, "HTTP version");
  refuse ("GET http://a.test/ HTTP/1.10\r\n\r\n", 400, "HTTP version");
  refuse ("GET http://a.test/ HTTP/1\r\n\r\n", 400, "HTTP version");
  refuse ("GET http://a.test/ HTTP/2.0\r\n\r\n", 505, "not 1.x");
  refuse ("GET http://a.test/ HTTP/0.9\r\n\r\n", 505, "not 1.x");
  struct httpreq_parser *p = request ("GET http://a.test/ HTTP/1.2\r\n\r\n");
  assert_int_equal (httpreq_parser_head (p)->version_minor, 1);
  httpreq_parser_free (p);
  /* Empty lines before the request line are skipped.  */
  p = request ("\r\n\r\n\nGET http://a.test/ HTTP/1.1\r\n\r\n");
  assert_string_equal (httpreq_parser_head (p)->method, "GET");
  httpreq_parser_free (p);
  /* Any token is a method.  */
  p = request ("PROPFIND http://a.test/ HTTP/1.1\r\n\r\n");
  httpreq_parser_free (p);
}

/* --- line endings and field syntax ---------------------------------- */

static void
test_line_endings (void **state)
{
  /* A bare LF ends a head line (RFC 9112 2.2); the head is rewritten.  */
  struct httpreq_parser *p
      = request ("GET http://a.test/ HTTP/1.1\nHost: a.test\nX: y\r\n\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_int_equal (h->n_fields, 2);
  assert_string_equal (h->fields[0].value, "a.test");
  assert_string_equal (h->fields[1].value, "y");
  httpreq_parser_free (p);
  /* A CR that is not followed by LF is refused wherever it is.  */
  refuse ("GET http://a.test/ HTTP/1.1\rHost: a.test\r\n\r\n", 400, "CR");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "CR");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\r\r\n\r\n", 400, "CR");
  refuse ("GET http://a.test/ HTTP/1.1\r\n\r\r\n", 400, "CR");
  refuse_len (HTTPREQ_REQUEST, "GET http://a.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n",
              40, 400, "NUL");
}

static void
test_field_syntax (void **state)
{
  struct httpreq_parser *p
      = request ("GET http://a.test/ HTTP/1.1\r\nX-A:v\r\nX-B: \t v w \t\r\n"
                 "X-C:\r\nX-D: caf\xc3\xa9\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_string_equal (h->fields[0].value, "v");
  assert_string_equal (h->fields[1].value, "v w");
  assert_string_equal (h->fields[2].value, "");
  assert_string_equal (h->fields[3].value, "caf\xc3\xa9");
  httpreq_parser_free (p);
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, "obs-fold");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", 400,
          "obs-fold");
  refuse ("GET http://a.test/ HTTP/1.1\r\n Host: a.test\r\n\r\n", 400,
          "obs-fold");
  refuse ("GET http://a.test/ HTTP/1.1\r\nHost : a.test\r\n\r\n", 400,
          "whitespace between");
  refuse ("GET http://a.test/ HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n", 400,
          "whitespace between");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX Y: a\r\n\r\n", 400, "not a token");
  refuse ("GET http://a.test/ HTTP/1.1\r\n: a\r\n\r\n", 400, "not a token");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX(: a\r\n\r\n", 400, "not a token");
  refuse ("GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n", 400, "no colon");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", 400, "control");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400, "control");
  refuse ("GET http://a.test/ HTTP/1.1\r\nX: a\x1b[2J\r\n\r\n", 400, "control");
  refuse ("GET http://a.test/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
          "more than one Host");
  refuse ("GET http://a.test/ HTTP/1.1\r\n" AUTH AUTH "\r\n", 400,
          "more than one Proxy-Authorization");
  refuse ("GET http://a.test/ HTTP/1.1\r\nUpgrade: a\r\nUpgrade: b\r\n\r\n",
          400, "more than one Upgrade");
}

/* --- bounds, at and one past each ----------------------------------- */

/* A request line of exactly n bytes, CRLF included, then an empty head. */
static char *
line_of (size_t n)
{
  const char *pre = "GET http://a.test/", *post = " HTTP/1.1\r\n";
  size_t fill = n - strlen (pre) - strlen (post);
  char *a = xmalloc (fill + 1);
  memset (a, 'a', fill);
  a[fill] = '\0';
  char *t = xasprintf ("%s%s%s\r\n", pre, a, post);
  free (a);
  return t;
}

/* A head whose one X field line is exactly n bytes, CRLF included.  */
static char *
field_of (size_t n)
{
  char *v = xmalloc (n - 5 + 1);
  memset (v, 'v', n - 5);
  v[n - 5] = '\0';
  char *t = xasprintf ("GET http://a.test/ HTTP/1.1\r\nX: %s\r\n\r\n", v);
  free (v);
  return t;
}

/* A head of n fields.  */
static char *
fields_of (size_t n)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "GET http://a.test/ HTTP/1.1\r\n");
  for (size_t i = 0; i < n; i++)
    buf_printf (&b, "X-%zu: v\r\n", i);
  buf_puts (&b, "\r\n");
  return buf_steal (&b, NULL);
}

/* A head of exactly n bytes, its blank line included, in 4 KiB fields.  */
static char *
head_of (size_t n)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "GET http://a.test/ HTTP/1.1\r\n");
  while (b.len + 2 < n)
    {
      size_t left = n - 2 - b.len, line = left > 4096 ? 4096 : left;
      if (left > 4096 && left - 4096 < 8)
        line = 4000; /* leave room for one more whole line */
      char *v = xmalloc (line + 1);
      memset (v, 'v', line);
      memcpy (v, "X: ", 3);
      memcpy (v + line - 2, "\r\n", 2);
      v[line] = '\0';
      buf_puts (&b, v);
      free (v);
    }
  buf_puts (&b, "\r\n");
  assert_int_equal (b.len, n);
  return buf_steal (&b, NULL);
}

static void
test_bounds (void **state)
{
  char *t = line_of (HTTPREQ_MAX_START_LINE);
  httpreq_parser_free (request (t));
  free (t);
  t = line_of (HTTPREQ_MAX_START_LINE + 1);
  refuse (t, 414, "request line is longer");
  /* Refused before the line ends, as soon as it is too long.  */
  t[HTTPREQ_MAX_START_LINE + 1] = '\0';
  refuse (t, 414, "request line is longer");
  free (t);
  t = field_of (HTTPREQ_MAX_FIELD_LINE);
  httpreq_parser_free (request (t));
  free (t);
  t = field_of (HTTPREQ_MAX_FIELD_LINE + 1);
  refuse (t, 431, "header line is longer");
  free (t);
  t = fields_of (HTTPREQ_MAX_FIELDS);
  httpreq_parser_free (request (t));
  free (t);
  t = fields_of (HTTPREQ_MAX_FIELDS + 1);
  refuse (t, 431, "more than 100 header lines");
  free (t);
  t = head_of (HTTPREQ_MAX_HEAD);
  httpreq_parser_free (request (t));
  free (t);
  t = head_of (HTTPREQ_MAX_HEAD + 1);
  refuse (t, 431, "head is longer than 64 KiB");
  free (t);
  /* Empty lines before the request line count against the head.  */
  char *blank = xmalloc (HTTPREQ_MAX_HEAD + 2);
  for (size_t i = 0; i < HTTPREQ_MAX_HEAD; i += 2)
    memcpy (blank + i, "\r\n", 2);
  blank[HTTPREQ_MAX_HEAD] = '\n';
  blank[HTTPREQ_MAX_HEAD + 1] = '\0';
  refuse (blank, 431, "head is longer than 64 KiB");
  free (blank);
}

/* --- framing fields --------------------------------------------------- */

static void
test_content_length (void **state)
{
  struct httpreq_parser *p = request ("POST http://a.test/ HTTP/1.1\r\n"
                                      "Content-Length: 5\r\n"
                                      "content-length:  5 \r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  uint64_t len;
  assert_true (h->has_content_length);
  assert_int_equal (h->content_length, 5);
  assert_int_equal (httpreq_request_body (h, &len), HTTPREQ_BODY_LENGTH);
  assert_int_equal (len, 5);
  httpreq_parser_free (p);
  p = request ("POST http://a.test/ HTTP/1.1\r\n"
               "Content-Length: 999999999999999999\r\n\r\n");
  assert_int_equal (httpreq_parser_head (p)->content_length,
                    999999999999999999ull);
  httpreq_parser_free (p);
  p = request ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  assert_int_equal (httpreq_request_body (httpreq_parser_head (p), &len),
                    HTTPREQ_BODY_NONE);
  httpreq_parser_free (p);
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\n"
          "Content-Length: 6\r\n\r\n",
          400, "different values");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length:\r\n\r\n", 400,
          "one decimal number");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Content-Length: 1000000000000000000\r\n\r\n",
          400, "one decimal number");
}

static void
test_transfer_encoding (void **state)
{
  struct httpreq_parser *p = request ("POST http://a.test/ HTTP/1.1\r\n"
                                      "Transfer-Encoding: GZIP\r\n"
                                      "Transfer-Encoding: , Chunked\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  uint64_t len;
  assert_true (h->chunked);
  assert_string_equal (h->transfer_encoding, "gzip, chunked");
  assert_int_equal (httpreq_request_body (h, &len), HTTPREQ_BODY_CHUNKED);
  httpreq_parser_free (p);
  /* The smuggling shapes: both framings, a coding after chunked, chunked
   * twice, chunked missing, an HTTP/1.0 request with a coding.  */
  refuse ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\n"
          "Transfer-Encoding: chunked\r\n\r\n",
          400, "both Content-Length and Transfer-Encoding");
  refuse ("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
          "Content-Length: 0\r\n\r\n",
          400, "both Content-Length and Transfer-Encoding");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: chunked, gzip\r\n\r\n",
          400, "last coding is not chunked");
  refuse ("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
          "Transfer-Encoding: gzip\r\n\r\n",
          400, "last coding is not chunked");
  refuse ("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
          400, "last coding is not chunked");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: chunked, chunked\r\n\r\n",
          400, "twice");
  refuse ("POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
          400, "HTTP/1.0");
  refuse ("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: foo\r\n\r\n", 501,
          "unknown transfer coding");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: identity, chunked\r\n\r\n",
          501, "unknown transfer coding");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: xchunked\r\n\r\n",
          501, "unknown transfer coding");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: chunked;q=1\r\n\r\n",
          400, "not a token");
  refuse ("POST http://a.test/ HTTP/1.1\r\n"
          "Transfer-Encoding: \"chunked\"\r\n\r\n",
          400, "not a token");
}

static void
test_connection (void **state)
{
  struct httpreq_parser *p = request ("GET http://a.test/ HTTP/1.1\r\n"
                                      "Connection: Keep-Alive, X-Secret\r\n"
                                      "Connection: close\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_int_equal (h->n_connection_tokens, 3);
  assert_string_equal (h->connection_tokens[1], "x-secret");
  assert_true (h->connection_close);
  assert_true (h->connection_keep_alive);
  assert_false (httpreq_head_keep_alive (h));
  httpreq_parser_free (p);
  p = request ("GET http://a.test/ HTTP/1.0\r\n"
               "Proxy-Connection: keep-alive\r\n\r\n");
  h = httpreq_parser_head (p);
  assert_true (httpreq_head_keep_alive (h));
  assert_int_equal (h->n_connection_tokens, 0);
  httpreq_parser_free (p);
  p = request (
      "GET http://a.test/ HTTP/1.1\r\nProxy-Connection: close\r\n\r\n");
  assert_false (httpreq_head_keep_alive (httpreq_parser_head (p)));
  httpreq_parser_free (p);
  p = request ("GET http://a.test/ HTTP/1.1\r\nConnection: Upgrade\r\n"
               "Upgrade: websocket\r\n\r\n");
  h = httpreq_parser_head (p);
  assert_true (httpreq_head_is_upgrade (h));
  assert_string_equal (h->upgrade, "websocket");
  httpreq_parser_free (p);
  /* Upgrade without Connection: upgrade is no upgrade.  */
  p = request ("GET http://a.test/ HTTP/1.1\r\nUpgrade: websocket\r\n\r\n");
  assert_false (httpreq_head_is_upgrade (httpreq_parser_head (p)));
  httpreq_parser_free (p);
  refuse ("GET http://a.test/ HTTP/1.1\r\nConnection: a b\r\n\r\n", 400,
          "Connection option");
}

static void
test_expect (void **state)
{
  struct httpreq_parser *p = request ("PUT http://a.test/x HTTP/1.1\r\n"
                                      "Content-Length: 3\r\n"
                                      "Expect: 100-Continue\r\n\r\n");
  assert_true (httpreq_parser_head (p)->expect_continue);
  httpreq_parser_free (p);
  refuse ("PUT http://a.test/x HTTP/1.1\r\nExpect: something\r\n\r\n", 417,
          "expectation");
}

static void
test_leftover (void **state)
{
  /* The head ends where its blank line does; the rest is the caller's.  */
  const char *text = "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\n"
                     "\r\nabcGET http://a.test/ HTTP/1.1\r\n\r\n";
  size_t head = strlen ("POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\n"
                        "\r\n");
  enum httpreq_step step;
  size_t used;
  struct httpreq_parser *p
      = feed (HTTPREQ_REQUEST, text, strlen (text), false, &step, &used);
  assert_int_equal (step, HTTPREQ_DONE);
  assert_int_equal (used, head);
  /* After DONE a feed uses nothing.  */
  assert_int_equal (httpreq_parser_feed (p, "x", 1, &used), HTTPREQ_DONE);
  assert_int_equal (used, 0);
  /* The body, then the next request after a reset.  */
  struct httpreq_body b;
  uint64_t len;
  assert_int_equal (httpreq_request_body (httpreq_parser_head (p), &len),
                    HTTPREQ_BODY_LENGTH);
  httpreq_body_init (&b, HTTPREQ_REQUEST, HTTPREQ_BODY_LENGTH, len);
  assert_int_equal (
      httpreq_body_feed (&b, text + head, strlen (text) - head, &used),
      HTTPREQ_DONE);
  assert_int_equal (used, 3);
  httpreq_parser_reset (p);
  assert_null (httpreq_parser_head (p));
  size_t next = head + 3;
  assert_int_equal (
      httpreq_parser_feed (p, text + next, strlen (text) - next, &used),
      HTTPREQ_DONE);
  assert_int_equal (used, strlen (text) - next);
  assert_string_equal (httpreq_parser_head (p)->method, "GET");
  httpreq_parser_free (p);
}

/* --- responses ------------------------------------------------------ */

/* Parse a whole response head, requiring DONE.  */
static struct httpreq_parser *
response (const char *text)
{
  enum httpreq_step step;
  size_t used;
  struct httpreq_parser *p
      = feed (HTTPREQ_RESPONSE, text, strlen (text), false, &step, &used);
  if (step != HTTPREQ_DONE)
    fail_msg ("step %d (%s) for `%s`", step,
              step == HTTPREQ_ERROR ? httpreq_parser_error (p)->reason : "",
              text);
  return p;
}

/* The framing of the response text to a request of method.  */
static enum httpreq_body_kind
framing (const char *text, const char *method, uint64_t *len)
{
  struct httpreq_parser *p = response (text);
  enum httpreq_body_kind k
      = httpreq_response_body (httpreq_parser_head (p), method, len);
  httpreq_parser_free (p);
  return k;
}

static void
test_response (void **state)
{
  struct httpreq_parser *p = response ("HTTP/1.1 200 OK\r\nContent-Length: 2"
                                       "\r\nServer: x\r\n\r\n");
  const struct httpreq_head *h = httpreq_parser_head (p);
  assert_int_equal (h->status, 200);
  assert_string_equal (h->reason, "OK");
  assert_int_equal (h->n_fields, 2);
  httpreq_parser_free (p);
  p = response ("HTTP/1.0 404\r\n\r\n");
  assert_int_equal (httpreq_parser_head (p)->status, 404);
  assert_string_equal (httpreq_parser_head (p)->reason, "");
  httpreq_parser_free (p);
  p = response ("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
  assert_string_equal (httpreq_parser_head (p)->reason,
                       "Proxy Authentication Required");
  httpreq_parser_free (p);
  /* Everything wrong in a response is the proxy's 502.  */
  refuse_resp ("HTTP/1.1 600 X\r\n\r\n", 502, "out of range");
  refuse_resp ("HTTP/1.1 099 X\r\n\r\n", 502, "out of range");
  refuse_resp ("HTTP/1.1 20 X\r\n\r\n", 502, "three digits");
  refuse_resp ("HTTP/1.1 2000\r\n\r\n", 502, "out of range");
  refuse_resp ("HTTP/2 200\r\n\r\n", 502, "version");
  refuse_resp ("ICY 200 OK\r\n\r\n", 502, "version");
  refuse_resp ("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", 502, "obs-fold");
  refuse_resp ("HTTP/1.1 200 OK\r\nX : a\r\n\r\n", 502, "whitespace");
  refuse_resp ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
               "Transfer-Encoding: chunked\r\n\r\n",
               502, "both");
  refuse_resp ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
               "Content-Length: 2\r\n\r\n",
               502, "different values");
  refuse_resp ("HTTP/1.1 200 OK\x01\r\n\r\n", 502, "control");
  refuse_resp ("HTTP/1.1 200 OK\r\nTransfer-Encoding: br\r\n\r\n", 502,
               "unknown transfer coding");
  refuse_resp ("HTTP/1.1 200 OK\nX: a\rb\n\n", 502, "CR");
}

static void
test_response_framing (void **state)
{
  uint64_t len;
  assert_int_equal (
      framing ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD", &len),
      HTTPREQ_BODY_NONE);
  assert_int_equal (framing ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
                             "\r\n\r\n",
                             "HEAD", &len),
                    HTTPREQ_BODY_NONE);
  assert_int_equal (
      framing ("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", "GET",
               &len),
      HTTPREQ_BODY_NONE);
  assert_int_equal (
      framing ("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", "GET",
               &len),
      HTTPREQ_BODY_NONE);
  assert_int_equal (framing ("HTTP/1.1 100 Continue\r\n\r\n", "PUT", &len),
                    HTTPREQ_BODY_NONE);
  assert_int_equal (framing ("HTTP/1.1 103 Early Hints\r\n\r\n", "GET", &len),
                    HTTPREQ_BODY_NONE);
  assert_int_equal (framing ("HTTP/1.1 101 Switching Protocols\r\n"
                             "Upgrade: websocket\r\n\r\n",
                             "GET", &len),
                    HTTPREQ_BODY_TUNNEL);
  assert_int_equal (
      framing ("HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", &len),
      HTTPREQ_BODY_TUNNEL);
  assert_int_equal (
      framing ("HTTP/1.1 407 X\r\nContent-Length: 4\r\n\r\n", "CONNECT", &len),
      HTTPREQ_BODY_LENGTH);
  assert_int_equal (len, 4);
  assert_int_equal (
      framing ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "GET", &len),
      HTTPREQ_BODY_LENGTH);
  assert_int_equal (len, 10);
  assert_int_equal (
      framing ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "GET", &len),
      HTTPREQ_BODY_NONE);
  assert_int_equal (framing ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, "
                             "chunked\r\n\r\n",
                             "GET", &len),
                    HTTPREQ_BODY_CHUNKED);
  /* A response whose last coding is not chunked runs until close.  */
  assert_int_equal (framing ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, "
                             "gzip\r\n\r\n",
                             "GET", &len),
                    HTTPREQ_BODY_CLOSE);
  assert_int_equal (framing ("HTTP/1.1 200 OK\r\n\r\n", "GET", &len),
                    HTTPREQ_BODY_CLOSE);
  assert_int_equal (framing ("HTTP/1.0 200 OK\r\n\r\n", "GET", &len),
                    HTTPREQ_BODY_CLOSE);
}

/* --- bodies --------------------------------------------------------- */

/* Decode body (len bytes) as chunked of kind, split into pieces of step
 * bytes; return the result and *used the bytes that belonged to it.  */
static enum httpreq_step
chunked (enum httpreq_kind of, const char *body, size_t len, size_t step,
         size_t *used, struct httpreq_body *b)
{
  enum httpreq_step r = HTTPREQ_MORE;
  size_t u;
  httpreq_body_init (b, of, HTTPREQ_BODY_CHUNKED, 0);
  *used = 0;
  for (size_t i = 0; i < len && r == HTTPREQ_MORE; i += step)
    {
      size_t n = len - i < step ? len - i : step;
      r = httpreq_body_feed (b, body + i, n, &u);
      *used += u;
    }
  return r;
}

/* Require body + rest to decode as a chunked message of exactly body's
 * bytes, whatever the split.  */
static void
expect_chunked (const char *body, const char *rest)
{
  size_t n = strlen (body);
  char *all = xasprintf ("%s%s", body, rest);
  for (size_t step = 1; step <= strlen (all); step++)
    {
      struct httpreq_body b;
      size_t used;
      enum httpreq_step r
          = chunked (HTTPREQ_REQUEST, all, strlen (all), step, &used, &b);
      if (r != HTTPREQ_DONE || used != n)
        fail_msg ("`%.40s` in steps of %zu: step %d, used %zu of %zu (%s)",
                  body, step, r, used, n,
                  r == HTTPREQ_ERROR ? b.error.reason : "");
      assert_true (b.done);
    }
  free (all);
}

/* Require body to fail as chunked framing with the reason holding want,
 * with status 400 for a request and 502 for a response.  */
static void
refuse_chunked (const char *body, const char *want)
{
  for (size_t step = 1; step <= strlen (body); step += strlen (body) - 1)
    for (int of = 0; of < 2; of++)
      {
        struct httpreq_body b;
        size_t used;
        enum httpreq_step r = chunked (of ? HTTPREQ_RESPONSE : HTTPREQ_REQUEST,
                                       body, strlen (body), step, &used, &b);
        if (r != HTTPREQ_ERROR)
          fail_msg ("`%s`: step %d, not an error", body, r);
        assert_int_equal (b.error.status, of ? 502 : 400);
        if (strstr (b.error.reason, want) == NULL)
          fail_msg ("`%s`: `%s` does not say `%s`", body, b.error.reason, want);
        assert_int_equal (httpreq_body_feed (&b, "0", 1, &used), HTTPREQ_ERROR);
        assert_int_equal (used, 0);
      }
}

static void
test_chunked (void **state)
{
  expect_chunked ("0\r\n\r\n", "GET http://a.test/ HTTP/1.1\r\n\r\n");
  expect_chunked ("5\r\nhello\r\n0\r\n\r\n", "");
  expect_chunked ("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "NEXT");
  expect_chunked ("A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n", "x");
  expect_chunked ("00005\r\nhello\r\n000\r\n\r\n", "");
  /* Data holding what looks like framing is data.  */
  expect_chunked ("7\r\n0\r\n\r\nab\r\n0\r\n\r\n", "z");
  /* Extensions, with blanks before the semicolon, tokens and quoted
   * strings.  */
  expect_chunked ("5;name=value\r\nhello\r\n0;last\r\n\r\n", "");
  expect_chunked ("5 ;a=b ; c=\"x;y\"\r\nhello\r\n0\t;x\r\n\r\n", "");
  /* Trailers.  */
  expect_chunked ("5\r\nhello\r\n0\r\nChecksum: abc\r\nX-Other:\r\n\r\n",
                  "next");
  expect_chunked ("0\r\nA:b\r\n\r\n", "");
  refuse_chunked ("\r\n", "not hexadecimal");
  refuse_chunked ("g\r\n", "not hexadecimal");
  refuse_chunked (";x\r\n", "not hexadecimal");
  refuse_chunked ("-5\r\n", "not hexadecimal");
  refuse_chunked ("0x5\r\nhello\r\n", "malformed");
  refuse_chunked ("5 \r\nhello\r\n0\r\n\r\n", "malformed");
  refuse_chunked ("5 5\r\nhello\r\n", "malformed");
  /* Bare LF anywhere in the framing.  */
  refuse_chunked ("5\nhello\r\n0\r\n\r\n", "malformed");
  refuse_chunked ("5;x\nhello\r\n0\r\n\r\n", "malformed");
  refuse_chunked ("5\r\nhello\n0\r\n\r\n", "not followed by CRLF");
  refuse_chunked ("5\r\nhello\r\n0\n\r\n", "malformed");
  refuse_chunked ("5\r\nhello\r\n0\r\n\n", "trailer line is malformed");
  refuse_chunked ("0\r\nA: b\n\r\n", "control");
  refuse_chunked ("5\rhello\r\n", "not followed by LF");
  /* Too few or too many data bytes.  */
  refuse_chunked ("5\r\nhell\r\n0\r\n\r\n", "not followed by CRLF");
  refuse_chunked ("5\r\nhello!\r\n0\r\n\r\n", "not followed by CRLF");
  /* Sizes that overflow, or would.  */
  refuse_chunked ("1000000000000000\r\n", "too large");
  refuse_chunked ("ffffffffffffffffff\r\n", "too large");
  refuse_chunked ("0000000000000000005\r\n", "too large");
  /* Trailers that are not fields.  */
  refuse_chunked ("0\r\n Folded: x\r\n\r\n", "trailer line is malformed");
  refuse_chunked ("0\r\nNo colon\r\n\r\n", "trailer line is malformed");
  refuse_chunked ("0\r\nA : b\r\n\r\n", "trailer line is malformed");
  refuse_chunked ("0\r\nA: b\x01\r\n\r\n", "control");
  refuse_chunked ("0\r\nA: b\rc\r\n\r\n", "not followed by LF");
  /* A control in an extension.  */
  refuse_chunked ("5;a\x01\r\nhello\r\n", "malformed");
}

static void
test_chunked_bounds (void **state)
{
  /* A size line of exactly 8192 bytes (CRLF included) passes; one more
   * byte is refused.  */
  struct buf b = BUF_INIT;
  buf_puts (&b, "5;");
  while (b.len < HTTPREQ_MAX_FIELD_LINE - 2)
    buf_putc (&b, 'x');
  buf_puts (&b, "\r\nhello\r\n0\r\n\r\n");
  expect_chunked (b.data, "");
  buf_free (&b);
  buf_puts (&b, "5;");
  while (b.len < HTTPREQ_MAX_FIELD_LINE - 1)
    buf_putc (&b, 'x');
  buf_puts (&b, "\r\nhello\r\n0\r\n\r\n");
  refuse_chunked (b.data, "chunk-size line is longer than 8 KiB");
  buf_free (&b);
  /* A trailer line of 8192 bytes passes, 8193 does not.  */
  buf_puts (&b, "0\r\nT: ");
  while (b.len - 3 < HTTPREQ_MAX_FIELD_LINE - 2)
    buf_putc (&b, 'v');
  buf_puts (&b, "\r\n\r\n");
  expect_chunked (b.data, "");
  buf_free (&b);
  buf_puts (&b, "0\r\nT: ");
  while (b.len - 3 < HTTPREQ_MAX_FIELD_LINE - 1)
    buf_putc (&b, 'v');
  buf_puts (&b, "\r\n\r\n");
  refuse_chunked (b.data, "trailer line is longer than 8 KiB");
  buf_free (&b);
  /* 100 trailer lines pass, 101 do not.  */
  buf_puts (&b, "0\r\n");
  for (int i = 0; i < HTTPREQ_MAX_FIELDS; i++)
    buf_printf (&b, "T%d: v\r\n", i);
  char *at = xasprintf ("%s\r\n", b.data);
  expect_chunked (at, "");
  free (at);
  buf_puts (&b, "T: v\r\n\r\n");
  refuse_chunked (b.data, "more than 100 trailer lines");
  buf_free (&b);
  /* Trailers past 64 KiB in all.  */
  buf_puts (&b, "0\r\n");
  for (int i = 0; i < 9; i++)
    {
      buf_printf (&b, "T%d: ", i);
      for (int j = 0; j < 8000; j++)
        buf_putc (&b, 'v');
      buf_puts (&b, "\r\n");
    }
  buf_puts (&b, "\r\n");
  refuse_chunked (b.data, "trailers are longer than 64 KiB");
  buf_free (&b);
}

static void
test_length_body (void **state)
{
  struct httpreq_body b;
  size_t used;
  httpreq_body_init (&b, HTTPREQ_REQUEST, HTTPREQ_BODY_LENGTH, 10);
  assert_int_equal (httpreq_body_feed (&b, "0123", 4, &used), HTTPREQ_MORE);
  assert_int_equal (used, 4);
  assert_int_equal (httpreq_body_feed (&b, "456789NEXT", 10, &used),
                    HTTPREQ_DONE);
  assert_int_equal (used, 6);
  assert_int_equal (httpreq_body_feed (&b, "NEXT", 4, &used), HTTPREQ_DONE);
  assert_int_equal (used, 0);
  httpreq_body_init (&b, HTTPREQ_REQUEST, HTTPREQ_BODY_LENGTH, 0);
  assert_true (b.done);
  assert_int_equal (httpreq_body_feed (&b, "x", 1, &used), HTTPREQ_DONE);
  assert_int_equal (used, 0);
  httpreq_body_init (&b, HTTPREQ_REQUEST, HTTPREQ_BODY_NONE, 0);
  assert_int_equal (httpreq_body_feed (&b, "x", 1, &used), HTTPREQ_DONE);
  assert_int_equal (used, 0);
  /* A large length counts without overflow.  */
  httpreq_body_init (&b, HTTPREQ_RESPONSE, HTTPREQ_BODY_LENGTH,
                     999999999999999999ull);
  assert_int_equal (httpreq_body_feed (&b, "abc", 3, &used), HTTPREQ_MORE);
  assert_true (b.remaining == 999999999999999996ull);
  httpreq_body_init (&b, HTTPREQ_RESPONSE, HTTPREQ_BODY_CLOSE, 0);
  assert_int_equal (httpreq_body_feed (&b, "abc", 3, &used), HTTPREQ_MORE);
  assert_int_equal (used, 3);
  httpreq_body_init (&b, HTTPREQ_RESPONSE, HTTPREQ_BODY_TUNNEL, 0);
  assert_int_equal (httpreq_body_feed (&b, "abc", 3, &used), HTTPREQ_MORE);
  assert_int_equal (used, 3);
}

/* --- the forwarded head ----------------------------------------------- */

/* The forwarded head of the request text.  */
static char *
forward (const char *text, bool keep_alive)
{
  struct httpreq_parser *p = request (text);
  struct buf out = BUF_INIT;
  httpreq_write_forward (httpreq_parser_head (p), keep_alive, &out);
  httpreq_parser_free (p);
  return buf_steal (&out, NULL);
}

/* Require the forwarded head of text to be want.  */
static void
expect_forward (const char *text, bool keep_alive, const char *want)
{
  char *got = forward (text, keep_alive);
  assert_string_equal (got, want);
  free (got);
}

static void
test_forward (void **state)
{
  expect_forward ("GET http://Allowed.Test/a?b HTTP/1.1\r\n"
                  "Host: evil.test\r\n" AUTH "User-Agent: curl\r\n"
                  "Proxy-Connection: Keep-Alive\r\nKeep-Alive: 5\r\n"
                  "TE: trailers\r\nTrailer: X\r\nAccept: */*\r\n\r\n",
                  true,
                  "GET /a?b HTTP/1.1\r\nHost: allowed.test\r\n"
                  "User-Agent: curl\r\nAccept: */*\r\n\r\n");
  /* Connection-named fields go; Content-Length is written from the parsed
   * value even when Connection names it.  */
  expect_forward ("POST http://a.test:8080 HTTP/1.0\r\n"
                  "Connection: X-Secret, Content-Length, keep-alive\r\n"
                  "X-Secret: s\r\nContent-Length:  007\r\nX-Kept: k\r\n\r\n",
                  false,
                  "POST / HTTP/1.1\r\nHost: a.test:8080\r\nX-Kept: k\r\n"
                  "Content-Length: 7\r\nConnection: close\r\n\r\n");
  expect_forward ("PUT http://[2001:DB8::10]/x HTTP/1.1\r\n"
                  "Transfer-Encoding: GZIP\r\n"
                  "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
                  true,
                  "PUT /x HTTP/1.1\r\nHost: [2001:db8::10]\r\n"
                  "Expect: 100-continue\r\n"
                  "Transfer-Encoding: gzip, chunked\r\n\r\n");
  expect_forward ("GET http://a.test/ws HTTP/1.1\r\nConnection: Upgrade\r\n"
                  "Upgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n",
                  true,
                  "GET /ws HTTP/1.1\r\nHost: a.test\r\n"
                  "Sec-WebSocket-Key: k\r\n"
                  "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n");
  /* A field another server could read as a framing or hop-by-hop field
   * is left out too.  */
  expect_forward ("GET http://a.test/ HTTP/1.1\r\nContent_Length: 50\r\n"
                  "transfer_encoding: chunked\r\nProxy_Authorization: x\r\n"
                  "X_Other: kept\r\n\r\n",
                  true,
                  "GET / HTTP/1.1\r\nHost: a.test\r\nX_Other: kept\r\n\r\n");
  /* An Upgrade field without Connection: upgrade is not forwarded.  */
  expect_forward ("GET http://a.test/ HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
                  true, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n");
  expect_forward ("GET http://b\xc3\xbc\x63her.example/ HTTP/1.1\r\n\r\n", true,
                  "GET / HTTP/1.1\r\nHost: xn--bcher-kva.example\r\n\r\n");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_connect),
    cmocka_unit_test (test_absolute),
    cmocka_unit_test (test_request_line),
    cmocka_unit_test (test_line_endings),
    cmocka_unit_test (test_field_syntax),
    cmocka_unit_test (test_bounds),
    cmocka_unit_test (test_content_length),
    cmocka_unit_test (test_transfer_encoding),
    cmocka_unit_test (test_connection),
    cmocka_unit_test (test_expect),
    cmocka_unit_test (test_leftover),
    cmocka_unit_test (test_response),
    cmocka_unit_test (test_response_framing),
    cmocka_unit_test (test_chunked),
    cmocka_unit_test (test_chunked_bounds),
    cmocka_unit_test (test_length_body),
    cmocka_unit_test (test_forward),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
