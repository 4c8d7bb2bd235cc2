/* The host's end of the status channel.  */
#include <config.h>

#include "sandbox/channel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int
channel_read (int fd, const char *who, struct broker_msg *msg,
              struct cr_error **err)
{
  ssize_t n = recv (fd, msg, sizeof *msg, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return CHANNEL_NONE;
  if (n == 0 || (n < 0 && errno == ECONNRESET))
    return CHANNEL_ENDED;
  if (n < 0)
    return cr_error_set (err, errno, "reading the status of %s", who);
  if (n != (ssize_t) sizeof *msg || msg->magic != BROKER_STATUS_MAGIC)
    return cr_error_set (err, 0, "%s sent a malformed status message", who);
  return CHANNEL_MESSAGE;
}

int
channel_event (const struct broker_msg *msg, const char *who,
               struct sandbox_event *ev, struct cr_error **err)
{
  memset (ev, 0, sizeof *ev);
  switch (msg->type)
    {
    case BROKER_MSG_STARTED:
      return 0;
    case BROKER_MSG_EXITED:
      ev->kind = SANDBOX_EVENT_EXITED;
      ev->wait_status = msg->value;
      return 1;
    case BROKER_MSG_FAILED:
      ev->kind = SANDBOX_EVENT_FAILED;
      ev->error = msg->value;
      /* The keeper's stage, in the words every backend uses.  */
      ev->failure = msg->stage == BROKER_STAGE_EXEC ? SANDBOX_FAILED_EXEC
                                                    : SANDBOX_FAILED_SETUP;
      return 1;
    case BROKER_MSG_DONE:
      ev->kind = SANDBOX_EVENT_DONE;
      return 1;
    default:
      return cr_error_set (err, 0, "%s sent an unknown status message %u", who,
                           msg->type);
    }
}

int
channel_send_stop (int fd, int signo)
{
  struct broker_msg msg = { .magic = BROKER_STATUS_MAGIC,
                            .type = BROKER_MSG_STOP,
                            .value = signo };
  if (fd < 0)
    {
      errno = EBADF;
      return -1;
    }
  if (send (fd, &msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t) sizeof msg)
    return -1;
  return 0;
}

/* The most descriptors a GO carries (status.h).  */
#define CHANNEL_GO_MAX_FDS 5

/* Send GO with the n descriptors fds.  */
static int
channel_send_go_fds (int fd, const int *fds, size_t n)
{
  struct broker_msg msg
      = { .magic = BROKER_STATUS_MAGIC, .type = BROKER_MSG_GO };
  union
  {
    char buf[CMSG_SPACE (CHANNEL_GO_MAX_FDS * sizeof (int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = { .iov_base = &msg, .iov_len = sizeof msg };
  struct msghdr mh = { .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = CMSG_SPACE (n * sizeof (int)) };
  struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
  ssize_t sent;

  if (n > CHANNEL_GO_MAX_FDS)
    {
      errno = EINVAL;
      return -1;
    }
  memset (u.buf, 0, sizeof u.buf);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (n * sizeof (int));
  memcpy (CMSG_DATA (c), fds, n * sizeof (int));
  do
    sent = sendmsg (fd, &mh, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent == (ssize_t) sizeof msg ? 0 : -1;
}

int
channel_send_go (int fd, int output_fd, int env_fd, int args_fd)
{
  int fds[] = { output_fd, env_fd, args_fd };

  return channel_send_go_fds (fd, fds, sizeof fds / sizeof *fds);
}

int
channel_send_go_stdio (int fd, int output_fd, int env_fd, int args_fd,
                       int input_fd, int error_fd)
{
  int fds[] = { output_fd, env_fd, args_fd, input_fd, error_fd };

  return channel_send_go_fds (fd, fds, sizeof fds / sizeof *fds);
}
