/* Unit tests for core/proxy.c that need no network: the credential, the
 * 407, 403 and 400 answers, a literal loopback address refused without a
 * lookup, the asker's one question for two connections, and closing a
 * command's connections.  Each connection is one end of a socketpair; the
 * test plays the command on the other.  (tests/integration/proxy.sh covers
 * the paths that reach origins.)  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/loop.h"
#include "core/proxy.h"
#include "lib/buf.h"
#include "lib/clock.h"

struct fixture
{
  struct loop *loop;
  struct proxy *proxy;
  struct proxy_client *client, *other;
  char refusals[256];
  int asked;
  uint64_t question;
};

static char *const test_env[] = { NULL };

/* Append each refusal's class to the fixture's list.  */
static void
fixture_refused (void *data, const char *reason_class)
{
  struct fixture *f = data;
  size_t len = strlen (f->refusals);
  snprintf (f->refusals + len, sizeof f->refusals - len, "%s ", reason_class);
}

/* A proxy with two clients, one of which reports refusals.  */
static int
setup (void **state)
{
  static char *domains[]
      = { "allowed.test", "127.0.0.1", "::1", "::ffff:127.0.0.1" };
  struct fixture *f = calloc (1, sizeof *f);
  struct cr_error *err = NULL;
  struct proxy_grant g
      = { .sandbox_id = "sb-1", .domains = domains, .n_domains = 4 };
  f->loop = loop_new (&err);
  assert_non_null (f->loop);
  f->proxy = proxy_new (f->loop, test_env, &err);
  assert_non_null (f->proxy);
  f->client = proxy_client_new (f->proxy, &g, &err);
  assert_non_null (f->client);
  g.sandbox_id = "sb-2";
  f->other = proxy_client_new (f->proxy, &g, &err);
  assert_non_null (f->other);
  proxy_client_on_refusal (f->client, fixture_refused, f);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  proxy_client_free (f->client);
  proxy_client_free (f->other);
  proxy_free (f->proxy);
  loop_free (f->loop);
  free (f);
  return 0;
}

/* Give the client a new connection; returns the command's end.  */
static int
connect_client (struct fixture *f)
{
  int sv[2];
  struct cr_error *err = NULL;
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  assert_int_equal (proxy_client_take (f->client, sv[0], &err), 0);
  fcntl (sv[1], F_SETFL, O_NONBLOCK);
  return sv[1];
}

/* Run the loop until fd reaches EOF (or 5 s pass); return what it read. */
static char *
read_to_end (struct fixture *f, int fd)
{
  struct buf b = BUF_INIT;
  uint64_t until = clock_now_ms () + 5000;
  while (clock_now_ms () < until)
    {
      char chunk[4096];
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n == 0)
        break;
      if (n > 0)
        {
          buf_append (&b, chunk, (size_t) n);
          continue;
        }
      assert_int_equal (loop_run_once (f->loop, 20, NULL), 0);
    }
  return buf_steal (&b, NULL);
}

/* Send a request and return the whole answer.  */
static char *
exchange (struct fixture *f, const char *request)
{
  int fd = connect_client (f);
  assert_int_equal (write (fd, request, strlen (request)),
                    (ssize_t) strlen (request));
  char *answer = read_to_end (f, fd);
  close (fd);
  return answer;
}

/* A Proxy-Authorization header line for a client.  */
static char *
auth_line (const struct proxy_client *c)
{
  static const char b64[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char in[128];
  struct buf b = BUF_INIT;
  int len = snprintf (in, sizeof in, "%s:%s", proxy_client_user (c),
                      proxy_client_password (c));
  buf_puts (&b, "Proxy-Authorization: Basic ");
  for (int i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t) (unsigned char) in[i] << 16;
      if (i + 1 < len)
        v |= (uint32_t) (unsigned char) in[i + 1] << 8;
      if (i + 2 < len)
        v |= (uint32_t) (unsigned char) in[i + 2];
      buf_putc (&b, b64[(v >> 18) & 63]);
      buf_putc (&b, b64[(v >> 12) & 63]);
      buf_putc (&b, i + 1 < len ? b64[(v >> 6) & 63] : '=');
      buf_putc (&b, i + 2 < len ? b64[v & 63] : '=');
    }
  buf_puts (&b, "\r\n");
  return buf_steal (&b, NULL);
}

/* Each client has its own 128-bit credential, as 32 hex digits.  */
static void
test_credential (void **state)
{
  struct fixture *f = *state;
  const char *pw = proxy_client_password (f->client);
  assert_string_equal (proxy_client_user (f->client), "crucible");
  assert_int_equal (strlen (pw), 32);
  assert_int_equal (strspn (pw, "0123456789abcdef"), 32);
  assert_string_not_equal (pw, proxy_client_password (f->other));
}

/* No credential: 407 with the Basic challenge.  */
static void
test_no_credential (void **state)
{
  struct fixture *f = *state;
  char *a = exchange (f, "GET http://allowed.test/ HTTP/1.1\r\n"
                         "Host: allowed.test\r\n\r\n");
  assert_true (strncmp (a, "HTTP/1.1 407 ", 13) == 0);
  assert_non_null (
      strstr (a, "\r\nProxy-Authenticate: Basic realm=\"crucible\"\r\n"));
  assert_string_equal (f->refusals, "credential ");
  free (a);
}

/* Another client's credential is a wrong one here.  */
static void
test_other_credential (void **state)
{
  struct fixture *f = *state;
  char *auth = auth_line (f->other);
  char req[512];
  snprintf (req, sizeof req,
            "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n"
            "%s\r\n",
            auth);
  char *a = exchange (f, req);
  assert_true (strncmp (a, "HTTP/1.1 407 ", 13) == 0);
  free (a);
  free (auth);
}

