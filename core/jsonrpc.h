/* What crucible's JSON-speaking peers share (an MCP client on standard
 * input and output, an agent on two pipes): messages framed one a line, a
 * reader that bounds nesting before a tree is built, and a bounded
 * outgoing queue written from the loop without ever blocking it.  For
 * JSON-RPC 2.0 peers (MCP now; the ACP front end and the MCP client next)
 * it also has the standard error codes, ids echoed exactly as the peer
 * spelled them, the envelopes of what crucible sends, and the requests
 * crucible sends with the answers it waits for, each taken once.  A peer that
 * lets the queue pass its bound is ended by its owner, and the journal says why
 * ("peer" facts, doc/journal.md).  */
#ifndef CRUCIBLE_CORE_JSONRPC_H
#define CRUCIBLE_CORE_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "core/journal.h"
#include "core/loop.h"
#include "lib/buf.h"
#include "lib/error.h"
#include "lib/json.h"
#include "lib/jsonw.h"

/* JSON-RPC 2.0's standard error codes.  */
enum jsonrpc_error_code
{
  JSONRPC_PARSE_ERROR = -32700,
  JSONRPC_INVALID_REQUEST = -32600,
  JSONRPC_METHOD_NOT_FOUND = -32601,
  JSONRPC_INVALID_PARAMS = -32602
};

/* The deepest nesting of arrays and objects a message may have.  */
#define JSONRPC_MAX_DEPTH 64

/* The most bytes waiting for one peer to read them.  */
#define JSONRPC_OUT_MAX ((size_t) 8 << 20)

/* Whether text (len bytes) nests arrays and objects deeper than max; one
 * pass that skips strings, so it is linear whatever the input.  */
bool jsonrpc_too_deep (const char *text, size_t len, size_t max);

/* yajl_tree_parse for a peer's message: text is NUL-terminated at len.
 * Nesting deeper than JSONRPC_MAX_DEPTH is refused before yajl builds a
 * tree (which yajl frees recursively, so a deep one would overflow the
 * stack); errbuf then says so, and *too_deep (when not NULL) is set.  */
yajl_val jsonrpc_parse (const char *text, size_t len, char *errbuf,
                        size_t errlen, bool *too_deep);

/* One message of a peer's (len bytes, NUL-terminated at len) as a tree,
 * with scan filled in: NULL when the line holds a NUL byte, nests deeper
 * than JSONRPC_MAX_DEPTH (*too_deep is set then, when not NULL) or is not
 * JSON; errbuf then says what yajl said.  */
yajl_val jsonrpc_parse_line (const char *text, size_t len,
                             struct json_scan *scan, char *errbuf,
                             size_t errlen, bool *too_deep);

/* --- framing: one message a line ----------------------------------------- */

/* The line being read from one peer.  */
struct jsonrpc_lines
{
  struct buf line;
  size_t max;      /* the longest line taken; a longer one is refused */
  bool discarding; /* skipping the rest of an over-long line */
};

/* A complete line (without its newline, NUL-terminated at len; may be
 * empty).  Returns false to stop reading what is left of the input
 * given.  */
typedef bool (*jsonrpc_line_fn) (void *data, const char *line, size_t len);

/* A line passed r->max bytes: it is refused once, and skipped to its end.
 * Returns false to stop.  */
typedef bool (*jsonrpc_overlong_fn) (void *data);

/* Split n bytes that arrived into lines.  */
void jsonrpc_lines_take (struct jsonrpc_lines *r, const char *bytes, size_t n,
                         jsonrpc_line_fn line, jsonrpc_overlong_fn overlong,
                         void *data);

/* Forget the partial line.  */
void jsonrpc_lines_free (struct jsonrpc_lines *r);

/* --- ids ----------------------------------------------------------------- */

/* The id of a request as the peer spelled it, byte for byte (so
 * "a\u0000b" and "\ud800" come back as sent), or "null" when there is
 * none; idv is the id in the tree and scan the line's scan.  NULL when it
 * cannot be an id (not a string, number or null), or when its text is not
 * valid UTF-8 (*not_utf8 is set then).  The caller owns it.  */
