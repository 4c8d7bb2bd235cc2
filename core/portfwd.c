/* sandbox.network.ports: host listeners, forwarded connections and the
 * relay between them (core/portfwd.h).  */
#include <config.h>

#include "core/portfwd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/status.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

/* Each direction of a relay holds at most this many bytes: what the
 * receiving side has not taken stops the reading of the other.  */
#define PORTFWD_BUF 65536
/* The most connections the session relays or waits on at once: past it a
 * new one is closed, so a command opening connections without end cannot
 * make the host hold buffers without end.  */
#define PORTFWD_MAX_CONNECTIONS 512

/* A connection waiting for the server's broker to connect inside.  */
struct portfwd_pending
{
  struct portfwd_pending *next;
  uint32_t id;
  unsigned port;
  int client_fd;                 /* from the host's listener, or a broker */
  struct portfwd_member *server; /* asked to connect */
  struct portfwd_member *client; /* the member it came from, or NULL */
};

struct portfwd_relay;

/* One side of a relay, as the loop's callback sees it.  */
struct portfwd_end
{
  struct portfwd_relay *r;
  int side;
};

/* Two connected sockets and what is on the way between them:
 * buf[d] holds what was read from fd[d] for fd[1 - d].  */
struct portfwd_relay
{
  struct portfwd_relay *next;
  struct portfwd *pf;
  int fd[2];
  struct portfwd_end end[2];
  struct portfwd_member *member[2]; /* whose each side is, or NULL: host */
  char *buf[2];
  size_t len[2], off[2];
  bool eof[2]; /* fd[d] said end of stream */
};

struct portfwd_member
{
  struct portfwd_member *next;
  struct portfwd *pf;
  int chan;
  uint16_t ports[BROKER_NET_MAX_PORTS];
  size_t n_ports;
  bool serving[BROKER_NET_MAX_PORTS];    /* its broker said LISTENING */
  bool forwarding[BROKER_NET_MAX_PORTS]; /* its broker was asked FORWARD */
  int host_fd[BROKER_NET_MAX_PORTS];     /* 127.0.0.1:port while server */
  bool taken[BROKER_NET_MAX_PORTS];      /* the host's port was not free */
  bool ever_taken[BROKER_NET_MAX_PORTS];
};

struct portfwd
{
  struct loop *loop;
  struct portfwd_member *members;
  struct portfwd_pending *pending;
  struct portfwd_relay *relays;
  uint32_t next_id;
  size_t connections; /* pending and relayed */
};

struct portfwd *
portfwd_new (struct loop *loop)
{
  struct portfwd *pf = xcalloc (1, sizeof *pf);
  pf->loop = loop;
  pf->next_id = 1;
  return pf;
}

void
portfwd_free (struct portfwd *pf)
{
  if (pf == NULL)
    return;
  /* Leaving frees only the member that leaves.  */
  for (struct portfwd_member *m = pf->members, *next; m != NULL; m = next)
    {
      next = m->next;
      portfwd_leave (m);
    }
  free (pf);
}

/* The index of port in m's list, or -1.  */
static int
portfwd_index (const struct portfwd_member *m, unsigned port)
{
  for (size_t i = 0; i < m->n_ports; i++)
    if (m->ports[i] == port)
      return (int) i;
  return -1;
}

/* The member serving port for the session (the one with the host's
 * listener, or first to serve it), or NULL.  */
static struct portfwd_member *
portfwd_server (const struct portfwd *pf, unsigned port)
{
  struct portfwd_member *first = NULL;
  for (struct portfwd_member *m = pf->members; m != NULL; m = m->next)
    {
      int i = portfwd_index (m, port);
      if (i < 0 || !m->serving[i])
        continue;
      if (m->host_fd[i] >= 0 || m->taken[i])
        return m;
      if (first == NULL)
        first = m;
    }
  return first;
}

/* --- the relay ------------------------------------------------------------ */

/* Close a relay: both sockets, unwatched first.  */
static void
portfwd_relay_close (struct portfwd_relay *r)
{
  struct portfwd *pf = r->pf;
  for (struct portfwd_relay **p = &pf->relays; *p != NULL; p = &(*p)->next)
    if (*p == r)
      {
        *p = r->next;
        break;
      }
  pf->connections--;
  for (int k = 0; k < 2; k++)
    {
      loop_remove_fd (pf->loop, r->fd[k]);
      close (r->fd[k]);
      free (r->buf[k]);
    }
  free (r);
}

/* Move what can be moved without waiting, in both directions.  Returns
 * false when the relay is over (both ends done, or an error).  */
