/* proxy_run: core/proxy on its own, without a sandbox, for
 * tests/integration/proxy.sh.
 *
 *   proxy_run --listen ADDR:PORT --domain NAME ... [--allow-private]
 *             [--second] [--ask command|refuse]
 *
 * Listens on ADDR:PORT (IPv4, or [IPv6]:PORT), hands every accepted
 * connection to one proxy client granted the --domain names, prints
 * `user password` as its first line (stdout, flushed), and runs until
 * SIGTERM or SIGINT.  With --second a second client is registered too and
 * its `user password` printed on a second line, so a test can show that
 * another command's credential is refused.  Every refusal's class is
 * printed on stderr as `refused CLASS`; at exit the counts as
 * `counts allowed=N refused=N out=N in=N`.  With --ask, an asker is set
 * (phase 2): each question prints `asked NAME` on stderr and is answered
 * 300 ms later with the answer given.  The upstream settings are this
 * process's own environment, as for crucible.  */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/proxy.h"

extern char **environ;

struct proxy_run
{
  struct loop *loop;
  struct proxy *proxy;
  struct proxy_client *client;
  int lfd;
  enum proxy_answer answer;
  uint64_t question;
};

/* Answer the question asked 300 ms ago.  */
static void
proxy_run_answer (struct loop *loop, void *data)
{
  struct proxy_run *r = data;
  (void) loop;
  proxy_answer (r->proxy, r->question, r->answer);
}

/* The asker: say what was asked, answer in a moment.  */
static void
proxy_run_ask (void *data, uint64_t question, struct proxy_client *c,
               const char *name)
{
  struct proxy_run *r = data;
  fprintf (stderr, "asked %s for %s\n", name, proxy_client_sandbox_id (c));
  r->question = question;
  loop_add_timer (r->loop, 300, proxy_run_answer, r);
}

/* Parse ADDR:PORT or [ADDR]:PORT into ss.  */
static int
proxy_run_parse_listen (const char *s, struct sockaddr_storage *ss,
                        socklen_t *len)
{
  char host[128];
  const char *colon = strrchr (s, ':');
  if (colon == NULL || (size_t) (colon - s) >= sizeof host)
    return -1;
  char *end;
  long port = strtol (colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535)
    return -1;
  memcpy (host, s, (size_t) (colon - s));
  host[colon - s] = '\0';
  memset (ss, 0, sizeof *ss);
  if (host[0] == '[')
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
      host[strlen (host) - 1] = '\0';
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons ((uint16_t) port);
      *len = sizeof *s6;
      return inet_pton (AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -1;
    }
  struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
  s4->sin_family = AF_INET;
  s4->sin_port = htons ((uint16_t) port);
  *len = sizeof *s4;
  return inet_pton (AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
}

/* Accept one connection and hand it to the client.  */
static void
proxy_run_accept (struct loop *loop, int fd, short revents, void *data)
{
  struct proxy_run *r = data;
  struct cr_error *err = NULL;
  (void) loop;
  (void) revents;
  int cfd = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (cfd < 0)
    return;
  if (proxy_client_take (r->client, cfd, &err) < 0)
    {
      fprintf (stderr, "proxy_run: %s\n", err->msg);
      cr_error_free (err);
    }
}

/* Print a refusal's class.  */
static void
proxy_run_refused (void *data, const char *reason_class)
{
  (void) data;
  fprintf (stderr, "refused %s\n", reason_class);
}

/* Stop at SIGTERM/SIGINT.  */
static void
proxy_run_stop (struct loop *loop, int signo, void *data)
{
  (void) signo;
  (void) data;
  loop_quit (loop);
}

/* Listen on the address given.  */
static int
proxy_run_listen (const char *where)
{
  struct sockaddr_storage ss;
  socklen_t len;
  if (proxy_run_parse_listen (where, &ss, &len) < 0)
    {
      fprintf (stderr, "proxy_run: cannot read --listen %s\n", where);
      return -1;
    }
  int fd = socket (ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *) &ss, len) < 0 || listen (fd, 64) < 0)
    {
      fprintf (stderr, "proxy_run: listening on %s: %s\n", where,
               strerror (errno));
      return -1;
    }
  return fd;
}

