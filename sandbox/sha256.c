/* SHA-256 through libcrypto's EVP interface, or nettle where configure
 * found only that.  */
#include <config.h>

#include "sandbox/sha256.h"

#include <errno.h>
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

int
sha256_fd (int fd, char *hex, struct cr_error **err)
{
  struct sha256_state c;
  char *chunk = malloc (SHA256_CHUNK);

  if (chunk == NULL)
    abort ();
  sha256_begin (&c);
  for (;;)
    {
      ssize_t n = read (fd, chunk, SHA256_CHUNK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          sha256_end (&c, hex);
          free (chunk);
          return cr_error_set (err, saved, "reading a file to digest it");
        }
      if (n == 0)
        break;
      sha256_add (&c, chunk, (size_t) n);
    }
  free (chunk);
  sha256_end (&c, hex);
  return 0;
}