static bool
portfwd_pump (struct portfwd_relay *r)
{
  for (int d = 0; d < 2; d++)
    {
      int from = r->fd[d], to = r->fd[1 - d];
      for (;;)
        {
          if (r->len[d] > 0)
            {
              ssize_t n = send (to, r->buf[d] + r->off[d], r->len[d],
                                MSG_DONTWAIT | MSG_NOSIGNAL);
              if (n < 0 && (errno == EAGAIN || errno == EINTR))
                break;
              if (n < 0)
                return false;
              r->off[d] += (size_t) n;
              r->len[d] -= (size_t) n;
              if (r->len[d] > 0)
                continue;
              r->off[d] = 0;
              if (r->eof[d])
                shutdown (to, SHUT_WR);
            }
          if (r->eof[d])
            break;
          ssize_t n = recv (from, r->buf[d], PORTFWD_BUF, MSG_DONTWAIT);
          if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
          if (n < 0)
            return false;
          if (n == 0)
            {
              /* Half-close: the other side learns of the end once what
               * came before it has gone.  */
              r->eof[d] = true;
              shutdown (to, SHUT_WR);
              break;
            }
          r->len[d] = (size_t) n;
        }
    }
  return !(r->eof[0] && r->eof[1] && r->len[0] == 0 && r->len[1] == 0);
}

/* Watch for what each side of r can do next: reading while its buffer is
 * empty and its stream goes on, writing while the other's holds bytes.  */
static void
portfwd_relay_events (struct portfwd_relay *r)
{
  for (int k = 0; k < 2; k++)
    {
      short ev = 0;
      if (r->len[k] == 0 && !r->eof[k])
        ev |= POLLIN;
      if (r->len[1 - k] > 0)
        ev |= POLLOUT;
      loop_set_events (r->pf->loop, r->fd[k], ev);
    }
}

/* The loop: one side of a relay is ready.  */
static void
portfwd_on_relay (struct loop *loop, int fd, short revents, void *data)
{
  struct portfwd_end *e = data;
  struct portfwd_relay *r = e->r;
  (void) loop;
  (void) fd;
  (void) revents;
  if (!portfwd_pump (r))
    {
      portfwd_relay_close (r);
      return;
    }
  portfwd_relay_events (r);
}

/* Relay between a (of member ma, NULL for the host) and b (of mb); both
 * non-blocking and close-on-exec, taken.  */
static void
portfwd_relay_start (struct portfwd *pf, int a, struct portfwd_member *ma,
                     int b, struct portfwd_member *mb)
{
  struct portfwd_relay *r = xcalloc (1, sizeof *r);
  r->pf = pf;
  r->fd[0] = a;
  r->fd[1] = b;
  r->member[0] = ma;
  r->member[1] = mb;
  for (int k = 0; k < 2; k++)
    {
      r->buf[k] = xmalloc (PORTFWD_BUF);
      r->end[k] = (struct portfwd_end){ .r = r, .side = k };
      if (loop_add_fd (pf->loop, r->fd[k], POLLIN, portfwd_on_relay, &r->end[k],
                       NULL)
          < 0)
        {
          if (k == 1)
            loop_remove_fd (pf->loop, r->fd[0]);
          close (a);
          close (b);
          free (r->buf[0]);
          free (r->buf[1]);
          free (r);
          pf->connections--;
          return;
        }
    }
  r->next = pf->relays;
  pf->relays = r;
}

/* --- connections ---------------------------------------------------------- */

/* Ask server's broker to connect to port inside for client_fd (from
 * member client, NULL for the host); client_fd is taken.  */
static void
portfwd_ask (struct portfwd *pf, struct portfwd_member *server, unsigned port,
             int client_fd, struct portfwd_member *client)
{
  if (pf->connections >= PORTFWD_MAX_CONNECTIONS)
    {
      close (client_fd);
      return;
    }
  struct portfwd_pending *q = xcalloc (1, sizeof *q);
  struct cr_error *err = NULL;
  q->id = pf->next_id++;
  if (pf->next_id == 0)
    pf->next_id = 1;
  q->port = port;
  q->client_fd = client_fd;
  q->server = server;
  q->client = client;
  if (netchan_send (server->chan, BROKER_NET_CONNECT, port, q->id, &err) < 0)
    {
      cr_error_free (err);
      close (client_fd);
      free (q);
      return;
    }
  q->next = pf->pending;
  pf->pending = q;
  /* Counted from here until its relay closes (or it is dropped).  */
  pf->connections++;
}

/* Take the pending connection of id that server was asked for, or NULL.  */
static struct portfwd_pending *
portfwd_claim (struct portfwd *pf, const struct portfwd_member *server,
               uint32_t id, unsigned port)
{
  for (struct portfwd_pending **p = &pf->pending; *p != NULL; p = &(*p)->next)
    {
      struct portfwd_pending *q = *p;
      if (q->id == id && q->server == server && q->port == port)
        {
          *p = q->next;
          return q;
        }
    }
  return NULL;
}

