/* libFuzzer target for the proxy's parsing (sandbox/httpreq.c and the
 * names of sandbox/netpolicy.c): the input is a stream a client sent.  It
 * is read as a proxy reads a kept connection -- a request head, its body,
 * the next head -- once whole and once in pieces whose sizes the input's
 * first byte chooses, and the two readings must agree byte for byte.  A
 * head that parses meets the bounds and the framing rules; an error has a
 * status the proxy may answer; the forwarded head is well-formed CRLF text
 * with no hop-by-hop field and one framing field at most; the host
 * normalises to lower-case ASCII and normalising again changes nothing.
 * The same bytes are read as a response stream too, and their first
 * bytes as addresses to classify.  tests/fuzz/replay.c
 * runs the same function over tests/fuzz/corpus-httpreq without
 * libFuzzer.  */
#include <config.h>

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "lib/error.h"
#include "sandbox/httpreq.h"
#include "sandbox/netpolicy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The most messages read from one input.  */
#define FUZZ_MAX_MESSAGES 16

/* What one reading of the stream saw, to compare two readings.  */
struct fuzz_trace
{
  struct buf log; /* one record per head, body and error */
};

/* Abort unless s (n bytes) holds no CR, LF or NUL.  */
static void
fuzz_clean (const char *s)
{
  if (s == NULL)
    abort ();
  if (strpbrk (s, "\r\n") != NULL)
    abort ();
}

/* Read the forwarded head fwd again, its target made absolute from its
 * Host line: what the origin reads must frame the body as the proxy did,
 * for the same method and authority.  */
static void
fuzz_check_reparse (const struct httpreq_head *req, const char *fwd)
{
  const char *sp = strchr (fwd, ' ');
  const char *eol = strstr (fwd, "\r\n");
  const char *host = eol + 2 + strlen ("Host: ");
  const char *host_end = strstr (host, "\r\n");
  const char *path_end = strstr (sp + 1, " HTTP/1.1\r\n");
  struct buf again = BUF_INIT;
  size_t used;
  if (strncmp (eol + 2, "Host: ", 6) != 0 || path_end != eol - 9)
    abort ();
  buf_printf (&again, "%.*s http://%.*s%.*s%s", (int) (sp - fwd), fwd,
              (int) (host_end - host), host, (int) (path_end - sp - 1), sp + 1,
              path_end);
  struct httpreq_parser *p = httpreq_parser_new (HTTPREQ_REQUEST);
  enum httpreq_step r = httpreq_parser_feed (p, again.data, again.len, &used);
  const struct httpreq_head *h = httpreq_parser_head (p);
  if (r == HTTPREQ_ERROR)
    {
      /* Only a bound may be crossed: the Host line and the normalised
       * codings can be longer than what was received.  */
      int st = httpreq_parser_error (p)->status;
      if (st != 414 && st != 431)
        abort ();
    }
  else if (r != HTTPREQ_DONE || used != again.len
           || strcmp (h->method, req->method) != 0 || h->chunked != req->chunked
           || h->has_transfer_encoding != req->has_transfer_encoding
           || h->has_content_length
                  != (req->has_content_length && !req->has_transfer_encoding)
           || (h->has_content_length
               && h->content_length != req->content_length)
           || h->authority.port != req->authority.port
           || strcmp (h->path, req->path) != 0 || h->proxy_authorization != NULL
           || httpreq_head_is_upgrade (h) != httpreq_head_is_upgrade (req))
    abort ();
  httpreq_parser_free (p);
  buf_free (&again);
}

