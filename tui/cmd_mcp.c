/* The MCP server: JSON-RPC over stdio onto the supervisor.  */
#include <config.h>

#include "tui/cmd_mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "core/config.h"
#include "core/jsonrpc.h"
#include "core/loop.h"
#include "core/mcphost.h"
#include "core/mcpservers.h"
#include "core/notes.h"
#include "core/permit.h"
#include "core/result.h"
#include "core/supervisor.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/json.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "tui/host.h"
#include "tui/options.h"

extern char **environ;

/* The longest message accepted on one line; a longer one is a parse error
 * and is skipped to its end.  */
#define MCP_MAX_LINE 4194304

/* How long the server waits, once its input has closed, for every scope to
 * be confirmed empty.  */
#define MCP_CLEANUP_MS 5000

/* The ids of the questions this server asks the client: "crucible-ask-N".  */
#define MCP_ASK_PREFIX "crucible-ask"
/* The ids of the network questions (mcp_net_ask).  */
#define MCP_NET_PREFIX "crucible-net"
/* The ids of the questions about an MCP server's tool (mcp_tool_ask).  */
#define MCP_TOOL_PREFIX "crucible-tool"
/* The ids of an MCP server's own questions, forwarded (mcp_srv_ask).  */
#define MCP_SRV_PREFIX "crucible-srv"

/* The longest part of a tool call's arguments shown when asking.  */
#define MCP_TOOL_ARGS_SHOWN 2000

/* How long the end of the connection waits for the MCP servers to be
 * disposed of: their exit, cleanup and publication, each bounded.  */
#define MCP_SERVERS_END_MS 20000

struct mcp;

/* A tools/call of bash in flight: waiting for approval or for its answer.  */
struct mcp_call
{
  struct mcp *mcp;
  struct mcp_call *next;
  char *id; /* the request's id as JSON text */
  struct command_request req;
  char *line, *description;
  struct env_var *env;
  size_t n_env;
  struct command *cmd;
  bool cancelled; /* the client cancelled: no answer is sent */
};

/* A tools/call of an MCP server's tool (mcp__<server>__<tool>) in
 * flight: waiting for approval or for the server's answer.  */
struct mcp_tcall
{
  struct mcp *mcp;
  struct mcp_tcall *next;
  char *id;        /* the request's id as JSON text */
  char *qualified; /* mcp__<server>__<tool> */
  char *args;      /* its arguments, JSON object text */
  struct mcphost_call *hc;
  bool waiting; /* for the servers to settle */
};

/* A tools/list waiting for the servers to settle.  */
struct mcp_listing
{
  struct mcp_listing *next;
  char *id;
};

struct mcp
{
  struct host host;       /* owns the loop, the supervisor, journal and rules */
  struct loop *loop;      /* the host's */
  struct supervisor *sup; /* the host's */
  struct jsonrpc_lines in; /* the line being read */
  bool input_closed;
  bool initialized;
  bool can_elicit; /* the client declared elicitation */
  int host_signal;
  struct jsonrpc_asks asks;     /* questions sent, whose answers are awaited */
  struct jsonrpc_asks net_asks; /* network questions sent (mcp_net_ask) */
  struct mcp_net *nets;         /* and each one's state */
  struct mcp_call *calls;
  struct journal *journal; /* the host's */
  struct rules *rules;     /* the host's */
  const char *refusal; /* why no command may run here, or NULL: the host's */
  bool cleanup_expired;
  struct jsonrpc_out *out; /* what waits for the client to read it */
  bool client_ended;       /* it did not read, and the server ends */
  bool output_lost;        /* a message could not be queued: no more calls */
  struct mcphost *servers; /* the configured MCP servers, or NULL */
  bool servers_begun, servers_settled, servers_ended, servers_expired;
  struct mcp_listing *listings;  /* tools/list waiting for the servers */
  struct jsonrpc_asks tool_asks; /* questions about a server's tool */
  struct jsonrpc_asks srv_asks;  /* a server's own questions, forwarded */
  struct mcp_tcall *tcalls;
  int servers_status; /* 1 when a disposal or the audit failed */
};

static void mcp_servers_begin (struct mcp *m);
static void mcp_servers_offer (struct mcp *m);
static void mcp_tcalls_decide_waiting (struct mcp *m);
static void mcp_end_connection (struct mcp *m, bool stop);
static void mcp_on_servers_timeout (struct loop *loop, void *data);

/* --- output -------------------------------------------------------------- */

/* Make a server with nothing set up yet.  */
static void
mcp_init (struct mcp *m)
{
  memset (m, 0, sizeof *m);
  m->in.max = MCP_MAX_LINE;
  m->asks.prefix = MCP_ASK_PREFIX;
  m->net_asks.prefix = MCP_NET_PREFIX;
  m->tool_asks.prefix = MCP_TOOL_PREFIX;
  m->srv_asks.prefix = MCP_SRV_PREFIX;
}

/* Queue one message and its newline for standard output; a client that
 * does not read is ended from the queue's overflow, and one that is gone
 * is ended by its input closing.  */
static void
mcp_send (struct mcp *m, struct jsonw *w)
{
  if (jsonrpc_send (m->out, w) < 0)
    m->output_lost = true;
}

/* Send a JSON-RPC error answering id (JSON text, "null" when unknown).  */
static void
mcp_send_error (struct mcp *m, const char *id, enum jsonrpc_error_code code,
                const char *message)
{
  mcp_send (m, jsonrpc_error_new (id, code, message));
}

/* Send a result; result is JSON text.  */
static void
mcp_send_result (struct mcp *m, const char *id, const char *result)
{
  struct jsonw *w = jsonrpc_result_begin (id);
  jsonw_raw (w, result, strlen (result));
  mcp_send (m, w);
}

/* Send a tool result: one text item, with any ending notes not yet told
 * put before it.  */
static void
mcp_send_tool_text (struct mcp *m, const char *id, const char *text, size_t len,
                    bool is_error)
{
  struct jsonw *w = jsonrpc_result_begin (id);
  size_t endings_len = 0, whole_len;
  char *endings = supervisor_take_endings (m->sup, &endings_len);
  /* The cap holds for the whole result, endings and all; it is valid
   * UTF-8 and counted in the writer's encoded bytes.  */
  char *whole = result_join (endings, endings_len, text, len, &whole_len);
  jsonw_object_open (w);
  jsonw_key (w, "content");
  jsonw_array_open (w);
  jsonw_object_open (w);
  jsonw_key (w, "type");
  jsonw_cstr (w, "text");
  jsonw_key (w, "text");
  jsonw_string (w, whole, whole_len);
  jsonw_object_close (w);
  jsonw_array_close (w);
  jsonw_key (w, "isError");
  jsonw_bool (w, is_error);
  jsonw_object_close (w);
  free (whole);
  free (endings);
  mcp_send (m, w);
}

/* --- calls --------------------------------------------------------------- */

