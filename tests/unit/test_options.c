/* Unit tests for tui/options.c: the table-driven parser every command
 * reads its options with, and crucible run's options over it.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tui/options.h"

enum
{
  T_AGENT,
  T_YES,
  T_HELP,
  T_TIMEOUT
};

static const struct options_spec t_specs[] = {
  { "--agent", NULL, T_AGENT, true },
  { "--yes", "-y", T_YES, false },
  { "--help", "-h", T_HELP, false },
  { "--timeout", NULL, T_TIMEOUT, true },
};

static const struct options_table t_operands
    = OPTIONS_TABLE (t_specs, OPTIONS_OPERANDS);
static const struct options_table t_words = OPTIONS_TABLE (t_specs, 0);
static const struct options_table t_prefixes
    = OPTIONS_TABLE (t_specs, OPTIONS_OPERANDS | OPTIONS_PREFIXES);

/* Read argv (NULL-terminated) against t into ids[] (at most 8), the last
 * being what ended the reading; returns how many were read.  */
static size_t
read_all (const struct options_table *t, char **argv, int *ids,
          const char **values, struct options_parser *p)
{
  int argc = 0;
  while (argv[argc] != NULL)
    argc++;
  options_begin (p, t, argc, argv);
  size_t n = 0;
  for (;;)
    {
      int c = options_next (p);
      values[n] = p->value;
      ids[n++] = c;
      if (c < 0 || n == 8)
        return n;
    }
}

/* Both spellings of a value, a short alias, then the operands.  */
static void
test_values_and_operands (void **state)
{
  char *argv[]
      = { "cmd", "--agent=a b", "-y", "--timeout", "5", "DIR", "--yes", NULL };
  int ids[8];
  const char *values[8];
  struct options_parser p;
  assert_int_equal (read_all (&t_operands, argv, ids, values, &p), 4);
  assert_int_equal (ids[0], T_AGENT);
  assert_string_equal (values[0], "a b");
  assert_int_equal (ids[1], T_YES);
  assert_null (values[1]);
  assert_int_equal (ids[2], T_TIMEOUT);
  assert_string_equal (values[2], "5");
  assert_int_equal (ids[3], OPTIONS_END);
  assert_int_equal (p.next, 5); /* DIR, and --yes after it is an operand */
}

/* "--" ends the options and is skipped; "-" alone is an operand.  */
static void
test_dashes (void **state)
{
  char *argv[] = { "cmd", "-y", "--", "-y", NULL };
  int ids[8];
  const char *values[8];
  struct options_parser p;
  assert_int_equal (read_all (&t_operands, argv, ids, values, &p), 2);
  assert_int_equal (ids[1], OPTIONS_END);
  assert_int_equal (p.next, 3);

  char *argv2[] = { "cmd", "-", NULL };
  assert_int_equal (read_all (&t_operands, argv2, ids, values, &p), 1);
  assert_int_equal (ids[0], OPTIONS_END);
  assert_int_equal (p.next, 1);
}

/* Without OPTIONS_OPERANDS every word must be an option, "--" too.  */
static void
test_every_word (void **state)
{
  char *argv[] = { "cmd", "-h", "extra", NULL };
  int ids[8];
  const char *values[8];
  struct options_parser p;
  assert_int_equal (read_all (&t_words, argv, ids, values, &p), 2);
  assert_int_equal (ids[0], T_HELP);
  assert_int_equal (ids[1], OPTIONS_UNKNOWN);
  assert_string_equal (p.word, "extra");

  char *argv2[] = { "cmd", "--", NULL };
  assert_int_equal (read_all (&t_words, argv2, ids, values, &p), 1);
  assert_int_equal (ids[0], OPTIONS_UNKNOWN);
  assert_string_equal (p.word, "--");
}

/* A missing value, a value given to a flag, a cluster and a prefix are
 * errors naming the word, in the words the commands have always used.  */