/* Check the forwarded head of req.  */
static void
fuzz_check_forward (const struct httpreq_head *req)
{
  struct buf out = BUF_INIT;
  size_t framing = 0;
  httpreq_write_forward (req, true, &out);
  if (out.len < 4 || memcmp (out.data + out.len - 4, "\r\n\r\n", 4) != 0
      || memchr (out.data, '\0', out.len) != NULL)
    abort ();
  for (size_t i = 0; i < out.len; i++)
    if ((out.data[i] == '\n' && (i == 0 || out.data[i - 1] != '\r'))
        || (out.data[i] == '\r'
            && (i + 1 == out.len || out.data[i + 1] != '\n')))
      abort ();
  for (char *line = out.data; *line; line = strstr (line, "\r\n") + 2)
    {
      if (strncasecmp (line, "Proxy-Authorization:", 20) == 0
          || strncasecmp (line, "Proxy-Connection:", 17) == 0
          || strncasecmp (line, "Keep-Alive:", 11) == 0)
        abort ();
      if (strncasecmp (line, "Content-Length:", 15) == 0
          || strncasecmp (line, "Transfer-Encoding:", 18) == 0)
        framing++;
    }
  if (framing > 1)
    abort ();
  fuzz_check_reparse (req, out.data);
  buf_free (&out);
}

/* Check that host normalises to lower-case ASCII, stably.  */
static void
fuzz_check_name (const char *host)
{
  char *a = NULL, *b = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_name_normalise (host, &a, &err) < 0)
    {
      if (err == NULL || a != NULL)
        abort ();
      cr_error_free (err);
      return;
    }
  for (const char *p = a; *p; p++)
    if ((unsigned char) *p >= 0x80 || (*p >= 'A' && *p <= 'Z') || *p <= 0x20)
      abort ();
  if (netpolicy_name_normalise (a, &b, &err) < 0 || strcmp (a, b) != 0)
    abort ();
  free (a);
  free (b);
}

/* Check a request head that parsed.  */
static void
fuzz_check_request (const struct httpreq_head *h)
{
  if (h->n_fields > HTTPREQ_MAX_FIELDS)
    abort ();
  fuzz_clean (h->method);
  fuzz_clean (h->target);
  for (size_t i = 0; i < h->n_fields; i++)
    {
      fuzz_clean (h->fields[i].name);
      fuzz_clean (h->fields[i].value);
      if (h->fields[i].name[0] == '\0' || strchr (h->fields[i].name, ':'))
        abort ();
    }
  if (h->has_content_length && h->has_transfer_encoding)
    abort ();
  if (h->chunked && !h->has_transfer_encoding)
    abort ();
  if (h->authority.port == 0 || h->authority.host[0] == '\0')
    abort ();
  if (h->form == HTTPREQ_FORM_AUTHORITY)
    {
      if (strcmp (h->method, "CONNECT") != 0 || h->path != NULL)
        abort ();
    }
  else
    {
      if (h->path == NULL || h->path[0] != '/')
        abort ();
      fuzz_clean (h->path);
      fuzz_check_forward (h);
    }
  fuzz_check_name (h->authority.host);
}

/* Check an error's status against who sent the message.  */
static void
fuzz_check_error (const struct httpreq_error *e, enum httpreq_kind kind)
{
  if (e == NULL || e->reason == NULL)
    abort ();
  if (kind == HTTPREQ_RESPONSE
          ? e->status != 502
          : (e->status != 400 && e->status != 414 && e->status != 417
             && e->status != 431 && e->status != 501 && e->status != 505))
    abort ();
}

/* The size of the next piece: all that is left when step is 0.  */
static size_t
fuzz_piece (size_t left, unsigned step, size_t i)
{
  size_t n = step == 0 ? left : 1 + (i * 7 + step) % (step * 3 + 1);
  return n < left ? n : left;
}

/* Feed a head parser from s, in pieces; *off advances by what it used.  */
static enum httpreq_step
fuzz_head (struct httpreq_parser *p, const uint8_t *s, size_t n, size_t *off,
           unsigned step)
{
  enum httpreq_step r = HTTPREQ_MORE;
  size_t used;
  for (size_t i = 0; *off < n && r == HTTPREQ_MORE; i++)
    {
      size_t piece = fuzz_piece (n - *off, step, i);
      r = httpreq_parser_feed (p, s + *off, piece, &used);
      if (used > piece || (r == HTTPREQ_MORE && used != piece))
        abort ();
      if (r != HTTPREQ_ERROR)
        *off += used;
    }
  return r;
}

