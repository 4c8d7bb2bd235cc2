/* HTTP/1.1 message heads and body framing as the proxy reads them
 * (sandbox/httpreq.h).  */
#include <config.h>

#include "sandbox/httpreq.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

struct httpreq_parser
{
  enum httpreq_kind kind;
  enum httpreq_step step;
  struct httpreq_head head;
  struct httpreq_error error;
  struct buf line;   /* the line being read, without its LF */
  size_t head_bytes; /* bytes of the head so far */
  bool started;      /* the start line was read */
};

/* --- characters ----------------------------------------------------- */

/* Whether c is a tchar (RFC 9110 5.6.2): what a method, a field name or a
 * token is made of.  */
static bool
httpreq_tchar (unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || (c != 0 && strchr ("!#$%&'*+-.^_`|~", c));
}

/* Whether c may appear in a field value: visible ASCII, SP, HTAB and
 * obs-text; never another control (a NUL or a CR inside a value is read
 * differently by different servers).  */
static bool
httpreq_vchar (unsigned char c)
{
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Whether s[0..n) is a non-empty token.  */
static bool
httpreq_token (const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!httpreq_tchar ((unsigned char) s[i]))
      return false;
  return true;
}

/* Whether c is optional whitespace (SP or HTAB).  */
static bool
httpreq_ows (char c)
{
  return c == ' ' || c == '\t';
}

/* --- the parser ----------------------------------------------------- */

/* Fail the message: the status the proxy answers (a response's fault is
 * always 502: the origin, not the command, sent it) and why.  */
static enum httpreq_step
httpreq_fail (struct httpreq_parser *p, int status, const char *reason)
{
  p->step = HTTPREQ_ERROR;
  p->error.status = p->kind == HTTPREQ_RESPONSE ? 502 : status;
  p->error.reason = reason;
  return HTTPREQ_ERROR;
}

struct httpreq_parser *
httpreq_parser_new (enum httpreq_kind kind)
{
  struct httpreq_parser *p = xcalloc (1, sizeof *p);
  p->kind = kind;
  p->head.kind = kind;
  p->step = HTTPREQ_MORE;
  return p;
}

/* Free what a head owns and empty it.  */
static void
httpreq_head_clear (struct httpreq_head *h)
{
  enum httpreq_kind kind = h->kind;
  free (h->method);
  free (h->target);
  free (h->path);
  free (h->reason);
  for (size_t i = 0; i < h->n_fields; i++)
    {
      free (h->fields[i].name);
      free (h->fields[i].value);
    }
  free (h->fields);
  free (h->transfer_encoding);
  for (size_t i = 0; i < h->n_connection_tokens; i++)
    free (h->connection_tokens[i]);
  free (h->connection_tokens);
  memset (h, 0, sizeof *h);
  h->kind = kind;
}

void
httpreq_parser_reset (struct httpreq_parser *p)
{
  httpreq_head_clear (&p->head);
  buf_free (&p->line);
  p->step = HTTPREQ_MORE;
  p->error.status = 0;
  p->error.reason = NULL;
  p->head_bytes = 0;
  p->started = false;
}

void
httpreq_parser_free (struct httpreq_parser *p)
{
  if (p == NULL)
    return;
  httpreq_parser_reset (p);
  free (p);
}

const struct httpreq_head *
httpreq_parser_head (const struct httpreq_parser *p)
{
  return p->step == HTTPREQ_DONE ? &p->head : NULL;
}

const struct httpreq_error *
httpreq_parser_error (const struct httpreq_parser *p)
{
  return p->step == HTTPREQ_ERROR ? &p->error : NULL;
}

/* Read `HTTP/1.x` at s[0..n) into *minor; 1 for a later 1.x (RFC 9110
 * 2.5: a 1.x recipient reads it as 1.1).  0 when the text is an HTTP
 * version of another major number, -1 when it is no version.  */
static int
httpreq_version (const char *s, size_t n, int *minor)
{
  if (n != 8 || memcmp (s, "HTTP/", 5) != 0 || s[6] != '.' || s[5] < '0'
      || s[5] > '9' || s[7] < '0' || s[7] > '9')
    return -1;
  if (s[5] != '1')
    return 0;
  *minor = s[7] == '0' ? 0 : 1;
  return 1;
}

