/* The supervisor's wiring of a command with domains (core/supervisor.c)
 * to the host's proxy (core/proxy.c), over a stand-in backend: the
 * compatibility backend's sessions, claiming network_allowlist, with a
 * net channel this test holds the other end of, playing the broker.  The
 * command gets the proxy variables with its credential, masked in its
 * output; a connection sent on the channel reaches the proxy (which
 * answers 407 without the credential); and the proxy's connections are
 * closed before the slot is released.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/supervisor.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "sandbox/compat.h"

extern char **environ;

static const struct sandbox_backend_ops *compat_ops;
static struct sandbox_backend_ops net_ops;
static int chan[2] = { -1, -1 }; /* [0] the host's end, [1] the "broker's" */

struct fixture
{
  struct loop *loop;
  struct sandbox_backend *backend;
  struct config *config;
  struct supervisor *sup;
  int cleaned;
  char text[8192];
};

/* Every feature enforced: the stand-in claims what the policy needs.  */
static void
net_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  (void) b;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    out->support[f] = SANDBOX_ENFORCED;
}

/* compat's prepare, unconfined, giving sessions with the test's net
 * channel.  */
static int
net_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
             struct sandbox_session **out, struct cr_error **err)
{
  struct sandbox_policy plain = *policy;
  plain.enabled = false;
  memset (plain.requires, 0, sizeof plain.requires);
  plain.n_domains = 0;
  int rc = compat_ops->prepare (b, &plain, out, err);
  if (rc == 0)
    (*out)->ops = &net_ops;
  return rc;
}

static int
net_fd (const struct sandbox_session *s)
{
  (void) s;
  return chan[0];
}

static void
on_answered (void *data, struct command *cmd,
             const struct command_answer *answer)
{
  struct fixture *f = data;
  (void) cmd;
  snprintf (f->text, sizeof f->text, "%.*s", (int) answer->text_len,
            answer->text);
}

static void
on_cleaned (void *data, struct command *cmd)
{
  struct fixture *f = data;
  (void) cmd;
  f->cleaned++;
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof *f);
  struct cr_error *err = NULL;

  f->loop = loop_new (&err);
  f->backend = compat_backend_new ();
  compat_ops = f->backend->ops;
  net_ops = *compat_ops;
  net_ops.claims = net_claims;
  net_ops.prepare = net_prepare;
  net_ops.network_fd = net_fd;
  f->backend->ops = &net_ops;
  f->config = config_new_defaults ();
  f->config->sandbox_enabled = true;
  free (f->config->net_domains.items); /* config_list_init's empty list */
  f->config->net_domains.items = xcalloc (2, sizeof (char *));
  f->config->net_domains.items[0] = xstrdup ("allowed.test");
  f->config->net_domains.count = 1;
  f->sup = supervisor_new (f->loop, f->backend, f->config, "/", environ);
  assert_int_equal (
      socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), 0);
  assert_int_equal (fcntl (chan[0], F_SETFL, O_NONBLOCK), 0);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  supervisor_free (f->sup);
  config_free (f->config);
  sandbox_backend_free (f->backend);
  loop_free (f->loop);
  close (chan[0]);
  close (chan[1]);
  free (f);
  return 0;
}

/* A connected pair over loopback: *inside the end the "workload" keeps;
 * returns the accepted end, which the "broker" sends.  */
static int
connection (int *inside)
{
  struct sockaddr_in a
      = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  assert_int_equal (bind (l, (struct sockaddr *) &a, sizeof a), 0);
  assert_int_equal (listen (l, 1), 0);
  assert_int_equal (getsockname (l, (struct sockaddr *) &a, &len), 0);
  *inside = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal (connect (*inside, (struct sockaddr *) &a, sizeof a), 0);
  int fd = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  close (l);
  return fd;
}

/* Send fd on the channel as the broker does.  */
static void
broker_send (int fd)
{
  char byte = 'c';
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);

  memset (control.buf, 0, sizeof control.buf);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &fd, sizeof fd);
  assert_int_equal (sendmsg (chan[1], &msg, 0), 1);
}

static void
test_command_reaches_the_proxy (void **state)
{
  struct fixture *f = *state;
  struct supervisor_listener l
      = { .answered = on_answered, .cleaned = on_cleaned, .data = f };
  struct command_request req
      = { .line = "printenv HTTPS_PROXY NO_PROXY; sleep 1" };
  struct command *cmd = NULL;
  struct cr_error *err = NULL;
  char got[256] = "";
  size_t n = 0;
  int inside;

  assert_int_equal (supervisor_start (f->sup, &req, &l, &cmd, &err), 0);
  int conn = connection (&inside);
  broker_send (conn);
  close (conn);
  static const char ask[] = "GET http://allowed.test/ HTTP/1.1\r\n"
                            "Host: allowed.test\r\n\r\n";
  assert_int_equal (write (inside, ask, sizeof ask - 1),
                    (ssize_t) (sizeof ask - 1));
  assert_int_equal (fcntl (inside, F_SETFL, O_NONBLOCK), 0);
  uint64_t start = clock_now_ms ();
  while (strstr (got, "\r\n") == NULL && clock_now_ms () - start < 5000)
    {
      assert_int_equal (loop_run_once (f->loop, 50, &err), 0);
      ssize_t r = read (inside, got + n, sizeof got - 1 - n);
      if (r > 0)
        n += (size_t) r;
      got[n] = '\0';
    }
  assert_non_null (strstr (got, "HTTP/1.1 407"));
  start = clock_now_ms ();
  while (f->cleaned < 1 && clock_now_ms () - start < 10000)
    assert_int_equal (loop_run_once (f->loop, 100, &err), 0);
  assert_int_equal (f->cleaned, 1);
  assert_string_equal (f->text,
                       "http://crucible:********************************"
                       "@127.0.0.1:3128\nlocalhost,127.0.0.1,::1");
  /* The proxy's end was closed before the slot was released.  */
  char rest[4096];
  ssize_t r;
  do
    r = read (inside, rest, sizeof rest);
  while (r > 0);
  assert_true (r == 0 || (r < 0 && errno == ECONNRESET));
  close (inside);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_command_reaches_the_proxy, setup,
                                     teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
