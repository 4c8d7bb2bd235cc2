/* Framing, a depth-bounded JSON reader and a bounded, non-blocking
 * outgoing queue, shared by the MCP server and the agent protocol; ids,
 * envelopes, error codes and awaited answers for JSON-RPC 2.0 peers.  */
#include <config.h>

#include "core/jsonrpc.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

struct jsonrpc_out
{
  struct loop *loop;
  int fd;
  int old_flags; /* the fd's flags before it was made non-blocking */
  struct buf data;
  size_t off; /* bytes of data already written */
  size_t max;
  jsonrpc_overflow_fn overflow;
  void *overflow_data;
  bool dead;         /* overflowed, or the peer closed its end */
  uint64_t timer;    /* the pending overflow call */
  size_t over_bytes; /* what was queued when the bound was passed */
};

bool
jsonrpc_too_deep (const char *text, size_t len, size_t max)
{
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      if (in_string)
        {
          if (c == '\\')
            i++; /* the escaped character cannot end the string */
          else if (c == '"')
            in_string = false;
        }
      else if (c == '"')
        in_string = true;
      else if (c == '[' || c == '{')
        {
          if (++depth > max)
            return true;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return false;
}

yajl_val
jsonrpc_parse (const char *text, size_t len, char *errbuf, size_t errlen,
               bool *too_deep)
{
  bool deep = jsonrpc_too_deep (text, len, JSONRPC_MAX_DEPTH);
  if (too_deep != NULL)
    *too_deep = deep;
  /* yajl builds the tree and frees it recursively: without this bound a
   * line of nested brackets well inside the line bound overflows the
   * stack.  */
  if (deep)
    {
      if (errbuf != NULL && errlen > 0)
        snprintf (errbuf, errlen, "nested deeper than %d levels",
                  JSONRPC_MAX_DEPTH);
      return NULL;
    }
  return yajl_tree_parse (text, errbuf, errlen);
}

yajl_val
jsonrpc_parse_line (const char *text, size_t len, struct json_scan *scan,
                    char *errbuf, size_t errlen, bool *too_deep)
{
  if (too_deep != NULL)
    *too_deep = false;
  if (errbuf != NULL && errlen > 0)
    *errbuf = '\0';
  /* yajl stops at a NUL byte: such a line is not one JSON text.  */
  if (memchr (text, '\0', len) != NULL)
    return NULL;
  yajl_val v = jsonrpc_parse (text, len, errbuf, errlen, too_deep);
  /* The tree ends a string at "\u0000"; the scan sees each one whole.  */
  if (v != NULL && json_scan (text, len, scan) < 0)
    {
      yajl_tree_free (v);
      v = NULL;
    }
  return v;
}

void
jsonrpc_lines_take (struct jsonrpc_lines *r, const char *bytes, size_t n,
                    jsonrpc_line_fn line, jsonrpc_overlong_fn overlong,
                    void *data)
{
  while (n > 0)
    {
      const char *nl = memchr (bytes, '\n', n);
      size_t part = nl != NULL ? (size_t) (nl - bytes) : n;
      bool go_on = true;
      /* What passes the bound is never kept: the line is refused once
       * and the rest of it skipped.  */
      if (!r->discarding && part > r->max - r->line.len)
        {
          r->discarding = true;
          buf_free (&r->line);
          go_on = overlong (data);
        }
      else if (!r->discarding)
        buf_append (&r->line, bytes, part);
      bytes += part + (nl != NULL);
      n -= part + (nl != NULL);
      if (nl != NULL && go_on && !r->discarding)
        go_on = line (data, r->line.data != NULL ? r->line.data : "",
                      r->line.len);
      if (nl != NULL)
        {
          r->discarding = false;
          buf_free (&r->line);
        }
      if (!go_on)
        break;
    }
}

void
jsonrpc_lines_free (struct jsonrpc_lines *r)
{
  buf_free (&r->line);
  r->discarding = false;
}

char *
jsonrpc_request_id (const struct json_scan *scan, yajl_val idv, bool *not_utf8)
{
  *not_utf8 = false;
  if (idv == NULL || YAJL_IS_NULL (idv))
    return xstrdup ("null");
  if (!YAJL_IS_STRING (idv) && !YAJL_IS_NUMBER (idv))
    return NULL;
  if (scan->id == NULL || !scan->id_scalar)
    return NULL;
  for (size_t i = 0, k; i < scan->id_len; i += k)
    if ((k = utf8_char_len ((const unsigned char *) scan->id + i,
                            scan->id_len - i))
        == 0)
      {
        *not_utf8 = true;
        return NULL;
      }
  return xstrndup (scan->id, scan->id_len);
}

char *
jsonrpc_id_text (yajl_val id)
{
  if (id == NULL || YAJL_IS_NULL (id))
    return xstrdup ("null");
  if (YAJL_IS_NUMBER (id))
    return xstrdup (YAJL_GET_NUMBER (id));
  if (!YAJL_IS_STRING (id))
    return NULL;
  struct jsonw *w = jsonw_new ();
  const char *s = YAJL_GET_STRING (id);
  jsonw_text (w, s, strlen (s));
  return jsonw_steal (w, NULL);
}

/* A message being written: its version and, when not NULL, its id.  */
static struct jsonw *
jsonrpc_begin (const char *id)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_key (w, "jsonrpc");
  jsonw_cstr (w, "2.0");
  if (id != NULL)
    {
      jsonw_key (w, "id");
      jsonw_raw (w, id, strlen (id));
    }
  return w;
}