/* Take a call off the list and free it.  */
static void
mcp_call_free (struct mcp_call *call)
{
  struct mcp_call **p = &call->mcp->calls;
  while (*p != NULL && *p != call)
    p = &(*p)->next;
  if (*p == call)
    *p = call->next;
  for (size_t i = 0; i < call->n_env; i++)
    {
      free ((char *) call->env[i].name);
      free ((char *) call->env[i].value);
    }
  free (call->env);
  free (call->id);
  /* An answer to its question, if one comes, finds no call.  */
  jsonrpc_ask_forget (&call->mcp->asks, call);
  free (call->line);
  free (call->description);
  free (call);
}

/* The supervisor answered a call.  */
static void
mcp_on_answered (void *data, struct command *cmd,
                 const struct command_answer *answer)
{
  struct mcp *m = data;
  for (struct mcp_call *c = m->calls; c != NULL; c = c->next)
    if (c->cmd == cmd)
      {
        if (!c->cancelled)
          mcp_send_tool_text (m, c->id, answer->text, answer->text_len,
                              answer->refused);
        mcp_call_free (c);
        return;
      }
}

/* A command left running ended: tell the client's person now.  */
static void
mcp_on_ended_on_its_own (void *data, struct command *cmd, const char *line)
{
  struct mcp *m = data;
  struct jsonw *w = jsonrpc_notification_begin ("notifications/message");
  jsonw_object_open (w);
  jsonw_key (w, "level");
  jsonw_cstr (w, "warning");
  jsonw_key (w, "logger");
  jsonw_cstr (w, "crucible");
  jsonw_key (w, "data");
  jsonw_text (w, line, strlen (line));
  jsonw_object_close (w);
  mcp_send (m, w);
}

static void
mcp_on_cleaned (void *data, struct command *cmd)
{
}

static const struct supervisor_listener mcp_listener_template = {
  .answered = mcp_on_answered,
  .ended_on_its_own = mcp_on_ended_on_its_own,
  .cleaned = mcp_on_cleaned,
};

/* Start the call's command, or answer with the refusal.  */
static void
mcp_call_run (struct mcp_call *call)
{
  struct mcp *m = call->mcp;
  struct supervisor_listener listener = mcp_listener_template;
  struct cr_error *err = NULL;

  listener.data = m;
  if (supervisor_start (m->sup, &call->req, &listener, &call->cmd, &err) < 0)
    {
      mcp_send_tool_text (m, call->id, err->msg, strlen (err->msg), true);
      cr_error_free (err);
      mcp_call_free (call);
    }
}

/* Answer a call with a refusal the model is given.  */
static void
mcp_call_refuse (struct mcp_call *call, const char *reason)
{
  char *text = notes_refusal (reason);
  mcp_send_tool_text (call->mcp, call->id, text, strlen (text), true);
  free (text);
  mcp_call_free (call);
}

/* The schema of the one answer asked for: {"allow": boolean}.  */
static void
mcp_put_allow_schema (struct jsonw *w)
{
  jsonw_object_open (w);
  jsonw_key (w, "type");
  jsonw_cstr (w, "object");
  jsonw_key (w, "properties");
  jsonw_object_open (w);
  jsonw_key (w, "allow");
  jsonw_object_open (w);
  jsonw_key (w, "type");
  jsonw_cstr (w, "boolean");
  jsonw_key (w, "title");
  jsonw_cstr (w, "Allow");
  jsonw_object_close (w);
  jsonw_object_close (w);
  jsonw_key (w, "required");
  jsonw_array_open (w);
  jsonw_cstr (w, "allow");
  jsonw_array_close (w);
  jsonw_object_close (w);
}

/* Put an "allow this?" question to the client's person: msg (freed
 * here) with the one answer {"allow": boolean}, under an id of asks that
 * leads back to data.  */
static void
mcp_ask_allow (struct mcp *m, struct jsonrpc_asks *asks, void *data,
               struct buf *msg)
{
  struct jsonw *w
      = jsonrpc_request_begin (jsonrpc_ask (asks, data), "elicitation/create");
  jsonw_object_open (w);
  jsonw_key (w, "message");
  jsonw_text (w, msg->data, msg->len);
  jsonw_key (w, "requestedSchema");
  mcp_put_allow_schema (w);
  jsonw_object_close (w);
  buf_free (msg);
  mcp_send (m, w);
}

static yajl_val mcp_get (yajl_val obj, const char *key);

/* Whether the answer to an "allow this?" question allows it: accepted,
 * with allow true; anything else (declined, cancelled, an error, allow
 * false or missing) does not.  */
static bool
mcp_allow_answered (yajl_val msg)
{
  yajl_val result = mcp_get (msg, "result");
  yajl_val action = mcp_get (result, "action");
  yajl_val allow = mcp_get (mcp_get (result, "content"), "allow");
  return YAJL_IS_STRING (action) && strcmp (action->u.string, "accept") == 0
         && YAJL_IS_TRUE (allow);
}

/* Ask the client's person whether the call may run.  */
static void
mcp_call_ask (struct mcp_call *call)
{
  struct mcp *m = call->mcp;
  struct buf msg = BUF_INIT;

  buf_printf (&msg, _ ("Allow this command to run?\n\n%s"), call->line);
  if (call->req.background)
    buf_puts (&msg, _ ("\n\nThe command will still be running after the "
                       "turn ends."));
  mcp_ask_allow (m, &m->asks, call, &msg);
}

/* Decide whether a call runs, is asked about, or is refused.  */
static void
mcp_call_decide (struct mcp_call *call)
{
  struct mcp *m = call->mcp;
  struct permit p;

  if (m->refusal != NULL)
    {
      mcp_call_refuse (call, m->refusal);
      return;
    }
  /* Every call comes from a model: the rules decide, and the person is
   * asked about the rest.  */
  permit_decide (m->rules, call->line, false, call->req.background, &p);
  if (p.verdict == PERMIT_RUN)
    mcp_call_run (call);
  else if (p.verdict == PERMIT_REFUSE)
    {
      mcp_send_tool_text (m, call->id, p.refusal, strlen (p.refusal), true);
      mcp_call_free (call);
    }
  else if (m->can_elicit)
    mcp_call_ask (call);
  else
    mcp_call_refuse (call,
                     "this command needs approval, and this MCP client "
                     "cannot be asked (it did not declare the elicitation "
                     "capability); allow it in ~/.crucible/config.json "
                     "(permissions.allow, or permissions.mode fullAccess)");
  permit_clear (&p);
}

/* --- requests ------------------------------------------------------------ */

/* The value at a path in an object, or NULL.  */
static yajl_val
mcp_get (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return obj != NULL ? yajl_tree_get (obj, path, yajl_t_any) : NULL;
}

/* Why a request is answered with an error before anything else: its id
 * cannot be echoed as valid UTF-8, or a string in it holds a NUL.  */
#define MCP_ID_NOT_UTF8 "invalid request: the id is not valid UTF-8"
#define MCP_HOLDS_NUL                                                          \
  "invalid params: a string in the request holds a NUL character (\\u0000)"