/* Read an absolute-form target `http://authority[/path][?query]`.  */
static enum httpreq_step
httpreq_absolute (struct httpreq_parser *p, const char *t, size_t n)
{
  struct cr_error *err = NULL;
  const char *sep = memmem (t, n, "://", 3);
  if (n > 0 && t[0] == '/')
    return httpreq_fail (p, 400,
                         "an origin-form target: a proxy request "
                         "names http://host/");
  if (sep == NULL)
    return httpreq_fail (p, 400, "the target is not an absolute http URL");
  size_t ns = (size_t) (sep - t);
  if (ns == 5 && strncasecmp (t, "https", 5) == 0)
    return httpreq_fail (p, 400, "an https:// target: use CONNECT");
  if (ns != 4 || strncasecmp (t, "http", 4) != 0)
    return httpreq_fail (p, 400, "the target's scheme is not http");
  const char *a = sep + 3, *end = t + n;
  size_t na = strcspn (a, "/?");
  if (na > (size_t) (end - a))
    na = (size_t) (end - a);
  if (netpolicy_authority_parse (a, na, 80, &p->head.authority, &err) < 0)
    {
      cr_error_free (err);
      return httpreq_fail (p, 400, "the target's authority is malformed");
    }
  const char *path = a + na;
  if (path == end)
    p->head.path = xstrdup ("/");
  else if (*path == '?')
    p->head.path = xasprintf ("/%.*s", (int) (end - path), path);
  else
    p->head.path = xstrndup (path, (size_t) (end - path));
  p->head.form = HTTPREQ_FORM_ABSOLUTE;
  return HTTPREQ_MORE;
}

/* Read the request target t[0..n) for method.  */
static enum httpreq_step
httpreq_target (struct httpreq_parser *p, const char *t, size_t n)
{
  struct cr_error *err = NULL;
  if (n == 0)
    return httpreq_fail (p, 400, "the request target is empty");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char) t[i] <= 0x20 || t[i] == 0x7f || t[i] == '#')
      return httpreq_fail (p, 400,
                           "the request target holds a character "
                           "no target has");
  p->head.target = xstrndup (t, n);
  if (strcmp (p->head.method, "CONNECT") != 0)
    return httpreq_absolute (p, p->head.target, n);
  if (netpolicy_authority_parse (t, n, 0, &p->head.authority, &err) < 0)
    {
      cr_error_free (err);
      return httpreq_fail (p, 400, "the CONNECT target is not host:port");
    }
  p->head.form = HTTPREQ_FORM_AUTHORITY;
  return HTTPREQ_MORE;
}

/* Read a request line `METHOD SP target SP HTTP/1.x`.  */
static enum httpreq_step
httpreq_request_line (struct httpreq_parser *p, const char *s, size_t n)
{
  const char *sp1 = memchr (s, ' ', n);
  const char *sp2
      = sp1 != NULL ? memchr (sp1 + 1, ' ', n - (size_t) (sp1 + 1 - s)) : NULL;
  int v;
  if (sp2 == NULL || memchr (sp2 + 1, ' ', n - (size_t) (sp2 + 1 - s)) != NULL)
    return httpreq_fail (p, 400,
                         "the request line is not METHOD target "
                         "version");
  if (!httpreq_token (s, (size_t) (sp1 - s)))
    return httpreq_fail (p, 400, "the method is not a token");
  v = httpreq_version (sp2 + 1, n - (size_t) (sp2 + 1 - s),
                       &p->head.version_minor);
  if (v < 0)
    return httpreq_fail (p, 400, "the request line has no HTTP version");
  if (v == 0)
    return httpreq_fail (p, 505, "the HTTP version is not 1.x");
  p->head.method = xstrndup (s, (size_t) (sp1 - s));
  return httpreq_target (p, sp1 + 1, (size_t) (sp2 - sp1 - 1));
}

/* Read a status line `HTTP/1.x SP 3DIGIT [SP reason]`.  */
static enum httpreq_step
httpreq_status_line (struct httpreq_parser *p, const char *s, size_t n)
{
  int v = n >= 12 && s[8] == ' '
              ? httpreq_version (s, 8, &p->head.version_minor)
              : -1;
  if (v <= 0)
    return httpreq_fail (p, 502, "the status line has no HTTP/1.x version");
  for (size_t i = 9; i < 12; i++)
    if (s[i] < '0' || s[i] > '9')
      return httpreq_fail (p, 502, "the status code is not three digits");
  if (s[9] < '1' || s[9] > '5' || (n > 12 && s[12] != ' '))
    return httpreq_fail (p, 502, "the status code is out of range");
  p->head.status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
  for (size_t i = 13; i < n; i++)
    if (!httpreq_vchar ((unsigned char) s[i]))
      return httpreq_fail (p, 502, "the reason phrase holds a control");
  p->head.reason = n > 13 ? xstrndup (s + 13, n - 13) : xstrdup ("");
  return HTTPREQ_MORE;
}