struct jsonw *
jsonrpc_result_begin (const char *id)
{
  struct jsonw *w = jsonrpc_begin (id);
  jsonw_key (w, "result");
  return w;
}

struct jsonw *
jsonrpc_request_begin (const char *id, const char *method)
{
  struct jsonw *w = jsonrpc_begin (id);
  jsonw_key (w, "method");
  jsonw_cstr (w, method);
  jsonw_key (w, "params");
  return w;
}

struct jsonw *
jsonrpc_notification_begin (const char *method)
{
  return jsonrpc_request_begin (NULL, method);
}

struct jsonw *
jsonrpc_error_new (const char *id, enum jsonrpc_error_code code,
                   const char *message)
{
  struct jsonw *w = jsonrpc_begin (id);
  jsonw_key (w, "error");
  jsonw_object_open (w);
  jsonw_key (w, "code");
  jsonw_int (w, code);
  jsonw_key (w, "message");
  jsonw_text (w, message, strlen (message));
  jsonw_object_close (w);
  return w;
}

/* Forget what is queued.  */
static void
jsonrpc_out_drop (struct jsonrpc_out *q)
{
  buf_free (&q->data);
  q->off = 0;
}

/* Write what the fd takes now; watch for room while anything is left.  */
static void
jsonrpc_out_flush (struct jsonrpc_out *q)
{
  while (!q->dead && q->off < q->data.len)
    {
      ssize_t n = write (q->fd, q->data.data + q->off, q->data.len - q->off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n <= 0)
        {
          /* The peer closed its end: it is leaving, and its input closing
           * (or its exit) says so next.  */
          q->dead = true;
          break;
        }
      q->off += (size_t) n;
    }
  if (q->dead || q->off == q->data.len)
    jsonrpc_out_drop (q);
  loop_set_events (q->loop, q->fd, q->data.len > q->off ? POLLOUT : 0);
}

/* The fd can take more.  */
static void
jsonrpc_out_on_writable (struct loop *loop, int fd, short revents, void *data)
{
  jsonrpc_out_flush (data);
}

/* Tell the owner, from the loop, that the bound was passed.  */
static void
jsonrpc_out_on_overflow (struct loop *loop, void *data)
{
  struct jsonrpc_out *q = data;
  q->timer = 0;
  if (q->overflow != NULL)
    q->overflow (q->overflow_data, q->over_bytes);
}

struct jsonrpc_out *
jsonrpc_out_new (struct loop *loop, int fd, size_t max,
                 jsonrpc_overflow_fn overflow, void *data,
                 struct cr_error **err)
{
  struct jsonrpc_out *q = xcalloc (1, sizeof *q);
  q->loop = loop;
  q->fd = fd;
  q->max = max;
  q->overflow = overflow;
  q->overflow_data = data;
  q->old_flags = fcntl (fd, F_GETFL);
  /* A write that blocks would stop every deadline and signal with it.  */
  if (q->old_flags < 0 || fcntl (fd, F_SETFL, q->old_flags | O_NONBLOCK) < 0)
    {
      cr_error_set (err, errno, "making descriptor %d non-blocking", fd);
      free (q);
      return NULL;
    }
  if (loop_add_fd (loop, fd, 0, jsonrpc_out_on_writable, q, err) < 0)
    {
      fcntl (fd, F_SETFL, q->old_flags);
      free (q);
      return NULL;
    }
  return q;
}

