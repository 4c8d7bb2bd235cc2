/* A depth-bounded JSON reader and a bounded, non-blocking outgoing queue,
 * shared by the MCP server and the agent protocol.  */
#include <config.h>

#include "core/jsonrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
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