/* Read one field line `name: value`.  */
static enum httpreq_step
httpreq_field_line (struct httpreq_parser *p, const char *s, size_t n)
{
  struct httpreq_head *h = &p->head;
  const char *colon = memchr (s, ':', n);
  if (httpreq_ows (s[0]))
    return httpreq_fail (p, 400, "a header line is folded (obs-fold)");
  if (h->n_fields >= HTTPREQ_MAX_FIELDS)
    return httpreq_fail (p, 431, "more than 100 header lines");
  if (colon == NULL)
    return httpreq_fail (p, 400, "a header line has no colon");
  size_t nn = (size_t) (colon - s);
  if (nn > 0 && httpreq_ows (s[nn - 1]))
    return httpreq_fail (p, 400,
                         "whitespace between a header name and its "
                         "colon");
  if (!httpreq_token (s, nn))
    return httpreq_fail (p, 400, "a header name is not a token");
  const char *v = colon + 1, *end = s + n;
  for (const char *c = v; c < end; c++)
    if (!httpreq_vchar ((unsigned char) *c))
      return httpreq_fail (p, 400, "a header value holds a control");
  while (v < end && httpreq_ows (*v))
    v++;
  while (end > v && httpreq_ows (end[-1]))
    end--;
  h->fields = xrealloc (h->fields, (h->n_fields + 1) * sizeof *h->fields);
  h->fields[h->n_fields].name = xstrndup (s, nn);
  h->fields[h->n_fields].value = xstrndup (v, (size_t) (end - v));
  h->n_fields++;
  return HTTPREQ_MORE;
}

/* Call fn for every element of the comma-separated list value (blanks
 * around elements removed, empty elements skipped); stop at the first
 * that fn refuses (returns false).  */
static bool
httpreq_list (const char *value, bool (*fn) (void *, const char *, size_t),
              void *data)
{
  const char *s = value;
  for (;;)
    {
      size_t n = strcspn (s, ",");
      const char *a = s, *b = s + n;
      while (a < b && httpreq_ows (*a))
        a++;
      while (b > a && httpreq_ows (b[-1]))
        b--;
      if (b > a && !fn (data, a, (size_t) (b - a)))
        return false;
      if (s[n] == '\0')
        return true;
      s += n + 1;
    }
}

/* A lower-case copy of s[0..n).  */
static char *
httpreq_lower (const char *s, size_t n)
{
  char *l = xstrndup (s, n);
  for (char *c = l; *c; c++)
    if (*c >= 'A' && *c <= 'Z')
      *c = (char) (*c - 'A' + 'a');
  return l;
}

/* What reading the framing fields found wrong, as a status and reason.  */
struct httpreq_fields_state
{
  struct httpreq_head *h;
  struct buf te; /* normalised codings so far */
  int status;    /* 0 while nothing is wrong */
  const char *reason;
  bool chunked_seen;
  bool after_chunked; /* a coding came after chunked */
};

/* Take one Transfer-Encoding coding.  */
static bool
httpreq_coding (void *data, const char *s, size_t n)
{
  static const char *const known[]
      = { "chunked", "gzip", "x-gzip", "deflate", "compress", "x-compress" };
  struct httpreq_fields_state *st = data;
  cleanup_free char *c = httpreq_lower (s, n);
  bool ok = false;
  if (!httpreq_token (s, n))
    {
      st->status = 400;
      st->reason = "a transfer coding is not a token";
      return false;
    }
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    ok = ok || strcmp (c, known[i]) == 0;
  if (!ok)
    {
      st->status = 501;
      st->reason = "an unknown transfer coding";
      return false;
    }
  if (st->chunked_seen)
    st->after_chunked = true;
  if (strcmp (c, "chunked") == 0)
    {
      if (st->chunked_seen)
        {
          st->status = 400;
          st->reason = "chunked is applied twice";
          return false;
        }
      st->chunked_seen = true;
    }
  buf_printf (&st->te, "%s%s", st->te.len ? ", " : "", c);
  return true;
}

