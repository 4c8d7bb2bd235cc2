/* SHA-256 through libcrypto's EVP interface, or nettle where configure
 * found only that.  */
#include <config.h>

#include "sandbox/sha256.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/buf.h"

#if defined HAVE_LIBCRYPTO
#include <openssl/evp.h>
#elif defined HAVE_NETTLE
#include <nettle/sha2.h>
#else
#error "configure found no SHA-256 provider"
#endif

#define SHA256_BYTES 32
#define SHA256_CHUNK 65536

struct sha256_state
{
#if defined HAVE_LIBCRYPTO
  EVP_MD_CTX *md;
#else
  struct sha256_ctx ctx;
#endif
};

static void
sha256_begin (struct sha256_state *c)
{
#if defined HAVE_LIBCRYPTO
  c->md = EVP_MD_CTX_new ();
  if (c->md == NULL || EVP_DigestInit_ex (c->md, EVP_sha256 (), NULL) != 1)
    abort (); /* only out of memory gets here */
#else
  sha256_init (&c->ctx);
#endif
}

static void
sha256_add (struct sha256_state *c, const void *p, size_t n)
{
#if defined HAVE_LIBCRYPTO
  if (EVP_DigestUpdate (c->md, p, n) != 1)
    abort ();
#else
  sha256_update (&c->ctx, n, p);
#endif
}

/* Finish into hex and release the context.  */
static void
sha256_end (struct sha256_state *c, char *hex)
{
  unsigned char raw[SHA256_BYTES];
#if defined HAVE_LIBCRYPTO
  unsigned int len = 0;
  if (EVP_DigestFinal_ex (c->md, raw, &len) != 1 || len != SHA256_BYTES)
    abort ();
  EVP_MD_CTX_free (c->md);
  c->md = NULL;
#else
  sha256_digest (&c->ctx, SHA256_BYTES, raw);
#endif
  buf_hex (hex, raw, SHA256_BYTES);
}

void
sha256_buffer (const void *p, size_t n, char *hex)
{
  struct sha256_state c;

  sha256_begin (&c);
  sha256_add (&c, p, n);
  sha256_end (&c, hex);
}

/* Everything readable from fd into c: from its offset with read when at
 * is NULL (the offset moves to the end), else with pread from *at (the
 * descriptor's offset neither used nor moved).  */
static int
sha256_add_fd (struct sha256_state *c, int fd, off_t *at)
{
  char *chunk = malloc (SHA256_CHUNK);

  if (chunk == NULL)
    abort ();
  for (;;)
    {
      ssize_t n = at == NULL ? read (fd, chunk, SHA256_CHUNK)
                             : pread (fd, chunk, SHA256_CHUNK, *at);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          free (chunk);
          errno = saved;
          return -1;
        }
      if (n == 0)
        break;
      sha256_add (c, chunk, (size_t) n);
      if (at != NULL)
        *at += n;
    }
  free (chunk);
  return 0;
}

int
sha256_fd (int fd, char *hex, struct cr_error **err)
{
  struct sha256_state c;

  sha256_begin (&c);
  int rc = sha256_add_fd (&c, fd, NULL);
  int saved = errno;
  sha256_end (&c, hex);
  if (rc < 0)
    return cr_error_set (err, saved, "reading a file to digest it");
  return 0;
}

/* --- a file's digest beside other work ------------------------------------
 * The context is begun by the caller, so the thread takes no lock of the
 * provider's (libcrypto fetches the algorithm under one, which a child
 * forked meanwhile would find held); it only reads and hashes.  */

struct sha256_job
{
  struct sha256_state c;
  int fd;
  int rc, error; /* the read's result, and errno when it failed */
  bool threaded; /* whether a thread of its own computes it */
  pthread_t thread;
};

static void *
sha256_job_run (void *arg)
{
  struct sha256_job *job = arg;
  off_t at = 0;

  job->rc = sha256_add_fd (&job->c, job->fd, &at);
  job->error = job->rc < 0 ? errno : 0;
  return NULL;
}

struct sha256_job *
sha256_file_start (int fd)
{
  struct sha256_job *job = calloc (1, sizeof *job);
  sigset_t all, old;

  if (job == NULL)
    abort ();
  job->fd = fd;
  sha256_begin (&job->c);
  /* The thread takes no signal: every one stays the main thread's, where
   * crucible's handlers and signalfd expect it.  */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  job->threaded = pthread_create (&job->thread, NULL, sha256_job_run, job) == 0;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (!job->threaded)
    sha256_job_run (job);
  return job;
}

int
sha256_file_finish (struct sha256_job *job, char *hex, struct cr_error **err)
{
  if (job->threaded)
    pthread_join (job->thread, NULL);
  sha256_end (&job->c, hex);
  int rc = job->rc, saved = job->error;
  free (job);
  if (rc < 0)
    return cr_error_set (err, saved, "reading a file to digest it");
  return 0;
}