/* initialize: record what the client can do and say what we can.  */
static void
mcp_initialize (struct mcp *m, const char *id, yajl_val params)
{
  yajl_val caps = mcp_get (params, "capabilities");
  m->can_elicit = YAJL_IS_OBJECT (mcp_get (caps, "elicitation"));
  m->initialized = true;
  mcp_servers_begin (m);
  struct jsonw *w = jsonrpc_result_begin (id);
  jsonw_object_open (w);
  jsonw_key (w, "protocolVersion");
  jsonw_cstr (w, MCP_PROTOCOL_VERSION);
  jsonw_key (w, "capabilities");
  jsonw_object_open (w);
  jsonw_key (w, "tools");
  jsonw_object_open (w);
  jsonw_key (w, "listChanged");
  jsonw_bool (w, m->servers != NULL);
  jsonw_object_close (w);
  jsonw_key (w, "logging");
  jsonw_object_open (w);
  jsonw_object_close (w);
  jsonw_object_close (w);
  jsonw_key (w, "serverInfo");
  jsonw_object_open (w);
  jsonw_key (w, "name");
  jsonw_cstr (w, "crucible");
  jsonw_key (w, "version");
  jsonw_cstr (w, PACKAGE_VERSION);
  jsonw_object_close (w);
  jsonw_object_close (w);
  mcp_send (m, w);
}

/* The two tools crucible has itself, as one JSON text each.  */
static const char mcp_bash_tool[]
    = "{\"name\":\"bash\",\"description\":\"Run a shell command "
      "through sh -c in the workspace root, supervised, with a built "
      "environment and bounded output. Send background: true for a "
      "command with no end of its own (a dev server, a watcher); it is "
      "left running and its output is handed over when it ends.\","
      "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"command\":"
      "{\"type\":\"string\",\"description\":\"The command line.\"},"
      "\"description\":{\"type\":\"string\",\"description\":\"What the "
      "command does, in a few words.\"},\"timeout\":{\"type\":\"number\","
      "\"exclusiveMinimum\":0,\"description\":\"Seconds before it is "
      "stopped; not with background.\"},\"background\":{\"type\":"
      "\"boolean\",\"description\":\"Leave it running.\"},\"env\":{\"type\":"
      "\"object\",\"additionalProperties\":{\"type\":\"string\"},"
      "\"description\":\"Variables to give the command.\"}},\"required\":"
      "[\"command\"],\"additionalProperties\":false}}";
static const char mcp_bash_output_tool[]
    = "{\"name\":\"bash_output\",\"description\":\"What a command left running "
      "has "
      "printed so far.\",\"inputSchema\":{\"type\":\"object\","
      "\"properties\":{\"number\":{\"type\":\"integer\",\"description\":"
      "\"The number it was left running as.\"}},\"required\":[\"number\"],"
      "\"additionalProperties\":false}}";

/* tools/list: bash and bash_output with their schemas, then every tool
 * the MCP servers offer, as mcp__<server>__<tool>.  */
static void
mcp_tools_list (struct mcp *m, const char *id)
{
  struct jsonw *w = jsonrpc_result_begin (id);
  jsonw_object_open (w);
  jsonw_key (w, "tools");
  jsonw_array_open (w);
  jsonw_raw (w, mcp_bash_tool, strlen (mcp_bash_tool));
  jsonw_raw (w, mcp_bash_output_tool, strlen (mcp_bash_output_tool));
  if (m->servers != NULL)
    mcphost_tools_write (m->servers, w);
  jsonw_array_close (w);
  jsonw_object_close (w);
  mcp_send (m, w);
}

/* tools/list: answered now, or once the MCP servers have settled.  */
static void
mcp_tools_list_request (struct mcp *m, const char *id)
{
  if (m->servers == NULL || m->servers_settled)
    {
      mcp_tools_list (m, id);
      return;
    }
  struct mcp_listing *l = xcalloc (1, sizeof *l);
  l->id = xstrdup (id);
  l->next = m->listings;
  m->listings = l;
}

/* Copy the env object of a bash call into the request.  */
static const char *
mcp_parse_env (struct mcp_call *call, yajl_val env)
{
  if (env == NULL)
    return NULL;
  if (!YAJL_IS_OBJECT (env))
    return "env must be an object of strings";
  size_t n = env->u.object.len;
  call->env = xcalloc (n + 1, sizeof *call->env);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val v = env->u.object.values[i];
      if (!YAJL_IS_STRING (v))
        return "env must be an object of strings";
      const char *value = YAJL_GET_STRING (v);
      call->env[call->n_env].name = xstrdup (env->u.object.keys[i]);
      call->env[call->n_env].value = xstrdup (value);
      call->env[call->n_env].value_len = strlen (value);
      call->n_env++;
    }
  return NULL;
}

/* Read a bash call's arguments; returns what is wrong, or NULL.  */
static const char *
mcp_parse_bash (struct mcp_call *call, yajl_val args)
{
  yajl_val command = mcp_get (args, "command");
  yajl_val description = mcp_get (args, "description");
  yajl_val timeout = mcp_get (args, "timeout");
  yajl_val background = mcp_get (args, "background");

  if (!YAJL_IS_OBJECT (args))
    return "arguments must be an object";
  static const char *const known[]
      = { "command", "description", "timeout", "background", "env", NULL };
  for (size_t i = 0; i < args->u.object.len; i++)
    {
      const char *const *k = known;
      while (*k != NULL && strcmp (*k, args->u.object.keys[i]) != 0)
        k++;
      if (*k == NULL)
        return "unknown argument (bash takes command, description, "
               "timeout, background, env)";
    }
  if (!YAJL_IS_STRING (command))
    return "command must be a string";
  if (description != NULL && !YAJL_IS_STRING (description))
    return "description must be a string";
  if (timeout != NULL
      && (!YAJL_IS_NUMBER (timeout) || !(YAJL_GET_DOUBLE (timeout) > 0)
          || !isfinite (YAJL_GET_DOUBLE (timeout))))
    return "timeout must be a number of seconds greater than 0";
  if (background != NULL && !YAJL_IS_TRUE (background)
      && !YAJL_IS_FALSE (background))
    return "background must be true or false";
  call->line = xstrdup (YAJL_GET_STRING (command));
  call->description
      = description ? xstrdup (YAJL_GET_STRING (description)) : NULL;
  call->req.line = call->line;
  call->req.description = call->description;
  call->req.timeout_seconds = timeout ? YAJL_GET_DOUBLE (timeout) : 0;
  call->req.background = background != NULL && YAJL_IS_TRUE (background);
  const char *bad = mcp_parse_env (call, mcp_get (args, "env"));
  call->req.env = call->env;
  call->req.n_env = call->n_env;
  return bad;
}

