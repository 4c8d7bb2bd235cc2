/* libFuzzer target for the MCP client (core/mcpclient.c): the input is
 * what a server writes on its standard output, given to a client over a
 * socketpair in pieces, then the end of file.  The client hides "SECRET",
 * declines every elicitation at once, and calls the tool "a" when it is
 * ready; what it writes to the server is read and dropped.
 * tests/fuzz/replay.c runs the same function over
 * tests/fuzz/corpus-mcpclient without libFuzzer.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/mcpclient.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* What the client told.  */
struct fuzz_mcp
{
  struct mcpclient *c;
  bool failed, called;
};

/* Every "SECRET" becomes stars.  */
static void
fuzz_mcp_hide (void *data, char *s, size_t len)
{
  for (char *q = s; (q = memmem (q, len - (size_t) (q - s), "SECRET", 6));)
    memset (q, '*', 6);
}

static void
fuzz_mcp_done (void *data, const struct mcpclient_result *r)
{
}

/* Ready: call the tool "a" (refused when the server has none).  */
static void
fuzz_mcp_ready (void *data, struct mcpclient *c)
{
  struct fuzz_mcp *f = data;
  struct cr_error *err = NULL;
  if (!f->called)
    mcpclient_call (c, "a", "{\"x\":1}", 1000, fuzz_mcp_done, f, &err);
  f->called = true;
  cr_error_free (err);
}

static void
fuzz_mcp_failed (void *data, struct mcpclient *c, const struct cr_error *err)
{
  struct fuzz_mcp *f = data;
  f->failed = true;
}

/* Decline at once.  */
static void
fuzz_mcp_elicit (void *data, struct mcpclient *c,
                 struct mcpclient_elicitation *e, const char *message,
                 const char *schema)
{
  mcpclient_elicit_answer (c, e, MCPCLIENT_ELICIT_DECLINE, NULL);
}

/* Read and drop what the client wrote.  */
static void
fuzz_mcp_drain (int fd)
{
  char sink[65536];
  while (read (fd, sink, sizeof sink) > 0)
    ;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int a[2], b[2];
  struct fuzz_mcp f = { 0 };
  if (socketpair (AF_UNIX, SOCK_STREAM, 0, a) < 0
      || socketpair (AF_UNIX, SOCK_STREAM, 0, b) < 0)
    abort ();
  fcntl (a[1], F_SETFL, O_NONBLOCK);
  fcntl (b[1], F_SETFL, O_NONBLOCK);
  struct loop *loop = loop_new (NULL);
  struct mcpclient_config cfg = {
    .server = "fuzz",
    .loop = loop,
    .from_server = a[0],
    .to_server = b[0],
    .root = "/work/ws",
    .handshake_ms = 1000,
    .frame_max = 65536,
    .hide = fuzz_mcp_hide,
    .elicit = fuzz_mcp_elicit,
    .listener
    = { .ready = fuzz_mcp_ready, .failed = fuzz_mcp_failed, .data = &f },
  };
  f.c = mcpclient_new (&cfg, NULL);
  if (loop == NULL || f.c == NULL)
    abort ();
  /* In pieces, as a pipe delivers them, each read by the client.  */
  size_t off = 0;
  for (int turns = 0; off < size && !f.failed && turns < 10000; turns++)
    {
      size_t piece = size - off < 4096 ? size - off : 4096;
      ssize_t n = write (a[1], data + off, piece);
      if (n > 0)
        off += (size_t) n;
      else if (errno != EAGAIN)
        break;
      loop_run_once (loop, 0, NULL);
      fuzz_mcp_drain (b[1]);
    }
  shutdown (a[1], SHUT_WR);
  for (int turns = 0; !f.failed && turns < 8; turns++)
    {
      loop_run_once (loop, 0, NULL);
      fuzz_mcp_drain (b[1]);
    }
  mcpclient_free (f.c);
  loop_free (loop);
  close (a[0]);
  close (a[1]);
  close (b[0]);
  close (b[1]);
  return 0;
}
