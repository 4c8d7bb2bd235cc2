/* crucible as the client of one MCP server (stdio, JSON-RPC 2.0 a line,
 * over core/jsonrpc.h).  The client never starts anything: its owner (the
 * lifecycle, which prepares the server through a backend) hands it the two
 * ends of the server's standard output and input and the loop they are
 * watched in, and is told through callbacks what the client learns.
 *
 * The handshake (initialize offering MCP_CLIENT_PROTOCOL, the answer's
 * version checked against the three crucible speaks, then
 * notifications/initialized and tools/list through every page) runs from
 * mcpclient_new; `ready` or `failed` ends it.  Afterwards tools are called
 * with mcpclient_call, each with its own deadline; a call given up is
 * cancelled (notifications/cancelled) and its late answer ignored;
 * notifications/tools/list_changed re-lists and says which tools are new.
 * Requests the server sends are answered: ping; roots/list with the
 * workspace root as a file:// URI; sampling/createMessage refused with a
 * JSON-RPC error; elicitation/create handed to the owner's callback, or
 * refused when there is none.
 *
 * Every reply is decoded, and then each of its strings (keys included) is
 * given to the owner's hide hook, which may overwrite credential values in
 * it; what the client keeps and hands on is built from those strings, and
 * numbers (an error's code) stay as the server spelled them.
 *
 * Errors are crun-style and name the server and the method: "MCP server
 * `files`: tools/call `read_file`: no answer within 30 s".
 *
 * The owner ignores SIGPIPE (crucible's main does): a server that closed
 * its input is then seen as EPIPE, and its closed output ends the
 * connection.  */
#ifndef CRUCIBLE_CORE_MCPCLIENT_H
#define CRUCIBLE_CORE_MCPCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "lib/error.h"

/* The protocol version crucible offers, and the older ones it accepts
 * when a server answers with one of them.  */
#define MCP_CLIENT_PROTOCOL "2025-06-18"
#define MCP_CLIENT_PROTOCOL_OLDER "2025-03-26", "2024-11-05"

/* The longest line taken from a server unless told otherwise (4 MiB); a
 * longer one fails the connection.  */
#define MCPCLIENT_FRAME_MAX ((size_t) 4 << 20)

/* The most tools one server may offer, and the most tools/list pages read
 * for one listing: a server whose cursor never ends fails the listing.  */
#define MCPCLIENT_TOOLS_MAX 1024
#define MCPCLIENT_PAGES_MAX 64

/* The most elicitations waiting for the person at once; another is
 * refused.  */
#define MCPCLIENT_ELICIT_MAX 4

/* The longest tool name kept (mcp__<server>__<tool> stays within 103
 * bytes with a server name of MCPSERVERS_NAME_MAX).  */
#define MCPCLIENT_TOOL_NAME_MAX 64

struct mcpclient;

/* One tool the server offers, as hidden by the hook.  */
struct mcpclient_tool
{
  char *name; /* letters, digits, '-' and '_' (MCPCLIENT_TOOL_NAME_MAX) */
  char *description;  /* or NULL */
  char *input_schema; /* the inputSchema object as JSON text */
};

/* What a tools/call came back with, owned by the client for the length of
 * the callback.  */
struct mcpclient_result
{
  const struct cr_error *error; /* the call failed: no answer, an error
                                   answer, the server gone; else NULL */
  bool is_error;                /* the tool said its call failed (isError) */
  const char *text; /* the content for the model: text items as they are,
                       other items described, valid UTF-8, its encoded
                       size within RESULT_MAX_ENCODED (cut in its middle,
                       saying so) */
  size_t text_len;
};

/* A call's answer (or its failure); called once, never after
 * mcpclient_cancel or mcpclient_free.  Once it has been called the call is
 * gone: it is not to be cancelled.  */
typedef void (*mcpclient_done_fn) (void *data,
                                   const struct mcpclient_result *result);

/* The hook that hides credential values in a decoded string of len bytes
 * (not NUL-terminated), in place and keeping its length, e.g. one '*' for
 * each byte of a value found (core/mask.h).  */
typedef void (*mcpclient_hide_fn) (void *data, char *s, size_t len);

/* An elicitation/create the server sent, to be put to the person; answer
 * it with mcpclient_elicit_answer.  */
struct mcpclient_elicitation;

/* Put e to the person: message (hidden, valid UTF-8) and the schema the
 * answer must fit (JSON text).  */
