/* A publication run in a child process, answered through a pipe.  */
#include <config.h>

#include "core/pubjob.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* The answer's encoding: rc (int32); for rc < 0 the error's message;
 * otherwise busy and published_nothing (one byte each), the outcome, paths
 * and bytes (uint64), the note.  A string is its length (uint32, all ones
 * for NULL) and its bytes.  */
#define PUBJOB_NULL UINT32_MAX

/* The journal's words an outcome may be; anything else is "unknown".  */
static const char *const pubjob_outcomes[]
    = { "unchanged",   "published",   "busy",      "refused",
        "rolled_back", "quarantined", "discarded", "failed" };

struct pubjob
{
  struct loop *loop;
  pid_t pid;
  int fd;         /* read end of the answer's pipe, or -1 once it ended */
  uint64_t timer; /* the loop's timer that tells the owner, or 0 */
  struct buf answer;
  pubjob_done_fn done;
  void *data;
};

/* --- the child ------------------------------------------------------------ */

static void
pubjob_put_str (struct buf *b, const char *s)
{
  uint32_t n = s != NULL ? (uint32_t) strlen (s) : PUBJOB_NULL;
  buf_append (b, &n, sizeof n);
  if (s != NULL)
    buf_append (b, s, n);
}

/* Encode sandbox_publish's answer (rc, then pub or err) into b.  */
static void
pubjob_encode (struct buf *b, int32_t rc, const struct sandbox_publication *pub,
               const struct cr_error *err)
{
  buf_append (b, &rc, sizeof rc);
  if (rc < 0)
    pubjob_put_str (b, err != NULL ? err->msg : "no reason given");
  else
    {
      uint8_t flags[2] = { pub->busy, pub->published_nothing };
      uint64_t counts[2] = { pub->paths, pub->bytes };
      buf_append (b, flags, sizeof flags);
      pubjob_put_str (b, pub->outcome);
      buf_append (b, counts, sizeof counts);
      pubjob_put_str (b, pub->note);
    }
}

/* Publish and write the answer to fd; never returns.  */
static _Noreturn void
pubjob_child (int fd, struct sandbox_session *session, const char *call_id)
{
  struct sandbox_publication pub = { 0 };
  struct cr_error *err = NULL;
  struct buf b = BUF_INIT;
  int32_t rc = sandbox_publish (session, call_id, &pub, &err) < 0 ? -1 : 0;

  pubjob_encode (&b, rc, &pub, err);
  for (size_t done = 0; done < b.len;)
    {
      ssize_t n = write (fd, b.data + done, b.len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit (1);
      done += (size_t) n;
    }
  /* The answer is whole once the pipe is closed: the parent takes it at
   * once, and what the publication left to remove is removed after.  */
  close (fd);
  if (rc == 0)
    sandbox_publish_tidy (session);
  /* _exit: the parent's atexit handlers and buffered streams are its own.  */
  _exit (0);
}

/* --- children still tidying ------------------------------------------------
 * A child that has answered may still be removing what its publication
 * left (pubjob_child): it is not waited for then, but reaped later, and
 * pubjob_wait_tidied waits for every one before crucible leaves.  */

#define PUBJOB_TIDYING_MAX 64

static pid_t pubjob_tidying[PUBJOB_TIDYING_MAX];
static size_t pubjob_n_tidying;

/* Reap the children done tidying; with wait, wait for them all.  */
static void
pubjob_reap (bool wait)
{
  size_t kept = 0;
  for (size_t i = 0; i < pubjob_n_tidying; i++)
    {
      pid_t r;
      while ((r = waitpid (pubjob_tidying[i], NULL, wait ? 0 : WNOHANG)) < 0
             && errno == EINTR)
        ;
      if (r == 0)
        pubjob_tidying[kept++] = pubjob_tidying[i];
    }
  pubjob_n_tidying = kept;
}

/* Reap pid if it has ended; otherwise keep it to reap later (or wait for
 * it now when too many are kept).  */
static void
pubjob_reap_later (pid_t pid)
{
  pid_t r;
  while ((r = waitpid (pid, NULL, WNOHANG)) < 0 && errno == EINTR)
    ;
  if (r != 0)
    return;
  pubjob_reap (false);
  if (pubjob_n_tidying == PUBJOB_TIDYING_MAX)
    pubjob_reap (true);
  pubjob_tidying[pubjob_n_tidying++] = pid;
}

void
pubjob_wait_tidied (void)
{
  pubjob_reap (true);
}

/* --- the parent ----------------------------------------------------------- */

/* Take n bytes at *at from the answer into dst; -1 when it is short.  */
static int
pubjob_take (const struct buf *b, size_t *at, void *dst, size_t n)
{
  if (b->len - *at < n)
    return -1;
  memcpy (dst, b->data + *at, n);
  *at += n;
  return 0;
}

/* Take a string (NULL allowed) from the answer; -1 when it is short.  */
static int
pubjob_take_str (const struct buf *b, size_t *at, char **out)
{
  uint32_t n;
  *out = NULL;
  if (pubjob_take (b, at, &n, sizeof n) < 0)
    return -1;
  if (n == PUBJOB_NULL)
    return 0;
  if (b->len - *at < n)
    return -1;
  *out = xstrndup (b->data + *at, n);
  *at += n;
  return 0;
}

/* The static word for an outcome the child named.  */
static const char *
pubjob_outcome (const char *word)
{
  for (size_t i = 0;
       word != NULL && i < sizeof pubjob_outcomes / sizeof *pubjob_outcomes;
       i++)
    if (strcmp (word, pubjob_outcomes[i]) == 0)
      return pubjob_outcomes[i];
  return "unknown";
}

/* Read what has arrived; at the end of the answer, tell the owner.  */
static void
pubjob_readable (struct loop *loop, int fd, short revents, void *data)
{
  struct pubjob *job = data;
  char chunk[4096];
  (void) revents;

  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n > 0)
        {
          buf_append (&job->answer, chunk, (size_t) n);
          continue;
        }
      break; /* the end, or an error: what arrived is all there is */
    }
  loop_remove_fd (loop, fd);
  close (fd);
  job->fd = -1;
  job->done (job->data);
}

