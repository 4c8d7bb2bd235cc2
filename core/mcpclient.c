/* The MCP client of one server: the handshake, the tool listing and its
 * pages, calls with their deadlines and cancellation, the server's own
 * requests, and the hiding of credential values in what it answers.  */
#include <config.h>

#include "core/mcpclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "core/jsonrpc.h"
#include "core/result.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

/* The ids of crucible's requests to a server: "crucible-N".  */
#define MCPCLIENT_ASK_PREFIX "crucible"

/* Untrusted text quoted in an error is cut to this many bytes.  */
#define MCPCLIENT_SHOW_MAX 200

/* What a request crucible sent was for (the first member of each record
 * given to jsonrpc_ask).  */
enum mcpclient_kind
{
  MCPCLIENT_ASK_INITIALIZE,
  MCPCLIENT_ASK_LIST,
  MCPCLIENT_ASK_CALL
};

enum mcpclient_state
{
  MCPCLIENT_HANDSHAKE, /* initialize, then the first listing */
  MCPCLIENT_READY,
  MCPCLIENT_FAILED /* or freed: nothing more is read, sent or told */
};

/* One listing of the tools, page after page.  */
struct mcpclient_listing
{
  enum mcpclient_kind kind; /* MCPCLIENT_ASK_LIST */
  struct mcpclient_tool *tools;
  size_t n_tools;
  char **skipped;
  size_t n_skipped;
  size_t pages;
  uint64_t timer; /* a re-listing's deadline (the first: the handshake's) */
};

struct mcpclient_call
{
  enum mcpclient_kind kind; /* MCPCLIENT_ASK_CALL */
  struct mcpclient *c;
  struct mcpclient_call *next;
  char *tool;
  char *id; /* JSON text */
  uint64_t timeout_ms;
  uint64_t timer;
  mcpclient_done_fn done;
  void *data;
};

struct mcpclient_elicitation
{
  struct mcpclient_elicitation *next;
  char *id;       /* the server's request id, as it spelled it */
  bool cancelled; /* the server gave it up: nothing is answered */
};

struct mcpclient
{
  char *server;
  char *root;
  struct loop *loop;
  int from_server, to_server;
  uint64_t handshake_ms;
  mcpclient_hide_fn hide;
  void *hide_data;
  mcpclient_elicit_fn elicit;
  void *elicit_data;
  struct mcpclient_listener listener;

  enum mcpclient_state state;
  bool watching;    /* from_server is in the loop */
  int busy;         /* callbacks of ours on the stack */
  bool free_wanted; /* freed from inside a callback: freed when it returns */
  char *protocol;   /* the version the server answered */
  bool has_tools;   /* the server declared the tools capability */

  struct jsonrpc_lines in;
  struct jsonrpc_out *out;
  struct jsonrpc_asks asks;
  enum mcpclient_kind initialize; /* the record the initialize asks with */
  uint64_t handshake_timer;

  struct mcpclient_tool *tools;
  size_t n_tools;
  char **skipped;
  size_t n_skipped;
  struct mcpclient_listing *listing; /* the listing in flight, or NULL */
  bool relist; /* list_changed came while a listing was in flight */

  struct mcpclient_call *calls;
  struct mcpclient_elicitation *elicitations;
};

/* --- small helpers ------------------------------------------------------- */

/* The value of key in an object, or NULL.  */
static yajl_val
mcpclient_get (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return YAJL_IS_OBJECT (obj) ? yajl_tree_get (obj, path, yajl_t_any) : NULL;
}

/* Untrusted text (len bytes) as a person's terminal may show it, cut to
 * MCPCLIENT_SHOW_MAX bytes; the caller owns it.  */
static char *
mcpclient_show (const char *s, size_t len)
{
  struct buf b = BUF_INIT;
  size_t n = len > MCPCLIENT_SHOW_MAX ? MCPCLIENT_SHOW_MAX : len;
  utf8_show (&b, s, n, 0);
  if (n < len)
    buf_puts (&b, "...");
  buf_append (&b, "", 0);
  return buf_steal (&b, NULL);
}

/* A duration in milliseconds as seconds ("30 s", "1.5 s").  */
static char *
mcpclient_seconds (uint64_t ms)
{
  return xasprintf ("%g s", (double) ms / 1000.0);
}

/* Give every string of a decoded message, keys included, to the hide hook;
 * nesting is bounded by JSONRPC_MAX_DEPTH before the tree is built.  */
static void
mcpclient_hide_tree (struct mcpclient *c, yajl_val v)
{
  if (v == NULL)
    return;
  if (YAJL_IS_STRING (v))
    c->hide (c->hide_data, v->u.string, strlen (v->u.string));
  else if (YAJL_IS_OBJECT (v))
    for (size_t i = 0; i < v->u.object.len; i++)
      {
        /* yajl allocated each key; only its bytes change, not its length.  */
        char *key = (char *) v->u.object.keys[i];
        c->hide (c->hide_data, key, strlen (key));
        mcpclient_hide_tree (c, v->u.object.values[i]);
      }
  else if (YAJL_IS_ARRAY (v))
    for (size_t i = 0; i < v->u.array.len; i++)
      mcpclient_hide_tree (c, v->u.array.values[i]);
}

/* The writer's string hook: each string of a decoded value, keys included,
 * written with the owner's hide hook applied to a copy, so that the text a
 * value becomes never carries a credential value, whatever was hidden in
 * the tree before.  */