/* The loop: a connection on the host's 127.0.0.1:PORT of a server.  */
static void
portfwd_on_host (struct loop *loop, int fd, short revents, void *data)
{
  struct portfwd_member *m = data;
  (void) loop;
  (void) revents;
  int i;
  for (i = 0; i < (int) m->n_ports; i++)
    if (m->host_fd[i] == fd)
      break;
  if (i == (int) m->n_ports)
    return;
  int c = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (c >= 0)
    portfwd_ask (m->pf, m, m->ports[i], c, NULL);
}

/* Listen on the host's 127.0.0.1 at port: close-on-exec, non-blocking;
 * -1 with errno when the port is not free (EADDRINUSE) or otherwise.
 * Loopback only: the person's browser on this machine, nobody else's.  */
static int
portfwd_host_listen (unsigned port)
{
  struct sockaddr_in a = { .sin_family = AF_INET,
                           .sin_port = htons ((uint16_t) port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  /* SO_REUSEADDR only lets a port in TIME_WAIT be reused; a listener
   * there still makes bind fail.  */
  if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *) &a, sizeof a) < 0 || listen (fd, 64) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

/* Tell every member but except that has port in its list to forward it
 * or stop (on).  */
static void
portfwd_tell_others (struct portfwd *pf, const struct portfwd_member *except,
                     unsigned port, bool on)
{
  for (struct portfwd_member *o = pf->members; o != NULL; o = o->next)
    {
      int j = portfwd_index (o, port);
      struct cr_error *err = NULL;
      if (o == except || j < 0 || o->forwarding[j] == on)
        continue;
      if (netchan_send (o->chan, on ? BROKER_NET_FORWARD : BROKER_NET_UNFORWARD,
                        port, 0, &err)
          == 0)
        o->forwarding[j] = on;
      cr_error_free (err);
    }
}

/* m becomes the session's server of its port i: the host's listener (if
 * the port is free there) and the others forwarding it.  */
static void
portfwd_become_server (struct portfwd_member *m, int i)
{
  unsigned port = m->ports[i];
  /* Its own broker forwards nothing of a port its workload serves.  */
  m->forwarding[i] = false;
  m->host_fd[i] = portfwd_host_listen (port);
  m->taken[i] = m->host_fd[i] < 0;
  if (m->taken[i])
    m->ever_taken[i] = true;
  else if (loop_add_fd (m->pf->loop, m->host_fd[i], POLLIN, portfwd_on_host, m,
                        NULL)
           < 0)
    {
      close (m->host_fd[i]);
      m->host_fd[i] = -1;
    }
  portfwd_tell_others (m->pf, m, port, true);
}

/* m no longer serves its port i: its host listener closes, and another
 * member serving it takes over or the others stop forwarding it.  */
static void
portfwd_stop_serving (struct portfwd_member *m, int i)
{
  unsigned port = m->ports[i];
  bool was_server = portfwd_server (m->pf, port) == m;
  m->serving[i] = false;
  m->taken[i] = false;
  if (m->host_fd[i] >= 0)
    {
      loop_remove_fd (m->pf->loop, m->host_fd[i]);
      close (m->host_fd[i]);
      m->host_fd[i] = -1;
    }
  if (!was_server)
    return;
  struct portfwd_member *next = portfwd_server (m->pf, port);
  portfwd_tell_others (m->pf, next, port, false);
  if (next != NULL)
    portfwd_become_server (next, portfwd_index (next, port));
}

struct portfwd_member *
portfwd_join (struct portfwd *pf, int chan, const uint16_t *ports,
              size_t n_ports)
{
  struct portfwd_member *m = xcalloc (1, sizeof *m);
  m->pf = pf;
  m->chan = chan;
  for (size_t i = 0; i < n_ports && m->n_ports < BROKER_NET_MAX_PORTS; i++)
    if (ports[i] >= 1024 && portfwd_index (m, ports[i]) < 0)
      m->ports[m->n_ports++] = ports[i];
  for (size_t i = 0; i < BROKER_NET_MAX_PORTS; i++)
    m->host_fd[i] = -1;
  m->next = pf->members;
  pf->members = m;
  for (size_t i = 0; i < m->n_ports; i++)
    {
      struct cr_error *err = NULL;
      if (portfwd_server (pf, m->ports[i]) == NULL)
        continue;
      if (netchan_send (chan, BROKER_NET_FORWARD, m->ports[i], 0, &err) == 0)
        m->forwarding[i] = true;
      cr_error_free (err);
    }
  /* The broker starts the workload once it has these (BROKER_NET_READY);
   * one it cannot be sent waits out its bound instead.  */
  struct cr_error *err = NULL;
  netchan_send (chan, BROKER_NET_READY, 0, 0, &err);
  cr_error_free (err);
  return m;
}

/* A connection the member's broker accepted on a port it forwards: to
 * the session's server of the port, which must be another member.  */
static void
portfwd_accepted (struct portfwd_member *m, int i, int fd)
{
  struct portfwd_member *server = portfwd_server (m->pf, m->ports[i]);
  if (!m->forwarding[i] || server == NULL || server == m)
    {
      close (fd);
      return;
    }
  portfwd_ask (m->pf, server, m->ports[i], fd, m);
}

/* The server's broker answered a CONNECT: relay, or close the waiting
 * side.  A descriptor for nothing the host asked of this broker closes.  */
static void
portfwd_answered (struct portfwd_member *m, struct netchan_record *rec)
{
  struct portfwd_pending *q = portfwd_claim (m->pf, m, rec->id, rec->port);
  if (q == NULL)
    {
      if (rec->fd >= 0)
        close (rec->fd);
      return;
    }
  if (rec->kind == BROKER_NET_CONNECTED)
    portfwd_relay_start (m->pf, q->client_fd, q->client, rec->fd, m);
  else
    {
      close (q->client_fd);
      m->pf->connections--;
    }
  rec->fd = -1;
  free (q);
}

void
portfwd_record (struct portfwd_member *m, struct netchan_record *rec)
{
  int i = portfwd_index (m, rec->port);
  if (i < 0)
    {
      /* Not one of its ports: nothing is done for it.  */
      if (rec->fd >= 0)
        close (rec->fd);
      rec->fd = -1;
      return;
    }
  switch (rec->kind)
    {
    case BROKER_NET_LISTENING:
      if (m->serving[i])
        break;
      m->serving[i] = true;
      if (portfwd_server (m->pf, m->ports[i]) == m)
        portfwd_become_server (m, i);
      break;
    case BROKER_NET_GONE:
      if (m->serving[i])
        portfwd_stop_serving (m, i);
      break;
    case BROKER_NET_ACCEPTED:
      portfwd_accepted (m, i, rec->fd);
      rec->fd = -1;
      break;
    case BROKER_NET_CONNECTED:
    case BROKER_NET_FAILED:
      portfwd_answered (m, rec);
      break;
    default:
      break;
    }
  if (rec->fd >= 0)
    close (rec->fd);
  rec->fd = -1;
}

char *
portfwd_where (const struct portfwd_member *m)
{
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < m->n_ports; i++)
    {
      if (!m->serving[i] || portfwd_server (m->pf, m->ports[i]) != m)
        continue;
      if (b.len > 0)
        buf_puts (&b, "; ");
      if (m->taken[i])
        buf_printf (&b,
                    "listening on %u inside; 127.0.0.1:%u is taken on the "
                    "host, so only the session's other commands reach it",
                    (unsigned) m->ports[i], (unsigned) m->ports[i]);
      else
        buf_printf (&b, "listening on 127.0.0.1:%u", (unsigned) m->ports[i]);
    }
  if (b.len == 0)
    {
      buf_free (&b);
      return NULL;
    }
  return buf_steal (&b, NULL);
}

