/* The host-owned HTTP/1.1 proxy: clients, connections, the resolver thread
 * and the relay.  See core/proxy.h for the contract.
 *
 * One connection (struct proxy_conn) is a small state machine driven by
 * the loop: read a request head from the command, check it (credential,
 * name), resolve the name off the loop, classify every address, connect to
 * the first that passed (directly, or through crucible's own upstream
 * proxy as a CONNECT to that checked address), then either tunnel (CONNECT,
 * or an Upgrade answered 101) with splice(2), or forward one plain HTTP
 * request and its response and go back to reading the next request head,
 * which is checked again.  Every buffer is bounded: a direction stops
 * reading while what it read has not been written on.  */
#include <config.h>

#include "core/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "sandbox/httpreq.h"
#include "sandbox/netpolicy.h"

#define PROXY_USER "crucible"
#define PROXY_BUF_CAP 65536 /* one read; heads go to the parser */
#define PROXY_PIPE_CHUNK 65536
#define PROXY_HEAD_MS 30000u    /* a request head must arrive in 30 s */
#define PROXY_RESOLVE_MS 10000u /* the resolver's answer */
/* Lookups run on a few threads, and one command has at most two of them
 * at once (the rest of its lookups wait their turn): getaddrinfo against
 * a DNS server that never answers takes the whole of glibc's timeout, and
 * with one thread for every command a command that asked for such names
 * held every other command's lookups behind them.  */
#define PROXY_RESOLVERS 8
#define PROXY_CLIENT_MAX_LOOKUPS 2
#define PROXY_CONNECT_MS 10000u /* one connect attempt */
#define PROXY_IDLE_MS 300000u   /* nothing moved either way */
#define PROXY_LINGER_MS 2000u   /* draining a refused client before close */
#define PROXY_PUMP_ROUNDS 8     /* splice rounds per wake-up, for fairness */
/* Connections one command may hold at once.  Each costs the host up to six
 * descriptors (the command's socket, the network's, two pipes) and two
 * 16 KiB buffers; without a bound a command holding thousands takes the
 * process to its RLIMIT_NOFILE, and then every other command, the
 * proxy's own sockets and the session fail.  */
#define PROXY_CLIENT_MAX_CONNS 256
/* And within the process's own descriptor limit: the proxy's connections
 * together take at most what RLIMIT_NOFILE leaves after this reserve for
 * the rest of crucible (commands' pipes, the journal, publication), at six
 * descriptors each, and one command at most half of that.  At the common
 * soft limit of 1024, 256 tunnels of one command were 1536 descriptors. */
#define PROXY_FD_RESERVE 256
#define PROXY_CONN_FDS 6
#define PROXY_MIN_CONNS 16

/* The proxy's own answers (doc/strings.md, "The network proxy's own
 * answers"); the 403 bodies are netpolicy_refusal_text's.  */
#define PROXY_TEXT_407                                                         \
  "crucible's proxy needs this command's credential: use the proxy URL in "    \
  "HTTP_PROXY or HTTPS_PROXY as given, user and password included.\n"
#define PROXY_TEXT_400 "crucible's proxy could not read this request: %s.\n"
#define PROXY_TEXT_502 "crucible's proxy could not connect to %s port %u: %s.\n"
#define PROXY_TEXT_503                                                         \
  "crucible's proxy refused this connection: the command already holds "       \
  "%zu connections to it; close some first.\n"

/* ---- The resolver thread ---------------------------------------------- */

struct proxy_job
{
  struct proxy_job *next;  /* queue link (resolver side) */
  struct proxy_conn *conn; /* loop side: NULL once nobody waits */
  /* Loop side only: the client whose turn it takes (NULL once the client
   * is gone), and the proxy's list of lookups in flight.  */
  struct proxy_client *client;
  struct proxy_job *lprev, *lnext;
  char *host;
  char port[8];
  struct addrinfo *res; /* the thread's answer */
  int gai_rc;
};

/* Shared between the loop and the thread; the last of the two frees it, so
 * a thread stuck in getaddrinfo never writes to a freed proxy.  */
struct proxy_resolver
{
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct proxy_job *head, *tail;
  bool quit;
  int refs;
  int wfd; /* the thread's end of the answer socket */
};

/* Free a job and its answer.  */
static void
proxy_job_free (struct proxy_job *j)
{
  if (j == NULL)
    return;
  if (j->res != NULL)
    freeaddrinfo (j->res);
  free (j->host);
  free (j);
}

/* Drop one reference to the resolver state; free it with the last.  */
static void
proxy_resolver_unref (struct proxy_resolver *r)
{
  pthread_mutex_lock (&r->mu);
  bool last = --r->refs == 0;
  pthread_mutex_unlock (&r->mu);
  if (!last)
    return;
  while (r->head != NULL)
    {
      struct proxy_job *j = r->head;
      r->head = j->next;
      proxy_job_free (j);
    }
  if (r->wfd >= 0)
    close (r->wfd);
  pthread_mutex_destroy (&r->mu);
  pthread_cond_destroy (&r->cv);
  free (r);
}

/* Take the next job, or NULL when the proxy is gone.  */
static struct proxy_job *
proxy_resolver_next (struct proxy_resolver *r)
{
  pthread_mutex_lock (&r->mu);
  while (r->head == NULL && !r->quit)
    pthread_cond_wait (&r->cv, &r->mu);
  struct proxy_job *j = NULL;
  if (!r->quit)
    {
      j = r->head;
      r->head = j->next;
      if (r->head == NULL)
        r->tail = NULL;
    }
  pthread_mutex_unlock (&r->mu);
  return j;
}

/* The resolver thread: getaddrinfo one job at a time, and send the job
 * back to the loop as a pointer over the answer socket.  */
static void *
proxy_resolver_main (void *arg)
{
  struct proxy_resolver *r = arg;
  struct proxy_job *j;

  while ((j = proxy_resolver_next (r)) != NULL)
    {
      struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                .ai_family = AF_UNSPEC,
                                .ai_flags = AI_NUMERICSERV };
      j->gai_rc = getaddrinfo (j->host, j->port, &hints, &j->res);
      /* MSG_NOSIGNAL: the loop's end may be closed already.  */
      uintptr_t v = (uintptr_t) j;
      if (send (r->wfd, &v, sizeof v, MSG_NOSIGNAL) != (ssize_t) sizeof v)
        proxy_job_free (j);
    }
  proxy_resolver_unref (r);
  return NULL;
}

/* ---- Types ------------------------------------------------------------ */

enum proxy_conn_state
{
  PROXY_CONN_HEAD,      /* reading a request head from the command */
  PROXY_CONN_ASKING,    /* waiting for the person's answer about a name */
  PROXY_CONN_RESOLVING, /* waiting for the resolver */
  PROXY_CONN_CONNECTING,
  PROXY_CONN_UPSTREAM, /* sent CONNECT to the upstream, reading its answer */
  PROXY_CONN_HTTP,     /* forwarding one request and its response */
  PROXY_CONN_TUNNEL,   /* relaying bytes both ways */
  PROXY_CONN_CLOSING,  /* writing a final answer, then closing */
};

/* Bytes waiting to be written to one descriptor, bounded by the reader.  */
struct proxy_out
{
  struct buf b;
  size_t off;
};

/* One tunnel direction: src -> pipe -> dst.  */
struct proxy_dir
{
  int pipe[2];
  size_t in_pipe;
  bool src_eof, shut;
  bool copy; /* splice refused these descriptors: recv and send instead */
};

struct proxy_addrs
{
  struct sockaddr_storage *a;
  socklen_t *len;
  size_t n, next;
};

/* What the proxy keeps of the request being served.  */
struct proxy_request
{
  char *host; /* normalised (punycode, canonical literal) */
  uint16_t port;
  char *method;
  bool is_connect, upgrade, client_close;
  struct buf forward; /* the head to send the origin (absolute-form) */
  enum httpreq_body_kind body_kind;
  uint64_t body_length;
};

struct proxy_conn
{
  struct proxy_conn *prev, *next; /* the client's list */
  struct proxy_client *client;
  uint64_t timer, timer_at, deadline;
  uint64_t question; /* phase 2: the question this connection waits on */

  /* The request being served.  */
  struct proxy_request req;
  char *authority; /* host:port the upstream connection is for */
  struct proxy_job *job;
  struct proxy_addrs addrs;    /* checked target addresses */
  struct proxy_addrs up_addrs; /* the upstream proxy's addresses */
  struct netpolicy_upstream upstream;

  /* Heads are parsed as they arrive; a response head is held whole
   * (bounded by the parser) and forwarded once it parsed.  */
  struct httpreq_parser *reqp, *respp;
  struct buf resp_head;
  /* Plain HTTP forwarding.  */
  struct httpreq_body req_body, resp_body;

  struct proxy_out to_c, to_u;
  struct proxy_dir c2u, u2c;
  enum proxy_conn_state state;
  int cfd, ufd;

  bool c_eof, u_eof;
  bool upstream_reusable;
  bool resolving_upstream; /* the job is for the upstream proxy's name */
  bool via_upstream;
  bool req_done, resp_head_done, resp_done, resp_close, upgraded;
  bool dead;         /* closed; memory freed by the next reap */
  bool head_started; /* part of a request head has been read */
  /* Resolving, waiting for one of the client's lookup turns.  */
  bool lookup_waiting;
  char *wait_host;
  unsigned wait_port;

  /* Bytes read and not yet consumed, from the command and the network. */
  size_t cin_len, uin_len;
  char cin[PROXY_BUF_CAP];
  char uin[PROXY_BUF_CAP];
};