/* Feed a body decoder from s, in pieces; *off advances by what it used. */
static enum httpreq_step
fuzz_body (struct httpreq_body *b, const uint8_t *s, size_t n, size_t *off,
           unsigned step)
{
  enum httpreq_step r = b->done ? HTTPREQ_DONE : HTTPREQ_MORE;
  size_t used;
  for (size_t i = 0; *off < n && r == HTTPREQ_MORE; i++)
    {
      size_t piece = fuzz_piece (n - *off, step, i);
      r = httpreq_body_feed (b, s + *off, piece, &used);
      if (used > piece || (r == HTTPREQ_MORE && used != piece))
        abort ();
      if (r == HTTPREQ_ERROR
          && (b->error.reason == NULL
              || (b->error.status != 400 && b->error.status != 502)))
        abort ();
      if (r != HTTPREQ_ERROR)
        *off += used;
    }
  return r;
}

/* Log what a head was, so two readings can be compared.  */
static void
fuzz_log_head (struct buf *log, const struct httpreq_head *h)
{
  buf_printf (log, "H %s|%s|%d|%d|%zu|%llu|%d|%s\n", h->method ? h->method : "",
              h->target ? h->target : "", h->status, h->version_minor,
              h->n_fields, (unsigned long long) h->content_length, h->chunked,
              h->authority.host);
  for (size_t i = 0; i < h->n_fields; i++)
    buf_printf (log, "F %s: %s\n", h->fields[i].name, h->fields[i].value);
}

/* Read the stream as a kept connection of kind, in pieces of step.  */
static void
fuzz_stream (const uint8_t *s, size_t n, enum httpreq_kind kind, unsigned step,
             struct buf *log)
{
  struct httpreq_parser *p = httpreq_parser_new (kind);
  size_t off = 0;
  for (int m = 0; m < FUZZ_MAX_MESSAGES && off < n; m++)
    {
      size_t start = off;
      enum httpreq_step r = fuzz_head (p, s, n, &off, step);
      if (r == HTTPREQ_ERROR)
        {
          /* Where in the head the error was found is the parser's
           * business; which message it was in is not.  */
          const struct httpreq_error *e = httpreq_parser_error (p);
          fuzz_check_error (e, kind);
          buf_printf (log, "E %d %s\n", e->status, e->reason);
          off = start;
          break;
        }
      if (r == HTTPREQ_MORE)
        break;
      const struct httpreq_head *h = httpreq_parser_head (p);
      if (h == NULL)
        abort ();
      fuzz_log_head (log, h);
      uint64_t len;
      enum httpreq_body_kind k;
      if (kind == HTTPREQ_REQUEST)
        {
          fuzz_check_request (h);
          k = httpreq_request_body (h, &len);
        }
      else
        k = httpreq_response_body (h, m % 2 ? "HEAD" : "GET", &len);
      struct httpreq_body b;
      httpreq_body_init (&b, kind, k, len);
      start = off;
      r = fuzz_body (&b, s, n, &off, step);
      buf_printf (log, "B %d %d %zu\n", (int) k, (int) r,
                  r == HTTPREQ_ERROR ? 0 : off - start);
      if (r == HTTPREQ_ERROR)
        {
          buf_printf (log, "E %d %s\n", b.error.status, b.error.reason);
          off = start;
        }
      if (r != HTTPREQ_DONE)
        break;
      httpreq_parser_reset (p);
    }
  buf_printf (log, "end %zu\n", off);
  httpreq_parser_free (p);
}

/* Read the stream whole and in pieces; the readings must agree.  */
static void
fuzz_agree (const uint8_t *s, size_t n, enum httpreq_kind kind, unsigned step)
{
  struct buf whole = BUF_INIT, pieces = BUF_INIT;
  fuzz_stream (s, n, kind, 0, &whole);
  fuzz_stream (s, n, kind, step, &pieces);
  if (whole.len != pieces.len
      || memcmp (whole.data, pieces.data, whole.len) != 0)
    abort ();
  buf_free (&whole);
  buf_free (&pieces);
}