/* tools/call bash.  */
static void
mcp_call_bash (struct mcp *m, const char *id, yajl_val args)
{
  struct mcp_call *call = xcalloc (1, sizeof *call);
  call->mcp = m;
  call->id = xstrdup (id);
  call->next = m->calls;
  m->calls = call;
  const char *bad = mcp_parse_bash (call, args);
  if (bad != NULL)
    {
      mcp_send_error (m, id, JSONRPC_INVALID_PARAMS, bad);
      mcp_call_free (call);
      return;
    }
  mcp_call_decide (call);
}

/* tools/call bash_output: never asked about.  */
static void
mcp_call_bash_output (struct mcp *m, const char *id, yajl_val args)
{
  yajl_val number = mcp_get (args, "number");
  if (!YAJL_IS_OBJECT (args) || args->u.object.len != 1
      || !YAJL_IS_INTEGER (number))
    {
      mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                      "bash_output takes {\"number\": N}, an integer");
      return;
    }
  size_t len;
  char *text = supervisor_output (m->sup, YAJL_GET_INTEGER (number), &len);
  mcp_send_tool_text (m, id, text, len, false);
  free (text);
}

/* --- MCP servers' tools ------------------------------------------------ */

/* Take a tool call off the list and free it.  */
static void
mcp_tcall_free (struct mcp_tcall *tc)
{
  struct mcp_tcall **p = &tc->mcp->tcalls;
  while (*p != NULL && *p != tc)
    p = &(*p)->next;
  if (*p == tc)
    *p = tc->next;
  jsonrpc_ask_forget (&tc->mcp->tool_asks, tc);
  free (tc->id);
  free (tc->qualified);
  free (tc->args);
  free (tc);
}

/* The server answered a tool call: handed to the client as it was kept
 * (credentials hidden), with any ending notes before it.  */
static void
mcp_tcall_done (void *data, const struct mcpclient_result *r)
{
  struct mcp_tcall *tc = data;
  tc->hc = NULL;
  if (r->error != NULL)
    mcp_send_tool_text (tc->mcp, tc->id, r->error->msg, strlen (r->error->msg),
                        true);
  else
    mcp_send_tool_text (tc->mcp, tc->id, r->text, r->text_len, r->is_error);
  mcp_tcall_free (tc);
}

/* Hand the call to its server.  */
static void
mcp_tcall_run (struct mcp_tcall *tc)
{
  struct mcp *m = tc->mcp;
  struct cr_error *err = NULL;
  uint64_t ms = supervisor_deadline_ms (m->host.cfg, 0);
  tc->hc = mcphost_call (m->servers, tc->qualified, tc->args, ms,
                         mcp_tcall_done, tc, &err);
  if (tc->hc == NULL)
    {
      mcp_send_tool_text (m, tc->id, err->msg, strlen (err->msg), true);
      cr_error_free (err);
      mcp_tcall_free (tc);
    }
}

/* Ask the client's person whether the tool call may run.  */
static void
mcp_tcall_ask (struct mcp_tcall *tc, bool added)
{
  struct mcp *m = tc->mcp;
  struct buf msg = BUF_INIT;
  size_t len = strlen (tc->args);

  buf_printf (&msg, _ ("Allow this MCP tool call?\n\n%s %.*s%s"), tc->qualified,
              (int) (len > MCP_TOOL_ARGS_SHOWN ? MCP_TOOL_ARGS_SHOWN : len),
              tc->args, len > MCP_TOOL_ARGS_SHOWN ? "…" : "");
  if (added)
    buf_puts (&msg, _ ("\n\nThe server added this tool after its first "
                       "listing."));
  mcp_ask_allow (m, &m->tool_asks, tc, &msg);
}

/* The answer to a question about a tool call.  */
static void
mcp_tool_response (struct mcp *m, const char *id, yajl_val msg)
{
  const char *ignored;
  struct mcp_tcall *tc = jsonrpc_answer_take (&m->tool_asks, id, &ignored);
  if (tc == NULL)
    {
      jsonrpc_journal (m->journal, "mcp_client", "answer_ignored", ignored, 0);
      return;
    }
  bool allowed = mcp_allow_answered (msg);
  supervisor_note_approval (m->sup, tc->id, allowed);
  if (allowed)
    mcp_tcall_run (tc);
  else
    {
      char *text = notes_refusal (mcp_get (msg, "error") != NULL
                                      ? "asking the person failed"
                                      : "the developer declined to run it");
      mcp_send_tool_text (m, tc->id, text, strlen (text), true);
      free (text);
      mcp_tcall_free (tc);
    }
}

/* Decide a tool call now that the servers have settled: by the rules
 * for tools, asked about, run or refused.  */
static void
mcp_tcall_decide (struct mcp_tcall *tc)
{
  struct mcp *m = tc->mcp;
  const struct mcphost_tool *t = mcphost_find (m->servers, tc->qualified);
  const char *rule = NULL;
  if (t == NULL)
    {
      mcp_send_error (m, tc->id, JSONRPC_INVALID_PARAMS,
                      "unknown tool (no MCP server offers it now; see "
                      "tools/list)");
      mcp_tcall_free (tc);
      return;
    }
  enum rules_verdict v = rules_decide_tool (m->rules, t->server, t->tool->name,
                                            t->initial, &rule);
  if (v == RULES_ALLOW)
    mcp_tcall_run (tc);
  else if (v == RULES_DENY)
    {
      cleanup_free char *why
          = xasprintf ("a deny rule in your configuration forbids it (%s)",
                       rule != NULL ? rule : tc->qualified);
      char *text = notes_refusal (why);
      mcp_send_tool_text (m, tc->id, text, strlen (text), true);
      free (text);
      mcp_tcall_free (tc);
    }
  else if (m->can_elicit)
    mcp_tcall_ask (tc, !t->initial);
  else
    {
      char *text = notes_refusal (
          "this tool call needs approval, and this MCP client cannot be "
          "asked (it did not declare the elicitation capability); allow it "
          "in ~/.crucible/config.json (permissions.allow, or "
          "permissions.mode fullAccess)");
      mcp_send_tool_text (m, tc->id, text, strlen (text), true);
      free (text);
      mcp_tcall_free (tc);
    }
}

/* Decide every tool call that waited for the servers to settle.  */
static void
mcp_tcalls_decide_waiting (struct mcp *m)
{
  for (struct mcp_tcall *tc = m->tcalls; tc != NULL;)
    {
      struct mcp_tcall *next = tc->next;
      if (tc->waiting)
        {
          tc->waiting = false;
          mcp_tcall_decide (tc);
        }
      tc = next;
    }
}

/* tools/call of mcp__<server>__<tool>: decided at once, or once the
 * servers have settled.  */