static void
mcpclient_put_string (void *data, struct jsonw *w, bool key, const char *s,
                      size_t len)
{
  const struct mcpclient *c = data;
  if (c == NULL || c->hide == NULL)
    {
      jsonw_string (w, s, len);
      return;
    }
  cleanup_free char *copy = xstrndup (s, len);
  c->hide (c->hide_data, copy, len);
  jsonw_string (w, copy, len);
}

/* A decoded value as JSON text, owned by the caller: numbers exactly as
 * the server spelled them, strings hidden (jsonw_value_hooked).  */
static char *
mcpclient_value_text (const struct mcpclient *c, yajl_val v)
{
  struct jsonw *w = jsonw_new ();
  jsonw_value_hooked (w, v, mcpclient_put_string, (void *) c);
  return jsonw_steal (w, NULL);
}

/* Queue a message for the server; a server that does not read is failed
 * from the queue's overflow.  */
static int
mcpclient_send (struct mcpclient *c, struct jsonw *w)
{
  if (c->state == MCPCLIENT_FAILED || c->out == NULL)
    {
      jsonw_free (w);
      return -1;
    }
  return jsonrpc_send (c->out, w);
}

/* --- failing ------------------------------------------------------------- */

/* Stop watching the descriptors and cancel every timer.  */
static void
mcpclient_detach (struct mcpclient *c)
{
  if (c->watching)
    loop_remove_fd (c->loop, c->from_server);
  c->watching = false;
  jsonrpc_out_free (c->out);
  c->out = NULL;
  loop_cancel_timer (c->loop, c->handshake_timer);
  c->handshake_timer = 0;
  if (c->listing != NULL)
    loop_cancel_timer (c->loop, c->listing->timer);
  for (struct mcpclient_call *k = c->calls; k != NULL; k = k->next)
    {
      loop_cancel_timer (c->loop, k->timer);
      k->timer = 0;
    }
}

/* Free a call's record (already off the list and out of the asks).  */
static void
mcpclient_call_free (struct mcpclient_call *call)
{
  loop_cancel_timer (call->c->loop, call->timer);
  free (call->tool);
  free (call->id);
  free (call);
}

/* Take a call off the client's list and out of the requests awaited.  */
static void
mcpclient_call_unlink (struct mcpclient_call *call)
{
  struct mcpclient_call **p = &call->c->calls;
  while (*p != NULL && *p != call)
    p = &(*p)->next;
  if (*p == call)
    *p = call->next;
  jsonrpc_ask_forget (&call->c->asks, call);
}

/* Tell a call's owner how it ended and free it.  */
static void
mcpclient_call_finish (struct mcpclient_call *call,
                       const struct mcpclient_result *r)
{
  struct mcpclient *c = call->c;
  mcpclient_call_unlink (call);
  if (!c->free_wanted && call->done != NULL)
    call->done (call->data, r);
  mcpclient_call_free (call);
}

/* End a call with an error: "MCP server `s`: tools/call `t`: what".  */
static void
mcpclient_call_fail (struct mcpclient_call *call, const char *what)
{
  struct cr_error *err = NULL;
  cr_error_set (&err, 0, "MCP server `%s`: tools/call `%s`: %s",
                call->c->server, call->tool, what);
  struct mcpclient_result r
      = { .error = err, .text = err->msg, .text_len = strlen (err->msg) };
  mcpclient_call_finish (call, &r);
  cr_error_free (err);
}

/* Free a listing's tools.  */
static void
mcpclient_tools_free (struct mcpclient_tool *tools, size_t n, char **skipped,
                      size_t n_skipped)
{
  for (size_t i = 0; i < n; i++)
    {
      free (tools[i].name);
      free (tools[i].description);
      free (tools[i].input_schema);
    }
  free (tools);
  for (size_t i = 0; i < n_skipped; i++)
    free (skipped[i]);
  free (skipped);
}

/* Forget the listing in flight.  */
static void
mcpclient_listing_drop (struct mcpclient *c)
{
  struct mcpclient_listing *l = c->listing;
  if (l == NULL)
    return;
  c->listing = NULL;
  jsonrpc_ask_forget (&c->asks, l);
  loop_cancel_timer (c->loop, l->timer);
  mcpclient_tools_free (l->tools, l->n_tools, l->skipped, l->n_skipped);
  free (l);
}

/* The connection failed with "MCP server `s`: <fmt>": nothing more is
 * read or sent; each call in flight is told, then the owner.  */
static void __attribute__ ((format (printf, 2, 3)))
mcpclient_fail (struct mcpclient *c, const char *fmt, ...)
{
  if (c->state == MCPCLIENT_FAILED)
    return;
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *what = xvasprintf (fmt, ap);
  va_end (ap);
  c->state = MCPCLIENT_FAILED;
  mcpclient_detach (c);
  mcpclient_listing_drop (c);
  while (c->calls != NULL)
    {
      struct mcpclient_call *call = c->calls;
      c->calls = call->next;
      mcpclient_call_fail (call, what);
    }
  struct cr_error *err = NULL;
  cr_error_set (&err, 0, "MCP server `%s`: %s", c->server, what);
  if (!c->free_wanted && c->listener.failed != NULL)
    c->listener.failed (c->listener.data, c, err);
  cr_error_free (err);
}

/* The method the handshake waits on, for its messages.  */
static const char *
mcpclient_phase (const struct mcpclient *c)
{
  if (c->state == MCPCLIENT_HANDSHAKE && c->protocol == NULL)
    return "initialize";
  if (c->listing != NULL)
    return "tools/list";
  return "reading its output";
}

/* The error answer msg carries, as "error CODE: MESSAGE", hidden and safe
 * to show; the caller owns it.  */