char *jsonrpc_request_id (const struct json_scan *scan, yajl_val idv,
                          bool *not_utf8);

/* An id inside a message's params (a cancelled request's, say) as JSON
 * text, "null" when absent; NULL when it is neither a string nor a
 * number.  The caller owns it.  */
char *jsonrpc_id_text (yajl_val id);

/* --- what crucible sends ------------------------------------------------- */

/* A result answering id (JSON text) being written: the caller writes the
 * result's value, then jsonrpc_send.  */
struct jsonw *jsonrpc_result_begin (const char *id);

/* A request crucible sends (id is JSON text): the caller writes its
 * params' value, then jsonrpc_send.  */
struct jsonw *jsonrpc_request_begin (const char *id, const char *method);

/* A notification: the caller writes its params' value.  */
struct jsonw *jsonrpc_notification_begin (const char *method);

/* An error answering id (JSON text, "null" when unknown) with one of the
 * codes and a message (made valid UTF-8).  */
struct jsonw *jsonrpc_error_new (const char *id, enum jsonrpc_error_code code,
                                 const char *message);

/* A bounded, non-blocking queue of lines toward one peer.  */
struct jsonrpc_out;

/* The queue passed its bound: called once, from the loop, never from inside
 * jsonrpc_out_send; what was queued is dropped and later sends are.  */
typedef void (*jsonrpc_overflow_fn) (void *data, size_t queued);

/* Make a queue writing to fd, which is made non-blocking and watched in
 * loop (the caller keeps owning fd, and frees the queue before closing
 * it).  */
struct jsonrpc_out *jsonrpc_out_new (struct loop *loop, int fd, size_t max,
                                     jsonrpc_overflow_fn overflow, void *data,
                                     struct cr_error **err);

/* Queue msg and a newline, and write what the fd takes now.  Returns -1
 * when the message was dropped: the queue is over its bound (overflow
 * follows from the loop), or the peer closed its end.  */
int jsonrpc_out_send (struct jsonrpc_out *q, const char *msg, size_t len);

/* Close the message w holds, queue it as jsonrpc_out_send does (q NULL:
 * it goes nowhere, and 0 is returned) and free w.  */
int jsonrpc_send (struct jsonrpc_out *q, struct jsonw *w);

/* Bytes queued and not yet written.  */
size_t jsonrpc_out_pending (const struct jsonrpc_out *q);

/* Stop watching the fd and free the queue; NULL is allowed.  */
void jsonrpc_out_free (struct jsonrpc_out *q);

/* --- requests crucible sends, and their answers ------------------------- */

struct jsonrpc_ask;

/* The requests sent to one peer whose answers are awaited; ids are
 * "PREFIX-N" with N counting from 1.  Zero-initialized but for prefix.  */
struct jsonrpc_asks
{
  const char *prefix;
  uint64_t last; /* the N of the last id given */
  struct jsonrpc_ask *waiting;
};

/* A new request id (JSON text, owned by asks) whose answer is for data.  */
const char *jsonrpc_ask (struct jsonrpc_asks *a, void *data);

/* The request made for data, whose answer is no longer awaited.  */
void jsonrpc_ask_forget (struct jsonrpc_asks *a, void *data);

/* The answer whose id (JSON text) is given: the data of the request it
 * answers, taken so that another answer to it finds none.  NULL when no
 * request waits for it; *reason then says "duplicate" (one of ours, but
 * answered or given up) or "unknown".  */
void *jsonrpc_answer_take (struct jsonrpc_asks *a, const char *id,
                           const char **reason);

/* Forget every request.  */
void jsonrpc_asks_free (struct jsonrpc_asks *a);

/* Record a "peer" fact: peer ("mcp_client", "agent"), event ("ended",
 * "answer_ignored"), reason (a fixed word) and a byte count.  j may be
 * NULL.  */
void jsonrpc_journal (struct journal *j, const char *peer, const char *event,
                      const char *reason, size_t bytes);

#endif
