/* The host's end of the net channel (sandbox/netchan.c), against a fake
 * broker: this process sends records on one end of a SOCK_SEQPACKET
 * pair the way broker/broker.c does, good ones and bad ones, and reads
 * them on the other.  A refused record must leave no descriptor of it
 * open here.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/netchan.h"

/* How many descriptors this process has open.  */
static int
test_open_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  int n = 0;

  assert_non_null (d);
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      n++;
  closedir (d);
  return n - 1; /* the directory's own */
}

/* Send one record: len bytes of data and n descriptors.  */
static void
test_send (int chan, const char *data, size_t len, const int *fds, size_t n)
{
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (16 * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

  memset (&control, 0, sizeof control);
  if (n > 0)
    {
      msg.msg_control = control.buf;
      msg.msg_controllen = CMSG_SPACE (n * sizeof (int));
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (n * sizeof (int));
      memcpy (CMSG_DATA (c), fds, n * sizeof (int));
    }
  assert_int_equal (sendmsg (chan, &msg, 0), (ssize_t) len);
}

/* A channel pair: [0] the host's end, non-blocking; [1] the broker's.  */
static void
test_channel (int pair[2])
{
  assert_int_equal (
      socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  assert_int_equal (fcntl (pair[0], F_SETFL, O_NONBLOCK), 0);
}

/* A TCP listener on 127.0.0.1 at a free port.  */
static int
test_listener (struct sockaddr_in *addr)
{
  socklen_t len = sizeof *addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  memset (addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  assert_true (fd >= 0);
  assert_int_equal (bind (fd, (struct sockaddr *) addr, sizeof *addr), 0);
  assert_int_equal (listen (fd, 4), 0);
  assert_int_equal (getsockname (fd, (struct sockaddr *) addr, &len), 0);
  return fd;
}

/* An accepted connection, as the broker has one; *client the other end.  */
static int
test_connection (int *client)
{
  struct sockaddr_in addr;
  int l = test_listener (&addr);

  *client = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal (connect (*client, (struct sockaddr *) &addr, sizeof addr),
                    0);
  int fd = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  assert_true (fd >= 0);
  close (l);
  return fd;
}

/* Expect the next record to be refused with a message holding why, and
 * no descriptor left open of it.  */
static void
test_refused (int chan, int fds_before, const char *why)
{
  struct cr_error *err = NULL;
  int fd = 7;

  assert_int_equal (netchan_take (chan, &fd, &err), -1);
  assert_int_equal (fd, -1);
  assert_non_null (err);
  if (strstr (err->msg, why) == NULL)
    fail_msg ("refusal '%s' does not say '%s'", err->msg, why);
  assert_non_null (strstr (err->msg, "refused what the command's net "
                                     "channel sent"));
  cr_error_free (err);
  assert_int_equal (test_open_fds (), fds_before);
}

/* An accepted TCP connection with the byte 'c' is taken: the descriptor
 * works (bytes pass both ways), and is close-on-exec and non-blocking.
 * Nothing waiting reads as NETCHAN_NONE; the broker's end closed reads
 * as NETCHAN_ENDED.  */
static void
test_take_connection (void **state)
{
  int pair[2], client, fd = -1;
  struct cr_error *err = NULL;
  char buf[8];

  (void) state;
  test_channel (pair);
  assert_int_equal (netchan_take (pair[0], &fd, &err), NETCHAN_NONE);
  int conn = test_connection (&client);
  test_send (pair[1], "c", 1, &conn, 1);
  close (conn);
  assert_int_equal (netchan_take (pair[0], &fd, &err), NETCHAN_FD);
  assert_null (err);
  assert_true (fd >= 0);
  assert_true (fcntl (fd, F_GETFD) & FD_CLOEXEC);
  assert_true (fcntl (fd, F_GETFL) & O_NONBLOCK);
  assert_int_equal (write (client, "hi", 2), 2);
  usleep (10000);
  assert_int_equal (read (fd, buf, sizeof buf), 2);
  assert_int_equal (write (fd, "yo", 2), 2);
  assert_int_equal (read (client, buf, 2), 2);
  assert_memory_equal (buf, "yo", 2);
  close (fd);
  close (client);
  close (pair[1]);
  assert_int_equal (netchan_take (pair[0], &fd, &err), NETCHAN_ENDED);
  close (pair[0]);
  assert_int_equal (netchan_take (-1, &fd, &err), NETCHAN_ENDED);
}

/* What is no connection from inside is closed and refused, saying what
 * it was: a listener, an unconnected TCP socket, a UDP socket, a Unix
 * socket, a pipe.  The channel is still good afterwards.  */
static void
test_refuse_kinds (void **state)
{
  int pair[2], p[2], client, fd;
  struct sockaddr_in addr;
  struct cr_error *err = NULL;

  (void) state;
  test_channel (pair);
  int before = test_open_fds ();

  int l = test_listener (&addr);
  test_send (pair[1], "c", 1, &l, 1);
  close (l);
  test_refused (pair[0], before, "a listening socket");

  int tcp = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  test_send (pair[1], "c", 1, &tcp, 1);
  close (tcp);
  test_refused (pair[0], before, "not connected");

  int udp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  assert_int_equal (connect (udp, (struct sockaddr *) &addr, sizeof addr), 0);
  test_send (pair[1], "c", 1, &udp, 1);
  close (udp);
  test_refused (pair[0], before, "not a TCP stream");

  int ux[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ux), 0);
  test_send (pair[1], "c", 1, &ux[0], 1);
  close (ux[0]);
  close (ux[1]);
  test_refused (pair[0], before, "not an IPv4 or IPv6 socket");

  assert_int_equal (pipe2 (p, O_CLOEXEC), 0);
  test_send (pair[1], "c", 1, &p[0], 1);
  close (p[0]);
  close (p[1]);
  test_refused (pair[0], before, "not a socket");

  /* A good one after all that still comes through.  */
  int conn = test_connection (&client);
  test_send (pair[1], "c", 1, &conn, 1);
  close (conn);
  assert_int_equal (netchan_take (pair[0], &fd, &err), NETCHAN_FD);
  close (fd);
  close (client);
  close (pair[0]);
  close (pair[1]);
}

/* Records that are not one byte with one descriptor: two descriptors
 * (both closed), none, another byte, more data than a byte (truncated),
 * and more descriptors than fit (truncated control data: those that
 * fit are closed, the kernel drops the rest).  */
static void
test_refuse_records (void **state)
{
  int pair[2], c1, c2;
  int many[NETCHAN_MAX_FDS + 4];

  (void) state;
  test_channel (pair);
  int before = test_open_fds ();

  int two[2] = { test_connection (&c1), test_connection (&c2) };
  test_send (pair[1], "c", 1, two, 2);
  close (two[0]);
  close (two[1]);
  close (c1);
  close (c2);
  test_refused (pair[0], before, "more than one descriptor");

  test_send (pair[1], "c", 1, NULL, 0);
  test_refused (pair[0], before, "without a descriptor");

  int conn = test_connection (&c1);
  test_send (pair[1], "x", 1, &conn, 1);
  test_refused (pair[0], before + 2, "not a connection");

  test_send (pair[1], "cc", 2, &conn, 1);
  test_refused (pair[0], before + 2, "a truncated record");

  for (size_t i = 0; i < sizeof many / sizeof *many; i++)
    many[i] = conn;
  test_send (pair[1], "c", 1, many, sizeof many / sizeof *many);
  test_refused (pair[0], before + 2, "a truncated record");
  close (conn);
  close (c1);
  assert_int_equal (test_open_fds (), before);
  close (pair[0]);
  close (pair[1]);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_take_connection),
    cmocka_unit_test (test_refuse_kinds),
    cmocka_unit_test (test_refuse_records),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