static char *
mcpclient_error_text (yajl_val error)
{
  yajl_val code = mcpclient_get (error, "code");
  yajl_val message = mcpclient_get (error, "message");
  cleanup_free char *shown
      = YAJL_IS_STRING (message)
            ? mcpclient_show (message->u.string, strlen (message->u.string))
            : xstrdup ("(no message)");
  return xasprintf ("the server answered with error %s: %s",
                    YAJL_IS_NUMBER (code) ? code->u.number.r : "(no code)",
                    shown);
}

/* --- the listing --------------------------------------------------------- */

/* Whether name can be the <tool> of mcp__<server>__<tool>.  */
static bool
mcpclient_tool_name_ok (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > MCPCLIENT_TOOL_NAME_MAX)
    return false;
  return strspn (name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789-_")
         == n;
}

/* Ask for one page of the listing (cursor NULL: the first).  */
static void
mcpclient_list_page (struct mcpclient *c, const char *cursor)
{
  struct jsonw *w = jsonrpc_request_begin (jsonrpc_ask (&c->asks, c->listing),
                                           "tools/list");
  jsonw_object_open (w);
  if (cursor != NULL)
    {
      jsonw_key (w, "cursor");
      jsonw_cstr (w, cursor);
    }
  jsonw_object_close (w);
  mcpclient_send (c, w);
}

/* A re-listing took longer than the handshake may.  */
static void
mcpclient_on_list_timeout (struct loop *loop, void *data)
{
  struct mcpclient *c = data;
  cleanup_free char *s = mcpclient_seconds (c->handshake_ms);
  c->busy++;
  c->listing->timer = 0;
  mcpclient_fail (c, "tools/list: no answer within %s", s);
  c->busy--;
  if (c->busy == 0 && c->free_wanted)
    mcpclient_free (c);
}

/* Start a listing; a re-listing has a deadline of its own.  */
static void
mcpclient_list_start (struct mcpclient *c)
{
  c->listing = xcalloc (1, sizeof *c->listing);
  c->listing->kind = MCPCLIENT_ASK_LIST;
  c->relist = false;
  if (c->state == MCPCLIENT_READY)
    c->listing->timer = loop_add_timer (c->loop, c->handshake_ms,
                                        mcpclient_on_list_timeout, c);
  mcpclient_list_page (c, NULL);
}

/* Keep one tool of a page, or name it among those left out.  */
static int
mcpclient_list_take (struct mcpclient *c, struct mcpclient_listing *l,
                     yajl_val tool)
{
  yajl_val name = mcpclient_get (tool, "name");
  yajl_val description = mcpclient_get (tool, "description");
  yajl_val schema = mcpclient_get (tool, "inputSchema");
  if (!YAJL_IS_STRING (name))
    {
      mcpclient_fail (c, "tools/list: a tool has no name");
      return -1;
    }
  if (!mcpclient_tool_name_ok (name->u.string))
    {
      l->skipped = xrealloc (l->skipped, (l->n_skipped + 1) * sizeof (char *));
      l->skipped[l->n_skipped++]
          = mcpclient_show (name->u.string, strlen (name->u.string));
      return 0;
    }
  if (l->n_tools == MCPCLIENT_TOOLS_MAX)
    {
      mcpclient_fail (c, "tools/list: more than %d tools", MCPCLIENT_TOOLS_MAX);
      return -1;
    }
  l->tools = xrealloc (l->tools, (l->n_tools + 1) * sizeof *l->tools);
  struct mcpclient_tool *t = &l->tools[l->n_tools++];
  t->name = xstrdup (name->u.string);
  t->description
      = YAJL_IS_STRING (description) ? xstrdup (description->u.string) : NULL;
  t->input_schema = YAJL_IS_OBJECT (schema) ? mcpclient_value_text (c, schema)
                                            : xstrdup ("{\"type\":\"object\"}");
  return 0;
}

/* Whether name is among n tools.  */
static bool
mcpclient_tools_have (const struct mcpclient_tool *tools, size_t n,
                      const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (tools[i].name, name) == 0)
      return true;
  return false;
}

/* The finished listing replaces the tools; the owner hears which are new
 * (or that the client is ready, after the first).  */
static void
mcpclient_list_install (struct mcpclient *c)
{
  struct mcpclient_listing *l = c->listing;
  size_t n_added = 0;
  const char **added = xcalloc (l->n_tools + 1, sizeof *added);
  for (size_t i = 0; i < l->n_tools; i++)
    if (!mcpclient_tools_have (c->tools, c->n_tools, l->tools[i].name))
      added[n_added++] = l->tools[i].name;
  mcpclient_tools_free (c->tools, c->n_tools, c->skipped, c->n_skipped);
  c->tools = l->tools;
  c->n_tools = l->n_tools;
  c->skipped = l->skipped;
  c->n_skipped = l->n_skipped;
  l->tools = NULL;
  l->n_tools = l->n_skipped = 0;
  l->skipped = NULL;
  mcpclient_listing_drop (c);
  bool first = c->state == MCPCLIENT_HANDSHAKE;
  if (first)
    {
      c->state = MCPCLIENT_READY;
      loop_cancel_timer (c->loop, c->handshake_timer);
      c->handshake_timer = 0;
      if (c->listener.ready != NULL)
        c->listener.ready (c->listener.data, c);
    }
  else if (c->listener.tools_changed != NULL)
    c->listener.tools_changed (c->listener.data, c, added, n_added);
  free (added);
  if (c->relist && c->state == MCPCLIENT_READY && !c->free_wanted)
    mcpclient_list_start (c);
}

