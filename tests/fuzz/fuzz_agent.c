/* libFuzzer target for the agent protocol reader (core/agent.c): one
 * message line as an agent writes it.  A line that is read must hold no
 * NUL in what it hands on, and everything is freed, so the sanitizers see
 * leaks, overflows and undefined behaviour.  tests/fuzz/replay.c runs the
 * same function over tests/fuzz/corpus-agent without libFuzzer.  */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/agent.h"
#include "core/env.h"
#include "lib/buf.h"
#include "lib/error.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Abort unless s is valid UTF-8.  */
static void
check_utf8 (const char *s, size_t n)
{
  for (size_t i = 0, k; i < n; i += k)
    if ((k = utf8_char_len ((const unsigned char *) s + i, n - i)) == 0)
      abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct agent_msg msg;
  struct cr_error *err = NULL;
  const char *line = (const char *) data;

  if (size > AGENT_MAX_LINE)
    return 0;
  if (agent_parse_line (line, size, &msg, &err) < 0)
    {
      if (err == NULL || err->msg == NULL)
        abort ();
      cr_error_free (err);
    }
  else if (msg.type == AGENT_MSG_BASH)
    {
      /* What is run is what was sent: no string was cut at a NUL.  */
      if (msg.command == NULL || msg.id == NULL || *msg.command == '\0')
        abort ();
      for (size_t i = 0; i < msg.n_env; i++)
        if (strlen (msg.env[i].value) != msg.env[i].value_len)
          abort ();
    }
  /* Whatever was read goes back out as valid UTF-8.  */
  struct buf out = BUF_INIT;
  agent_json_string (&out, line, size);
  check_utf8 (out.data, out.len);
  buf_free (&out);
  agent_msg_clear (&msg);
  return 0;
}