char *
portfwd_taken_note (const struct portfwd_member *m)
{
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < m->n_ports; i++)
    if (m->ever_taken[i])
      buf_printf (&b, "%s%u", b.len == 0 ? "" : ", ", (unsigned) m->ports[i]);
  if (b.len == 0)
    {
      buf_free (&b);
      return NULL;
    }
  char *ports = buf_steal (&b, NULL);
  char *note = xasprintf ("[the command listened on %s; the host's "
                          "127.0.0.1 had %s taken already, so it was not "
                          "reachable there]",
                          ports, strchr (ports, ',') ? "them" : "it");
  free (ports);
  return note;
}

void
portfwd_leave (struct portfwd_member *m)
{
  struct portfwd *pf = m->pf;
  for (size_t i = 0; i < m->n_ports; i++)
    if (m->serving[i])
      portfwd_stop_serving (m, i);
  /* Its connections, either end, waiting or relayed.  */
  for (struct portfwd_pending **p = &pf->pending; *p != NULL;)
    {
      struct portfwd_pending *q = *p;
      if (q->server != m && q->client != m)
        {
          p = &q->next;
          continue;
        }
      *p = q->next;
      close (q->client_fd);
      free (q);
      pf->connections--;
    }
  for (struct portfwd_relay *r = pf->relays, *next; r != NULL; r = next)
    {
      next = r->next;
      if (r->member[0] == m || r->member[1] == m)
        portfwd_relay_close (r);
    }
  struct portfwd_member **p = &pf->members;
  while (*p != NULL && *p != m)
    p = &(*p)->next;
  if (*p == m)
    *p = m->next;
  free (m);
}