/* One page of the listing came back.  */
static void
mcpclient_on_list (struct mcpclient *c, yajl_val msg)
{
  struct mcpclient_listing *l = c->listing;
  yajl_val error = mcpclient_get (msg, "error");
  yajl_val result = mcpclient_get (msg, "result");
  yajl_val tools = mcpclient_get (result, "tools");
  yajl_val cursor = mcpclient_get (result, "nextCursor");
  if (error != NULL)
    {
      cleanup_free char *what = mcpclient_error_text (error);
      mcpclient_fail (c, "tools/list: %s", what);
      return;
    }
  if (!YAJL_IS_ARRAY (tools))
    {
      mcpclient_fail (c, "tools/list: the answer has no tools array");
      return;
    }
  for (size_t i = 0; i < tools->u.array.len; i++)
    if (mcpclient_list_take (c, l, tools->u.array.values[i]) < 0)
      return;
  if (YAJL_IS_STRING (cursor))
    {
      if (++l->pages >= MCPCLIENT_PAGES_MAX)
        mcpclient_fail (c, "tools/list: more than %d pages",
                        MCPCLIENT_PAGES_MAX);
      else
        mcpclient_list_page (c, cursor->u.string);
      return;
    }
  mcpclient_list_install (c);
}

/* notifications/tools/list_changed: list again (once more after the
 * listing in flight, when there is one).  */
static void
mcpclient_on_list_changed (struct mcpclient *c)
{
  if (c->listing != NULL)
    c->relist = true;
  else if (c->state == MCPCLIENT_READY)
    mcpclient_list_start (c);
  /* Before initialize is answered the first listing is still to come.  */
}

/* --- the handshake ------------------------------------------------------- */

/* Whether crucible speaks version v.  */
static bool
mcpclient_version_ok (const char *v)
{
  static const char *const known[]
      = { MCP_CLIENT_PROTOCOL, MCP_CLIENT_PROTOCOL_OLDER, NULL };
  for (const char *const *k = known; *k != NULL; k++)
    if (strcmp (*k, v) == 0)
      return true;
  return false;
}

/* The answer to initialize: the version is checked, the server told that
 * the client is initialized, and the first listing asked for.  */
static void
mcpclient_on_initialize (struct mcpclient *c, yajl_val msg)
{
  yajl_val error = mcpclient_get (msg, "error");
  yajl_val result = mcpclient_get (msg, "result");
  yajl_val version = mcpclient_get (result, "protocolVersion");
  if (error != NULL)
    {
      cleanup_free char *what = mcpclient_error_text (error);
      mcpclient_fail (c, "initialize: %s", what);
      return;
    }
  if (!YAJL_IS_STRING (version))
    {
      mcpclient_fail (c, "initialize: the answer has no protocolVersion");
      return;
    }
  if (!mcpclient_version_ok (version->u.string))
    {
      cleanup_free char *shown
          = mcpclient_show (version->u.string, strlen (version->u.string));
      mcpclient_fail (c,
                      "initialize: the server speaks protocol version \"%s\"; "
                      "crucible speaks 2025-06-18, 2025-03-26 and 2024-11-05",
                      shown);
      return;
    }
  c->protocol = xstrdup (version->u.string);
  c->has_tools = YAJL_IS_OBJECT (
      mcpclient_get (mcpclient_get (result, "capabilities"), "tools"));
  struct jsonw *w = jsonrpc_notification_begin ("notifications/initialized");
  jsonw_object_open (w);
  jsonw_object_close (w);
  mcpclient_send (c, w);
  /* A server without tools has nothing to list.  */
  c->listing = xcalloc (1, sizeof *c->listing);
  c->listing->kind = MCPCLIENT_ASK_LIST;
  if (c->has_tools)
    mcpclient_list_page (c, NULL);
  else
    mcpclient_list_install (c);
}

/* The handshake took longer than it may.  */
static void
mcpclient_on_handshake_timeout (struct loop *loop, void *data)
{
  struct mcpclient *c = data;
  cleanup_free char *s = mcpclient_seconds (c->handshake_ms);
  c->busy++;
  c->handshake_timer = 0;
  mcpclient_fail (c, "%s: no answer within %s", mcpclient_phase (c), s);
  c->busy--;
  if (c->busy == 0 && c->free_wanted)
    mcpclient_free (c);
}

/* Send initialize: the version offered, what crucible can do (roots;
 * elicitation only when somebody can be asked), who it is.  */
static void
mcpclient_send_initialize (struct mcpclient *c)
{
  struct jsonw *w = jsonrpc_request_begin (
      jsonrpc_ask (&c->asks, &c->initialize), "initialize");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "protocolVersion", MCP_CLIENT_PROTOCOL);
  jsonw_key (w, "capabilities");
  jsonw_object_open (w);
  jsonw_key (w, "roots");
  jsonw_object_open (w);
  jsonw_member_bool (w, "listChanged", false);
  jsonw_object_close (w);
  if (c->elicit != NULL)
    {
      jsonw_key (w, "elicitation");
      jsonw_object_open (w);
      jsonw_object_close (w);
    }
  jsonw_object_close (w);
  jsonw_key (w, "clientInfo");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "name", "crucible");
  jsonw_member_cstr (w, "version", PACKAGE_VERSION);
  jsonw_object_close (w);
  jsonw_object_close (w);
  mcpclient_send (c, w);
}

/* --- calls --------------------------------------------------------------- */

