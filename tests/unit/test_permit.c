/* Unit tests for core/permit.c: rules, mode and the sleep refusal as one
 * decision.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/permit.h"

/* Rules from a mode and one allow and one deny pattern.  */
static struct rules *
rules_for (const char *mode)
{
  static char *allow[] = { "Bash(npm run *)", NULL };
  static char *deny[] = { "Bash(rm *)", NULL };
  struct cr_error *err = NULL;
  struct rules *r = rules_new (mode, allow, 1, deny, 1, &err);
  assert_non_null (r);
  return r;
}

/* The verdict for a line, freeing any refusal; *refusal gets a copy.  */
static enum permit_verdict
decide (const struct rules *r, const char *line, bool typed, bool background,
        char *refusal, size_t size)
{
  struct permit p;
  permit_decide (r, line, typed, background, &p);
  if (refusal != NULL)
    snprintf (refusal, size, "%s", p.refusal ? p.refusal : "");
  enum permit_verdict v = p.verdict;
  permit_clear (&p);
  return v;
}

static void
test_agent_calls (void **state)
{
  struct rules *r = rules_for ("ask");
  char why[512];
  assert_int_equal (decide (r, "npm run build", false, false, NULL, 0),
                    PERMIT_RUN);
  assert_int_equal (decide (r, "make", false, false, NULL, 0), PERMIT_ASK);
  assert_int_equal (decide (r, "npm run x && make", false, false, NULL, 0),
                    PERMIT_ASK);
  assert_int_equal (
      decide (r, "echo $(rm -rf build)", false, false, why, sizeof why),
      PERMIT_REFUSE);
  assert_string_equal (why, "[refused: the deny rules refuse it (`rm -rf "
                            "build` matches Bash(rm *)); nothing was run]");
  /* A line the reader cannot read is asked about, never run or refused.  */
  assert_int_equal (decide (r, "echo 'unterminated", false, false, NULL, 0),
                    PERMIT_ASK);
  rules_free (r);
}

static void
test_sleep_then_command (void **state)
{
  struct rules *r = rules_for ("fullAccess");
  char why[512];
  assert_int_equal (
      decide (r, "sleep 15 && gh pr checks 622", false, false, why, sizeof why),
      PERMIT_REFUSE);
  assert_string_equal (
      why, "[refused: the command begins by sleeping to wait for a later one, "
           "which is a wait written as a command; send the same line with "
           "background: true, which costs the turn nothing and comes back with "
           "what it printed; nothing was run]");
  assert_int_equal (decide (r, "sleep 5; make", false, false, NULL, 0),
                    PERMIT_REFUSE);
  /* The same line left running, a bare pause, and the person's own line run. */
  assert_int_equal (
      decide (r, "sleep 15 && gh pr checks 622", false, true, NULL, 0),
      PERMIT_RUN);
  assert_int_equal (decide (r, "sleep 5", false, false, NULL, 0), PERMIT_RUN);
  assert_int_equal (decide (r, "sleep 5; make", true, false, NULL, 0),
                    PERMIT_RUN);
  rules_free (r);
}

static void
test_person_and_full_access (void **state)
{
  struct rules *r = rules_for ("fullAccess");
  assert_int_equal (decide (r, "make", false, false, NULL, 0), PERMIT_RUN);
  /* Deny holds in every mode and for what the person typed.  */
  assert_int_equal (decide (r, "rm -rf /", false, false, NULL, 0),
                    PERMIT_REFUSE);
  rules_free (r);
  r = rules_for ("ask");
  assert_int_equal (decide (r, "make", true, false, NULL, 0), PERMIT_RUN);
  assert_int_equal (decide (r, "sudo rm -rf build", true, false, NULL, 0),
                    PERMIT_REFUSE);
  rules_free (r);
}

static void
test_rules_from_config (void **state)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  struct rules *r = permit_rules (cfg, &err);
  assert_non_null (r);
  rules_free (r);
  char *bad[] = { "Read(x)", NULL };
  struct config_list saved = cfg->deny;
  cfg->deny = (struct config_list){ bad, 1 };
  assert_null (permit_rules (cfg, &err));
  assert_non_null (err);
  cr_error_free (err);
  cfg->deny = saved;
  config_free (cfg);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_agent_calls),
    cmocka_unit_test (test_sleep_then_command),
    cmocka_unit_test (test_person_and_full_access),
    cmocka_unit_test (test_rules_from_config),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