/* Take one Connection (or Proxy-Connection) token.  */
static bool
httpreq_conn_token (void *data, const char *s, size_t n, bool record)
{
  struct httpreq_fields_state *st = data;
  struct httpreq_head *h = st->h;
  if (!httpreq_token (s, n))
    {
      st->status = 400;
      st->reason = "a Connection option is not a token";
      return false;
    }
  char *t = httpreq_lower (s, n);
  h->connection_close = h->connection_close || strcmp (t, "close") == 0;
  h->connection_keep_alive
      = h->connection_keep_alive || strcmp (t, "keep-alive") == 0;
  if (!record)
    {
      free (t);
      return true;
    }
  h->connection_upgrade = h->connection_upgrade || strcmp (t, "upgrade") == 0;
  h->connection_tokens
      = xrealloc (h->connection_tokens,
                  (h->n_connection_tokens + 1) * sizeof *h->connection_tokens);
  h->connection_tokens[h->n_connection_tokens++] = t;
  return true;
}

/* httpreq_conn_token for Connection.  */
static bool
httpreq_connection (void *data, const char *s, size_t n)
{
  return httpreq_conn_token (data, s, n, true);
}

/* httpreq_conn_token for Proxy-Connection (names no fields).  */
static bool
httpreq_proxy_connection (void *data, const char *s, size_t n)
{
  return httpreq_conn_token (data, s, n, false);
}

/* Take one Content-Length value: digits only, every repeat the same.  */
static bool
httpreq_content_length (struct httpreq_fields_state *st, const char *v)
{
  struct httpreq_head *h = st->h;
  uint64_t n = 0;
  size_t len = strlen (v);
  if (len == 0 || len > 18 || strspn (v, "0123456789") != len)
    {
      st->status = 400;
      st->reason = "Content-Length is not one decimal number";
      return false;
    }
  for (size_t i = 0; i < len; i++)
    n = n * 10 + (uint64_t) (v[i] - '0');
  if (h->has_content_length && h->content_length != n)
    {
      st->status = 400;
      st->reason = "Content-Length is given twice with different values";
      return false;
    }
  h->has_content_length = true;
  h->content_length = n;
  return true;
}

/* Take one field the framing or the proxy reads.  */
static bool
httpreq_known_field (struct httpreq_fields_state *st,
                     const struct httpreq_field *f, size_t *n_host,
                     size_t *n_auth, size_t *n_upgrade)
{
  struct httpreq_head *h = st->h;
  const char *n = f->name;
  if (strcasecmp (n, "Content-Length") == 0)
    return httpreq_content_length (st, f->value);
  if (strcasecmp (n, "Transfer-Encoding") == 0)
    {
      h->has_transfer_encoding = true;
      return httpreq_list (f->value, httpreq_coding, st);
    }
  if (strcasecmp (n, "Connection") == 0)
    return httpreq_list (f->value, httpreq_connection, st);
  if (strcasecmp (n, "Proxy-Connection") == 0)
    return httpreq_list (f->value, httpreq_proxy_connection, st);
  if (strcasecmp (n, "Host") == 0)
    ++*n_host;
  if (strcasecmp (n, "Proxy-Authorization") == 0 && ++*n_auth == 1)
    h->proxy_authorization = f->value;
  if (strcasecmp (n, "Upgrade") == 0 && ++*n_upgrade == 1)
    h->upgrade = f->value;
  if (strcasecmp (n, "Expect") == 0 && h->kind == HTTPREQ_REQUEST)
    {
      if (strcasecmp (f->value, "100-continue") != 0)
        {
          st->status = 417;
          st->reason = "an expectation other than 100-continue";
          return false;
        }
      h->expect_continue = true;
    }
  return true;
}

/* The framing rules a whole request head must meet (RFC 9112 6.1, 6.3):
 * each is a way a proxy and an origin could disagree about where the
 * message ends.  */
static void
httpreq_request_rules (struct httpreq_fields_state *st, size_t n_host,
                       size_t n_auth, size_t n_upgrade)
{
  struct httpreq_head *h = st->h;
  if (st->status != 0)
    return;
  st->status = 400;
  if (h->has_content_length && h->has_transfer_encoding)
    st->reason = "both Content-Length and Transfer-Encoding";
  else if (h->has_transfer_encoding && h->version_minor == 0)
    st->reason = "Transfer-Encoding in an HTTP/1.0 request";
  else if (h->has_transfer_encoding && (!st->chunked_seen || st->after_chunked))
    st->reason = "Transfer-Encoding whose last coding is not chunked";
  else if (n_host > 1)
    st->reason = "more than one Host header";
  else if (n_auth > 1)
    st->reason = "more than one Proxy-Authorization header";
  else if (n_upgrade > 1)
    st->reason = "more than one Upgrade header";
  else if (h->form == HTTPREQ_FORM_AUTHORITY
           && (h->has_transfer_encoding || h->content_length > 0))
    st->reason = "a CONNECT request with a body";
  else
    st->status = 0;
}

