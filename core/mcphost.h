/* The MCP servers of one run (a turn of the full-screen session, the
 * connection of `crucible mcp`): each configured server the configuration
 * does not disable is prepared through the selected backend with the run's
 * policy when the run first needs them (mcphost_begin), started with its
 * own standard streams (sandbox_command.stdio), spoken to through
 * core/mcpclient, restarted when it exits or fails, and disposed of at the
 * end of the run (mcphost_end).
 *
 * The lifecycle keeps the spec's rules ("Lifecycle and inspection",
 * "Writable roots and publication"):
 *   - every preparation has a new sandbox ID, and every fact about a
 *     server carries it and the identity mcp:<server>;
 *   - a server's writes are published when it exits on its own (after its
 *     input was closed at the end of the run, or before a restart) and
 *     discarded when it has to be stopped;
 *   - a restart waits until the previous scope is confirmed empty and its
 *     writes are settled; a root that changed fails the restart (or the
 *     disposal) with that reason, and no replacement is started behind it;
 *   - a failed handshake or listing is cleaned up explicitly; an optional
 *     server is skipped only once that cleanup is confirmed;
 *   - a scope that does not confirm it is empty within the bound is a
 *     disposal failure that blocks every later preparation;
 *   - a fact the journal cannot take ends the run (listener.audit_failed),
 *     after what else failed is reported.
 *
 * A server's stderr is read, masked with that server's credentials and
 * bounded (MCPHOST_STDERR_MAX a start), and handed to the listener line
 * by line; its stdout is the protocol, which nothing rewrites.  The values
 * of its credentials are hidden in every reply the client keeps.  */
#ifndef CRUCIBLE_CORE_MCPHOST_H
#define CRUCIBLE_CORE_MCPHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/journal.h"
#include "core/loop.h"
#include "core/mcpclient.h"
#include "lib/error.h"
#include "sandbox/backend.h"

/* The bound wherever somebody waits for a server: its exit after its
 * input closed, the confirmation of its cleanup, the publication lock.  */
#define MCPHOST_WAIT_MS 5000

/* The handshake and the first listing of one start.  */
#define MCPHOST_HANDSHAKE_MS 60000

/* The most restarts of one server in one run; past it the server fails
 * for the rest of the run.  */
#define MCPHOST_RESTARTS_MAX 3

/* The stderr kept of one start of a server, in bytes; what follows is
 * dropped, saying so once.  */
#define MCPHOST_STDERR_MAX ((size_t) 64 * 1024)

struct jsonw;
struct mcphost;
struct supervisor;
/* A server's question waiting for the person (listener.elicit).  */
struct mcphost_elicitation;

/* One tool offered, as mcp__<server>__<tool>.  */
struct mcphost_tool
{
  const char *qualified; /* mcp__<server>__<tool> */
  const char *server;
  const struct mcpclient_tool *tool;
  bool initial; /* one the rule mcp__<server> covers, as recorded */
};

struct mcphost_listener
{
  /* Every server of the run is ready, skipped or failed; err is NULL, or
   * why the run's preparation stopped (a required server that did not
   * start, a blocked preparation).  */
  void (*settled) (void *data, const struct cr_error *err);
  /* A server's tools changed (notifications/tools/list_changed, or a
   * restart): the list from mcphost_tools is new.  */
  void (*tools_changed) (void *data, const char *server);
  /* A line (without its newline) of a server's stderr, masked.  */
  void (*stderr_line) (void *data, const char *server, const char *line,
                       size_t len);
  /* Something happened to a server the person should hear of: a restart,
   * a restart that failed, a skip (msg names the server).  */
  void (*notice) (void *data, const char *msg);
  /* The end of the run is done: every server disposed of, or held where
   * its cleanup is unconfirmed; err NULL, or the first disposal failure.  */
  void (*ended) (void *data, const struct cr_error *err);
  /* A lifecycle fact could not be written: the run must end.  */
  void (*audit_failed) (void *data, const struct cr_error *err);
  /* A server's own elicitation/create, to be put to the person: message
   * (its credentials hidden, shown safe) and the schema the answer must
   * fit (JSON text); answered with mcphost_elicit_answer.  NULL: a
   * server's elicitation is refused (it is not offered).  */
  void (*elicit) (void *data, const char *server, struct mcphost_elicitation *q,
                  const char *message, const char *schema);
  void *data;
};

