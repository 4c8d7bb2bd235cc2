/* libFuzzer target for core/cmdline.c and core/rules.c.
 *
 * The input is a command line.  When it holds a NUL byte, what comes before
 * the first one is compiled as an allow and a deny rule as well, so rule
 * syntax is fuzzed too; the rest is the line.  Every entry point a caller
 * uses is exercised and everything is freed, so the sanitizers see leaks,
 * overflows and undefined behaviour.  tests/fuzz/replay.c runs the same
 * function over the stored corpus without libFuzzer.  */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/rules.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Exercise one reading against one set of rules.  */
static void
exercise (const struct rules *r, const struct cmdline *cl)
{
  const char *rule = NULL;
  struct rules_denial *d = NULL;

  (void) rules_decide (r, cl, false, &rule);
  (void) rules_decide (r, cl, true, NULL);
  free (rules_denials (r, cl, &d) ? d : NULL);
  free (rules_deny_message (r, cl));
  if (cl == NULL)
    return;
  (void) cmdline_begins_with_sleep (cl);
  for (size_t i = 0; i < cl->n; i++)
    {
      const struct cmdline_command *c = &cl->cmds[i];
      if (c->argv[c->argc] != NULL || c->assign[c->n_assign] != NULL
          || c->redirs[c->n_redirs] != NULL
          || (c->argc > 0 && c->program >= c->argc))
        abort ();
      free (cmdline_command_text (c));
      free (cmdline_command_full_text (c));
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char *allow[] = { "Bash(git status)", "Bash(npm run *)",
                           "Bash(echo *)", "Bash(sleep *)", "ls *" };
  static char *deny[]
      = { "Bash(rm *)", "Bash(git push --force*)", "Bash(curl * \\* \\\\)" };
  const char *line = (const char *) data;
  size_t len = size;
  char *pattern = NULL;
  struct cr_error *err = NULL;
  struct cmdline *cl = NULL;
  struct rules *fixed, *fuzzed = NULL;

  const uint8_t *nul = memchr (data, 0, size);
  if (nul != NULL)
    {
      pattern = strndup ((const char *) data, (size_t) (nul - data));
      line = (const char *) nul + 1;
      len = size - (size_t) (nul - data) - 1;
      char *one[] = { pattern };
      fuzzed = rules_new (len % 2 ? "fullAccess" : "ask", one, 1, one, 1, &err);
      if ((fuzzed == NULL) != (err != NULL))
        abort ();
      cr_error_free (err);
      err = NULL;
    }
  fixed = rules_new (NULL, allow, 5, deny, 3, &err);
  if (fixed == NULL)
    abort ();

  /* A NUL anywhere in the line is refused, never read up to (sh -c would
   * cut the line there).  */
  bool has_nul = memchr (line, 0, len) != NULL;
  int read = cmdline_read (line, len, &cl, &err);
  if (has_nul && read == 0)
    abort ();
  if (read < 0)
    {
      if (cl != NULL || err == NULL || err->msg == NULL)
        abort ();
      cr_error_free (err);
      if (rules_decide (fixed, NULL, false, NULL) != RULES_ASK)
        abort ();
    }
  exercise (fixed, cl);
  if (fuzzed != NULL)
    exercise (fuzzed, cl);
  cmdline_free (cl);
  rules_free (fixed);
  rules_free (fuzzed);
  free (pattern);
  return 0;
}