/* The head is complete: read what the framing and the proxy need.  */
static enum httpreq_step
httpreq_finish (struct httpreq_parser *p)
{
  struct httpreq_fields_state st = { .h = &p->head };
  size_t n_host = 0, n_auth = 0, n_upgrade = 0;
  for (size_t i = 0; i < p->head.n_fields && st.status == 0; i++)
    httpreq_known_field (&st, &p->head.fields[i], &n_host, &n_auth, &n_upgrade);
  if (p->kind == HTTPREQ_REQUEST)
    httpreq_request_rules (&st, n_host, n_auth, n_upgrade);
  else if (st.status == 0 && p->head.has_content_length
           && p->head.has_transfer_encoding)
    {
      st.status = 502;
      st.reason = "both Content-Length and Transfer-Encoding";
    }
  p->head.chunked = st.chunked_seen && !st.after_chunked;
  p->head.transfer_encoding = buf_steal (&st.te, NULL);
  if (st.status != 0)
    return httpreq_fail (p, st.status, st.reason);
  p->step = HTTPREQ_DONE;
  return HTTPREQ_DONE;
}

/* Handle one complete line s[0..n) (its LF removed).  */
static enum httpreq_step
httpreq_line (struct httpreq_parser *p, char *s, size_t n)
{
  if (n > 0 && s[n - 1] == '\r')
    n--;
  if (memchr (s, '\r', n) != NULL)
    return httpreq_fail (p, 400, "a CR not followed by LF");
  if (memchr (s, '\0', n) != NULL)
    return httpreq_fail (p, 400, "a NUL byte in the head");
  if (!p->started)
    {
      if (n == 0)
        return HTTPREQ_MORE;
      p->started = true;
      return p->kind == HTTPREQ_REQUEST ? httpreq_request_line (p, s, n)
                                        : httpreq_status_line (p, s, n);
    }
  if (n == 0)
    return httpreq_finish (p);
  return httpreq_field_line (p, s, n);
}

/* The status and reason for a line past its bound.  */
static enum httpreq_step
httpreq_too_long (struct httpreq_parser *p)
{
  if (!p->started)
    return httpreq_fail (p, 414, "the request line is longer than 8 KiB");
  return httpreq_fail (p, 431, "a header line is longer than 8 KiB");
}

enum httpreq_step
httpreq_parser_feed (struct httpreq_parser *p, const void *data, size_t len,
                     size_t *used)
{
  const char *s = data;
  size_t i = 0;
  *used = 0;
  if (p->step != HTTPREQ_MORE)
    return p->step;
  while (i < len)
    {
      const char *nl = memchr (s + i, '\n', len - i);
      size_t chunk = nl != NULL ? (size_t) (nl - (s + i)) + 1 : len - i;
      size_t limit = HTTPREQ_MAX_FIELD_LINE;
      if (!p->started)
        limit = HTTPREQ_MAX_START_LINE;
      /* Both bounds are checked at the byte that crosses them, whichever
       * comes first, so the answer does not depend on how the bytes
       * arrived.  */
      size_t line_room = limit - p->line.len;
      size_t head_room = HTTPREQ_MAX_HEAD - p->head_bytes;
      if (chunk > line_room && line_room <= head_room)
        return httpreq_too_long (p);
      if (chunk > head_room)
        return httpreq_fail (p, 431, "the head is longer than 64 KiB");
      p->head_bytes += chunk;
      buf_append (&p->line, s + i, nl != NULL ? chunk - 1 : chunk);
      i += chunk;
      if (nl == NULL)
        break;
      enum httpreq_step step = httpreq_line (p, p->line.data, p->line.len);
      p->line.len = 0;
      if (step != HTTPREQ_MORE)
        {
          *used = i;
          return step;
        }
    }
  *used = len;
  return HTTPREQ_MORE;
}

const char *
httpreq_head_field (const struct httpreq_head *h, const char *name)
{
  for (size_t i = 0; i < h->n_fields; i++)
    if (strcasecmp (h->fields[i].name, name) == 0)
      return h->fields[i].value;
  return NULL;
}

bool
httpreq_head_keep_alive (const struct httpreq_head *h)
{
  if (h->connection_close)
    return false;
  return h->version_minor >= 1 || h->connection_keep_alive;
}

bool
httpreq_head_is_upgrade (const struct httpreq_head *h)
{
  return h->connection_upgrade && h->upgrade != NULL;
}