static void
test_errors (void **state)
{
  int ids[8];
  const char *values[8];
  struct options_parser p;
  struct cr_error *err = NULL;

  char *argv[] = { "cmd", "--agent", NULL };
  assert_int_equal (read_all (&t_operands, argv, ids, values, &p), 1);
  assert_int_equal (ids[0], OPTIONS_NO_VALUE);
  assert_int_equal (options_error (&p, ids[0], &err), -1);
  assert_string_equal (err->msg, "--agent needs a value");
  cr_error_clear (&err);

  char *bad[][3] = { { "cmd", "--yes=1", NULL },
                     { "cmd", "-yh", NULL },
                     { "cmd", "--ag", NULL },
                     { "cmd", "--bogus", NULL } };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      assert_int_equal (read_all (&t_operands, bad[i], ids, values, &p), 1);
      assert_int_equal (ids[0], OPTIONS_UNKNOWN);
      options_error (&p, ids[0], &err);
      char want[64];
      snprintf (want, sizeof want, "unknown option '%s'", bad[i][1]);
      assert_string_equal (err->msg, want);
      cr_error_clear (&err);
    }
}

/* With OPTIONS_PREFIXES a beginning only one name has names it; one that
 * two names share names none.  */
static void
test_prefixes (void **state)
{
  int ids[8];
  const char *values[8];
  struct options_parser p;

  char *argv[] = { "cmd", "--ti=2", "--ag", "x", "ls", NULL };
  assert_int_equal (read_all (&t_prefixes, argv, ids, values, &p), 3);
  assert_int_equal (ids[0], T_TIMEOUT);
  assert_string_equal (values[0], "2");
  assert_int_equal (ids[1], T_AGENT);
  assert_string_equal (values[1], "x");
  assert_int_equal (ids[2], OPTIONS_END);

  static const struct options_spec two[]
      = { { "--env", NULL, 0, true }, { "--exit", NULL, 1, false } };
  static const struct options_table t_two
      = OPTIONS_TABLE (two, OPTIONS_OPERANDS | OPTIONS_PREFIXES);
  char *argv2[] = { "cmd", "--e", NULL };
  assert_int_equal (read_all (&t_two, argv2, ids, values, &p), 1);
  assert_int_equal (ids[0], OPTIONS_UNKNOWN);
}

/* options_find names an option by its exact spelling only.  */
static void
test_find (void **state)
{
  assert_int_equal (options_find (&t_prefixes, "-h"), T_HELP);
  assert_int_equal (options_find (&t_prefixes, "--help"), T_HELP);
  assert_int_equal (options_find (&t_prefixes, "--hel"), OPTIONS_UNKNOWN);
  assert_int_equal (options_find (&t_prefixes, "--help=1"), OPTIONS_UNKNOWN);
}

/* crucible run: its options, the command after them, and its errors.  */
static void
test_run_options (void **state)
{
  struct run_options o;
  struct cr_error *err = NULL;

  char *argv[]
      = { "run", "--timeout=1.5", "--env",     "A=1", "--description", "d",
          "--",  "echo",          "--timeout", NULL };
  assert_int_equal (run_options_parse (&o, 9, argv, &err), 0);
  assert_true (o.timeout_seconds == 1.5);
  assert_int_equal (o.n_env, 1);
  assert_string_equal (o.env[0].name, "A");
  assert_string_equal (o.description, "d");
  assert_string_equal (o.command, "echo --timeout");
  run_options_clear (&o);

  char *none[] = { "run", "--env", "A=1", NULL };
  assert_int_equal (run_options_parse (&o, 3, none, &err), -1);
  assert_string_equal (err->msg,
                       "no command given: crucible run [OPTION]... -- COMMAND");
  cr_error_clear (&err);
  run_options_clear (&o);

  char *help[] = { "run", "--help", "--bogus", NULL };
  assert_int_equal (run_options_parse (&o, 3, help, &err), 0);
  assert_true (o.help);
  run_options_clear (&o);

  char *h[] = { "run", "-h", NULL };
  assert_int_equal (run_options_parse (&o, 2, h, &err), -1);
  assert_string_equal (err->msg, "unknown option '-h'");
  cr_error_clear (&err);
  run_options_clear (&o);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_values_and_operands),
    cmocka_unit_test (test_dashes),
    cmocka_unit_test (test_every_word),
    cmocka_unit_test (test_errors),
    cmocka_unit_test (test_prefixes),
    cmocka_unit_test (test_find),
    cmocka_unit_test (test_run_options),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