/* The text for the model of one content item, appended to b.  */
static void
mcpclient_content_item (struct buf *b, yajl_val item)
{
  yajl_val type = mcpclient_get (item, "type");
  yajl_val text = mcpclient_get (item, "text");
  yajl_val mime = mcpclient_get (item, "mimeType");
  yajl_val data = mcpclient_get (item, "data");
  yajl_val uri = mcpclient_get (item, "uri");
  yajl_val resource = mcpclient_get (item, "resource");
  const char *t = YAJL_IS_STRING (type) ? type->u.string : "";
  const char *m = YAJL_IS_STRING (mime) ? mime->u.string : "unknown type";
  if (strcmp (t, "text") == 0 && YAJL_IS_STRING (text))
    buf_puts (b, text->u.string);
  else if (strcmp (t, "image") == 0 || strcmp (t, "audio") == 0)
    buf_printf (b, "[%s: %s, %zu bytes of base64]", t, m,
                YAJL_IS_STRING (data) ? strlen (data->u.string) : 0);
  else if (strcmp (t, "resource_link") == 0 && YAJL_IS_STRING (uri))
    buf_printf (b, "[resource link: %s]", uri->u.string);
  else if (strcmp (t, "resource") == 0
           && YAJL_IS_STRING (mcpclient_get (resource, "text")))
    buf_puts (b, mcpclient_get (resource, "text")->u.string);
  else if (strcmp (t, "resource") == 0
           && YAJL_IS_STRING (mcpclient_get (resource, "uri")))
    buf_printf (b, "[resource: %s]", mcpclient_get (resource, "uri")->u.string);
  else
    buf_printf (b, "[%s content]", *t != '\0' ? t : "untyped");
}

/* A call's result as text for the model: its content items one after the
 * other (structuredContent when there are none), cut to the ceiling.  */
static char *
mcpclient_result_text (const struct mcpclient *c, yajl_val result, size_t *len)
{
  yajl_val content = mcpclient_get (result, "content");
  yajl_val structured = mcpclient_get (result, "structuredContent");
  struct buf b = BUF_INIT;
  buf_append (&b, "", 0);
  if (YAJL_IS_ARRAY (content))
    for (size_t i = 0; i < content->u.array.len; i++)
      {
        if (i > 0)
          buf_putc (&b, '\n');
        mcpclient_content_item (&b, content->u.array.values[i]);
      }
  if (b.len == 0 && structured != NULL)
    {
      cleanup_free char *s = mcpclient_value_text (c, structured);
      buf_puts (&b, s);
    }
  /* The same ceiling as a command's result, cut the same way.  */
  char *fit = result_join (NULL, 0, b.data, b.len, len);
  buf_free (&b);
  return fit;
}

/* A call's answer came back.  */
static void
mcpclient_on_call (struct mcpclient_call *call, yajl_val msg)
{
  yajl_val error = mcpclient_get (msg, "error");
  yajl_val result = mcpclient_get (msg, "result");
  if (error != NULL || !YAJL_IS_OBJECT (result))
    {
      cleanup_free char *what = error != NULL
                                    ? mcpclient_error_text (error)
                                    : xstrdup ("the answer has no result");
      mcpclient_call_fail (call, what);
      return;
    }
  size_t len;
  cleanup_free char *text = mcpclient_result_text (call->c, result, &len);
  struct mcpclient_result r
      = { .is_error = YAJL_IS_TRUE (mcpclient_get (result, "isError")),
          .text = text,
          .text_len = len };
  mcpclient_call_finish (call, &r);
}

/* Tell the server that the request id (JSON text) is given up.  */
static void mcpclient_send_cancelled (struct mcpclient *c, const char *id,
                                      const char *reason);

/* A call's deadline passed: it is cancelled at the server and failed.  */
static void
mcpclient_on_call_timeout (struct loop *loop, void *data)
{
  struct mcpclient_call *call = data;
  struct mcpclient *c = call->c;
  cleanup_free char *s = mcpclient_seconds (call->timeout_ms);
  cleanup_free char *what = xasprintf ("no answer within %s", s);
  c->busy++;
  call->timer = 0;
  mcpclient_send_cancelled (c, call->id, "timed out");
  mcpclient_call_fail (call, what);
  c->busy--;
  if (c->busy == 0 && c->free_wanted)
    mcpclient_free (c);
}

/* Tell the server that the request id (JSON text) is given up.  */
static void
mcpclient_send_cancelled (struct mcpclient *c, const char *id,
                          const char *reason)
{
  struct jsonw *w = jsonrpc_notification_begin ("notifications/cancelled");
  jsonw_object_open (w);
  jsonw_key (w, "requestId");
  jsonw_raw (w, id, strlen (id));
  if (reason != NULL)
    jsonw_member_cstr (w, "reason", reason);
  jsonw_object_close (w);
  mcpclient_send (c, w);
}

/* --- what the server asks ---------------------------------------------- */

/* Answer the server's request id with an error.  */
static void
mcpclient_refuse (struct mcpclient *c, const char *id,
                  enum jsonrpc_error_code code, const char *message)
{
  mcpclient_send (c, jsonrpc_error_new (id, code, message));
}

/* roots/list: the workspace root, as a file:// URI.  */
static void
mcpclient_on_roots (struct mcpclient *c, const char *id)
{
  cleanup_free char *uri = mcpclient_file_uri (c->root);
  const char *base = strrchr (c->root, '/');
  struct jsonw *w = jsonrpc_result_begin (id);
  jsonw_object_open (w);
  jsonw_key (w, "roots");
  jsonw_array_open (w);
  jsonw_object_open (w);
  jsonw_member_cstr (w, "uri", uri);
  jsonw_key (w, "name");
  jsonw_text (w, base != NULL && base[1] != '\0' ? base + 1 : c->root,
              strlen (base != NULL && base[1] != '\0' ? base + 1 : c->root));
  jsonw_object_close (w);
  jsonw_array_close (w);
  jsonw_object_close (w);
  mcpclient_send (c, w);
}