/* The pipe could not be watched: let the owner ask for the answer now.  */
static void
pubjob_unwatched (struct loop *loop, void *data)
{
  struct pubjob *job = data;
  (void) loop;
  job->timer = 0;
  job->done (job->data);
}

/* A job whose answer the backend gave at once (sandbox_publish_inline: a
 * command that wrote nothing), with no child: the owner is told from the
 * loop, as when a child's answer has arrived.  */
static struct pubjob *
pubjob_answered (struct loop *loop, struct sandbox_publication *pub,
                 pubjob_done_fn done, void *data)
{
  struct pubjob *job = xcalloc (1, sizeof *job);

  job->loop = loop;
  job->pid = -1;
  job->fd = -1;
  job->answer = (struct buf) BUF_INIT;
  job->done = done;
  job->data = data;
  pubjob_encode (&job->answer, 0, pub, NULL);
  sandbox_publication_clear (pub);
  job->timer = loop_add_timer (loop, 0, pubjob_unwatched, job);
  return job;
}

int
pubjob_start (struct loop *loop, struct sandbox_session *session,
              const char *call_id, pubjob_done_fn done, void *data,
              struct pubjob **out, struct cr_error **err)
{
  struct sandbox_publication quick;
  int p[2];

  pubjob_reap (false);
  /* Forking costs more than what a command that wrote nothing needs.  */
  if (sandbox_publish_inline (session, &quick) == 1)
    {
      *out = pubjob_answered (loop, &quick, done, data);
      return 0;
    }
  if (pipe2 (p, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the publication's pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int saved = errno;
      close (p[0]);
      close (p[1]);
      return cr_error_set (err, saved, "starting the publication");
    }
  if (pid == 0)
    {
      /* A publication begun is carried to its end: the polite ending
       * signals crucible's process group may get are not for it (and the
       * handlers inherited from the loop would write to a pipe that is
       * closed next).  */
      static const int ignored[]
          = { SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPIPE };
      for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++)
        signal (ignored[i], SIG_IGN);
      /* Keep only the answer's pipe: another command's status channel
       * held open here would outlive crucible with this child.  */
      if (dup2 (p[1], STDERR_FILENO + 1) < 0)
        _exit (1);
      close_range (STDERR_FILENO + 2, ~0U, 0);
      pubjob_child (STDERR_FILENO + 1, session, call_id);
    }
  close (p[1]);
  fcntl (p[0], F_SETFL, O_NONBLOCK);
  struct pubjob *job = xcalloc (1, sizeof *job);
  job->loop = loop;
  job->pid = pid;
  job->fd = p[0];
  job->answer = (struct buf) BUF_INIT;
  job->done = done;
  job->data = data;
  if (loop_add_fd (loop, job->fd, POLLIN, pubjob_readable, job, err) < 0)
    {
      /* Not watched: the owner is told at once and pubjob_finish waits.  */
      cr_error_clear (err);
      job->timer = loop_add_timer (loop, 0, pubjob_unwatched, job);
    }
  *out = job;
  return 0;
}

/* Read the rest of the answer, blocking (crucible is leaving, or the pipe
 * could not be watched).  */
static void
pubjob_drain (struct pubjob *job)
{
  char chunk[4096];
  fcntl (job->fd, F_SETFL, 0);
  for (;;)
    {
      ssize_t n = read (job->fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      buf_append (&job->answer, chunk, (size_t) n);
    }
  loop_remove_fd (job->loop, job->fd);
  close (job->fd);
  job->fd = -1;
}

int
pubjob_finish (struct pubjob *job, struct sandbox_publication *out,
               struct cr_error **err)
{
  const struct buf *b = &job->answer;
  size_t at = 0;
  int32_t rc;
  uint8_t flags[2];
  uint64_t counts[2];
  cleanup_free char *word = NULL;
  int ret = -1;

  memset (out, 0, sizeof *out);
  /* Finished before the loop told the owner (crucible is leaving).  */
  if (job->timer != 0)
    loop_cancel_timer (job->loop, job->timer);
  if (job->fd >= 0)
    pubjob_drain (job);
  /* The answer is in (the child closed its pipe): the child may still be
   * tidying.  */
  if (job->pid > 0)
    pubjob_reap_later (job->pid);
  if (pubjob_take (b, &at, &rc, sizeof rc) < 0)
    cr_error_set (err, 0, "the publishing process ended without an answer");
  else if (rc < 0)
    {
      cleanup_free char *msg = NULL;
      pubjob_take_str (b, &at, &msg);
      cr_error_set (err, 0, "%s", msg != NULL ? msg : "no reason given");
    }
  else if (pubjob_take (b, &at, flags, sizeof flags) < 0
           || pubjob_take_str (b, &at, &word) < 0
           || pubjob_take (b, &at, counts, sizeof counts) < 0
           || pubjob_take_str (b, &at, &out->note) < 0)
    {
      sandbox_publication_clear (out);
      cr_error_set (err, 0, "the publishing process's answer was cut short");
    }
  else
    {
      out->busy = flags[0];
      out->published_nothing = flags[1];
      out->outcome = pubjob_outcome (word);
      out->paths = counts[0];
      out->bytes = counts[1];
      ret = 0;
    }
  buf_free (&job->answer);
  free (job);
  return ret;
}