typedef void (*mcpclient_elicit_fn) (void *data, struct mcpclient *c,
                                     struct mcpclient_elicitation *e,
                                     const char *message, const char *schema);

/* What the owner is told.  Each may be NULL.  A callback may call
 * mcpclient_free on its client: it is then freed once the callback
 * returns.  */
struct mcpclient_listener
{
  /* The handshake and the first listing succeeded.  */
  void (*ready) (void *data, struct mcpclient *c);
  /* A re-listing after notifications/tools/list_changed finished; added
   * names the tools that are new (n_added of them, possibly none).  */
  void (*tools_changed) (void *data, struct mcpclient *c,
                         const char *const *added, size_t n_added);
  /* The connection failed (handshake, timeout, garbage, an overlong
   * frame, the server closed its output, a failed re-listing): nothing
   * more is read or sent.  Calls in flight were told first.  */
  void (*failed) (void *data, struct mcpclient *c, const struct cr_error *err);
  void *data;
};

/* What a client is made from; every pointer is borrowed for the call.  */
struct mcpclient_config
{
  const char *server; /* its name, in every message */
  struct loop *loop;
  int from_server;        /* its standard output: read (made non-blocking) */
  int to_server;          /* its standard input: written (made non-blocking) */
  const char *root;       /* the workspace root (absolute), for roots/list */
  uint64_t handshake_ms;  /* initialize through the first listing; also
                             each re-listing (> 0) */
  size_t frame_max;       /* the longest line read; 0: MCPCLIENT_FRAME_MAX */
  mcpclient_hide_fn hide; /* NULL: nothing is hidden */
  void *hide_data;
  mcpclient_elicit_fn elicit; /* NULL: elicitation is not offered */
  void *elicit_data;
  struct mcpclient_listener listener;
};

/* Start the handshake over the two descriptors, which stay the caller's:
 * close them after mcpclient_free.  Returns NULL with *err set when they
 * cannot be watched.  */
struct mcpclient *mcpclient_new (const struct mcpclient_config *cfg,
                                 struct cr_error **err);

/* Stop watching, forget every call and request (no callback is called)
 * and free the client; NULL is allowed.  */
void mcpclient_free (struct mcpclient *c);

/* Whether the handshake finished and the connection has not failed.  */
bool mcpclient_ready (const struct mcpclient *c);

/* The version the server answered with, or NULL before it did.  */
const char *mcpclient_protocol (const struct mcpclient *c);

/* The server's tools (*n of them), owned by the client until the next
 * listing replaces them.  */
const struct mcpclient_tool *mcpclient_tools (const struct mcpclient *c,
                                              size_t *n);

/* The tools the last listing left out because their name cannot be part
 * of mcp__<server>__<tool> (*n of them, shown safe for a terminal).  */
const char *const *mcpclient_skipped (const struct mcpclient *c, size_t *n);

/* A tools/call in flight.  */
struct mcpclient_call;

/* Call tool with arguments (a JSON object's text, NULL for {}); done is
 * called with the answer, or with an error when none came within
 * timeout_ms (the call is then cancelled at the server).  Returns NULL
 * with *err set when the client is not ready or the tool is not one the
 * server listed.  */
struct mcpclient_call *mcpclient_call (struct mcpclient *c, const char *tool,
                                       const char *arguments,
                                       uint64_t timeout_ms,
                                       mcpclient_done_fn done, void *data,
                                       struct cr_error **err);

/* Give a call up: the server is sent notifications/cancelled with reason,
 * done is not called, and a late answer is ignored.  */
void mcpclient_cancel (struct mcpclient *c, struct mcpclient_call *call,
                       const char *reason);

/* How a person answered an elicitation.  */
enum mcpclient_elicit_action
{
  MCPCLIENT_ELICIT_ACCEPT,
  MCPCLIENT_ELICIT_DECLINE,
  MCPCLIENT_ELICIT_CANCEL
};

/* Answer e (and free it): content is the accepted answer's JSON object
 * text (NULL unless accepted).  */
void mcpclient_elicit_answer (struct mcpclient *c,
                              struct mcpclient_elicitation *e,
                              enum mcpclient_elicit_action action,
                              const char *content);

/* The file:// URI of an absolute path, percent-encoding every byte but
 * unreserved ones and '/'; the caller owns it.  */
char *mcpclient_file_uri (const char *path);

#endif