/* elicitation/create: put to the person through the owner, or refused
 * when there is nobody to ask.  */
static void
mcpclient_on_elicit (struct mcpclient *c, const char *id, yajl_val params)
{
  yajl_val message = mcpclient_get (params, "message");
  yajl_val schema = mcpclient_get (params, "requestedSchema");
  if (c->elicit == NULL)
    {
      mcpclient_refuse (c, id, JSONRPC_METHOD_NOT_FOUND,
                        "elicitation is not offered: crucible has nobody to "
                        "ask here");
      return;
    }
  if (!YAJL_IS_STRING (message) || !YAJL_IS_OBJECT (schema))
    {
      mcpclient_refuse (c, id, JSONRPC_INVALID_PARAMS,
                        "elicitation/create takes a message and a "
                        "requestedSchema object");
      return;
    }
  size_t waiting = 0;
  for (struct mcpclient_elicitation *k = c->elicitations; k != NULL;
       k = k->next)
    waiting++;
  /* A server cannot stack questions in front of the person.  */
  if (waiting == MCPCLIENT_ELICIT_MAX)
    {
      mcpclient_refuse (c, id, JSONRPC_INVALID_REQUEST,
                        "too many questions are waiting for the person");
      return;
    }
  struct mcpclient_elicitation *e = xcalloc (1, sizeof *e);
  e->id = xstrdup (id);
  e->next = c->elicitations;
  c->elicitations = e;
  cleanup_free char *shown
      = utf8_show_dup (message->u.string, UTF8_SHOW_NEWLINES);
  cleanup_free char *schema_text = mcpclient_value_text (c, schema);
  c->elicit (c->elicit_data, c, e, shown, schema_text);
}

/* A request from the server.  */
static void
mcpclient_on_request (struct mcpclient *c, const char *method, const char *id,
                      yajl_val params)
{
  if (strcmp (method, "ping") == 0)
    {
      struct jsonw *w = jsonrpc_result_begin (id);
      jsonw_object_open (w);
      jsonw_object_close (w);
      mcpclient_send (c, w);
    }
  else if (strcmp (method, "roots/list") == 0)
    mcpclient_on_roots (c, id);
  else if (strcmp (method, "elicitation/create") == 0)
    mcpclient_on_elicit (c, id, params);
  else if (strcmp (method, "sampling/createMessage") == 0)
    mcpclient_refuse (c, id, JSONRPC_METHOD_NOT_FOUND,
                      "sampling is not offered: crucible does not let an MCP "
                      "server ask the model");
  else
    mcpclient_refuse (c, id, JSONRPC_METHOD_NOT_FOUND, "method not found");
}

/* notifications/cancelled from the server: a request of its own it gave
 * up (an elicitation still with the person is then not answered).  */
static void
mcpclient_on_cancelled (struct mcpclient *c, yajl_val params)
{
  cleanup_free char *id = jsonrpc_id_text (mcpclient_get (params, "requestId"));
  for (struct mcpclient_elicitation *e = c->elicitations;
       id != NULL && e != NULL; e = e->next)
    if (strcmp (e->id, id) == 0)
      e->cancelled = true;
}

/* A notification from the server; those not listed are of no use here.  */
static void
mcpclient_on_notification (struct mcpclient *c, const char *method,
                           yajl_val params)
{
  if (strcmp (method, "notifications/tools/list_changed") == 0)
    mcpclient_on_list_changed (c);
  else if (strcmp (method, "notifications/cancelled") == 0)
    mcpclient_on_cancelled (c, params);
}

/* --- reading ------------------------------------------------------------- */

/* An answer to a request of crucible's.  One not awaited (a call given
 * up, a duplicate) is ignored.  */
static void
mcpclient_on_response (struct mcpclient *c, const char *id, yajl_val msg,
                       bool holds_nul)
{
  const char *why;
  enum mcpclient_kind *kind = jsonrpc_answer_take (&c->asks, id, &why);
  if (kind == NULL)
    return;
  if (holds_nul && *kind == MCPCLIENT_ASK_CALL)
    {
      mcpclient_call_fail ((struct mcpclient_call *) kind,
                           "a string in the answer holds a NUL character "
                           "(\\u0000)");
      return;
    }
  if (holds_nul)
    mcpclient_fail (c,
                    "%s: a string in the answer holds a NUL character "
                    "(\\u0000)",
                    mcpclient_phase (c));
  else if (*kind == MCPCLIENT_ASK_INITIALIZE)
    mcpclient_on_initialize (c, msg);
  else if (*kind == MCPCLIENT_ASK_LIST)
    mcpclient_on_list (c, msg);
  else
    mcpclient_on_call ((struct mcpclient_call *) kind, msg);
}

/* Whether a line holds nothing but JSON whitespace.  */
static bool
mcpclient_blank (const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (strchr (" \t\r", s[i]) == NULL || s[i] == '\0')
      return false;
  return true;
}