/* --- bodies --------------------------------------------------------- */

/* Where in chunked framing a decoder is.  */
enum
{
  HTTPREQ_CH_SIZE,     /* the hex digits of a chunk size */
  HTTPREQ_CH_SIZE_WS,  /* blanks after the size: only `;` may follow */
  HTTPREQ_CH_EXT,      /* chunk extensions, up to CR */
  HTTPREQ_CH_SIZE_LF,  /* the LF ending the size line */
  HTTPREQ_CH_DATA,     /* chunk data */
  HTTPREQ_CH_DATA_CR,  /* the CR after chunk data */
  HTTPREQ_CH_DATA_LF,  /* the LF after chunk data */
  HTTPREQ_CH_TR_START, /* the first byte of a trailer line, or the CR of
                          the blank line ending the message */
  HTTPREQ_CH_TR_NAME,  /* a trailer field's name */
  HTTPREQ_CH_TR_VALUE, /* a trailer field's value, up to CR */
  HTTPREQ_CH_TR_LF,    /* the LF ending a trailer line */
  HTTPREQ_CH_END_LF,   /* the LF ending the message */
};

/* The longest chunk size this decoder reads, in hex digits (leading zeros
 * included): 2^60 bytes is beyond any body, and no sum overflows.  */
#define HTTPREQ_MAX_SIZE_DIGITS 15

enum httpreq_body_kind
httpreq_request_body (const struct httpreq_head *req, uint64_t *length)
{
  *length = 0;
  if (req->chunked)
    return HTTPREQ_BODY_CHUNKED;
  if (req->has_content_length && req->content_length > 0)
    {
      *length = req->content_length;
      return HTTPREQ_BODY_LENGTH;
    }
  return HTTPREQ_BODY_NONE;
}

enum httpreq_body_kind
httpreq_response_body (const struct httpreq_head *resp,
                       const char *request_method, uint64_t *length)
{
  bool connect
      = request_method != NULL && strcmp (request_method, "CONNECT") == 0;
  *length = 0;
  if (resp->status == 101 || (connect && resp->status / 100 == 2))
    return HTTPREQ_BODY_TUNNEL;
  if (resp->status / 100 == 1 || resp->status == 204 || resp->status == 304
      || (request_method != NULL && strcmp (request_method, "HEAD") == 0))
    return HTTPREQ_BODY_NONE;
  if (resp->has_transfer_encoding)
    return resp->chunked ? HTTPREQ_BODY_CHUNKED : HTTPREQ_BODY_CLOSE;
  if (resp->has_content_length)
    {
      *length = resp->content_length;
      return resp->content_length > 0 ? HTTPREQ_BODY_LENGTH : HTTPREQ_BODY_NONE;
    }
  return HTTPREQ_BODY_CLOSE;
}

void
httpreq_body_init (struct httpreq_body *b, enum httpreq_kind of,
                   enum httpreq_body_kind kind, uint64_t length)
{
  memset (b, 0, sizeof *b);
  b->of = of;
  b->kind = kind;
  b->remaining = length;
  b->state = HTTPREQ_CH_SIZE;
  b->done = kind == HTTPREQ_BODY_NONE
            || (kind == HTTPREQ_BODY_LENGTH && length == 0);
}

/* Fail the body's framing.  */
static enum httpreq_step
httpreq_body_fail (struct httpreq_body *b, const char *reason)
{
  b->error.status = b->of == HTTPREQ_RESPONSE ? 502 : 400;
  b->error.reason = reason;
  return HTTPREQ_ERROR;
}

/* Count one byte of a framing line against its bound (which counts the
 * line's LF too, as the head's do).  */
static bool
httpreq_body_line_byte (struct httpreq_body *b)
{
  return ++b->line_len < HTTPREQ_MAX_FIELD_LINE;
}