static void
mcp_call_server_tool (struct mcp *m, const char *id, const char *name,
                      yajl_val args)
{
  if (m->refusal != NULL || m->servers == NULL)
    {
      if (m->refusal == NULL)
        mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                        "unknown tool (no MCP server is configured)");
      else
        {
          char *text = notes_refusal (m->refusal);
          mcp_send_tool_text (m, id, text, strlen (text), true);
          free (text);
        }
      return;
    }
  if (args != NULL && !YAJL_IS_OBJECT (args))
    {
      mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                      "arguments must be an object");
      return;
    }
  struct mcp_tcall *tc = xcalloc (1, sizeof *tc);
  tc->mcp = m;
  tc->id = xstrdup (id);
  tc->qualified = xstrdup (name);
  struct jsonw *w = jsonw_new ();
  if (args != NULL)
    jsonw_value (w, args);
  else
    jsonw_raw (w, "{}", 2);
  tc->args = jsonw_steal (w, NULL);
  tc->next = m->tcalls;
  m->tcalls = tc;
  tc->waiting = !m->servers_settled;
  if (!tc->waiting)
    mcp_tcall_decide (tc);
}

/* tools/call: dispatch on the tool's name.  */
static void
mcp_tools_call (struct mcp *m, const char *id, yajl_val params)
{
  yajl_val name = mcp_get (params, "name");
  yajl_val args = mcp_get (params, "arguments");
  if (!YAJL_IS_STRING (name))
    mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                    "tools/call needs a tool name");
  else if (strcmp ((name)->u.string, "bash") == 0)
    mcp_call_bash (m, id, args);
  else if (strcmp ((name)->u.string, "bash_output") == 0)
    mcp_call_bash_output (m, id, args);
  else if (strncmp ((name)->u.string, "mcp__", 5) == 0)
    mcp_call_server_tool (m, id, (name)->u.string, args);
  else
    mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                    "unknown tool (crucible has bash and bash_output)");
}

/* notifications/cancelled: stop the call's command; no answer is sent.  */
static void
mcp_cancelled (struct mcp *m, yajl_val params)
{
  char *id = jsonrpc_id_text (mcp_get (params, "requestId"));
  for (struct mcp_tcall *tc = m->tcalls; id != NULL && tc != NULL;
       tc = tc->next)
    if (strcmp (tc->id, id) == 0)
      {
        if (tc->hc != NULL)
          mcphost_cancel (m->servers, tc->hc);
        mcp_tcall_free (tc);
        free (id);
        return;
      }
  for (struct mcp_call *c = m->calls; id != NULL && c != NULL; c = c->next)
    if (strcmp (c->id, id) == 0)
      {
        if (c->cmd == NULL)
          mcp_call_free (c);
        else
          {
            c->cancelled = true;
            supervisor_interrupt (m->sup, c->cmd);
          }
        break;
      }
  free (id);
}

/* --- network questions ------------------------------------------------- */

/* A network question sent, waiting for its answer.  */
struct mcp_net
{
  struct mcp *mcp;
  struct mcp_net *next; /* the server's list of them */
  uint64_t question;
  uint64_t timer;
  mcp_net_answer_fn fn;
  void *data;
};

/* Let the question go with answer a, told to the one who asked.  */
static void
mcp_net_settle (struct mcp_net *q, enum mcp_net_answer a)
{
  struct mcp_net **p = &q->mcp->nets;
  while (*p != NULL && *p != q)
    p = &(*p)->next;
  if (*p == q)
    *p = q->next;
  loop_cancel_timer (q->mcp->loop, q->timer);
  q->fn (q->data, q->question, a);
  free (q);
}

/* No answer in time: refused, and a late answer finds nothing.  */
static void
mcp_net_timeout (struct loop *loop, void *data)
{
  struct mcp_net *q = data;
  (void) loop;
  q->timer = 0;
  jsonrpc_ask_forget (&q->mcp->net_asks, q);
  mcp_net_settle (q, MCP_NET_REFUSE);
}

/* Ask the client's person about a connection to name: the one grant
 * offered is for this command (or this start of the server).  */
void
mcp_net_ask (struct mcp *m, uint64_t question, const char *name,
             const char *server, mcp_net_answer_fn fn, void *data)
{
  if (!m->can_elicit || m->output_lost)
    {
      fn (data, question, MCP_NET_REFUSE);
      return;
    }
  struct mcp_net *q = xcalloc (1, sizeof *q);
  *q = (struct mcp_net){
    .mcp = m, .question = question, .fn = fn, .data = data
  };
  q->timer = loop_add_timer (m->loop, MCP_NET_WAIT_MS, mcp_net_timeout, q);
  q->next = m->nets;
  m->nets = q;
  struct buf msg = BUF_INIT;
  /* Who asks: a server's question names it.  */
  if (server != NULL)
    buf_printf (&msg,
                _ ("MCP server `%s` wants to reach %s, which its "
                   "configuration does not allow (sandbox.network.domains). "
                   "Allow it for this server only?"),
                server, name);
  else
    buf_printf (&msg,
                _ ("A command wants to reach %s, which its configuration "
                   "does not allow (sandbox.network.domains). Allow it for "
                   "this command only?"),
                name);
  mcp_ask_allow (m, &m->net_asks, q, &msg);
}

/* The answer to a network question: accepted with allow true lets the
 * name for this command, anything else refuses it.  */
static void
mcp_net_response (struct mcp *m, const char *id, yajl_val msg)
{
  const char *ignored;
  struct mcp_net *q = jsonrpc_answer_take (&m->net_asks, id, &ignored);
  if (q == NULL)
    {
      jsonrpc_journal (m->journal, "mcp_client", "answer_ignored", ignored, 0);
      return;
    }
  mcp_net_settle (q,
                  mcp_allow_answered (msg) ? MCP_NET_COMMAND : MCP_NET_REFUSE);
}

/* The client's answer to a server's own question, handed back to that
 * server: accepted with its content (an object), declined, or cancelled
 * (also for an error answer or one that is neither).  */
static void
mcp_srv_response (struct mcp *m, const char *id, yajl_val msg)
{
  const char *ignored;
  struct mcphost_elicitation *q
      = jsonrpc_answer_take (&m->srv_asks, id, &ignored);
  if (q == NULL)
    {
      jsonrpc_journal (m->journal, "mcp_client", "answer_ignored", ignored, 0);
      return;
    }
  yajl_val result = mcp_get (msg, "result");
  yajl_val action = mcp_get (result, "action");
  yajl_val content = mcp_get (result, "content");
  const char *a = YAJL_IS_STRING (action) ? action->u.string : "";
  if (strcmp (a, "accept") == 0 && YAJL_IS_OBJECT (content))
    {
      struct jsonw *w = jsonw_new ();
      jsonw_value (w, content);
      cleanup_free char *text = jsonw_steal (w, NULL);
      mcphost_elicit_answer (m->servers, q, MCPCLIENT_ELICIT_ACCEPT, text);
    }
  else
    mcphost_elicit_answer (m->servers, q,
                           strcmp (a, "decline") == 0 ? MCPCLIENT_ELICIT_DECLINE
                                                      : MCPCLIENT_ELICIT_CANCEL,
                           NULL);
}

