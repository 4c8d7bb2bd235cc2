/* What crucible's JSON-speaking peers share (an MCP client on standard
 * input and output, an agent on two pipes): a reader that bounds nesting
 * before a tree is built, and a bounded outgoing queue written from the
 * loop without ever blocking it.  A peer that lets the queue pass its bound
 * is ended by its owner, and the journal says why ("peer" facts,
 * doc/journal.md).  */
#ifndef CRUCIBLE_CORE_JSONRPC_H
#define CRUCIBLE_CORE_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "core/journal.h"
#include "core/loop.h"
#include "lib/error.h"

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

/* Bytes queued and not yet written.  */
size_t jsonrpc_out_pending (const struct jsonrpc_out *q);

/* Stop watching the fd and free the queue; NULL is allowed.  */
void jsonrpc_out_free (struct jsonrpc_out *q);

/* Record a "peer" fact: peer ("mcp_client", "agent"), event ("ended",
 * "answer_ignored"), reason (a fixed word) and a byte count.  j may be
 * NULL.  */
void jsonrpc_journal (struct journal *j, const char *peer, const char *event,
                      const char *reason, size_t bytes);

#endif