int
main (int argc, char **argv)
{
  struct cr_error *err = NULL;
  const char *listen_on = NULL;
  char *domains[argc];
  size_t n_domains = 0;
  bool allow_private = false, second = false;
  const char *ask = NULL;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--listen") == 0 && i + 1 < argc)
        listen_on = argv[++i];
      else if (strcmp (argv[i], "--domain") == 0 && i + 1 < argc)
        domains[n_domains++] = argv[++i];
      else if (strcmp (argv[i], "--allow-private") == 0)
        allow_private = true;
      else if (strcmp (argv[i], "--second") == 0)
        second = true;
      else if (strcmp (argv[i], "--ask") == 0 && i + 1 < argc)
        ask = argv[++i];
      else
        {
          fprintf (stderr, "usage: proxy_run --listen ADDR:PORT --domain "
                           "NAME ... [--allow-private] [--second] "
                           "[--ask command|refuse]\n");
          return 2;
        }
    }
  if (listen_on == NULL)
    return 2;
  signal (SIGPIPE, SIG_IGN);

  struct proxy_run r = { 0 };
  r.loop = loop_new (&err);
  struct proxy *p = r.loop ? proxy_new (r.loop, environ, &err) : NULL;
  r.proxy = p;
  if (p != NULL && ask != NULL)
    {
      r.answer = strcmp (ask, "command") == 0 ? PROXY_ANSWER_COMMAND
                                              : PROXY_ANSWER_REFUSE;
      proxy_set_asker (p, proxy_run_ask, &r);
    }
  struct proxy_grant g = { .sandbox_id = "proxy-run",
                           .domains = domains,
                           .n_domains = n_domains,
                           .allow_private = allow_private };
  r.client = p ? proxy_client_new (p, &g, &err) : NULL;
  struct proxy_client *other = NULL;
  if (r.client != NULL && second)
    other = proxy_client_new (p, &g, &err);
  if (r.client == NULL || (second && other == NULL))
    {
      fprintf (stderr, "proxy_run: %s\n", err ? err->msg : "?");
      return 1;
    }
  r.lfd = proxy_run_listen (listen_on);
  if (r.lfd < 0)
    return 1;
  proxy_client_on_refusal (r.client, proxy_run_refused, NULL);
  if (loop_add_fd (r.loop, r.lfd, POLLIN, proxy_run_accept, &r, &err) < 0
      || loop_add_signal (r.loop, SIGTERM, proxy_run_stop, NULL, &err) < 0
      || loop_add_signal (r.loop, SIGINT, proxy_run_stop, NULL, &err) < 0)
    {
      fprintf (stderr, "proxy_run: %s\n", err->msg);
      return 1;
    }
  printf ("%s %s\n", proxy_client_user (r.client),
          proxy_client_password (r.client));
  if (other != NULL)
    printf ("%s %s\n", proxy_client_user (other),
            proxy_client_password (other));
  fflush (stdout);

  if (loop_run (r.loop, &err) < 0)
    {
      fprintf (stderr, "proxy_run: %s\n", err->msg);
      return 1;
    }
  struct proxy_counts counts;
  proxy_client_counts (r.client, &counts);
  fprintf (stderr,
           "counts allowed=%" PRIu64 " refused=%" PRIu64 " out=%" PRIu64
           " in=%" PRIu64 "\n",
           counts.allowed, counts.refused, counts.bytes_out, counts.bytes_in);
  proxy_client_free (other);
  proxy_client_free (r.client);
  proxy_free (p);
  loop_remove_fd (r.loop, r.lfd);
  close (r.lfd);
  loop_free (r.loop);
  return 0;
}