/* The input as a NUL-terminated string (NULs inside cut it short).  */
static char *
fuzz_string (const uint8_t *s, size_t n)
{
  char *t = malloc (n + 1);
  if (t == NULL)
    abort ();
  memcpy (t, s, n);
  t[n] = '\0';
  return t;
}

/* Classify the first bytes of the input as an IPv4 address, and as the
 * same address IPv4-mapped and NAT64: one class all three ways, and
 * allow_private changes PRIVATE alone.  The first 16 bytes as IPv6 too. */
static void
fuzz_classify (const uint8_t *s, size_t n)
{
  static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
  static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
  struct sockaddr_in sin = { .sin_family = AF_INET };
  struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
  if (n < 4)
    return;
  memcpy (&sin.sin_addr, s, 4);
  for (int allow = 0; allow < 2; allow++)
    {
      enum netpolicy_addr_class c
          = netpolicy_addr_classify ((struct sockaddr *) &sin, allow, NULL);
      memcpy (sin6.sin6_addr.s6_addr, mapped, 12);
      memcpy (sin6.sin6_addr.s6_addr + 12, s, 4);
      if (netpolicy_addr_classify ((struct sockaddr *) &sin6, allow, NULL) != c)
        abort ();
      memcpy (sin6.sin6_addr.s6_addr, nat64, 12);
      if (netpolicy_addr_classify ((struct sockaddr *) &sin6, allow, NULL) != c)
        abort ();
    }
  if (n < 16)
    return;
  memcpy (sin6.sin6_addr.s6_addr, s, 16);
  enum netpolicy_addr_class strict
      = netpolicy_addr_classify ((struct sockaddr *) &sin6, false, NULL);
  enum netpolicy_addr_class lax
      = netpolicy_addr_classify ((struct sockaddr *) &sin6, true, NULL);
  if (strict != lax
      && !(strict == NETPOLICY_ADDR_PRIVATE && lax == NETPOLICY_ADDR_ALLOWED))
    abort ();
  if (netpolicy_addr_class_name (strict) == NULL)
    abort ();
}

/* The names, NO_PROXY and upstream readers over the input as text.  */
static void
fuzz_netpolicy (const uint8_t *s, size_t n)
{
  struct netpolicy_authority a;
  struct cr_error *err = NULL;
  if (netpolicy_authority_parse ((const char *) s, n, 80, &a, &err) == 0)
    {
      if (a.port == 0 || strlen (a.host) > NETPOLICY_HOST_MAX)
        abort ();
      fuzz_check_name (a.host);
    }
  else
    cr_error_free (err);
  if (n > 512)
    return;
  char *t = fuzz_string (s, n);
  size_t nt = strlen (t);
  char *var = malloc (nt + 13);
  if (var == NULL)
    abort ();
  memcpy (var, "https_proxy=", 12);
  memcpy (var + 12, t, nt);
  var[12 + nt] = '\0';
  char *env[] = { var, NULL };
  struct netpolicy_upstream u;
  if (netpolicy_upstream_from_env (env, true, "example.com", &u) == 0
      && u.scheme != NETPOLICY_UPSTREAM_NONE && (u.host == NULL || u.port == 0))
    abort ();
  netpolicy_upstream_clear (&u);
  (void) netpolicy_no_proxy_match (t, "www.example.com");
  (void) netpolicy_no_proxy_match (t, "192.0.2.10");
  (void) netpolicy_no_proxy_match (t, "2001:db8::10");
  (void) netpolicy_no_proxy_match ("example.com, 192.0.2.0/24 ::1/128", t);
  char *text = netpolicy_refusal_text (t, NETPOLICY_REFUSED_NAME);
  for (const char *p = text; *p; p++)
    if ((unsigned char) *p < 0x20 && *p != '\n')
      abort ();
  free (text);
  free (var);
  free (t);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  unsigned step = data[0] % 17 + 1;
  fuzz_agree (data + 1, size - 1, HTTPREQ_REQUEST, step);
  fuzz_agree (data + 1, size - 1, HTTPREQ_RESPONSE, step);
  fuzz_netpolicy (data + 1, size - 1);
  fuzz_classify (data + 1, size - 1);
  return 0;
}
