/* The session's forwarder for sandbox.network.ports (core/portfwd.c),
 * against fake brokers: this process plays each command's broker on one
 * end of a SOCK_SEQPACKET pair, sending records the way broker/broker.c
 * does, honest ones and lying ones.  What a lying broker sends must not
 * make the host listen on a port outside the member's list or relay a
 * descriptor it never asked for; each refusal has its control (the same
 * record, honest, does what it says).  The ports are high ones of this
 * machine's loopback, taken only while a test runs.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/status.h"
#include "core/loop.h"
#include "core/portfwd.h"
#include "sandbox/netchan.h"

#define LISTED 47173
#define UNLISTED 47174

/* Send one ports record from the fake broker on b, with fd or -1.  */
static void
broker_say (int b, int kind, unsigned port, uint32_t id, int fd)
{
  struct broker_net_msg m
      = { .kind = (uint8_t) kind, .port = (uint16_t) port, .id = id };
  struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      memset (control.buf, 0, sizeof control.buf);
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof control.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
  assert_int_equal (sendmsg (b, &msg, 0), (ssize_t) sizeof m);
}

/* Read the next record the host sent the fake broker on b, waiting a
 * little; false when none came.  */
static bool
broker_hear_any (int b, struct broker_net_msg *m)
{
  struct pollfd p = { .fd = b, .events = POLLIN };
  if (poll (&p, 1, 500) <= 0)
    return false;
  return recv (b, m, sizeof *m, 0) == (ssize_t) sizeof *m;
}

/* The next request, past the READY that ends a join's forwards (which
 * test_join_ready looks at).  */
static bool
broker_hear (int b, struct broker_net_msg *m)
{
  while (broker_hear_any (b, m))
    if (m->kind != BROKER_NET_READY)
      return true;
  return false;
}

/* Let the host read what the member's broker sent and the loop run.  */
static void
host_pump (struct loop *loop, int chan, struct portfwd_member *m)
{
  for (int round = 0; round < 5; round++)
    {
      struct netchan_record rec;
      struct cr_error *err = NULL;
      int r;
      while ((r = netchan_read (chan, &rec, &err)) != NETCHAN_NONE)
        {
          if (r < 0)
            {
              cr_error_free (err);
              err = NULL;
              continue;
            }
          if (r == NETCHAN_ENDED)
            break;
          portfwd_record (m, &rec);
        }
      assert_int_equal (loop_run_once (loop, 20, NULL), 0);
    }
}

