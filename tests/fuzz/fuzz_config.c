/* libFuzzer target for the configuration reader (core/config.c): one file
 * as the home file and as a project file.  A file that is read holds no
 * NUL or invalid UTF-8 in what it hands on; a refusal names the file and
 * carries no control character.  tests/fuzz/replay.c runs the same
 * function over tests/fuzz/corpus-config without libFuzzer.  */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "lib/error.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Abort if a message could drive a terminal or names no file.  */
static void
check_message (const char *msg, const char *path)
{
  if (strncmp (msg, path, strlen (path)) != 0)
    abort ();
  for (const unsigned char *p = (const unsigned char *) msg; *p; p++)
    if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
      abort ();
}

/* Read text as a file of origin, then free everything.  */
static void
read_as (const char *text, size_t len, enum config_origin origin,
         const char *path)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  if (config_merge_text (cfg, text, len, path, origin, "/work/ws", &err) < 0)
    {
      if (err == NULL)
        abort ();
      check_message (err->msg, path);
      cr_error_free (err);
    }
  for (size_t i = 0; i < cfg->deny.count; i++)
    if (memchr (cfg->deny.items[i], '\033', strlen (cfg->deny.items[i])))
      abort ();
  config_free (cfg);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 1048576)
    return 0;
  read_as ((const char *) data, size, CONFIG_HOME, "/home/h/.crucible/config.json");
  read_as ((const char *) data, size, CONFIG_PROJECT, "/work/ws/.crucible/config.json");
  return 0;
}