/* A response to our elicitation/create: taken once, for the call that is
 * waiting for it.  An answer that is not taken (a duplicate of one taken,
 * one to a call already gone, or one to nothing asked) is written down,
 * never acted on.  */
static void
mcp_response (struct mcp *m, const char *id, yajl_val msg)
{
  const char *ignored;
  if (strncmp (id, "\"" MCP_NET_PREFIX "-", strlen (MCP_NET_PREFIX) + 2) == 0)
    {
      mcp_net_response (m, id, msg);
      return;
    }
  if (strncmp (id, "\"" MCP_TOOL_PREFIX "-", strlen (MCP_TOOL_PREFIX) + 2) == 0)
    {
      mcp_tool_response (m, id, msg);
      return;
    }
  if (strncmp (id, "\"" MCP_SRV_PREFIX "-", strlen (MCP_SRV_PREFIX) + 2) == 0)
    {
      mcp_srv_response (m, id, msg);
      return;
    }
  struct mcp_call *c = jsonrpc_answer_take (&m->asks, id, &ignored);
  if (c == NULL)
    {
      jsonrpc_journal (m->journal, "mcp_client", "answer_ignored", ignored, 0);
      return;
    }
  bool allowed = mcp_allow_answered (msg);
  supervisor_note_approval (m->sup, c->id, allowed);
  if (allowed)
    mcp_call_run (c);
  else if (mcp_get (msg, "error") != NULL)
    mcp_call_refuse (c, "asking the person failed");
  else
    mcp_call_refuse (c, "the developer declined to run it");
}

/* logging/setLevel: one of the levels of RFC 5424 that MCP names.  */
static void
mcp_set_level (struct mcp *m, const char *id, yajl_val params)
{
  static const char *const levels[]
      = { "debug",    "info",  "notice",    "warning", "error",
          "critical", "alert", "emergency", NULL };
  yajl_val level = mcp_get (params, "level");
  for (const char *const *l = levels; YAJL_IS_STRING (level) && *l != NULL; l++)
    if (strcmp (*l, level->u.string) == 0)
      {
        mcp_send_result (m, id, "{}");
        return;
      }
  mcp_send_error (m, id, JSONRPC_INVALID_PARAMS,
                  "logging/setLevel takes a level: debug, info, notice, "
                  "warning, error, critical, alert or emergency");
}

/* Dispatch one request or notification.  */
static void
mcp_dispatch (struct mcp *m, const char *method, const char *id,
              yajl_val params)
{
  bool request = id != NULL;
  if (strcmp (method, "initialize") == 0 && request)
    mcp_initialize (m, id, params);
  else if (strcmp (method, "ping") == 0 && request)
    mcp_send_result (m, id, "{}");
  else if (strcmp (method, "logging/setLevel") == 0 && request)
    mcp_set_level (m, id, params);
  else if (strncmp (method, "notifications/", 14) == 0 && request)
    mcp_send_error (m, id, JSONRPC_INVALID_REQUEST,
                    "invalid request: a notification is sent without an id");
  else if (strcmp (method, "notifications/cancelled") == 0)
    mcp_cancelled (m, params);
  else if (!request)
    return; /* notifications/initialized and any other notification */
  else if (!m->initialized)
    mcp_send_error (m, id, JSONRPC_INVALID_REQUEST,
                    "the session is not initialized: send initialize first");
  else if (strcmp (method, "tools/list") == 0)
    mcp_tools_list_request (m, id);
  else if (strcmp (method, "tools/call") == 0)
    mcp_tools_call (m, id, params);
  else
    mcp_send_error (m, id, JSONRPC_METHOD_NOT_FOUND, "method not found");
}

/* Handle one line of input (len bytes; lengths come from the parser, so a
 * NUL byte in the line is not JSON and "\u0000" in a string is seen).  */
static void
mcp_handle_line (struct mcp *m, const char *line, size_t len)
{
  char errbuf[256];
  bool too_deep = false;
  struct json_scan scan;
  bool not_utf8;
  /* Depth is bounded before the tree is built; the scan then sees each
   * string whole.  */
  yajl_val msg
      = jsonrpc_parse_line (line, len, &scan, errbuf, sizeof errbuf, &too_deep);
  if (msg == NULL)
    {
      mcp_send_error (m, "null", JSONRPC_PARSE_ERROR,
                      too_deep ? "parse error: nested deeper than 64 levels"
                               : "parse error: not JSON");
      return;
    }
  yajl_val version = mcp_get (msg, "jsonrpc");
  yajl_val method = mcp_get (msg, "method");
  yajl_val idv = mcp_get (msg, "id");
  cleanup_free char *id = jsonrpc_request_id (&scan, idv, &not_utf8);
  if (not_utf8)
    mcp_send_error (m, "null", JSONRPC_INVALID_REQUEST, MCP_ID_NOT_UTF8);
  else if (id != NULL && scan.nul)
    {
      /* A request is refused; a notification or a response holding a NUL
       * is dropped, as one that names nothing is.  */
      if (idv != NULL && method != NULL)
        mcp_send_error (m, id, JSONRPC_INVALID_PARAMS, MCP_HOLDS_NUL);
    }
  else if (!YAJL_IS_OBJECT (msg) || !YAJL_IS_STRING (version)
           || strcmp ((version)->u.string, "2.0") != 0 || id == NULL)
    mcp_send_error (m, id != NULL ? id : "null", JSONRPC_INVALID_REQUEST,
                    "invalid request: a JSON-RPC 2.0 object was expected");
  else if (method == NULL && idv != NULL)
    mcp_response (m, id, msg);
  else if (!YAJL_IS_STRING (method))
    mcp_send_error (m, id, JSONRPC_INVALID_REQUEST,
                    "invalid request: method must be a string");
  else
    mcp_dispatch (m, YAJL_GET_STRING (method), idv != NULL ? id : NULL,
                  mcp_get (msg, "params"));
  yajl_tree_free (msg);
}

/* One line from the client; nothing more is started for a client whose
 * answers are lost.  */
static bool
mcp_on_line (void *data, const char *line, size_t len)
{
  struct mcp *m = data;
  if (len > 0 && !m->output_lost)
    mcp_handle_line (m, line, len);
  return true;
}

/* A line passed MCP_MAX_LINE: refused whole.  */
static bool
mcp_on_overlong (void *data)
{
  mcp_send_error (data, "null", JSONRPC_PARSE_ERROR,
                  "parse error: the message is longer than 4194304 bytes");
  return true;
}

/* Split what arrived into lines; an overlong line is refused whole.  */
static void
mcp_take_input (struct mcp *m, const char *data, size_t len)
{
  jsonrpc_lines_take (&m->in, data, len, mcp_on_line, mcp_on_overlong, m);
}

/* Standard input is readable.  */
static void
mcp_on_input (struct loop *loop, int fd, short revents, void *data)
{
  struct mcp *m = data;
  char chunk[65536];
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      /* Closing the input ends every command, and the run.  */
      mcp_end_connection (m, false);
      return;
    }
  mcp_take_input (m, chunk, (size_t) n);
}