/* A connection to this machine's 127.0.0.1:port, or -1.  */
static int
host_connect (unsigned port)
{
  struct sockaddr_in a = { .sin_family = AF_INET,
                           .sin_port = htons ((uint16_t) port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect (fd, (struct sockaddr *) &a, sizeof a) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* A connected TCP pair over loopback: *near and *far.  */
static void
tcp_pair (int *near, int *far)
{
  struct sockaddr_in a
      = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal (bind (l, (struct sockaddr *) &a, sizeof a), 0);
  assert_int_equal (listen (l, 1), 0);
  assert_int_equal (getsockname (l, (struct sockaddr *) &a, &len), 0);
  *near = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal (connect (*near, (struct sockaddr *) &a, sizeof a), 0);
  *far = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  assert_true (*far >= 0);
  close (l);
}

/* Whether fd sees the end of its stream within a little while (the host
 * closed its side).  */
static bool
sees_end (int fd)
{
  char c;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  if (poll (&p, 1, 500) <= 0)
    return false;
  return recv (fd, &c, 1, MSG_DONTWAIT) == 0;
}

struct fixture
{
  struct loop *loop;
  struct portfwd *pf;
  int host[2], broker[2]; /* per member: the host's end, the fake's */
  struct portfwd_member *m[2];
};

/* Two members, each listing LISTED only; the channels are the host's. */
static int
setup (void **state)
{
  static struct fixture f;
  uint16_t ports[] = { LISTED };
  memset (&f, 0, sizeof f);
  f.loop = loop_new (NULL);
  f.pf = portfwd_new (f.loop);
  for (int k = 0; k < 2; k++)
    {
      int pair[2];
      assert_int_equal (
          socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
      fcntl (pair[0], F_SETFL, O_NONBLOCK);
      f.host[k] = pair[0];
      f.broker[k] = pair[1];
      f.m[k] = portfwd_join (f.pf, f.host[k], ports, 1);
    }
  *state = &f;
  return 0;
}

/* A join ends with READY, after the forwards the member starts with: the
 * broker starts its workload then.  Nobody serves a port yet, so the
 * first member hears READY alone.  */
static void
test_join_ready (void **state)
{
  struct fixture *f = *state;
  struct broker_net_msg m = { 0 };
  assert_true (broker_hear_any (f->broker[0], &m));
  assert_int_equal (m.kind, BROKER_NET_READY);
  assert_int_equal (m.port, 0);
  assert_true (broker_hear_any (f->broker[1], &m));
  assert_int_equal (m.kind, BROKER_NET_READY);
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  portfwd_free (f->pf);
  for (int k = 0; k < 2; k++)
    {
      close (f->host[k]);
      close (f->broker[k]);
    }
  loop_free (f->loop);
  return 0;
}

/* LISTENING on a port outside the member's list opens nothing on the
 * host; on a listed one (the control) the host's 127.0.0.1 answers, the
 * other member is asked to forward it, and GONE closes it again.  */
static void
test_listen_only_listed (void **state)
{
  struct fixture *f = *state;
  struct broker_net_msg m = { 0 };

  broker_say (f->broker[0], BROKER_NET_LISTENING, UNLISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_int_equal (host_connect (UNLISTED), -1);
  assert_false (broker_hear (f->broker[1], &m));

  broker_say (f->broker[0], BROKER_NET_LISTENING, LISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  int c = host_connect (LISTED);
  assert_true (c >= 0);
  close (c);
  assert_true (broker_hear (f->broker[1], &m));
  assert_int_equal (m.kind, BROKER_NET_FORWARD);
  assert_int_equal (m.port, LISTED);
  char *where = portfwd_where (f->m[0]);
  assert_string_equal (where, "listening on 127.0.0.1:47173");
  free (where);

  broker_say (f->broker[0], BROKER_NET_GONE, LISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_int_equal (host_connect (LISTED), -1);
  assert_true (broker_hear (f->broker[1], &m));
  assert_int_equal (m.kind, BROKER_NET_UNFORWARD);
}

/* A connection at the host's port: the server's broker is asked to
 * connect with an id.  CONNECTED with another id (a descriptor nobody
 * asked for) is closed; with the id (the control) the bytes go through
 * both ways.  */
static void
test_connected_needs_the_id (void **state)
{
  struct fixture *f = *state;
  struct broker_net_msg m = { 0 };
  int near, far, near2, far2;

  broker_say (f->broker[0], BROKER_NET_LISTENING, LISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  int c = host_connect (LISTED);
  assert_true (c >= 0);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_true (broker_hear (f->broker[0], &m));
  assert_int_equal (m.kind, BROKER_NET_CONNECT);
  assert_int_equal (m.port, LISTED);

  tcp_pair (&near, &far);
  broker_say (f->broker[0], BROKER_NET_CONNECTED, LISTED, m.id + 1000, near);
  close (near);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_true (sees_end (far));
  close (far);

  tcp_pair (&near2, &far2);
  broker_say (f->broker[0], BROKER_NET_CONNECTED, LISTED, m.id, near2);
  close (near2);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_int_equal (send (c, "ping", 4, 0), 4);
  host_pump (f->loop, f->host[0], f->m[0]);
  char buf[8] = { 0 };
  assert_int_equal (recv (far2, buf, sizeof buf, MSG_DONTWAIT), 4);
  assert_memory_equal (buf, "ping", 4);
  assert_int_equal (send (far2, "pong", 4, 0), 4);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_int_equal (recv (c, buf, sizeof buf, MSG_DONTWAIT), 4);
  assert_memory_equal (buf, "pong", 4);

  /* The server's command ends: the relay and the port close with it.  */
  portfwd_leave (f->m[0]);
  f->m[0] = portfwd_join (f->pf, f->host[0], (uint16_t[]){ LISTED }, 1);
  assert_true (sees_end (c));
  assert_true (sees_end (far2));
  assert_int_equal (host_connect (LISTED), -1);
  close (c);
  close (far2);
}

/* ACCEPTED from a member never asked to forward the port is closed; once
 * another member serves it (the control) the same record makes the
 * server's broker be asked to connect.  */
static void
test_accepted_needs_forwarding (void **state)
{
  struct fixture *f = *state;
  struct broker_net_msg m = { 0 };
  int near, far, near2, far2;

  tcp_pair (&near, &far);
  broker_say (f->broker[1], BROKER_NET_ACCEPTED, LISTED, 0, near);
  close (near);
  host_pump (f->loop, f->host[1], f->m[1]);
  assert_true (sees_end (far));
  close (far);
  assert_false (broker_hear (f->broker[0], &m));

  broker_say (f->broker[0], BROKER_NET_LISTENING, LISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  assert_true (broker_hear (f->broker[1], &m));
  assert_int_equal (m.kind, BROKER_NET_FORWARD);
  tcp_pair (&near2, &far2);
  broker_say (f->broker[1], BROKER_NET_ACCEPTED, LISTED, 0, near2);
  close (near2);
  host_pump (f->loop, f->host[1], f->m[1]);
  assert_true (broker_hear (f->broker[0], &m));
  assert_int_equal (m.kind, BROKER_NET_CONNECT);
  assert_int_equal (m.port, LISTED);
  close (far2);
}

/* A port taken on the host: said so, and nothing of crucible listens. */
static void
test_taken_host_port (void **state)
{
  struct fixture *f = *state;
  struct sockaddr_in a = { .sin_family = AF_INET,
                           .sin_port = htons (LISTED),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  /* The tests before leave the port in TIME_WAIT.  */
  setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  assert_int_equal (bind (l, (struct sockaddr *) &a, sizeof a), 0);
  assert_int_equal (listen (l, 1), 0);

  broker_say (f->broker[0], BROKER_NET_LISTENING, LISTED, 0, -1);
  host_pump (f->loop, f->host[0], f->m[0]);
  char *where = portfwd_where (f->m[0]);
  assert_non_null (where);
  assert_non_null (strstr (where, "127.0.0.1:47173 is taken on the host"));
  free (where);
  char *note = portfwd_taken_note (f->m[0]);
  assert_string_equal (note, "[the command listened on 47173; the host's "
                             "127.0.0.1 had it taken already, so it was "
                             "not reachable there]");
  free (note);
  close (l);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_join_ready, setup, teardown),
    cmocka_unit_test_setup_teardown (test_listen_only_listed, setup, teardown),
    cmocka_unit_test_setup_teardown (test_connected_needs_the_id, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_accepted_needs_forwarding, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_taken_host_port, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