/* One message from the server: decoded, hidden, then dispatched.  */
static void
mcpclient_handle (struct mcpclient *c, const char *line, size_t len)
{
  char errbuf[128];
  struct json_scan scan;
  bool too_deep, not_utf8;
  yajl_val msg
      = jsonrpc_parse_line (line, len, &scan, errbuf, sizeof errbuf, &too_deep);
  if (msg == NULL || !YAJL_IS_OBJECT (msg))
    {
      cleanup_free char *shown = mcpclient_show (line, len);
      mcpclient_fail (c,
                      "%s: the server wrote a line that is not a JSON-RPC "
                      "message on its standard output: \"%s\"",
                      mcpclient_phase (c), shown);
      yajl_tree_free (msg);
      return;
    }
  if (c->hide != NULL)
    mcpclient_hide_tree (c, msg);
  yajl_val method = mcpclient_get (msg, "method");
  yajl_val idv = mcpclient_get (msg, "id");
  cleanup_free char *id
      = idv != NULL ? jsonrpc_request_id (&scan, idv, &not_utf8) : NULL;
  if (!YAJL_IS_STRING (mcpclient_get (msg, "jsonrpc"))
      || (method != NULL && !YAJL_IS_STRING (method))
      || (idv != NULL && id == NULL))
    mcpclient_fail (c,
                    "%s: the server wrote a message that is not JSON-RPC 2.0",
                    mcpclient_phase (c));
  else if (method == NULL && id != NULL)
    mcpclient_on_response (c, id, msg, scan.nul);
  else if (method != NULL && scan.nul && id != NULL)
    mcpclient_refuse (c, id, JSONRPC_INVALID_PARAMS,
                      "a string in the request holds a NUL character");
  else if (method != NULL && id != NULL)
    mcpclient_on_request (c, method->u.string, id,
                          mcpclient_get (msg, "params"));
  else if (method != NULL && !scan.nul)
    mcpclient_on_notification (c, method->u.string,
                               mcpclient_get (msg, "params"));
  yajl_tree_free (msg);
}

/* A complete line from the server; false stops the reading.  */
static bool
mcpclient_on_line (void *data, const char *line, size_t len)
{
  struct mcpclient *c = data;
  if (!mcpclient_blank (line, len))
    mcpclient_handle (c, line, len);
  return c->state != MCPCLIENT_FAILED && !c->free_wanted;
}

/* A line passed the frame bound: the connection cannot be trusted on.  */
static bool
mcpclient_on_overlong (void *data)
{
  struct mcpclient *c = data;
  mcpclient_fail (c, "%s: the server wrote a message longer than %zu bytes",
                  mcpclient_phase (c), c->in.max);
  return false;
}

/* The server's output is readable.  */
static void
mcpclient_on_readable (struct loop *loop, int fd, short revents, void *data)
{
  struct mcpclient *c = data;
  char chunk[65536];
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
    return;
  c->busy++;
  if (n < 0)
    mcpclient_fail (c, "%s: reading its standard output: %s",
                    mcpclient_phase (c), strerror (errno));
  else if (n == 0)
    mcpclient_fail (c, "%s: the server closed its standard output",
                    mcpclient_phase (c));
  else
    jsonrpc_lines_take (&c->in, chunk, (size_t) n, mcpclient_on_line,
                        mcpclient_on_overlong, c);
  c->busy--;
  if (c->busy == 0 && c->free_wanted)
    mcpclient_free (c);
}

/* The server let more than JSONRPC_OUT_MAX bytes wait unread.  */
static void
mcpclient_on_overflow (void *data, size_t queued)
{
  struct mcpclient *c = data;
  c->busy++;
  mcpclient_fail (c,
                  "%s: the server did not read its input (%zu bytes "
                  "waited)",
                  mcpclient_phase (c), queued);
  c->busy--;
  if (c->busy == 0 && c->free_wanted)
    mcpclient_free (c);
}

/* --- the interface ------------------------------------------------------- */

struct mcpclient *
mcpclient_new (const struct mcpclient_config *cfg, struct cr_error **err)
{
  struct mcpclient *c = xcalloc (1, sizeof *c);
  c->server = xstrdup (cfg->server);
  c->root = xstrdup (cfg->root);
  c->loop = cfg->loop;
  c->from_server = cfg->from_server;
  c->to_server = cfg->to_server;
  c->handshake_ms = cfg->handshake_ms;
  c->hide = cfg->hide;
  c->hide_data = cfg->hide_data;
  c->elicit = cfg->elicit;
  c->elicit_data = cfg->elicit_data;
  c->listener = cfg->listener;
  c->in.max = cfg->frame_max != 0 ? cfg->frame_max : MCPCLIENT_FRAME_MAX;
  c->asks.prefix = MCPCLIENT_ASK_PREFIX;
  c->initialize = MCPCLIENT_ASK_INITIALIZE;
  c->out = jsonrpc_out_new (c->loop, c->to_server, JSONRPC_OUT_MAX,
                            mcpclient_on_overflow, c, err);
  /* A read that blocks would stop every deadline with it.  */
  int flags = c->out != NULL ? fcntl (c->from_server, F_GETFL) : -1;
  if (c->out != NULL
      && (flags < 0 || fcntl (c->from_server, F_SETFL, flags | O_NONBLOCK) < 0))
    cr_error_set (err, errno, "making descriptor %d non-blocking",
                  c->from_server);
  else if (c->out != NULL
           && loop_add_fd (c->loop, c->from_server, POLLIN,
                           mcpclient_on_readable, c, err)
                  == 0)
    c->watching = true;
  if (!c->watching)
    {
      cr_error_prefix (err, "MCP server `%s`: connecting", cfg->server);
      c->state = MCPCLIENT_FAILED;
      mcpclient_free (c);
      return NULL;
    }
  c->handshake_timer = loop_add_timer (c->loop, c->handshake_ms,
                                       mcpclient_on_handshake_timeout, c);
  mcpclient_send_initialize (c);
  return c;
}