/* What a host is made from; every pointer is borrowed for its life.  */
struct mcphost_config
{
  struct loop *loop;
  struct sandbox_backend *backend;
  const struct config *config;
  const char *workspace;
  char *const *host_env;
  struct journal *journal; /* NULL: nothing is recorded */
  struct mcphost_listener listener;
  /* Whose host-owned proxy a server whose policy names domains reaches
   * them through, as a command does (NULL: a server gets no network).  */
  struct supervisor *supervisor;
};

/* Whether cfg configures a server that is not disabled.  */
bool mcphost_wanted (const struct config *cfg);

struct mcphost *mcphost_new (const struct mcphost_config *cfg);

/* Abandon whatever still runs (its keeper ends it) and free the host.  */
void mcphost_free (struct mcphost *h);

/* Begin a run: prepare and start every server.  listener.settled follows
 * (possibly before this returns).  Refused while a run is on, or while an
 * earlier scope's cleanup is unconfirmed.  */
int mcphost_begin (struct mcphost *h, const char *run_id,
                   struct cr_error **err);

/* Whether the run's servers are settled (ready, skipped or failed).  */
bool mcphost_settled (const struct mcphost *h);

/* The tools offered now (*n of them), owned by the host until the next
 * listing or restart.  */
const struct mcphost_tool *mcphost_tools (struct mcphost *h, size_t *n);

/* Write the tools offered now to w as a JSON array of {name,
 * description, inputSchema}, the shape tools/list and an agent's tool
 * list both take.  */
void mcphost_tools_write (struct mcphost *h, struct jsonw *w);

/* The tool offered as qualified, or NULL.  */
const struct mcphost_tool *mcphost_find (struct mcphost *h,
                                         const char *qualified);

struct mcphost_call;

/* Call the tool offered as qualified with arguments (JSON object text);
 * done is called once with its answer, from the loop.  Returns NULL with
 * *err set when no ready server offers it.  */
struct mcphost_call *mcphost_call (struct mcphost *h, const char *qualified,
                                   const char *arguments, uint64_t timeout_ms,
                                   mcpclient_done_fn done, void *data,
                                   struct cr_error **err);

/* Give a call up (cancelled at the server); done is not called.  */
void mcphost_cancel (struct mcphost *h, struct mcphost_call *call);

/* End the run: close every server's input, wait (MCPHOST_WAIT_MS) for
 * it to exit on its own, publish what it wrote or discard it, dispose of
 * it; listener.ended follows.  */
void mcphost_end (struct mcphost *h);

/* End the run stopping every server at once: their writes are
 * discarded; listener.ended follows.  */
void mcphost_stop (struct mcphost *h);

/* Whether servers started from now on are offered elicitation (their
 * questions reach listener.elicit; on by default when it is set): off
 * where nobody can be asked, such as a client of crucible mcp that did
 * not declare the capability.  */
void mcphost_offer_elicitation (struct mcphost *h, bool on);
/* Answer q (and forget it): content is the accepted answer's JSON object
 * text (NULL unless accepted).  A server that ended or restarted since it
 * asked is not answered.  */
void mcphost_elicit_answer (struct mcphost *h, struct mcphost_elicitation *q,
                            enum mcpclient_elicit_action action,
                            const char *content);

/* Whether anything of a server is still held (a run on, or ending).  */
bool mcphost_busy (const struct mcphost *h);

/* Whether a scope's cleanup stayed unconfirmed, which blocks every later
 * preparation.  */
bool mcphost_blocked (const struct mcphost *h);

/* The configured name of the server whose client of the host's proxy
 * was granted with sandbox_id (the one asking a network question), or
 * NULL when it is no server's (a command's).  */
const char *mcphost_net_owner (const struct mcphost *h, const char *sandbox_id);

#endif