/* Read one byte of a chunk-size line.  */
static enum httpreq_step
httpreq_chunk_size_byte (struct httpreq_body *b, unsigned char c)
{
  int d = (c >= '0' && c <= '9')   ? c - '0'
          : (c >= 'a' && c <= 'f') ? c - 'a' + 10
          : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                   : -1;
  if (!httpreq_body_line_byte (b))
    return httpreq_body_fail (b, "a chunk-size line is longer than 8 KiB");
  if (b->state == HTTPREQ_CH_SIZE && d >= 0)
    {
      if (b->line_len > HTTPREQ_MAX_SIZE_DIGITS)
        return httpreq_body_fail (b, "a chunk size is too large");
      b->size = b->size * 16 + (uint64_t) d;
      return HTTPREQ_MORE;
    }
  if (b->state == HTTPREQ_CH_SIZE && b->line_len == 1)
    return httpreq_body_fail (b, "a chunk size is not hexadecimal");
  if (c == '\r' && b->state != HTTPREQ_CH_SIZE_WS)
    b->state = HTTPREQ_CH_SIZE_LF;
  else if (c == ';')
    b->state = HTTPREQ_CH_EXT;
  else if (httpreq_ows ((char) c) && b->state != HTTPREQ_CH_EXT)
    b->state = HTTPREQ_CH_SIZE_WS;
  else if (b->state == HTTPREQ_CH_EXT && c != '\n' && httpreq_vchar (c))
    ;
  else
    return httpreq_body_fail (b, "a chunk-size line is malformed");
  return HTTPREQ_MORE;
}

/* The size line ended: data follows, or the trailers.  */
static void
httpreq_chunk_start (struct httpreq_body *b)
{
  b->line_len = 0;
  b->remaining = b->size;
  b->state = b->size == 0 ? HTTPREQ_CH_TR_START : HTTPREQ_CH_DATA;
}

/* Read one byte of the trailer section.  */
static enum httpreq_step
httpreq_trailer_byte (struct httpreq_body *b, unsigned char c)
{
  if (++b->trailer_bytes > HTTPREQ_MAX_HEAD)
    return httpreq_body_fail (b, "the trailers are longer than 64 KiB");
  switch (b->state)
    {
    case HTTPREQ_CH_TR_START:
      if (c == '\r')
        {
          b->state = HTTPREQ_CH_END_LF;
          return HTTPREQ_MORE;
        }
      if (++b->n_trailers > HTTPREQ_MAX_FIELDS)
        return httpreq_body_fail (b, "more than 100 trailer lines");
      if (!httpreq_tchar (c))
        return httpreq_body_fail (b, "a trailer line is malformed");
      b->line_len = 1;
      b->state = HTTPREQ_CH_TR_NAME;
      return HTTPREQ_MORE;
    case HTTPREQ_CH_TR_NAME:
      if (!httpreq_body_line_byte (b))
        return httpreq_body_fail (b, "a trailer line is longer than 8 KiB");
      if (c == ':')
        b->state = HTTPREQ_CH_TR_VALUE;
      else if (!httpreq_tchar (c))
        return httpreq_body_fail (b, "a trailer line is malformed");
      return HTTPREQ_MORE;
    case HTTPREQ_CH_TR_VALUE:
      if (!httpreq_body_line_byte (b))
        return httpreq_body_fail (b, "a trailer line is longer than 8 KiB");
      if (c == '\r')
        b->state = HTTPREQ_CH_TR_LF;
      else if (!httpreq_vchar (c))
        return httpreq_body_fail (b, "a trailer value holds a control");
      return HTTPREQ_MORE;
    case HTTPREQ_CH_TR_LF:
      if (c != '\n')
        return httpreq_body_fail (b, "a CR not followed by LF in a trailer");
      b->state = HTTPREQ_CH_TR_START;
      return HTTPREQ_MORE;
    default: /* HTTPREQ_CH_END_LF */
      if (c != '\n')
        return httpreq_body_fail (b, "a CR not followed by LF after the "
                                     "last chunk");
      b->done = true;
      return HTTPREQ_DONE;
    }
}

/* Read one framing byte (anything but chunk data).  */
static enum httpreq_step
httpreq_chunk_byte (struct httpreq_body *b, unsigned char c)
{
  switch (b->state)
    {
    case HTTPREQ_CH_SIZE:
    case HTTPREQ_CH_SIZE_WS:
    case HTTPREQ_CH_EXT:
      return httpreq_chunk_size_byte (b, c);
    case HTTPREQ_CH_SIZE_LF:
      if (c != '\n')
        return httpreq_body_fail (b, "a CR not followed by LF in a chunk "
                                     "size line");
      httpreq_chunk_start (b);
      return HTTPREQ_MORE;
    case HTTPREQ_CH_DATA_CR:
      if (c != '\r')
        return httpreq_body_fail (b, "chunk data is not followed by CRLF");
      b->state = HTTPREQ_CH_DATA_LF;
      return HTTPREQ_MORE;
    case HTTPREQ_CH_DATA_LF:
      if (c != '\n')
        return httpreq_body_fail (b, "chunk data is not followed by CRLF");
      b->state = HTTPREQ_CH_SIZE;
      b->size = 0;
      b->line_len = 0;
      return HTTPREQ_MORE;
    default:
      return httpreq_trailer_byte (b, c);
    }
}

