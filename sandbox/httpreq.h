/* HTTP/1.1 message heads as the host-owned proxy reads them (issue 13):
 * an incremental, bounded parser for requests and responses, a decoder of
 * body framing that only counts (bodies pass through verbatim), and the
 * writer of a forwarded request's head.  Pure: no loop, no I/O.
 *
 * The parser is strict where a lenient reading would let the proxy and
 * the origin disagree about where a message ends (request smuggling):
 * Content-Length and Transfer-Encoding together, differing or malformed
 * Content-Length values, a coding after chunked, obs-fold, whitespace
 * between a field name and its colon, a CR not followed by LF, and any
 * chunk framing that is not exactly the grammar are all errors, and an
 * error closes the connection.  A bare LF ends a head line (RFC 9112
 * 2.2 allows it), since the proxy writes every head it forwards afresh
 * with CRLF; inside chunked framing, which passes through verbatim, only
 * CRLF does.  */
#ifndef CRUCIBLE_SANDBOX_HTTPREQ_H
#define CRUCIBLE_SANDBOX_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "sandbox/netpolicy.h"

/* The bounds of one head.  */
#define HTTPREQ_MAX_START_LINE 8192 /* request or status line, CRLF included   \
                                     */
#define HTTPREQ_MAX_FIELD_LINE 8192 /* one header (or trailer) line */
#define HTTPREQ_MAX_FIELDS 100      /* header (or trailer) lines */
#define HTTPREQ_MAX_HEAD 65536      /* the whole head, blank line included */

/* What a feed did.  */
enum httpreq_step
{
  HTTPREQ_MORE,  /* every byte given was used; the message goes on */
  HTTPREQ_DONE,  /* the head (or body) ended within the bytes given; *used
                    says where, and the bytes after it are the next thing */
  HTTPREQ_ERROR, /* malformed or too long: answer the error's status and
                    close the connection */
};

/* Why a message was refused: the status the proxy answers (400, 414, 431,
 * 501, 505 for a request; 502 for anything wrong in a response) and a
 * short reason (static text, no byte of the message in it).  */
struct httpreq_error
{
  int status;
  const char *reason;
};

enum httpreq_kind
{
  HTTPREQ_REQUEST,
  HTTPREQ_RESPONSE,
};

/* The target form of a request.  */
enum httpreq_form
{
  HTTPREQ_FORM_AUTHORITY, /* CONNECT host:port */
  HTTPREQ_FORM_ABSOLUTE,  /* METHOD http://authority/path */
};

struct httpreq_field
{
  char *name;  /* as received (case kept), owned */
  char *value; /* leading and trailing blanks removed, owned */
};

/* One parsed head.  Every string is owned by the head (the parser's, until
 * it is reset or freed).  */
struct httpreq_head
{
  enum httpreq_kind kind;
  int version_minor; /* HTTP/1.<minor>: 0 or 1 */

  /* A request.  */
  char *method;
  char *target; /* as received */
  enum httpreq_form form;
  struct netpolicy_authority authority; /* from the target */
  char *path; /* absolute-form: the origin-form to forward ("/" when
                 the target has none, "/?q" for "?q"); NULL for
                 CONNECT */

  /* A response.  */
  int status;   /* 100..999 */
  char *reason; /* may be empty */

  /* Every header line, in order.  */
  struct httpreq_field *fields;
  size_t n_fields;

  /* What the framing and the proxy need, from the fields above.  */
  bool has_content_length;
  uint64_t content_length;
  bool has_transfer_encoding;
  bool chunked;               /* chunked is the last coding */
  char *transfer_encoding;    /* the codings, normalised: lower case, ", " */
  bool connection_close;      /* Connection (or Proxy-Connection): close */
  bool connection_keep_alive; /* ... keep-alive */
  bool connection_upgrade;    /* Connection: upgrade */
  char **connection_tokens;   /* every Connection token, lower case */
  size_t n_connection_tokens;
  const char *proxy_authorization; /* the field's value, or NULL */
  const char *upgrade;             /* the Upgrade field's value, or NULL */
  bool expect_continue;            /* Expect: 100-continue */
};

/* An incremental head parser.  */
struct httpreq_parser;

struct httpreq_parser *httpreq_parser_new (enum httpreq_kind kind);
void httpreq_parser_free (struct httpreq_parser *p);

/* Forget the head read so far (or the one completed), ready for the next
 * message on the same connection.  */
void httpreq_parser_reset (struct httpreq_parser *p);