struct proxy_client
{
  struct proxy_client *prev, *next; /* the proxy's list */
  struct proxy *proxy;
  char *sandbox_id;
  struct netpolicy_names *names;
  char **allowed_extra; /* names the person allowed for this command */
  size_t n_allowed_extra;
  bool allow_private;
  char password[33];
  char *userpass; /* "crucible:<password>", what Basic carries */
  struct proxy_conn *conns;
  size_t n_lookups; /* jobs in flight, at most PROXY_CLIENT_MAX_LOOKUPS */
  size_t n_conns;   /* in conns, at most PROXY_CLIENT_MAX_CONNS */
  bool over_limit;  /* refusing for the limit since the last fact */
  struct proxy_counts counts;
  proxy_refusal_fn on_refusal;
  void *on_refusal_data;
};

struct proxy_question
{
  struct proxy_question *next;
  uint64_t id;
  struct proxy_client *client;
  char *name;
  bool asked;
  uint64_t timer;
};

struct proxy
{
  struct loop *loop;
  char **env;
  struct proxy_resolver *resolver;
  int rfd; /* the loop's end of the answer socket */
  struct netpolicy_local *local;
  struct proxy_client *clients;
  size_t n_conns;      /* every client's, at most max_conns */
  size_t max_conns;    /* from RLIMIT_NOFILE */
  size_t client_conns; /* one client's at most */
  proxy_asker_fn asker;
  void *asker_data;
  struct proxy_question *questions; /* the first is the one asked */
  uint64_t next_question;
  struct proxy_job *jobs;  /* lookups in flight (loop side) */
  struct proxy_conn *dead; /* closed connections, freed by the reap timer */
  uint64_t reap_timer;
};

static void proxy_conn_free (struct proxy_conn *c);
static void proxy_conn_process (struct proxy_conn *c);
static void proxy_conn_events (struct proxy_conn *c);
static void proxy_conn_connect_next (struct proxy_conn *c);
static void proxy_conn_check_addrs (struct proxy_conn *c,
                                    const struct addrinfo *res);
static void proxy_conn_connect_target (struct proxy_conn *c);
static void proxy_conn_lookup (struct proxy_conn *c);
static void proxy_conn_refuse_name (struct proxy_conn *c);
static void proxy_conn_closing (struct proxy_conn *c, short revents);
static void proxy_conn_answered (struct proxy_conn *c, enum proxy_answer a);
static void proxy_question_drop_conn (struct proxy_conn *c);
static void proxy_ask (struct proxy_conn *c);

/* ---- Small helpers ---------------------------------------------------- */

/* Compare two byte strings in time that depends only on their lengths.  */
static bool
proxy_secret_equal (const char *a, size_t alen, const char *b, size_t blen)
{
  unsigned char diff = alen != blen;
  size_t n = alen < blen ? alen : blen;
  for (size_t i = 0; i < n; i++)
    diff |= (unsigned char) a[i] ^ (unsigned char) b[i];
  return diff == 0;
}

/* Fill out with 32 hex digits from 128 random bits.  */
static int
proxy_random_hex (char out[33], struct cr_error **err)
{
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes)
    {
      ssize_t n = getrandom (bytes + got, sizeof bytes - got, 0);
      if (n < 0 && errno != EINTR)
        return cr_error_set (err, errno, "making a proxy credential");
      if (n > 0)
        got += (size_t) n;
    }
  buf_hex (out, bytes, sizeof bytes);
  return 0;
}

/* Decode standard base64 (padding optional); returns the length or -1.  */
static ssize_t
proxy_base64_decode (const char *in, size_t len, char *out, size_t cap)
{
  static const char alphabet[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;

  while (len > 0 && in[len - 1] == '=')
    len--;
  for (size_t i = 0; i < len; i++)
    {
      const char *p = in[i] ? strchr (alphabet, in[i]) : NULL;
      if (p == NULL)
        return -1;
      acc = (acc << 6) | (uint32_t) (p - alphabet);
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          if (n == cap)
            return -1;
          out[n++] = (char) ((acc >> bits) & 0xff);
        }
    }
  return (ssize_t) n;
}

/* Whether a Proxy-Authorization value carries this client's credential:
 * the scheme `Basic` (any case), then base64 of user:password.  */
static bool
proxy_client_auth_ok (const struct proxy_client *cl, const char *value)
{
  char decoded[256];
  if (value == NULL || strncasecmp (value, "Basic", 5) != 0
      || (value[5] != ' ' && value[5] != '\t'))
    return false;
  const char *p = value + 5;
  while (*p == ' ' || *p == '\t')
    p++;
  size_t len = strcspn (p, " \t");
  ssize_t n = proxy_base64_decode (p, len, decoded, sizeof decoded);
  if (n < 0)
    return false;
  return proxy_secret_equal (decoded, (size_t) n, cl->userpass,
                             strlen (cl->userpass));
}

/* Set a descriptor non-blocking and close-on-exec.  */
static int
proxy_fd_prepare (int fd)
{
  int fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return -1;
  return fcntl (fd, F_SETFD, FD_CLOEXEC);
}

/* Append to a pending output.  */
static void
proxy_out_add (struct proxy_out *o, const void *data, size_t len)
{
  buf_append (&o->b, data, len);
}

/* Bytes still to write.  */
static size_t
proxy_out_pending (const struct proxy_out *o)
{
  return o->b.len - o->off;
}

/* Write what is pending; returns the bytes written or -1 (errno) on a
 * failure other than EAGAIN.  */