/* SIGINT, SIGTERM, SIGHUP: end every command and leave.  */
static void
mcp_on_signal (struct loop *loop, int signo, void *data)
{
  struct mcp *m = data;
  if (m->host_signal == 0)
    m->host_signal = signo;
  mcp_end_connection (m, true);
}

/* The client let more than JSONRPC_OUT_MAX bytes wait unread: it is ended
 * as if its input had closed, and the journal says why.  */
static void
mcp_on_overflow (void *data, size_t queued)
{
  struct mcp *m = data;
  jsonrpc_journal (m->journal, "mcp_client", "ended", "unread_output", queued);
  fprintf (stderr,
           _ ("crucible: the MCP client did not read its output (more than "
              "%zu bytes waited); every command was stopped and the server "
              "ends\n"),
           (size_t) JSONRPC_OUT_MAX);
  m->client_ended = true;
  mcp_end_connection (m, true);
}

/* The cleanup wait after the input closed ran out.  */
static void
mcp_on_cleanup_timeout (struct loop *loop, void *data)
{
  struct mcp *m = data;
  m->cleanup_expired = true;
}

/* Serve until the input closes and every scope is confirmed empty.  */
static int
mcp_serve (struct mcp *m, struct cr_error **err)
{
  uint64_t cleanup_timer = 0, servers_timer = 0;
  /* What is queued for the client is written before leaving, within the
   * same wait; the servers have a wait of their own, each step of it
   * bounded.  */
  while (!(m->input_closed
           && (supervisor_slots_held (m->sup) == 0 || m->cleanup_expired)
           && (jsonrpc_out_pending (m->out) == 0 || m->cleanup_expired)
           && (m->servers == NULL || m->servers_ended || m->servers_expired)))
    {
      if (loop_run_once (m->loop, -1, err) < 0)
        return -1;
      if (m->input_closed && cleanup_timer == 0)
        cleanup_timer = loop_add_timer (m->loop, MCP_CLEANUP_MS,
                                        mcp_on_cleanup_timeout, m);
      if (m->input_closed && servers_timer == 0 && m->servers != NULL)
        servers_timer = loop_add_timer (m->loop, MCP_SERVERS_END_MS,
                                        mcp_on_servers_timeout, m);
    }
  if (supervisor_slots_held (m->sup) > 0)
    fprintf (stderr, _ ("crucible: could not confirm that every process the "
                        "commands started has ended\n"));
  if (m->servers != NULL && !m->servers_ended)
    {
      fprintf (stderr, _ ("crucible: could not confirm that every MCP "
                          "server has ended\n"));
      m->servers_status = 1;
    }
  return 0;
}

/* The client's answer, handed back to the proxy that asked.  */
static void
mcp_net_answered (void *data, uint64_t question, enum mcp_net_answer a)
{
  struct mcp *m = data;
  supervisor_net_answer (m->sup, question,
                         a == MCP_NET_COMMAND ? PROXY_ANSWER_COMMAND
                                              : PROXY_ANSWER_REFUSE);
}

/* The proxy's question about a name a command's policy does not allow:
 * put to the client through elicitation, for this command only.  */
static void
mcp_on_net_question (void *data, uint64_t question, struct proxy_client *c,
                     const char *name)
{
  struct mcp *m = data;
  mcp_net_ask (m, question, name,
               mcphost_net_owner (m->servers, proxy_client_sandbox_id (c)),
               mcp_net_answered, m);
}

/* --- the MCP servers of the connection --------------------------------- */

/* The servers settled: every tools/list waiting is answered.  */
static void
mcp_servers_on_settled (void *data, const struct cr_error *err)
{
  struct mcp *m = data;
  m->servers_settled = true;
  if (err != NULL)
    {
      cleanup_free char *shown = utf8_show_dup (err->msg, 0);
      fprintf (stderr, "crucible: %s\n", shown);
    }
  while (m->listings != NULL)
    {
      struct mcp_listing *l = m->listings;
      m->listings = l->next;
      mcp_tools_list (m, l->id);
      free (l->id);
      free (l);
    }
  mcp_tcalls_decide_waiting (m);
  /* The run's preparation stopped (a required server did not start):
   * the connection, which is the run, ends with that reason.  */
  if (err != NULL)
    {
      m->servers_status = 1;
      mcp_end_connection (m, false);
    }
}

/* A server's tools changed: the client is told to list them again.  */
static void
mcp_servers_on_tools_changed (void *data, const char *server)
{
  struct mcp *m = data;
  (void) server;
  if (!m->servers_settled || m->input_closed)
    return;
  struct jsonw *w
      = jsonrpc_notification_begin ("notifications/tools/list_changed");
  jsonw_object_open (w);
  jsonw_object_close (w);
  mcp_send (m, w);
}

/* A line of a server's stderr, masked: crucible's own stderr, the
 * client's log, shown safe for a terminal.  */
static void
mcp_servers_on_stderr (void *data, const char *server, const char *line,
                       size_t len)
{
  (void) data;
  cleanup_free char *copy = xstrndup (line, len);
  cleanup_free char *shown = utf8_show_dup (copy, 0);
  fprintf (stderr, "crucible: mcp:%s: %s\n", server, shown);
}

/* Whether the connection's servers are offered elicitation: only when
 * the client declared it.  */
static void
mcp_servers_offer (struct mcp *m)
{
  mcphost_offer_elicitation (m->servers, m->can_elicit);
}

/* A server's own elicitation/create, forwarded to the client as one of
 * crucible's, saying which server asks; its schema is the server's.  A
 * client that can no longer be asked has it cancelled.  */
static void
mcp_servers_on_elicit (void *data, const char *server,
                       struct mcphost_elicitation *q, const char *message,
                       const char *schema)
{
  struct mcp *m = data;
  if (!m->can_elicit || m->output_lost)
    {
      mcphost_elicit_answer (m->servers, q, MCPCLIENT_ELICIT_CANCEL, NULL);
      return;
    }
  struct buf msg = BUF_INIT;
  buf_printf (&msg, _ ("The MCP server `%s` asks:\n\n%s"), server, message);
  struct jsonw *w = jsonrpc_request_begin (jsonrpc_ask (&m->srv_asks, q),
                                           "elicitation/create");
  jsonw_object_open (w);
  jsonw_key (w, "message");
  jsonw_text (w, msg.data, msg.len);
  jsonw_key (w, "requestedSchema");
  jsonw_raw (w, schema, strlen (schema));
  jsonw_object_close (w);
  buf_free (&msg);
  mcp_send (m, w);
}

/* Something the person should hear of a server.  */
static void
mcp_servers_on_notice (void *data, const char *msg)
{
  (void) data;
  cleanup_free char *shown = utf8_show_dup (msg, 0);
  fprintf (stderr, "crucible: %s\n", shown);
}