int
jsonrpc_out_send (struct jsonrpc_out *q, const char *msg, size_t len)
{
  if (q->dead)
    return -1;
  size_t pending = q->data.len - q->off;
  /* The bound is checked before anything is copied.  */
  if (len + 1 > q->max - pending || pending > q->max)
    {
      q->dead = true;
      q->over_bytes = pending + len + 1;
      jsonrpc_out_drop (q);
      loop_set_events (q->loop, q->fd, 0);
      q->timer = loop_add_timer (q->loop, 0, jsonrpc_out_on_overflow, q);
      return -1;
    }
  /* Keep the buffer the size of what waits, not of all ever written.  */
  if (q->off > 0 && q->off >= q->data.len / 2)
    {
      memmove (q->data.data, q->data.data + q->off, pending);
      q->data.len = pending;
      q->off = 0;
    }
  buf_append (&q->data, msg, len);
  buf_putc (&q->data, '\n');
  jsonrpc_out_flush (q);
  return q->dead ? -1 : 0;
}

int
jsonrpc_send (struct jsonrpc_out *q, struct jsonw *w)
{
  size_t len;
  jsonw_object_close (w);
  const char *msg = jsonw_get (w, &len);
  int ret = q != NULL ? jsonrpc_out_send (q, msg, len) : 0;
  jsonw_free (w);
  return ret;
}

size_t
jsonrpc_out_pending (const struct jsonrpc_out *q)
{
  return q != NULL ? q->data.len - q->off : 0;
}

void
jsonrpc_out_free (struct jsonrpc_out *q)
{
  if (q == NULL)
    return;
  loop_cancel_timer (q->loop, q->timer);
  loop_remove_fd (q->loop, q->fd);
  fcntl (q->fd, F_SETFL, q->old_flags);
  buf_free (&q->data);
  free (q);
}

void
jsonrpc_journal (struct journal *j, const char *peer, const char *event,
                 const char *reason, size_t bytes)
{
  struct cr_error *err = NULL;
  struct journal_field fields[]
      = { JOURNAL_STR ("peer", peer), JOURNAL_STR ("event", event),
          JOURNAL_STR ("reason", reason),
          JOURNAL_INT64 ("bytes", (int64_t) bytes) };
  if (j != NULL)
    journal_fact (j, JOURNAL_PEER, 0, NULL, fields,
                  sizeof fields / sizeof *fields, &err);
  cr_error_free (err);
}

/* One request whose answer is awaited.  */
struct jsonrpc_ask
{
  struct jsonrpc_ask *next;
  char *id; /* JSON text */
  void *data;
};

const char *
jsonrpc_ask (struct jsonrpc_asks *a, void *data)
{
  struct jsonrpc_ask *ask = xcalloc (1, sizeof *ask);
  ask->id = xasprintf ("\"%s-%" PRIu64 "\"", a->prefix, ++a->last);
  ask->data = data;
  ask->next = a->waiting;
  a->waiting = ask;
  return ask->id;
}

/* Unlink *p and free it.  */
static void
jsonrpc_ask_drop (struct jsonrpc_ask **p)
{
  struct jsonrpc_ask *ask = *p;
  *p = ask->next;
  free (ask->id);
  free (ask);
}

void
jsonrpc_ask_forget (struct jsonrpc_asks *a, void *data)
{
  for (struct jsonrpc_ask **p = &a->waiting; *p != NULL;)
    if ((*p)->data == data)
      jsonrpc_ask_drop (p);
    else
      p = &(*p)->next;
}

/* Whether id (JSON text) is one this peer was ever given.  */
static bool
jsonrpc_ask_ours (const struct jsonrpc_asks *a, const char *id)
{
  size_t pl = strlen (a->prefix);
  const char *digits = id + 1 + pl + 1;
  char *end = NULL;

  if (id[0] != '"' || strncmp (id + 1, a->prefix, pl) != 0 || id[1 + pl] != '-'
      || *digits < '1' || *digits > '9')
    return false;
  errno = 0;
  unsigned long long n = strtoull (digits, &end, 10);
  return errno == 0 && strcmp (end, "\"") == 0 && n <= a->last;
}

void *
jsonrpc_answer_take (struct jsonrpc_asks *a, const char *id,
                     const char **reason)
{
  for (struct jsonrpc_ask **p = &a->waiting; *p != NULL; p = &(*p)->next)
    if (strcmp ((*p)->id, id) == 0)
      {
        /* Taken: another answer to it finds no request.  */
        void *data = (*p)->data;
        jsonrpc_ask_drop (p);
        *reason = NULL;
        return data;
      }
  *reason = jsonrpc_ask_ours (a, id) ? "duplicate" : "unknown";
  return NULL;
}

void
jsonrpc_asks_free (struct jsonrpc_asks *a)
{
  while (a->waiting != NULL)
    jsonrpc_ask_drop (&a->waiting);
}