static ssize_t
proxy_out_flush (struct proxy_out *o, int fd)
{
  size_t total = 0;
  while (proxy_out_pending (o) > 0)
    {
      ssize_t n
          = send (fd, o->b.data + o->off, proxy_out_pending (o), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        break;
      if (n < 0)
        return -1;
      o->off += (size_t) n;
      total += (size_t) n;
    }
  if (proxy_out_pending (o) == 0)
    {
      o->b.len = 0;
      o->off = 0;
    }
  return (ssize_t) total;
}

/* Free a list of addresses.  */
static void
proxy_addrs_clear (struct proxy_addrs *a)
{
  free (a->a);
  free (a->len);
  *a = (struct proxy_addrs){ 0 };
}

/* Append one address.  */
static void
proxy_addrs_add (struct proxy_addrs *a, const struct sockaddr *sa,
                 socklen_t len)
{
  a->a = xrealloc (a->a, (a->n + 1) * sizeof *a->a);
  a->len = xrealloc (a->len, (a->n + 1) * sizeof *a->len);
  memset (&a->a[a->n], 0, sizeof a->a[a->n]);
  memcpy (&a->a[a->n], sa, len);
  a->len[a->n] = len;
  a->n++;
}

/* An address as CONNECT's authority: `192.0.2.1:443`, `[2001:db8::1]:443`. */
static char *
proxy_addr_authority (const struct sockaddr_storage *ss)
{
  char host[INET6_ADDRSTRLEN];
  if (ss->ss_family == AF_INET6)
    {
      const struct sockaddr_in6 *s6 = (const void *) ss;
      inet_ntop (AF_INET6, &s6->sin6_addr, host, sizeof host);
      return xasprintf ("[%s]:%u", host, ntohs (s6->sin6_port));
    }
  const struct sockaddr_in *s4 = (const void *) ss;
  inet_ntop (AF_INET, &s4->sin_addr, host, sizeof host);
  return xasprintf ("%s:%u", host, ntohs (s4->sin_port));
}

/* ---- Timers ----------------------------------------------------------- */

static void proxy_conn_timer_fire (struct loop *loop, void *data);

/* Make sure the connection's timer fires by its deadline.  */
static void
proxy_conn_timer_arm (struct proxy_conn *c)
{
  struct loop *loop = c->client->proxy->loop;
  if (c->timer != 0 && c->timer_at <= c->deadline)
    return;
  loop_cancel_timer (loop, c->timer);
  uint64_t now = clock_now_ms ();
  c->timer_at = c->deadline;
  c->timer = loop_add_timer (loop, c->deadline > now ? c->deadline - now : 0,
                             proxy_conn_timer_fire, c);
}

/* Set the deadline ms from now.  */
static void
proxy_conn_deadline (struct proxy_conn *c, uint64_t ms)
{
  c->deadline = clock_now_ms () + ms;
  proxy_conn_timer_arm (c);
}

/* ---- Answers of the proxy's own --------------------------------------- */

/* Count a refusal and tell the client's listener its class.  */
static void
proxy_conn_refused (struct proxy_conn *c, const char *reason_class)
{
  struct proxy_client *cl = c->client;
  cl->counts.refused++;
  if (cl->on_refusal != NULL)
    cl->on_refusal (cl->on_refusal_data, reason_class);
}

/* Answer the command with a final response of the proxy's own, then close
 * this connection only.  */
static void
proxy_conn_answer (struct proxy_conn *c, int status, const char *reason,
                   const char *extra_headers, const char *body)
{
  struct buf head = BUF_INIT;
  buf_printf (&head,
              "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain; charset=utf-8\r\n"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
              status, reason, extra_headers ? extra_headers : "", strlen (body),
              body);
  proxy_out_add (&c->to_c, head.data, head.len);
  buf_free (&head);
  if (c->ufd >= 0)
    {
      loop_remove_fd (c->client->proxy->loop, c->ufd);
      close (c->ufd);
      c->ufd = -1;
    }
  c->state = PROXY_CONN_CLOSING;
  proxy_conn_deadline (c, PROXY_LINGER_MS + 5000u);
  proxy_conn_events (c);
}

/* Refuse with a status, counting it under reason_class.  */
static void
proxy_conn_refuse (struct proxy_conn *c, int status, const char *reason,
                   const char *reason_class, const char *body)
{
  proxy_conn_refused (c, reason_class);
  proxy_conn_answer (c, status, reason, NULL, body);
}

/* The 407 challenge.  */
static void
proxy_conn_challenge (struct proxy_conn *c)
{
  proxy_conn_refused (c, "credential");
  proxy_conn_answer (c, 407, "Proxy Authentication Required",
                     "Proxy-Authenticate: Basic realm=\"crucible\"\r\n",
                     PROXY_TEXT_407);
}

/* A 502 for a connection that could not be made.  */
static void
proxy_conn_bad_gateway (struct proxy_conn *c, const char *reason_class,
                        const char *why)
{
  cleanup_free char *body
      = xasprintf (PROXY_TEXT_502, c->req.host, c->req.port, why);
  proxy_conn_refuse (c, 502, "Bad Gateway", reason_class, body);
}

/* ---- Events ----------------------------------------------------------- */

/* Whether the command's side may be read now.  */
static bool
proxy_conn_reads_client (const struct proxy_conn *c)
{
  switch (c->state)
    {
    case PROXY_CONN_HEAD:
      return !c->c_eof && c->cin_len < sizeof c->cin;
    case PROXY_CONN_HTTP:
      return !c->c_eof && c->cin_len < sizeof c->cin
             && proxy_out_pending (&c->to_u) == 0 && !c->req_done;
    case PROXY_CONN_TUNNEL:
      return !c->c2u.src_eof && proxy_out_pending (&c->to_u) == 0
             && c->c2u.in_pipe == 0;
    case PROXY_CONN_CLOSING:
      return !c->c_eof && proxy_out_pending (&c->to_c) == 0;
    default:
      return false;
    }
}

/* Whether the network's side may be read now.  */
static bool
proxy_conn_reads_upstream (const struct proxy_conn *c)
{
  switch (c->state)
    {
    case PROXY_CONN_UPSTREAM:
      return !c->u_eof && c->uin_len < sizeof c->uin;
    case PROXY_CONN_HEAD:
      return c->upstream_reusable; /* to notice it closing while idle */
    case PROXY_CONN_HTTP:
      return !c->u_eof && c->uin_len < sizeof c->uin
             && proxy_out_pending (&c->to_c) == 0 && !c->resp_done;
    case PROXY_CONN_TUNNEL:
      return !c->u2c.src_eof && proxy_out_pending (&c->to_c) == 0
             && c->u2c.in_pipe == 0;
    default:
      return false;
    }
}

/* Recompute what the loop watches on both descriptors.  */
static void
proxy_conn_events (struct proxy_conn *c)
{
  struct loop *loop = c->client->proxy->loop;
  short ce = 0, ue = 0;

  if (c->dead)
    return;
  if (proxy_conn_reads_client (c))
    ce |= POLLIN;
  if (proxy_out_pending (&c->to_c) > 0 || c->u2c.in_pipe > 0)
    ce |= POLLOUT;
  if (c->ufd >= 0)
    {
      if (proxy_conn_reads_upstream (c))
        ue |= POLLIN;
      if (proxy_out_pending (&c->to_u) > 0 || c->c2u.in_pipe > 0
          || c->state == PROXY_CONN_CONNECTING)
        ue |= POLLOUT;
      loop_set_events (loop, c->ufd, ue);
    }
  loop_set_events (loop, c->cfd, ce);
}

/* ---- Reading ---------------------------------------------------------- */

/* Read what fits from fd into buf; returns bytes, 0 at EOF, -1 EAGAIN,
 * -2 on an error.  */
static ssize_t
proxy_read (int fd, char *buf, size_t *len, size_t cap)
{
  ssize_t n;
  do
    n = recv (fd, buf + *len, cap - *len, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN ? -1 : -2;
  *len += (size_t) n;
  return n;
}

/* Drop the first n bytes of an input buffer.  */
static void
proxy_consume (char *buf, size_t *len, size_t n)
{
  memmove (buf, buf + n, *len - n);
  *len -= n;
}

/* ---- Tunnels (splice) ------------------------------------------------- */

/* Open a direction's pipe.  */
static int
proxy_dir_open (struct proxy_dir *d)
{
  if (pipe2 (d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return -1;
  return 0;
}

/* Close a direction's pipe.  */
static void
proxy_dir_close (struct proxy_dir *d)
{
  for (int i = 0; i < 2; i++)
    if (d->pipe[i] >= 0)
      {
        close (d->pipe[i]);
        d->pipe[i] = -1;
      }
}

/* Read the next bytes from src: into the pipe by splice(2), or, where the
 * kernel refuses to splice these descriptors, into pending (which is
 * empty here, so it stays bounded by one read).  Returns as recv does.  */
static ssize_t
proxy_dir_fill (struct proxy_dir *d, int src, struct proxy_out *pending)
{
  if (!d->copy)
    {
      ssize_t n = splice (src, NULL, d->pipe[1], NULL, PROXY_PIPE_CHUNK,
                          SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
      if (n >= 0)
        d->in_pipe += (size_t) n;
      if (n >= 0 || (errno != EINVAL && errno != ENOSYS))
        return n;
      d->copy = true;
    }
  char chunk[PROXY_BUF_CAP];
  ssize_t n = recv (src, chunk, sizeof chunk, 0);
  if (n > 0)
    proxy_out_add (pending, chunk, (size_t) n);
  return n;
}

/* Move bytes src -> pipe -> dst for a while; pending holds bytes read
 * before the tunnel began, written first.  Returns -1 when the connection
 * must close.  */
static int
proxy_dir_pump (struct proxy_dir *d, int src, int dst,
                struct proxy_out *pending, uint64_t *count, bool *moved)
{
  for (int round = 0; round < PROXY_PUMP_ROUNDS; round++)
    {
      if (proxy_out_pending (pending) > 0)
        {
          ssize_t n = proxy_out_flush (pending, dst);
          if (n < 0)
            return -1;
          *count += (uint64_t) n;
          *moved |= n > 0;
          if (proxy_out_pending (pending) > 0)
            return 0;
        }
      if (d->in_pipe > 0)
        {
          ssize_t n = splice (d->pipe[0], NULL, dst, NULL, d->in_pipe,
                              SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
          if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
          if (n < 0)
            return -1;
          d->in_pipe -= (size_t) n;
          *count += (uint64_t) n;
          *moved = true;
          continue;
        }
      if (d->src_eof)
        {
          if (!d->shut)
            {
              /* Pass the half-close on, so the other side sees the end. */
              shutdown (dst, SHUT_WR);
              d->shut = true;
            }
          return 0;
        }
      ssize_t n = proxy_dir_fill (d, src, pending);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
      if (n < 0)
        return -1;
      if (n == 0)
        d->src_eof = true;
      *moved |= n > 0;
    }
  return 0;
}

/* Relay both ways; close when both halves are done.  */
static void
proxy_conn_tunnel_pump (struct proxy_conn *c)
{
  struct proxy_client *cl = c->client;
  bool moved = false;
  if (proxy_dir_pump (&c->c2u, c->cfd, c->ufd, &c->to_u, &cl->counts.bytes_out,
                      &moved)
          < 0
      || proxy_dir_pump (&c->u2c, c->ufd, c->cfd, &c->to_c,
                         &cl->counts.bytes_in, &moved)
             < 0)
    {
      proxy_conn_free (c);
      return;
    }
  if (c->c2u.shut && c->u2c.shut)
    {
      proxy_conn_free (c);
      return;
    }
  if (moved)
    proxy_conn_deadline (c, PROXY_IDLE_MS);
  proxy_conn_events (c);
}

/* Enter the tunnel: bytes already read are written first.  */
static void
proxy_conn_tunnel_begin (struct proxy_conn *c)
{
  if (proxy_dir_open (&c->c2u) < 0 || proxy_dir_open (&c->u2c) < 0)
    {
      proxy_conn_free (c);
      return;
    }
  proxy_out_add (&c->to_u, c->cin, c->cin_len);
  c->cin_len = 0;
  proxy_out_add (&c->to_c, c->uin, c->uin_len);
  c->uin_len = 0;
  c->state = PROXY_CONN_TUNNEL;
  proxy_conn_deadline (c, PROXY_IDLE_MS);
  proxy_conn_tunnel_pump (c);
}

/* ---- Plain HTTP forwarding -------------------------------------------- */

/* Forget the request kept from the last head.  */
static void
proxy_request_clear (struct proxy_request *r)
{
  free (r->host);
  free (r->method);
  buf_free (&r->forward);
  *r = (struct proxy_request){ 0 };
}

/* Move body bytes from an input buffer to an output, as far as the framing
 * says they belong to this message.  Returns -1 when the framing broke.  */
static int
proxy_body_move (struct httpreq_body *b, char *in, size_t *in_len,
                 struct proxy_out *out, uint64_t *count, bool *done)
{
  while (!*done && *in_len > 0)
    {
      size_t used = 0;
      enum httpreq_step st = httpreq_body_feed (b, in, *in_len, &used);
      if (st == HTTPREQ_ERROR)
        return -1;
      proxy_out_add (out, in, used);
      *count += used;
      proxy_consume (in, in_len, used);
      if (st == HTTPREQ_DONE)
        *done = true;
      if (used == 0 && st == HTTPREQ_MORE)
        break;
    }
  return 0;
}

/* Move request body bytes from cin to the network.  */
static int
proxy_conn_http_request_body (struct proxy_conn *c)
{
  return proxy_body_move (&c->req_body, c->cin, &c->cin_len, &c->to_u,
                          &c->client->counts.bytes_out, &c->req_done);
}

/* Feed the response head from the network; once whole, forward it and
 * decide how its body is framed.  Returns -1 when the connection was
 * closed.  */
static int
proxy_conn_http_response_head (struct proxy_conn *c)
{
  size_t used = 0;
  enum httpreq_step st
      = httpreq_parser_feed (c->respp, c->uin, c->uin_len, &used);
  if (st == HTTPREQ_ERROR)
    {
      proxy_conn_bad_gateway (c, "upstream",
                              "the server's answer was not HTTP/1.1");
      return -1;
    }
  buf_append (&c->resp_head, c->uin, used);
  proxy_consume (c->uin, &c->uin_len, used);
  if (st == HTTPREQ_MORE)
    return 0;
  const struct httpreq_head *h = httpreq_parser_head (c->respp);
  uint64_t length = 0;
  enum httpreq_body_kind kind
      = httpreq_response_body (h, c->req.method, &length);
  bool interim = h->status >= 100 && h->status < 200 && h->status != 101;
  if (h->status == 101 && !c->req.upgrade)
    {
      proxy_conn_bad_gateway (c, "upstream",
                              "the server switched protocols unasked");
      return -1;
    }
  proxy_out_add (&c->to_c, c->resp_head.data, c->resp_head.len);
  c->client->counts.bytes_in += c->resp_head.len;
  c->resp_head.len = 0;
  if (interim)
    {
      /* 100 Continue and the like: the real answer follows.  */
      httpreq_parser_reset (c->respp);
      return 0;
    }
  c->resp_head_done = true;
  if (kind == HTTPREQ_BODY_TUNNEL)
    {
      c->upgraded = true;
      c->resp_done = true;
      return 0;
    }
  c->resp_close = !httpreq_head_keep_alive (h) || kind == HTTPREQ_BODY_CLOSE;
  httpreq_body_init (&c->resp_body, HTTPREQ_RESPONSE, kind, length);
  c->resp_done = kind == HTTPREQ_BODY_NONE;
  return 0;
}

/* Move response body bytes from uin to the command.  Returns -1 when the
 * connection was closed.  */
static int
proxy_conn_http_response_body (struct proxy_conn *c)
{
  if (proxy_body_move (&c->resp_body, c->uin, &c->uin_len, &c->to_c,
                       &c->client->counts.bytes_in, &c->resp_done)
      < 0)
    {
      /* Part of the answer is on its way: only closing tells the command
       * it is cut.  */
      proxy_conn_refused (c, "upstream");
      proxy_conn_free (c);
      return -1;
    }
  if (!c->resp_done && c->u_eof)
    {
      if (c->resp_body.kind != HTTPREQ_BODY_CLOSE)
        {
          proxy_conn_free (c);
          return -1;
        }
      c->resp_done = true;
      c->resp_close = true;
    }
  return 0;
}

/* One request and its response are through: the next head, or the end. */
static void
proxy_conn_http_finish (struct proxy_conn *c)
{
  c->upstream_reusable = !c->resp_close && !c->u_eof;
  httpreq_parser_reset (c->reqp);
  httpreq_parser_reset (c->respp);
  if (c->resp_close || c->req.client_close)
    {
      /* The command's side ends once the answer is written.  */
      c->state = PROXY_CONN_CLOSING;
      c->c_eof = true;
      if (c->ufd >= 0)
        {
          loop_remove_fd (c->client->proxy->loop, c->ufd);
          close (c->ufd);
          c->ufd = -1;
        }
      proxy_conn_deadline (c, PROXY_LINGER_MS + 5000u);
      return;
    }
  if (!c->upstream_reusable && c->ufd >= 0)
    {
      loop_remove_fd (c->client->proxy->loop, c->ufd);
      close (c->ufd);
      c->ufd = -1;
    }
  c->state = PROXY_CONN_HEAD;
  proxy_conn_deadline (c, PROXY_HEAD_MS);
}

/* Drive the forwarding of one request.  */
static void
proxy_conn_http_step (struct proxy_conn *c)
{
  if (proxy_conn_http_request_body (c) < 0)
    {
      proxy_conn_refuse (c, 400, "Bad Request", "malformed", "");
      return;
    }
  if (!c->resp_head_done && c->uin_len > 0
      && proxy_conn_http_response_head (c) < 0)
    return;
  if (c->upgraded)
    {
      proxy_conn_tunnel_begin (c);
      return;
    }
  if (c->resp_head_done && proxy_conn_http_response_body (c) < 0)
    return;
  if (!c->resp_head_done && c->u_eof)
    {
      proxy_conn_bad_gateway (c, "upstream",
                              "the server closed before answering");
      return;
    }
  if (c->resp_done && !c->req_done)
    {
      /* The server answered before the body was through (an error, or no
       * 100 Continue wanted): the rest cannot be framed, so the command's
       * connection ends with this answer.  */
      c->req_done = true;
      c->resp_close = true;
    }
  if (c->c_eof && !c->req_done)
    {
      proxy_conn_free (c);
      return;
    }
  if (c->req_done && c->resp_done && proxy_out_pending (&c->to_c) == 0)
    {
      proxy_conn_http_finish (c);
      if (c->state == PROXY_CONN_HEAD && (c->cin_len > 0 || c->c_eof))
        {
          proxy_conn_process (c);
          return;
        }
      if (c->state == PROXY_CONN_CLOSING)
        {
          proxy_conn_closing (c, 0);
          return;
        }
    }
  proxy_conn_events (c);
}

/* The upstream connection is ready: send the request head on.  */
static void
proxy_conn_http_begin (struct proxy_conn *c)
{
  proxy_out_add (&c->to_u, c->req.forward.data, c->req.forward.len);
  c->client->counts.bytes_out += c->req.forward.len;
  c->state = PROXY_CONN_HTTP;
  httpreq_body_init (&c->req_body, HTTPREQ_REQUEST, c->req.body_kind,
                     c->req.body_length);
  c->req_done = c->req.body_kind == HTTPREQ_BODY_NONE;
  c->resp_head_done = c->resp_done = c->resp_close = c->upgraded = false;
  c->resp_head.len = 0;
  proxy_conn_deadline (c, PROXY_IDLE_MS);
  proxy_conn_http_step (c);
}

/* ---- Connecting ------------------------------------------------------- */

/* The connection to the origin (or through the upstream) stands.  */
static void
proxy_conn_established (struct proxy_conn *c)
{
  c->client->counts.allowed++;
  free (c->authority);
  c->authority = xasprintf ("%s:%u", c->req.host, c->req.port);
  if (c->req.is_connect)
    {
      static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      proxy_out_add (&c->to_c, ok, sizeof ok - 1);
      proxy_conn_tunnel_begin (c);
      return;
    }
  proxy_conn_http_begin (c);
}

/* Send the upstream proxy a CONNECT to the checked address.  */
static void
proxy_conn_upstream_connect (struct proxy_conn *c)
{
  /* The checked address, never the name: the upstream resolving the name
   * again could land somewhere the check did not see.  */
  cleanup_free char *target = proxy_addr_authority (&c->addrs.a[0]);
  struct buf head = BUF_INIT;
  buf_printf (&head, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target);
  if (c->upstream.credential != NULL)
    buf_printf (&head, "Proxy-Authorization: %s\r\n", c->upstream.credential);
  buf_puts (&head, "\r\n");
  proxy_out_add (&c->to_u, head.data, head.len);
  buf_free (&head);
  c->state = PROXY_CONN_UPSTREAM;
  proxy_conn_deadline (c, PROXY_CONNECT_MS);
  proxy_conn_events (c);
}

/* Read the upstream proxy's answer to our CONNECT.  */
static void
proxy_conn_upstream_answer (struct proxy_conn *c)
{
  size_t used = 0;
  enum httpreq_step st
      = httpreq_parser_feed (c->respp, c->uin, c->uin_len, &used);
  if (st == HTTPREQ_MORE)
    proxy_consume (c->uin, &c->uin_len, used);
  if (st == HTTPREQ_MORE && !c->u_eof)
    return;
  if (st != HTTPREQ_DONE)
    {
      proxy_conn_bad_gateway (c, "upstream",
                              "the upstream proxy did not answer CONNECT");
      return;
    }
  proxy_consume (c->uin, &c->uin_len, used);
  int status = httpreq_parser_head (c->respp)->status;
  httpreq_parser_reset (c->respp);
  if (status < 200 || status > 299)
    {
      cleanup_free char *why
          = xasprintf ("the upstream proxy answered CONNECT with %d", status);
      proxy_conn_bad_gateway (c, "upstream", why);
      return;
    }
  proxy_conn_established (c);
}

/* The non-blocking connect finished (or failed): go on accordingly.  */
static void
proxy_conn_connect_done (struct proxy_conn *c)
{
  int soerr = 0;
  socklen_t len = sizeof soerr;
  if (getsockopt (c->ufd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
    soerr = errno;
  if (soerr != 0)
    {
      proxy_conn_connect_next (c);
      return;
    }
  if (c->via_upstream)
    proxy_conn_upstream_connect (c);
  else
    proxy_conn_established (c);
}

static void proxy_conn_upstream_fd (struct loop *loop, int fd, short revents,
                                    void *data);

/* Start a non-blocking connect to the next address; a 502 when none is
 * left.  */
static void
proxy_conn_connect_next (struct proxy_conn *c)
{
  struct proxy_addrs *list = c->via_upstream ? &c->up_addrs : &c->addrs;
  struct loop *loop = c->client->proxy->loop;

  if (c->ufd >= 0)
    {
      loop_remove_fd (loop, c->ufd);
      close (c->ufd);
      c->ufd = -1;
    }
  while (list->next < list->n)
    {
      size_t i = list->next++;
      int fd = socket (list->a[i].ss_family,
                       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        continue;
      if (connect (fd, (struct sockaddr *) &list->a[i], list->len[i]) < 0
          && errno != EINPROGRESS)
        {
          close (fd);
          continue;
        }
      int one = 1;
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (loop_add_fd (loop, fd, POLLOUT, proxy_conn_upstream_fd, c, NULL) < 0)
        {
          close (fd);
          continue;
        }
      c->ufd = fd;
      c->u_eof = false;
      c->uin_len = 0;
      c->state = PROXY_CONN_CONNECTING;
      proxy_conn_deadline (c, PROXY_CONNECT_MS);
      proxy_conn_events (c);
      return;
    }
  proxy_conn_bad_gateway (c, "unreachable",
                          c->via_upstream
                              ? "the upstream proxy could not be reached"
                              : "no address of it could be reached");
}

/* ---- Resolving -------------------------------------------------------- */

/* Hand the resolver threads a lookup of host:port for this connection,
 * taking one of its client's turns.  */
static void
proxy_conn_submit (struct proxy_conn *c, const char *host, unsigned port)
{
  struct proxy *p = c->client->proxy;
  struct proxy_resolver *r = p->resolver;
  struct proxy_job *j = xcalloc (1, sizeof *j);
  j->conn = c;
  j->client = c->client;
  j->host = xstrdup (host);
  snprintf (j->port, sizeof j->port, "%u", port);
  c->job = j;
  c->client->n_lookups++;
  j->lnext = p->jobs;
  if (p->jobs != NULL)
    p->jobs->lprev = j;
  p->jobs = j;
  pthread_mutex_lock (&r->mu);
  if (r->tail != NULL)
    r->tail->next = j;
  else
    r->head = j;
  r->tail = j;
  pthread_cond_signal (&r->cv);
  pthread_mutex_unlock (&r->mu);
}

/* Look host:port up for this connection: now, or when one of its client's
 * turns comes free (the deadline runs from here either way).  */
static void
proxy_conn_resolve (struct proxy_conn *c, const char *host, unsigned port)
{
  c->state = PROXY_CONN_RESOLVING;
  proxy_conn_deadline (c, PROXY_RESOLVE_MS);
  if (c->client->n_lookups >= PROXY_CLIENT_MAX_LOOKUPS)
    {
      free (c->wait_host);
      c->wait_host = xstrdup (host);
      c->wait_port = port;
      c->lookup_waiting = true;
    }
  else
    proxy_conn_submit (c, host, port);
  proxy_conn_events (c);
}

/* Give the client's free lookup turns to its connections that wait,
 * oldest first (the list has the newest first).  */
static void
proxy_client_next_lookups (struct proxy_client *cl)
{
  while (cl->n_lookups < PROXY_CLIENT_MAX_LOOKUPS)
    {
      struct proxy_conn *oldest = NULL;
      for (struct proxy_conn *c = cl->conns; c != NULL; c = c->next)
        if (c->lookup_waiting)
          oldest = c;
      if (oldest == NULL)
        return;
      cleanup_free char *host = oldest->wait_host;
      oldest->wait_host = NULL;
      oldest->lookup_waiting = false;
      proxy_conn_submit (oldest, host, oldest->wait_port);
    }
}

/* Resolve the upstream proxy's own name (crucible's setting: not checked
 * against the command's policy), unless it is a literal.  */
static void
proxy_conn_resolve_upstream (struct proxy_conn *c)
{
  struct sockaddr_storage ss;
  socklen_t len = 0;
  c->via_upstream = true;
  if (netpolicy_host_literal (c->upstream.host, c->upstream.port, &ss, &len))
    {
      proxy_addrs_clear (&c->up_addrs);
      proxy_addrs_add (&c->up_addrs, (struct sockaddr *) &ss, len);
      proxy_conn_connect_next (c);
      return;
    }
  c->resolving_upstream = true;
  proxy_conn_resolve (c, c->upstream.host, c->upstream.port);
}

/* Keep the addresses that pass; refuse with the first class when none
 * does.  */
static void
proxy_conn_check_addrs (struct proxy_conn *c, const struct addrinfo *res)
{
  struct proxy_client *cl = c->client;
  enum netpolicy_addr_class first_refusal = NETPOLICY_ADDR_ALLOWED;

  proxy_addrs_clear (&c->addrs);
  netpolicy_local_refresh (cl->proxy->local, NULL);
  for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next)
    {
      enum netpolicy_addr_class k = netpolicy_addr_classify (
          ai->ai_addr, cl->allow_private, cl->proxy->local);
      if (k == NETPOLICY_ADDR_ALLOWED)
        proxy_addrs_add (&c->addrs, ai->ai_addr, ai->ai_addrlen);
      else if (first_refusal == NETPOLICY_ADDR_ALLOWED)
        first_refusal = k;
    }
  if (c->addrs.n > 0)
    {
      c->addrs.next = 0;
      proxy_conn_connect_target (c);
      return;
    }
  const char *word = netpolicy_addr_class_name (first_refusal);
  cleanup_free char *body = netpolicy_refusal_text (c->req.host, word);
  proxy_conn_refuse (c, 403, "Forbidden", word, body);
}

/* Where the checked addresses are reached from: directly, through the
 * upstream proxy, or not at all (an upstream this proxy cannot speak).  */
static void
proxy_conn_connect_target (struct proxy_conn *c)
{
  if (c->ufd >= 0 && c->upstream_reusable && c->authority != NULL
      && !c->req.is_connect)
    {
      cleanup_free char *a = xasprintf ("%s:%u", c->req.host, c->req.port);
      if (strcmp (a, c->authority) == 0)
        {
          proxy_conn_established (c);
          return;
        }
    }
  switch (c->upstream.scheme)
    {
    case NETPOLICY_UPSTREAM_HTTP:
      proxy_conn_resolve_upstream (c);
      return;
    case NETPOLICY_UPSTREAM_HTTPS:
    case NETPOLICY_UPSTREAM_SOCKS_REFUSED:
    case NETPOLICY_UPSTREAM_INVALID:
      /* Never around it: the upstream is how this host's network is
       * meant to be left.  */
      proxy_conn_bad_gateway (
          c, "upstream",
          "crucible's upstream proxy is of a kind it cannot pass a "
          "connection through (https, socks4a, socks5h or unreadable)");
      return;
    default:
      c->via_upstream = false;
      proxy_conn_connect_next (c);
      return;
    }
}

/* The resolver answered for this connection.  */
static void
proxy_conn_resolved (struct proxy_conn *c, struct proxy_job *j)
{
  c->job = NULL;
  if (j->gai_rc != 0)
    {
      cleanup_free char *body = xasprintf (
          PROXY_TEXT_502, c->req.host, c->req.port,
          c->resolving_upstream ? "the upstream proxy's name did not resolve"
                                : "the name did not resolve");
      proxy_conn_refuse (c, 502, "Bad Gateway", "unresolved", body);
      return;
    }
  if (c->resolving_upstream)
    {
      c->resolving_upstream = false;
      proxy_addrs_clear (&c->up_addrs);
      for (const struct addrinfo *ai = j->res; ai != NULL; ai = ai->ai_next)
        proxy_addrs_add (&c->up_addrs, ai->ai_addr, ai->ai_addrlen);
      proxy_conn_connect_next (c);
      return;
    }
  proxy_conn_check_addrs (c, j->res);
}

/* Read the resolver's answers (job pointers) and hand each to its
 * connection, if one still waits.  */
static void
proxy_resolver_fd (struct loop *loop, int fd, short revents, void *data)
{
  uintptr_t v;
  (void) loop;
  (void) revents;
  struct proxy *p = data;
  while (recv (fd, &v, sizeof v, MSG_DONTWAIT) == (ssize_t) sizeof v)
    {
      struct proxy_job *j = (struct proxy_job *) v;
      struct proxy_client *cl = j->client;
      if (j->lprev != NULL)
        j->lprev->lnext = j->lnext;
      else
        p->jobs = j->lnext;
      if (j->lnext != NULL)
        j->lnext->lprev = j->lprev;
      if (cl != NULL)
        cl->n_lookups--;
      if (j->conn != NULL)
        proxy_conn_resolved (j->conn, j);
      proxy_job_free (j);
      if (cl != NULL)
        proxy_client_next_lookups (cl);
    }
}

/* ---- Requests --------------------------------------------------------- */

/* Choose how this request leaves, then resolve its name (or take its
 * literal address).  */
static void
proxy_conn_lookup (struct proxy_conn *c)
{
  struct sockaddr_storage ss;
  socklen_t len = 0;

  netpolicy_upstream_clear (&c->upstream);
  if (netpolicy_upstream_from_env (c->client->proxy->env, c->req.is_connect,
                                   c->req.host, &c->upstream)
      < 0)
    c->upstream.scheme = NETPOLICY_UPSTREAM_INVALID; /* fail shut */
  c->resolving_upstream = false;
  c->via_upstream = false;
  if (netpolicy_host_literal (c->req.host, c->req.port, &ss, &len))
    {
      struct addrinfo ai = { .ai_family = ss.ss_family,
                             .ai_socktype = SOCK_STREAM,
                             .ai_addrlen = len,
                             .ai_addr = (struct sockaddr *) &ss };
      proxy_conn_check_addrs (c, &ai);
      return;
    }
  proxy_conn_resolve (c, c->req.host, c->req.port);
}

/* Whether the person allowed this name for this command (phase 2).  */
static bool
proxy_client_allowed_extra (const struct proxy_client *cl, const char *name)
{
  for (size_t i = 0; i < cl->n_allowed_extra; i++)
    if (strcmp (cl->allowed_extra[i], name) == 0)
      return true;
  return false;
}

/* The 403 for a name that is not allowed.  */
static void
proxy_conn_refuse_name (struct proxy_conn *c)
{
  cleanup_free char *body
      = netpolicy_refusal_text (c->req.host, NETPOLICY_REFUSED_NAME);
  proxy_conn_refuse (c, 403, "Forbidden", NETPOLICY_REFUSED_NAME, body);
}

/* Check the request's name against the command's list.  */
static void
proxy_conn_check_name (struct proxy_conn *c)
{
  struct proxy_client *cl = c->client;
  if (netpolicy_name_allowed (cl->names, c->req.host)
      || proxy_client_allowed_extra (cl, c->req.host))
    {
      proxy_conn_lookup (c);
      return;
    }
  if (cl->proxy->asker != NULL)
    {
      proxy_ask (c);
      return;
    }
  proxy_conn_refuse_name (c);
}

/* Keep what the rest of the exchange needs from a parsed request head.
 * Returns -1 after answering when the name cannot be read.  */
static int
proxy_conn_keep_request (struct proxy_conn *c, const struct httpreq_head *h)
{
  struct cr_error *err = NULL;
  proxy_request_clear (&c->req);
  if (netpolicy_name_normalise (h->authority.host, &c->req.host, &err) < 0)
    {
      /* Not a name any list can hold: refused as a name, shown safely. */
      cr_error_free (err);
      c->req.host = NULL;
      cleanup_free char *body
          = netpolicy_refusal_text (h->authority.host, NETPOLICY_REFUSED_NAME);
      proxy_conn_refuse (c, 403, "Forbidden", NETPOLICY_REFUSED_NAME, body);
      return -1;
    }
  c->req.port = h->authority.port;
  c->req.method = xstrdup (h->method);
  c->req.is_connect = h->form == HTTPREQ_FORM_AUTHORITY;
  c->req.upgrade = httpreq_head_is_upgrade (h);
  c->req.client_close = !httpreq_head_keep_alive (h);
  if (!c->req.is_connect)
    {
      /* Keep the upstream connection open between requests; the
       * command's own keep-alive is decided above.  */
      httpreq_write_forward (h, true, &c->req.forward);
      c->req.body_kind = httpreq_request_body (h, &c->req.body_length);
    }
  return 0;
}

/* Answer a request head the parser refused.  */
static void
proxy_conn_malformed (struct proxy_conn *c)
{
  const struct httpreq_error *e = httpreq_parser_error (c->reqp);
  int status = e != NULL && e->status ? e->status : 400;
  cleanup_free char *body = xasprintf (
      PROXY_TEXT_400, e != NULL && e->reason ? e->reason : "malformed");
  proxy_conn_refuse (c, status,
                     status == 501   ? "Not Implemented"
                     : status == 505 ? "HTTP Version Not Supported"
                     : status == 414 ? "URI Too Long"
                     : status == 431 ? "Request Header Fields Too Large"
                                     : "Bad Request",
                     "malformed", body);
}

/* Feed what the command sent to the head parser; once a head is whole,
 * check and serve it.  */
static void
proxy_conn_request (struct proxy_conn *c)
{
  size_t used = 0;
  enum httpreq_step st
      = httpreq_parser_feed (c->reqp, c->cin, c->cin_len, &used);
  if (st == HTTPREQ_ERROR)
    {
      proxy_conn_malformed (c);
      return;
    }
  proxy_consume (c->cin, &c->cin_len, used);
  c->head_started = true;
  if (st == HTTPREQ_MORE)
    return;
  c->head_started = false;
  const struct httpreq_head *h = httpreq_parser_head (c->reqp);
  /* Every request on a kept connection is checked again, credential
   * first, so a command cannot ride another's authorised connection.  */
  if (!proxy_client_auth_ok (c->client, h->proxy_authorization))
    {
      proxy_conn_challenge (c);
      return;
    }
  if (proxy_conn_keep_request (c, h) < 0)
    return;
  proxy_conn_check_name (c);
}

/* Advance the connection with what it has read.  */
static void
proxy_conn_process (struct proxy_conn *c)
{
  if (c->dead)
    return;
  switch (c->state)
    {
    case PROXY_CONN_HEAD:
      if (c->cin_len > 0)
        {
          proxy_conn_request (c);
          /* The request set off whatever comes next (and that set the
           * events), or it needs more of the head.  */
          if (c->dead || c->state != PROXY_CONN_HEAD)
            return;
        }
      else if (c->c_eof)
        {
          /* The command ended between requests (or with half a head). */
          proxy_conn_free (c);
          return;
        }
      break;
    case PROXY_CONN_HTTP:
      proxy_conn_http_step (c);
      return;
    case PROXY_CONN_UPSTREAM:
      proxy_conn_upstream_answer (c);
      return;
    default:
      break;
    }
  if (c->state == PROXY_CONN_HEAD && c->c_eof)
    {
      proxy_conn_free (c);
      return;
    }
  proxy_conn_events (c);
}

/* ---- Descriptor callbacks --------------------------------------------- */

/* Finish a refused connection: write the answer, then half-close and drain
 * what the command still sends, so the answer is not lost to a reset. */
static void
proxy_conn_closing (struct proxy_conn *c, short revents)
{
  if (proxy_out_flush (&c->to_c, c->cfd) < 0)
    {
      proxy_conn_free (c);
      return;
    }
  if (proxy_out_pending (&c->to_c) > 0)
    {
      proxy_conn_events (c);
      return;
    }
  if (c->c_eof)
    {
      proxy_conn_free (c);
      return;
    }
  shutdown (c->cfd, SHUT_WR);
  if (revents & POLLIN)
    {
      char sink[4096];
      ssize_t n = recv (c->cfd, sink, sizeof sink, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        {
          proxy_conn_free (c);
          return;
        }
    }
  if (c->deadline > clock_now_ms () + PROXY_LINGER_MS)
    proxy_conn_deadline (c, PROXY_LINGER_MS);
  proxy_conn_events (c);
}

/* The command's socket is ready.  */
static void
proxy_conn_client_fd (struct loop *loop, int fd, short revents, void *data)
{
  struct proxy_conn *c = data;
  (void) loop;
  (void) fd;

  if (c->state == PROXY_CONN_CLOSING)
    {
      proxy_conn_closing (c, revents);
      return;
    }
  if (c->state == PROXY_CONN_TUNNEL)
    {
      proxy_conn_tunnel_pump (c);
      return;
    }
  if ((revents & POLLOUT) && proxy_out_flush (&c->to_c, c->cfd) < 0)
    {
      proxy_conn_free (c);
      return;
    }
  if ((revents & (POLLIN | POLLHUP | POLLERR)) && proxy_conn_reads_client (c))
    {
      ssize_t n = proxy_read (c->cfd, c->cin, &c->cin_len, sizeof c->cin);
      if (n == -2)
        {
          proxy_conn_free (c);
          return;
        }
      if (n == 0)
        c->c_eof = true;
      if (n > 0 && c->state == PROXY_CONN_HTTP)
        proxy_conn_deadline (c, PROXY_IDLE_MS);
    }
  proxy_conn_process (c);
}

/* The network's socket is ready.  */
static void
proxy_conn_upstream_fd (struct loop *loop, int fd, short revents, void *data)
{
  struct proxy_conn *c = data;
  (void) fd;

  if (c->state == PROXY_CONN_CONNECTING)
    {
      proxy_conn_connect_done (c);
      return;
    }
  if (c->state == PROXY_CONN_TUNNEL)
    {
      proxy_conn_tunnel_pump (c);
      return;
    }
  if (c->state == PROXY_CONN_HEAD)
    {
      /* A kept connection to the origin spoke or closed between requests:
       * it cannot carry the next one.  */
      loop_remove_fd (loop, c->ufd);
      close (c->ufd);
      c->ufd = -1;
      c->upstream_reusable = false;
      proxy_conn_events (c);
      return;
    }
  if (revents & POLLOUT)
    {
      ssize_t n = proxy_out_flush (&c->to_u, c->ufd);
      if (n < 0)
        {
          proxy_conn_bad_gateway (c, "upstream", "the connection broke");
          return;
        }
    }
  if ((revents & (POLLIN | POLLHUP | POLLERR)) && proxy_conn_reads_upstream (c))
    {
      ssize_t n = proxy_read (c->ufd, c->uin, &c->uin_len, sizeof c->uin);
      if (n == -2 || n == 0)
        c->u_eof = true;
      if (n > 0 && c->state == PROXY_CONN_HTTP)
        proxy_conn_deadline (c, PROXY_IDLE_MS);
    }
  proxy_conn_process (c);
}

/* A deadline passed: the head took too long, the name did not resolve in
 * time, a connect hung, or nothing moved for too long.  */
static void
proxy_conn_timer_fire (struct loop *loop, void *data)
{
  struct proxy_conn *c = data;
  (void) loop;
  c->timer = 0;
  if (clock_now_ms () < c->deadline)
    {
      proxy_conn_timer_arm (c);
      return;
    }
  switch (c->state)
    {
    case PROXY_CONN_RESOLVING:
      if (c->job != NULL)
        c->job->conn = NULL;
      c->job = NULL;
      c->lookup_waiting = false;
      proxy_conn_bad_gateway (c, "unresolved",
                              "the name did not resolve in "
                              "time");
      return;
    case PROXY_CONN_CONNECTING:
      proxy_conn_connect_next (c);
      return;
    case PROXY_CONN_UPSTREAM:
      proxy_conn_bad_gateway (c, "upstream",
                              "the upstream proxy did not answer CONNECT");
      return;
    case PROXY_CONN_HEAD:
      /* A head that never ended (a slowloris) is a refusal; an idle kept
       * connection just ends.  */
      if (c->head_started || c->cin_len > 0)
        proxy_conn_refused (c, "malformed");
      proxy_conn_free (c);
      return;
    default:
      proxy_conn_free (c);
      return;
    }
}

/* ---- Connections ------------------------------------------------------ */

/* Free the memory of connections closed since the last reap.  */
static void
proxy_reap (struct proxy *p)
{
  while (p->dead != NULL)
    {
      struct proxy_conn *c = p->dead;
      p->dead = c->next;
      free (c);
    }
}

/* The reaping timer.  */
static void
proxy_reap_timer (struct loop *loop, void *data)
{
  struct proxy *p = data;
  (void) loop;
  p->reap_timer = 0;
  proxy_reap (p);
}

/* Close a connection and everything it holds, at once.  Its memory is
 * freed from a timer, after the callback chain that closed it has
 * returned, so no caller up the chain touches freed memory; they test
 * c->dead instead.  */
static void
proxy_conn_free (struct proxy_conn *c)
{
  struct proxy_client *cl = c->client;
  struct proxy *p = cl->proxy;
  struct loop *loop = p->loop;

  if (c->dead)
    return;
  c->dead = true;
  if (c->job != NULL)
    c->job->conn = NULL;
  c->job = NULL;
  c->lookup_waiting = false;
  free (c->wait_host);
  c->wait_host = NULL;
  loop_cancel_timer (loop, c->timer);
  c->timer = 0;
  loop_remove_fd (loop, c->cfd);
  close (c->cfd);
  if (c->ufd >= 0)
    {
      loop_remove_fd (loop, c->ufd);
      close (c->ufd);
      c->ufd = -1;
    }
  proxy_dir_close (&c->c2u);
  proxy_dir_close (&c->u2c);
  buf_free (&c->to_c.b);
  buf_free (&c->to_u.b);
  buf_free (&c->resp_head);
  proxy_request_clear (&c->req);
  httpreq_parser_free (c->reqp);
  httpreq_parser_free (c->respp);
  netpolicy_upstream_clear (&c->upstream);
  proxy_addrs_clear (&c->addrs);
  proxy_addrs_clear (&c->up_addrs);
  free (c->authority);
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    cl->conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  cl->n_conns--;
  p->n_conns--;
  proxy_question_drop_conn (c);
  c->prev = NULL;
  c->next = p->dead;
  p->dead = c;
  if (p->reap_timer == 0)
    p->reap_timer = loop_add_timer (loop, 0, proxy_reap_timer, p);
}

/* Refuse a connection over the command's limit at once: one try at the
 * 503 (a fresh socket's buffer takes it whole), then close.  One fact per
 * run of refusals, so a flood of them does not flood the journal.  */
static void
proxy_client_refuse_over_limit (struct proxy_client *cl, int fd)
{
  cleanup_free char *body = xasprintf (PROXY_TEXT_503, cl->n_conns);
  struct buf head = BUF_INIT;
  buf_printf (&head,
              "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; "
              "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close"
              "\r\n\r\n%s",
              strlen (body), body);
  (void) send (fd, head.data, head.len, MSG_NOSIGNAL | MSG_DONTWAIT);
  buf_free (&head);
  cl->counts.refused++;
  if (!cl->over_limit && cl->on_refusal != NULL)
    cl->on_refusal (cl->on_refusal_data, "limit");
  cl->over_limit = true;
}

int
proxy_client_take (struct proxy_client *cl, int fd, struct cr_error **err)
{
  cleanup_close int owned = fd;
  if (cl->n_conns >= cl->proxy->client_conns
      || cl->proxy->n_conns >= cl->proxy->max_conns)
    {
      proxy_client_refuse_over_limit (cl, fd);
      return 0;
    }
  cl->over_limit = false;
  if (proxy_fd_prepare (fd) < 0)
    return cr_error_set (err, errno, "preparing a proxy connection");
  struct proxy_conn *c = xcalloc (1, sizeof *c);
  c->client = cl;
  c->cfd = fd;
  c->ufd = -1;
  c->c2u.pipe[0] = c->c2u.pipe[1] = c->u2c.pipe[0] = c->u2c.pipe[1] = -1;
  c->reqp = httpreq_parser_new (HTTPREQ_REQUEST);
  c->respp = httpreq_parser_new (HTTPREQ_RESPONSE);
  if (loop_add_fd (cl->proxy->loop, fd, POLLIN, proxy_conn_client_fd, c, err)
      < 0)
    {
      httpreq_parser_free (c->reqp);
      httpreq_parser_free (c->respp);
      free (c);
      return cr_error_prefix (err, "taking a proxy connection");
    }
  steal_fd (&owned);
  c->next = cl->conns;
  if (cl->conns != NULL)
    cl->conns->prev = c;
  cl->conns = c;
  cl->n_conns++;
  cl->proxy->n_conns++;
  c->state = PROXY_CONN_HEAD;
  proxy_conn_deadline (c, PROXY_HEAD_MS);
  return 0;
}

/* ---- Phase 2: asking about a name ------------------------------------- */

static void proxy_question_next (struct proxy *p);

/* Free a question (unlinked by the caller).  */
static void
proxy_question_free (struct proxy *p, struct proxy_question *q)
{
  loop_cancel_timer (p->loop, q->timer);
  free (q->name);
  free (q);
}

/* Whether a waiting connection belongs to question q.  */
static bool
proxy_conn_waits_on (const struct proxy_conn *c, const struct proxy_question *q)
{
  return c->state == PROXY_CONN_ASKING && c->question == q->id;
}

/* Give every connection waiting on q its answer, and forget q.  */
static void
proxy_question_settle (struct proxy *p, struct proxy_question *q,
                       enum proxy_answer a)
{
  struct proxy_client *cl = q->client;
  struct proxy_question **pp = &p->questions;
  bool was_first = p->questions == q;
  while (*pp != q)
    pp = &(*pp)->next;
  *pp = q->next;
  if (a != PROXY_ANSWER_REFUSE)
    {
      cl->allowed_extra = xrealloc (cl->allowed_extra, (cl->n_allowed_extra + 1)
                                                           * sizeof (char *));
      cl->allowed_extra[cl->n_allowed_extra++] = xstrdup (q->name);
    }
  /* One at a time from the head of the list: answering one may close
   * another, and an answered one waits no more.  */
  struct proxy_conn *c;
  do
    {
      for (c = cl->conns; c != NULL && !proxy_conn_waits_on (c, q); c = c->next)
        ;
      if (c != NULL)
        {
          c->question = 0;
          proxy_conn_answered (c, a);
        }
    }
  while (c != NULL);
  proxy_question_free (p, q);
  if (was_first)
    proxy_question_next (p);
}

/* After an answer: go on, or the 403.  */
static void
proxy_conn_answered (struct proxy_conn *c, enum proxy_answer a)
{
  c->state = PROXY_CONN_HEAD;
  if (a != PROXY_ANSWER_REFUSE)
    proxy_conn_lookup (c);
  else
    proxy_conn_refuse_name (c);
}

/* No answer in time: a refusal.  */
static void
proxy_question_timeout (struct loop *loop, void *data)
{
  struct proxy_question *q = data;
  struct proxy *p = q->client->proxy;
  (void) loop;
  q->timer = 0;
  proxy_question_settle (p, q, PROXY_ANSWER_REFUSE);
}

/* Ask the first question not yet asked, when none is outstanding.  Its
 * PROXY_ASK_WAIT_MS start now, for the question and the connections waiting
 * on it: the person's panel counts them from when it is shown, so a
 * question queued behind another must not run out while it is on screen. */
static void
proxy_question_next (struct proxy *p)
{
  struct proxy_question *q = p->questions;
  if (q == NULL || q->asked || p->asker == NULL)
    return;
  q->asked = true;
  q->timer
      = loop_add_timer (p->loop, PROXY_ASK_WAIT_MS, proxy_question_timeout, q);
  for (struct proxy_conn *c = q->client->conns; c != NULL; c = c->next)
    if (proxy_conn_waits_on (c, q))
      proxy_conn_deadline (c, PROXY_ASK_WAIT_MS + 5000u);
  /* The asker may answer at once, which frees q.  */
  p->asker (p->asker_data, q->id, q->client, q->name);
}

/* Hold the connection on a question about its name, joining one already
 * asked or queued for this client and name.  */
static void
proxy_ask (struct proxy_conn *c)
{
  struct proxy *p = c->client->proxy;
  struct proxy_question *q, **tail = &p->questions;
  uint64_t ahead = 0; /* questions before this one, each at most the wait */
  for (q = p->questions; q != NULL; q = q->next)
    {
      if (q->client == c->client && strcmp (q->name, c->req.host) == 0)
        break;
      tail = &q->next;
      ahead++;
    }
  if (q == NULL)
    {
      q = xcalloc (1, sizeof *q);
      q->id = ++p->next_question;
      q->client = c->client;
      q->name = xstrdup (c->req.host);
      *tail = q;
    }
  c->state = PROXY_CONN_ASKING;
  c->question = q->id;
  /* A backstop only: the question's own timer refuses it first, and
   * starts when it is asked (proxy_question_next).  */
  c->deadline = clock_now_ms () + (ahead + 1) * PROXY_ASK_WAIT_MS + 5000u;
  proxy_conn_timer_arm (c);
  proxy_conn_events (c);
  proxy_question_next (p);
}

/* A connection is going away (already off its client's list): a question
 * not yet asked that nobody else waits on goes too.  */
static void
proxy_question_drop_conn (struct proxy_conn *c)
{
  struct proxy *p = c->client->proxy;
  if (c->state != PROXY_CONN_ASKING || c->question == 0)
    return;
  for (struct proxy_conn *o = c->client->conns; o != NULL; o = o->next)
    if (o->state == PROXY_CONN_ASKING && o->question == c->question)
      return;
  for (struct proxy_question **pp = &p->questions; *pp != NULL;
       pp = &(*pp)->next)
    if ((*pp)->id == c->question && !(*pp)->asked)
      {
        struct proxy_question *q = *pp;
        *pp = q->next;
        proxy_question_free (p, q);
        return;
      }
}

void
proxy_set_asker (struct proxy *p, proxy_asker_fn fn, void *data)
{
  p->asker = fn;
  p->asker_data = data;
  if (fn == NULL)
    while (p->questions != NULL)
      proxy_question_settle (p, p->questions, PROXY_ANSWER_REFUSE);
  else
    proxy_question_next (p);
}

void
proxy_answer (struct proxy *p, uint64_t question, enum proxy_answer a)
{
  for (struct proxy_question *q = p->questions; q != NULL; q = q->next)
    if (q->id == question && q->asked)
      {
        proxy_question_settle (p, q, a);
        return;
      }
}

/* Forget the questions of a client that is going away.  */
static void
proxy_questions_drop_client (struct proxy *p, struct proxy_client *cl)
{
  struct proxy_question **pp = &p->questions;
  bool first_gone = p->questions != NULL && p->questions->client == cl;
  while (*pp != NULL)
    {
      struct proxy_question *q = *pp;
      if (q->client != cl)
        {
          pp = &q->next;
          continue;
        }
      *pp = q->next;
      proxy_question_free (p, q);
    }
  if (first_gone)
    proxy_question_next (p);
}

/* ---- Clients ---------------------------------------------------------- */

struct proxy_client *
proxy_client_new (struct proxy *p, const struct proxy_grant *g,
                  struct cr_error **err)
{
  struct proxy_client *cl = xcalloc (1, sizeof *cl);
  cl->proxy = p;
  if (proxy_random_hex (cl->password, err) < 0)
    {
      free (cl);
      return NULL;
    }
  if (netpolicy_names_new (g->domains, g->n_domains, &cl->names, err) < 0)
    {
      free (cl);
      return NULL;
    }
  cl->sandbox_id = xstrdup (g->sandbox_id ? g->sandbox_id : "");
  cl->allow_private = g->allow_private;
  cl->userpass = xasprintf ("%s:%s", PROXY_USER, cl->password);
  cl->next = p->clients;
  if (p->clients != NULL)
    p->clients->prev = cl;
  p->clients = cl;
  return cl;
}

const char *
proxy_client_user (const struct proxy_client *c)
{
  (void) c;
  return PROXY_USER;
}

const char *
proxy_client_password (const struct proxy_client *c)
{
  return c->password;
}

const char *
proxy_client_sandbox_id (const struct proxy_client *c)
{
  return c->sandbox_id;
}

void
proxy_client_counts (const struct proxy_client *c, struct proxy_counts *out)
{
  *out = c->counts;
}

void
proxy_client_on_refusal (struct proxy_client *c, proxy_refusal_fn fn,
                         void *data)
{
  c->on_refusal = fn;
  c->on_refusal_data = data;
}

bool
proxy_client_close (struct proxy_client *c)
{
  while (c->conns != NULL)
    proxy_conn_free (c->conns);
  return true;
}

void
proxy_client_free (struct proxy_client *c)
{
  if (c == NULL)
    return;
  struct proxy *p = c->proxy;
  proxy_client_close (c);
  proxy_questions_drop_client (p, c);
  /* Its lookups still in flight come back to nobody's turn.  */
  for (struct proxy_job *j = p->jobs; j != NULL; j = j->lnext)
    if (j->client == c)
      j->client = NULL;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    p->clients = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  netpolicy_names_free (c->names);
  for (size_t i = 0; i < c->n_allowed_extra; i++)
    free (c->allowed_extra[i]);
  free (c->allowed_extra);
  /* The credential is a secret: do not leave it in freed memory.  */
  explicit_bzero (c->password, sizeof c->password);
  explicit_bzero (c->userpass, strlen (c->userpass));
  free (c->userpass);
  free (c->sandbox_id);
  free (c);
}

/* ---- The proxy -------------------------------------------------------- */

/* Start the resolver thread with its half of the answer socket.  */
static int
proxy_resolver_start (struct proxy *p, struct cr_error **err)
{
  int sv[2];
  /* SOCK_SEQPACKET: each thread's answer is one record, never
   * interleaved with another thread's.  */
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return cr_error_set (err, errno, "making the proxy resolver's socket");
  struct proxy_resolver *r = xcalloc (1, sizeof *r);
  pthread_mutex_init (&r->mu, NULL);
  pthread_cond_init (&r->cv, NULL);
  r->refs = 1 + PROXY_RESOLVERS;
  r->wfd = sv[1];
  p->rfd = sv[0];
  p->resolver = r;
  for (int i = 0; i < PROXY_RESOLVERS; i++)
    {
      pthread_t t;
      int rc = pthread_create (&t, NULL, proxy_resolver_main, r);
      if (rc != 0)
        {
          /* Fewer threads serve; none is an error.  */
          pthread_mutex_lock (&r->mu);
          r->refs -= PROXY_RESOLVERS - i;
          pthread_mutex_unlock (&r->mu);
          if (i == 0)
            return cr_error_set (err, rc, "starting the proxy resolver thread");
          break;
        }
      pthread_detach (t);
    }
  return loop_add_fd (p->loop, p->rfd, POLLIN, proxy_resolver_fd, p, err);
}

/* Copy a NULL-terminated environment.  */
static char **
proxy_env_copy (char *const *env)
{
  size_t n = 0;
  while (env != NULL && env[n] != NULL)
    n++;
  char **out = xcalloc (n + 1, sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = xstrdup (env[i]);
  return out;
}

/* Set the connection limits from the process's descriptor limit.  */
static void
proxy_limits (struct proxy *p)
{
  struct rlimit rl;
  size_t budget = (size_t) PROXY_CLIENT_MAX_CONNS * 2;
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    budget = rl.rlim_cur > PROXY_FD_RESERVE
                 ? (size_t) (rl.rlim_cur - PROXY_FD_RESERVE) / PROXY_CONN_FDS
                 : 0;
  if (budget < PROXY_MIN_CONNS)
    budget = PROXY_MIN_CONNS;
  p->max_conns = budget;
  p->client_conns = budget / 2 < PROXY_CLIENT_MAX_CONNS
                        ? budget / 2
                        : PROXY_CLIENT_MAX_CONNS;
  if (p->client_conns < PROXY_MIN_CONNS)
    p->client_conns = PROXY_MIN_CONNS;
}

struct proxy *
proxy_new (struct loop *loop, char *const *env, struct cr_error **err)
{
  struct proxy *p = xcalloc (1, sizeof *p);
  p->loop = loop;
  proxy_limits (p);
  p->rfd = -1;
  p->env = proxy_env_copy (env);
  p->local = netpolicy_local_new ();
  if (netpolicy_local_refresh (p->local, err) < 0
      || proxy_resolver_start (p, err) < 0)
    {
      proxy_free (p);
      return NULL;
    }
  return p;
}

void
proxy_free (struct proxy *p)
{
  if (p == NULL)
    return;
  struct proxy_client *next;
  for (struct proxy_client *cl = p->clients; cl != NULL; cl = next)
    {
      next = cl->next;
      proxy_client_free (cl);
    }
  if (p->resolver != NULL)
    {
      struct proxy_resolver *r = p->resolver;
      pthread_mutex_lock (&r->mu);
      r->quit = true;
      pthread_cond_broadcast (&r->cv);
      pthread_mutex_unlock (&r->mu);
      proxy_resolver_unref (r);
    }
  if (p->rfd >= 0)
    {
      uintptr_t v;
      loop_remove_fd (p->loop, p->rfd);
      while (recv (p->rfd, &v, sizeof v, MSG_DONTWAIT) == (ssize_t) sizeof v)
        proxy_job_free ((struct proxy_job *) v);
      close (p->rfd);
    }
  loop_cancel_timer (p->loop, p->reap_timer);
  proxy_reap (p);
  netpolicy_local_free (p->local);
  for (size_t i = 0; p->env[i] != NULL; i++)
    free (p->env[i]);
  free (p->env);
  free (p);
}