/* Every server is disposed of (or held, its cleanup unconfirmed).  */
static void
mcp_servers_on_ended (void *data, const struct cr_error *err)
{
  struct mcp *m = data;
  m->servers_ended = true;
  if (err != NULL)
    {
      cleanup_free char *shown = utf8_show_dup (err->msg, 0);
      fprintf (stderr, "crucible: %s\n", shown);
      m->servers_status = 1;
    }
}

/* A lifecycle fact could not be recorded: the connection ends.  */
static void
mcp_servers_on_audit_failed (void *data, const struct cr_error *err)
{
  struct mcp *m = data;
  cleanup_free char *shown = utf8_show_dup (err->msg, 0);
  fprintf (stderr, _ ("crucible: %s; the connection ends\n"), shown);
  m->servers_status = 1;
  mcp_end_connection (m, true);
}

/* Make the connection's servers, if any are configured (and not
 * disabled) and a backend is to be had.  */
static void
mcp_servers_new (struct mcp *m)
{
  if (m->host.backend == NULL || !mcphost_wanted (m->host.cfg))
    return;
  struct mcphost_config c = {
    .loop = m->loop,
    .backend = m->host.backend,
    .config = m->host.cfg,
    .workspace = m->host.workspace,
    .host_env = environ,
    .journal = m->journal,
    .supervisor = m->sup,
    .listener = { .settled = mcp_servers_on_settled,
                  .tools_changed = mcp_servers_on_tools_changed,
                  .stderr_line = mcp_servers_on_stderr,
                  .notice = mcp_servers_on_notice,
                  .ended = mcp_servers_on_ended,
                  .audit_failed = mcp_servers_on_audit_failed,
                  .elicit = mcp_servers_on_elicit,
                  .data = m },
  };
  m->servers = mcphost_new (&c);
}

/* The connection's run begins (initialize): its servers are prepared.  */
static void
mcp_servers_begin (struct mcp *m)
{
  struct cr_error *err = NULL;
  if (m->servers == NULL || m->servers_begun)
    return;
  m->servers_begun = true;
  /* A server's own questions reach a client that can be asked; for
   * another its elicitation is not offered, and refused.  */
  mcp_servers_offer (m);
  if (mcphost_begin (m->servers, "mcp-connection", &err) < 0)
    {
      mcp_servers_on_notice (m, err->msg);
      cr_error_free (err);
      m->servers_settled = true;
      m->servers_ended = true;
    }
}

/* The cleanup of the servers ran past its bound.  */
static void
mcp_on_servers_timeout (struct loop *loop, void *data)
{
  struct mcp *m = data;
  (void) loop;
  m->servers_expired = true;
}

/* End the connection's run: every command stopped, the servers ended
 * (their writes published once they exit on their own) or stopped.  */
static void
mcp_end_connection (struct mcp *m, bool stop)
{
  if (!m->input_closed)
    loop_remove_fd (m->loop, STDIN_FILENO);
  m->input_closed = true;
  supervisor_keep_ahead (m->sup, false);
  supervisor_stop_all (m->sup);
  if (m->servers == NULL)
    return;
  if (!m->servers_begun || !mcphost_busy (m->servers))
    m->servers_ended = true;
  else if (stop)
    mcphost_stop (m->servers);
  else
    mcphost_end (m->servers);
}

/* Set up the server's parts; returns -1 with *err set.  */
static int
mcp_setup (struct mcp *m, struct cr_error **err)
{
  static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  /* With no backend to be had, every call is refused with the reason.  */
  if (host_start (&m->host, err) < 0)
    return -1;
  m->loop = m->host.loop;
  m->sup = m->host.sup;
  supervisor_set_net_asker (m->sup, mcp_on_net_question, m);
  /* One sandbox kept prepared for the next call, so that its first output
   * comes sooner than a bwrap started for it could begin.  */
  if (m->host.backend != NULL)
    supervisor_keep_ahead (m->sup, true);
  m->journal = m->host.journal;
  m->rules = m->host.rules;
  m->refusal = m->host.refusal;
  mcp_servers_new (m);
  if (host_watch_signals (&m->host, signals, sizeof signals / sizeof *signals,
                          mcp_on_signal, m, err)
      < 0)
    return -1;
  m->out = jsonrpc_out_new (m->loop, STDOUT_FILENO, JSONRPC_OUT_MAX,
                            mcp_on_overflow, m, err);
  if (m->out == NULL)
    return -1;
  return loop_add_fd (m->loop, STDIN_FILENO, POLLIN, mcp_on_input, m, err);
}

int
cmd_mcp (int argc, char **argv)
{
  struct mcp m;
  struct cr_error *err = NULL;
  int status = 0;

  mcp_init (&m);
  static const struct options_spec specs[] = { { "--help", NULL, 0, false } };
  static const struct options_table table = OPTIONS_TABLE (specs, 0);
  struct options_parser p;
  options_begin (&p, &table, argc, argv);
  int opt = options_next (&p);
  if (opt != OPTIONS_END)
    {
      fprintf (stderr, _ ("Usage: crucible mcp\n"
                          "Serve the Model Context Protocol on standard input "
                          "and output, in the current directory.\n"));
      return opt == 0 ? 0 : 2;
    }
  if (host_open (&m.host, HOST_KEEP_REFUSED, NULL, &err) == 0
      && mcp_setup (&m, &err) == 0)
    mcp_serve (&m, &err);
  if (err != NULL)
    {
      cleanup_free char *shown = utf8_show_dup (err->msg, 0);
      fprintf (stderr, "crucible: %s\n", shown);
      cr_error_free (err);
      status = 1;
    }
  while (m.calls != NULL)
    {
      struct mcp_call *c = m.calls;
      m.calls = c->next;
      mcp_call_free (c);
    }
  /* A connection still waiting on a question is refused before its proxy
   * goes with the host.  */
  m.can_elicit = false; /* and a question asked meanwhile is refused */
  while (m.nets != NULL)
    {
      struct mcp_net *q = m.nets;
      m.nets = q->next;
      mcp_net_settle (q, MCP_NET_REFUSE);
    }
  while (m.tcalls != NULL)
    {
      struct mcp_tcall *tc = m.tcalls;
      m.tcalls = tc->next;
      mcp_tcall_free (tc); /* off the list already */
    }
  while (m.listings != NULL)
    {
      struct mcp_listing *l = m.listings;
      m.listings = l->next;
      free (l->id);
      free (l);
    }
  mcphost_free (m.servers);
  jsonrpc_out_free (m.out);
  host_close (&m.host);
  jsonrpc_asks_free (&m.asks);
  jsonrpc_asks_free (&m.net_asks);
  jsonrpc_asks_free (&m.tool_asks);
  jsonrpc_asks_free (&m.srv_asks);
  jsonrpc_lines_free (&m.in);
  if ((m.client_ended || m.servers_status != 0) && status == 0)
    status = 1;
  return m.host_signal ? 128 + m.host_signal : status;
}