/* A name not allowed: 403 naming it and the key.  */
static void
test_name_refused (void **state)
{
  struct fixture *f = *state;
  char *auth = auth_line (f->client);
  char req[512];
  snprintf (req, sizeof req,
            "GET http://Other.Test./x HTTP/1.1\r\nHost: other.test\r\n%s\r\n",
            auth);
  char *a = exchange (f, req);
  assert_true (strncmp (a, "HTTP/1.1 403 ", 13) == 0);
  assert_non_null (strstr (a, "other.test"));
  assert_non_null (strstr (a, "sandbox.network.domains"));
  assert_string_equal (f->refusals, "name ");
  struct proxy_counts counts;
  proxy_client_counts (f->client, &counts);
  assert_int_equal (counts.refused, 1);
  assert_int_equal (counts.allowed, 0);
  free (a);
  free (auth);
}

/* A listed literal address is still classified: loopback is refused. */
static void
test_literal_loopback (void **state)
{
  struct fixture *f = *state;
  char *auth = auth_line (f->client);
  char req[512];
  snprintf (req, sizeof req,
            "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n%s\r\n",
            auth);
  char *a = exchange (f, req);
  assert_true (strncmp (a, "HTTP/1.1 403 ", 13) == 0);
  assert_string_equal (f->refusals, "loopback ");
  free (a);
  free (auth);
}

/* The same for IPv6 authorities: [::1] and the IPv4-mapped loopback.  */
static void
test_literal_v6 (void **state)
{
  struct fixture *f = *state;
  char *auth = auth_line (f->client);
  static const char *const targets[] = { "[::1]:22", "[::ffff:127.0.0.1]:80" };
  for (size_t i = 0; i < 2; i++)
    {
      char req[512];
      snprintf (req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
                targets[i], targets[i], auth);
      char *a = exchange (f, req);
      assert_true (strncmp (a, "HTTP/1.1 403 ", 13) == 0);
      free (a);
    }
  assert_string_equal (f->refusals, "loopback loopback ");
  free (auth);
}

/* A malformed request: 400, and only that connection closes.  */
static void
test_malformed (void **state)
{
  struct fixture *f = *state;
  int keep = connect_client (f);
  assert_int_equal (write (keep, "GET http://allowed.test/ HTTP/1.1\r\n", 35),
                    35);
  char *a = exchange (f, "GARBAGE\x01 / HTTP/1.1\r\n\r\n");
  assert_true (strncmp (a, "HTTP/1.1 400 ", 13) == 0);
  assert_string_equal (f->refusals, "malformed ");
  free (a);
  /* The other connection is still open: it answers a later head.  */
  assert_int_equal (write (keep, "Host: x\r\n\r\n", 11), 11);
  a = read_to_end (f, keep);
  assert_true (strncmp (a, "HTTP/1.1 407 ", 13) == 0);
  free (a);
  close (keep);
}

/* Count questions; remember the last.  */
static void
fixture_ask (void *data, uint64_t question, struct proxy_client *c,
             const char *name)
{
  struct fixture *f = data;
  assert_string_equal (name, "other.test");
  assert_string_equal (proxy_client_sandbox_id (c), "sb-1");
  f->asked++;
  f->question = question;
}

/* Two connections for one name not allowed: one question; a refusal
 * answers both.  */
static void
test_asker_coalesces (void **state)
{
  struct fixture *f = *state;
  char *auth = auth_line (f->client);
  char req[512];
  int fds[2];
  proxy_set_asker (f->proxy, fixture_ask, f);
  snprintf (req, sizeof req,
            "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n%s\r\n",
            auth);
  for (int i = 0; i < 2; i++)
    {
      fds[i] = connect_client (f);
      assert_int_equal (write (fds[i], req, strlen (req)),
                        (ssize_t) strlen (req));
    }
  for (int i = 0; i < 20; i++)
    assert_int_equal (loop_run_once (f->loop, 10, NULL), 0);
  assert_int_equal (f->asked, 1);
  proxy_answer (f->proxy, f->question, PROXY_ANSWER_REFUSE);
  for (int i = 0; i < 2; i++)
    {
      char *a = read_to_end (f, fds[i]);
      assert_true (strncmp (a, "HTTP/1.1 403 ", 13) == 0);
      free (a);
      close (fds[i]);
    }
  assert_int_equal (f->asked, 1);
  free (auth);
}

/* proxy_client_close ends every connection of the command at once.  */
static void
test_close (void **state)
{
  struct fixture *f = *state;
  int fd = connect_client (f);
  assert_int_equal (write (fd, "GET http://allowed", 18), 18);
  assert_int_equal (loop_run_once (f->loop, 10, NULL), 0);
  assert_true (proxy_client_close (f->client));
  char c;
  assert_int_equal (read (fd, &c, 1), 0);
  close (fd);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_credential, setup, teardown),
    cmocka_unit_test_setup_teardown (test_no_credential, setup, teardown),
    cmocka_unit_test_setup_teardown (test_other_credential, setup, teardown),
    cmocka_unit_test_setup_teardown (test_name_refused, setup, teardown),
    cmocka_unit_test_setup_teardown (test_literal_loopback, setup, teardown),
    cmocka_unit_test_setup_teardown (test_literal_v6, setup, teardown),
    cmocka_unit_test_setup_teardown (test_malformed, setup, teardown),
    cmocka_unit_test_setup_teardown (test_asker_coalesces, setup, teardown),
    cmocka_unit_test_setup_teardown (test_close, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