/* Feed len bytes.  *used: how many of them belong to the head (all of them
 * for MORE; for DONE the bytes after them start the body or the next
 * message; unspecified for ERROR).  Empty lines before a request line are
 * skipped (RFC 9112 2.2), within the head's bound.  After DONE or ERROR,
 * further feeds repeat the result and use nothing until a reset.  */
enum httpreq_step httpreq_parser_feed (struct httpreq_parser *p,
                                       const void *data, size_t len,
                                       size_t *used);

/* The head, once a feed returned DONE (else NULL).  Owned by the parser. */
const struct httpreq_head *httpreq_parser_head (const struct httpreq_parser *p);

/* The error, once a feed returned ERROR (else NULL).  */
const struct httpreq_error *
httpreq_parser_error (const struct httpreq_parser *p);

/* The value of the first field named name (case-insensitive), or NULL.  */
const char *httpreq_head_field (const struct httpreq_head *h, const char *name);

/* Whether the connection may carry another message after this one:
 * HTTP/1.1 unless `close`, HTTP/1.0 only with `keep-alive`.  */
bool httpreq_head_keep_alive (const struct httpreq_head *h);

/* Whether this request asks to switch protocols (Connection: upgrade and
 * an Upgrade field).  */
bool httpreq_head_is_upgrade (const struct httpreq_head *h);

/* --- bodies --------------------------------------------------------- */

enum httpreq_body_kind
{
  HTTPREQ_BODY_NONE,    /* no body: the message ends with its head */
  HTTPREQ_BODY_LENGTH,  /* exactly length bytes */
  HTTPREQ_BODY_CHUNKED, /* chunked, trailers included */
  HTTPREQ_BODY_CLOSE,   /* until the connection closes (a response) */
  HTTPREQ_BODY_TUNNEL,  /* not HTTP any more: relay both ways until closed
                           (a 2xx to CONNECT, a 101) */
};

/* The body framing decoder of one message: it counts, never copies.  */
struct httpreq_body
{
  enum httpreq_body_kind kind;
  enum httpreq_kind of; /* whose body: decides the error's status */
  uint64_t remaining;   /* LENGTH: bytes left; CHUNKED: of this chunk */
  int state;            /* CHUNKED: where in the framing (httpreq.c) */
  uint64_t size;        /* CHUNKED: the chunk size being read */
  size_t line_len;      /* CHUNKED: bytes of the current framing line */
  size_t n_trailers;    /* CHUNKED: trailer lines so far */
  size_t trailer_bytes; /* CHUNKED: trailer bytes so far */
  bool done;
  struct httpreq_error error;
};

/* The framing of a request's body: chunked, else Content-Length, else
 * none (a request is never close-delimited).  */
enum httpreq_body_kind httpreq_request_body (const struct httpreq_head *req,
                                             uint64_t *length);

/* The framing of a response's body, given the request it answers
 * (RFC 9112 6.3): 1xx other than 101, 204, 304 and any answer to HEAD have
 * none (after a 1xx the real response follows: parse another head); a 2xx
 * to CONNECT and a 101 are a tunnel; chunked last: chunked; another coding
 * last: until close; Content-Length: that; else until close.  */
enum httpreq_body_kind httpreq_response_body (const struct httpreq_head *resp,
                                              const char *request_method,
                                              uint64_t *length);

/* Start decoding a body of kind (length for LENGTH).  NONE is done at
 * once.  */
void httpreq_body_init (struct httpreq_body *b, enum httpreq_kind of,
                        enum httpreq_body_kind kind, uint64_t length);

/* Feed the next len bytes of the stream.  *used: how many belong to this
 * message's body (all for MORE; for DONE the rest is the next message).
 * CLOSE and TUNNEL bodies use everything and never end by themselves.
 * ERROR: the framing is broken (b->error says how); close.  */
enum httpreq_step httpreq_body_feed (struct httpreq_body *b, const void *data,
                                     size_t len, size_t *used);

/* --- forwarding ----------------------------------------------------- */

/* Append to out the head to send the origin for an absolute-form request:
 * `METHOD path HTTP/1.1`, `Host` from the target (port shown unless 80),
 * every field in order except Host and the hop-by-hop ones
 * (Proxy-Authorization, Proxy-Connection, Keep-Alive, TE, Trailer,
 * Connection, Upgrade and every field Connection names), Content-Length
 * and Transfer-Encoding written from their parsed values, then for an
 * Upgrade request `Connection: upgrade` and its `Upgrade`, else
 * `Connection: close` when keep_alive is false; then the blank line.  */
void httpreq_write_forward (const struct httpreq_head *req, bool keep_alive,
                            struct buf *out);

#endif
