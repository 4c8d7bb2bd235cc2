/* The host's end of the net channel (sandbox/netchan.h).  */
#include <config.h>

#include "sandbox/netchan.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"

/* Close every descriptor a record carried.  */
static void
netchan_close_all (const int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* The descriptors of msg's SCM_RIGHTS records, into fds (at most
 * NETCHAN_MAX_FDS); *other set when a control record of any other kind
 * came.  Returns how many.  */
static size_t
netchan_collect (struct msghdr *msg, int *fds, bool *other)
{
  size_t n = 0;

  *other = false;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (msg); c != NULL;
       c = CMSG_NXTHDR (msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        {
          *other = true;
          continue;
        }
      size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < k && n < NETCHAN_MAX_FDS; i++)
        memcpy (&fds[n++], CMSG_DATA (c) + i * sizeof (int), sizeof (int));
    }
  return n;
}

/* One socket option as an int, or -1.  */
static int
netchan_sockopt (int fd, int level, int name)
{
  int v = 0;
  socklen_t len = sizeof v;

  if (getsockopt (fd, level, name, &v, &len) < 0 || len != sizeof v)
    return -1;
  return v;
}

/* Why fd is not a connection the proxy may take, or NULL when it is: a
 * socket, of AF_INET or AF_INET6, SOCK_STREAM over TCP, not a listener,
 * with a peer.  A listener or a datagram socket handed over would let the
 * proxy be made to serve something other than one accepted stream; a
 * file or a Unix socket is no connection from inside at all.  */
static const char *
netchan_audit (int fd)
{
  struct stat st;
  struct sockaddr_storage peer;
  socklen_t len = sizeof peer;

  if (fstat (fd, &st) < 0 || !S_ISSOCK (st.st_mode))
    return "not a socket";
  int domain = netchan_sockopt (fd, SOL_SOCKET, SO_DOMAIN);
  if (domain != AF_INET && domain != AF_INET6)
    return "not an IPv4 or IPv6 socket";
  if (netchan_sockopt (fd, SOL_SOCKET, SO_TYPE) != SOCK_STREAM
      || netchan_sockopt (fd, SOL_SOCKET, SO_PROTOCOL) != IPPROTO_TCP)
    return "not a TCP stream";
  if (netchan_sockopt (fd, SOL_SOCKET, SO_ACCEPTCONN) != 0)
    return "a listening socket";
  if (getpeername (fd, (struct sockaddr *) &peer, &len) < 0)
    return "not connected";
  return NULL;
}

/* Why a record of n bytes (what it carried in m, or the one byte) with
 * got descriptors is not one the broker sends, or NULL.  */
static const char *
netchan_shape (ssize_t n, char byte, const struct broker_net_msg *m, size_t got)
{
  bool with_fd;

  bool record = n == (ssize_t) sizeof *m && m->zero == 0;
  bool connection = n == 1 && byte == NETCHAN_CONNECTION;
  bool carries
      = record
        && (m->kind == BROKER_NET_CONNECTED || m->kind == BROKER_NET_ACCEPTED);
  bool plain = record
               && (m->kind == BROKER_NET_LISTENING || m->kind == BROKER_NET_GONE
                   || m->kind == BROKER_NET_FAILED);
  if (!connection && !carries && !plain)
    return "a record that is not a connection";
  with_fd = connection || carries;
  if (!with_fd && got > 0)
    return "a descriptor on a record that carries none";
  if (with_fd && got != 1)
    return got == 0 ? "a record without a descriptor"
                    : "a record with more than one descriptor";
  return NULL;
}

/* Receive one record of at most len bytes into buf and check it: whole,
 * a shape the broker sends (netchan_shape), and its descriptor, when it
 * carries one, a connection (netchan_audit), made non-blocking.
 * NETCHAN_NONE, NETCHAN_ENDED, -1 with *err (anything received closed),
 * or NETCHAN_FD with *n_out the record's length and *fd_out its
 * descriptor, or -1 for a record that carries none.  */
static int
netchan_receive (int fd, void *buf, size_t len, ssize_t *n_out, int *fd_out,
                 struct cr_error **err)
{
  static const struct broker_net_msg none;
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (NETCHAN_MAX_FDS * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  int fds[NETCHAN_MAX_FDS];
  bool other;
  ssize_t n;

  *fd_out = -1;
  if (fd < 0)
    return NETCHAN_ENDED;
  /* MSG_CMSG_CLOEXEC: what arrives never reaches a child of the host,
   * not even for the moment before it is checked.  */
  do
    n = recvmsg (fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return NETCHAN_NONE;
  if (n < 0 && errno == ECONNRESET)
    return NETCHAN_ENDED;
  if (n < 0)
    return cr_error_set (err, errno, "reading the command's net channel");
  size_t got = netchan_collect (&msg, fds, &other);
  if (n == 0 && got == 0 && !other)
    return NETCHAN_ENDED;
  /* Anything but a record the broker sends, whole, is refused: a
   * truncated record may have lost descriptors on the way (the kernel
   * drops what does not fit), and a second descriptor in one record is
   * not something the broker sends.  */
  const struct broker_net_msg *m
      = len == sizeof *m ? (const struct broker_net_msg *) buf : &none;
  const char *why = NULL;
  if (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))
    why = "a truncated record";
  else if (other)
    why = "a control record other than a descriptor";
  else
    why = netchan_shape (n, n > 0 ? *(const char *) buf : 0, m, got);
  if (why == NULL && got == 1)
    why = netchan_audit (fds[0]);
  if (why != NULL)
    {
      netchan_close_all (fds, got);
      return cr_error_set (
          err, 0, "refused what the command's net channel sent: %s", why);
    }
  *n_out = n;
  if (got == 0)
    return NETCHAN_FD;
  int flags = fcntl (fds[0], F_GETFL);
  if (flags < 0 || fcntl (fds[0], F_SETFL, flags | O_NONBLOCK) < 0)
    {
      int saved = errno;
      close (fds[0]);
      return cr_error_set (err, saved,
                           "making a connection from the command "
                           "non-blocking");
    }
  *fd_out = fds[0];
  return NETCHAN_FD;
}

int
netchan_read (int fd, struct netchan_record *rec, struct cr_error **err)
{
  struct broker_net_msg m = { 0 };
  ssize_t n = 0;

  *rec = (struct netchan_record){ .fd = -1 };
  int r = netchan_receive (fd, &m, sizeof m, &n, &rec->fd, err);
  if (r != NETCHAN_FD)
    return r;
  rec->kind = n == 1 ? NETCHAN_CONNECTION : m.kind;
  rec->port = n == 1 ? 0 : m.port;
  rec->id = n == 1 ? 0 : m.id;
  return NETCHAN_FD;
}

int
netchan_take (int fd, int *fd_out, struct cr_error **err)
{
  /* One byte: a longer record (any of the ports' records) is truncated,
   * and refused as such.  */
  char byte = 0;
  ssize_t n = 0;
  return netchan_receive (fd, &byte, 1, &n, fd_out, err);
}

int
netchan_send (int fd, int kind, unsigned port, uint32_t id,
              struct cr_error **err)
{
  struct broker_net_msg m
      = { .kind = (uint8_t) kind, .port = (uint16_t) port, .id = id };
  ssize_t n;

  do
    n = send (fd, &m, sizeof m, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t) sizeof m)
    return cr_error_set (err, n < 0 ? errno : 0,
                         "asking the command's broker about port %u", port);
  return 0;
}

int
sandbox_network_take (struct sandbox_session *s, int *fd_out,
                      struct cr_error **err)
{
  return netchan_take (sandbox_network_fd (s), fd_out, err);
}