void
mcpclient_free (struct mcpclient *c)
{
  if (c == NULL)
    return;
  /* Inside one of our callbacks: detached now, freed when it returns, so
   * the caller may close the descriptors at once.  */
  c->state = MCPCLIENT_FAILED;
  mcpclient_detach (c);
  if (c->busy > 0)
    {
      c->free_wanted = true;
      return;
    }
  mcpclient_listing_drop (c);
  while (c->calls != NULL)
    {
      struct mcpclient_call *call = c->calls;
      c->calls = call->next;
      mcpclient_call_free (call);
    }
  while (c->elicitations != NULL)
    {
      struct mcpclient_elicitation *e = c->elicitations;
      c->elicitations = e->next;
      free (e->id);
      free (e);
    }
  mcpclient_tools_free (c->tools, c->n_tools, c->skipped, c->n_skipped);
  jsonrpc_asks_free (&c->asks);
  jsonrpc_lines_free (&c->in);
  free (c->protocol);
  free (c->server);
  free (c->root);
  free (c);
}

bool
mcpclient_ready (const struct mcpclient *c)
{
  return c->state == MCPCLIENT_READY;
}

const char *
mcpclient_protocol (const struct mcpclient *c)
{
  return c->protocol;
}

const struct mcpclient_tool *
mcpclient_tools (const struct mcpclient *c, size_t *n)
{
  *n = c->n_tools;
  return c->tools;
}

const char *const *
mcpclient_skipped (const struct mcpclient *c, size_t *n)
{
  *n = c->n_skipped;
  return (const char *const *) c->skipped;
}

/* Why arguments (JSON text) cannot be a call's, or NULL.  */
static const char *
mcpclient_arguments_refuse (const char *arguments)
{
  char errbuf[64];
  bool too_deep;
  yajl_val v = jsonrpc_parse (arguments, strlen (arguments), errbuf,
                              sizeof errbuf, &too_deep);
  bool ok = YAJL_IS_OBJECT (v);
  yajl_tree_free (v);
  return ok ? NULL : "the arguments must be a JSON object";
}

struct mcpclient_call *
mcpclient_call (struct mcpclient *c, const char *tool, const char *arguments,
                uint64_t timeout_ms, mcpclient_done_fn done, void *data,
                struct cr_error **err)
{
  const char *bad
      = arguments != NULL ? mcpclient_arguments_refuse (arguments) : NULL;
  if (c->state != MCPCLIENT_READY)
    bad = "the server is not ready";
  else if (!mcpclient_tools_have (c->tools, c->n_tools, tool))
    bad = "the server lists no such tool";
  if (bad != NULL)
    {
      cleanup_free char *shown = mcpclient_show (tool, strlen (tool));
      cr_error_set (err, 0, "MCP server `%s`: tools/call `%s`: %s", c->server,
                    shown, bad);
      return NULL;
    }
  struct mcpclient_call *call = xcalloc (1, sizeof *call);
  *call = (struct mcpclient_call){ .kind = MCPCLIENT_ASK_CALL,
                                   .c = c,
                                   .next = c->calls,
                                   .tool = xstrdup (tool),
                                   .timeout_ms = timeout_ms,
                                   .done = done,
                                   .data = data };
  call->id = xstrdup (jsonrpc_ask (&c->asks, call));
  c->calls = call;
  struct jsonw *w = jsonrpc_request_begin (call->id, "tools/call");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "name", tool);
  jsonw_key (w, "arguments");
  jsonw_raw (w, arguments != NULL ? arguments : "{}",
             strlen (arguments != NULL ? arguments : "{}"));
  jsonw_object_close (w);
  mcpclient_send (c, w);
  call->timer
      = loop_add_timer (c->loop, timeout_ms, mcpclient_on_call_timeout, call);
  return call;
}

void
mcpclient_cancel (struct mcpclient *c, struct mcpclient_call *call,
                  const char *reason)
{
  mcpclient_send_cancelled (c, call->id, reason);
  mcpclient_call_unlink (call);
  mcpclient_call_free (call);
}

void
mcpclient_elicit_answer (struct mcpclient *c, struct mcpclient_elicitation *e,
                         enum mcpclient_elicit_action action,
                         const char *content)
{
  static const char *const actions[] = { [MCPCLIENT_ELICIT_ACCEPT] = "accept",
                                         [MCPCLIENT_ELICIT_DECLINE] = "decline",
                                         [MCPCLIENT_ELICIT_CANCEL] = "cancel" };
  struct mcpclient_elicitation **p = &c->elicitations;
  while (*p != NULL && *p != e)
    p = &(*p)->next;
  if (*p != NULL)
    *p = e->next;
  if (!e->cancelled)
    {
      struct jsonw *w = jsonrpc_result_begin (e->id);
      jsonw_object_open (w);
      jsonw_member_cstr (w, "action", actions[action]);
      if (action == MCPCLIENT_ELICIT_ACCEPT && content != NULL)
        {
          jsonw_key (w, "content");
          jsonw_raw (w, content, strlen (content));
        }
      jsonw_object_close (w);
      mcpclient_send (c, w);
    }
  free (e->id);
  free (e);
}

char *
mcpclient_file_uri (const char *path)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "file://");
  for (const unsigned char *s = (const unsigned char *) path; *s != '\0'; s++)
    if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')
        || (*s >= '0' && *s <= '9') || strchr ("-._~/", *s) != NULL)
      buf_putc (&b, (char) *s);
    else
      buf_printf (&b, "%%%02X", *s);
  return buf_steal (&b, NULL);
}