/* Feed a chunked body.  */
static enum httpreq_step
httpreq_chunked_feed (struct httpreq_body *b, const unsigned char *s,
                      size_t len, size_t *used)
{
  size_t i = 0;
  while (i < len)
    {
      if (b->state == HTTPREQ_CH_DATA)
        {
          size_t take
              = b->remaining < len - i ? (size_t) b->remaining : len - i;
          i += take;
          b->remaining -= take;
          if (b->remaining == 0)
            b->state = HTTPREQ_CH_DATA_CR;
          continue;
        }
      enum httpreq_step step = httpreq_chunk_byte (b, s[i++]);
      if (step != HTTPREQ_MORE)
        {
          *used = i;
          return step;
        }
    }
  *used = len;
  return HTTPREQ_MORE;
}

enum httpreq_step
httpreq_body_feed (struct httpreq_body *b, const void *data, size_t len,
                   size_t *used)
{
  *used = 0;
  if (b->error.status != 0)
    return HTTPREQ_ERROR;
  if (b->done)
    return HTTPREQ_DONE;
  switch (b->kind)
    {
    case HTTPREQ_BODY_LENGTH:
      *used = b->remaining < len ? (size_t) b->remaining : len;
      b->remaining -= *used;
      b->done = b->remaining == 0;
      return b->done ? HTTPREQ_DONE : HTTPREQ_MORE;
    case HTTPREQ_BODY_CHUNKED:
      return httpreq_chunked_feed (b, data, len, used);
    case HTTPREQ_BODY_CLOSE:
    case HTTPREQ_BODY_TUNNEL:
      *used = len;
      return HTTPREQ_MORE;
    default:
      b->done = true;
      return HTTPREQ_DONE;
    }
}

/* --- forwarding ----------------------------------------------------- */

/* Whether the field name is one the forwarded head leaves out: Host (set
 * from the target), the framing (written from what was parsed, so that a
 * field Connection names cannot make the origin frame the body otherwise
 * than the proxy forwards it) and the hop-by-hop ones.  */
static bool
httpreq_hop_by_hop (const struct httpreq_head *req, const char *name)
{
  static const char *const fixed[] = { "Host",
                                       "Proxy-Authorization",
                                       "Proxy-Connection",
                                       "Keep-Alive",
                                       "TE",
                                       "Trailer",
                                       "Connection",
                                       "Upgrade",
                                       "Content-Length",
                                       "Transfer-Encoding" };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (strcasecmp (name, fixed[i]) == 0)
      return true;
  for (size_t i = 0; i < req->n_connection_tokens; i++)
    if (strcasecmp (name, req->connection_tokens[i]) == 0)
      return true;
  return false;
}

/* Append `Host: host[:port]` for the request's target.  */
static void
httpreq_write_host (const struct httpreq_head *req, struct buf *out)
{
  const struct netpolicy_authority *a = &req->authority;
  cleanup_free char *norm = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_name_normalise (a->host, &norm, &err) < 0)
    {
      cr_error_free (err);
      norm = xstrdup (a->host);
    }
  bool v6 = strchr (norm, ':') != NULL;
  buf_printf (out, "Host: %s%s%s", v6 ? "[" : "", norm, v6 ? "]" : "");
  if (a->port != 80)
    buf_printf (out, ":%u", (unsigned) a->port);
  buf_puts (out, "\r\n");
}

void
httpreq_write_forward (const struct httpreq_head *req, bool keep_alive,
                       struct buf *out)
{
  buf_printf (out, "%s %s HTTP/1.1\r\n", req->method,
              req->path != NULL ? req->path : "/");
  httpreq_write_host (req, out);
  for (size_t i = 0; i < req->n_fields; i++)
    if (!httpreq_hop_by_hop (req, req->fields[i].name))
      buf_printf (out, "%s: %s\r\n", req->fields[i].name, req->fields[i].value);
  if (req->has_transfer_encoding)
    buf_printf (out, "Transfer-Encoding: %s\r\n", req->transfer_encoding);
  else if (req->has_content_length)
    buf_printf (out, "Content-Length: %llu\r\n",
                (unsigned long long) req->content_length);
  if (httpreq_head_is_upgrade (req))
    buf_printf (out, "Connection: upgrade\r\nUpgrade: %s\r\n", req->upgrade);
  else if (!keep_alive)
    buf_puts (out, "Connection: close\r\n");
  buf_puts (out, "\r\n");
}
