/* Unit tests for core/permit.c: rules, mode and the sleep refusal as one
 * decision; the allow rules proposed for a line.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The rules proposed for line, joined with "|" ("" for none).  */
static void
expect_proposal (const char *line, const char *expected)
{
  struct permit_proposal p;
  char joined[512] = "";
  size_t used = 0;
  permit_propose (line, &p);
  for (size_t i = 0; i < p.n; i++)
    {
      int w = snprintf (joined + used, sizeof joined - used, "%s%s",
                        i > 0 ? "|" : "", p.rules[i]);
      assert_true (w >= 0 && (size_t) w < sizeof joined - used);
      used += (size_t) w;
    }
  permit_proposal_clear (&p);
  assert_null (p.rules);
  assert_int_equal (p.n, 0);
  assert_string_equal (joined, expected);
}

static void
test_propose_program_and_subcommand (void **state)
{
  expect_proposal ("make", "Bash(make *)");
  expect_proposal ("npm run build", "Bash(npm run *)");
  expect_proposal ("docker compose up -d", "Bash(docker compose *)");
  expect_proposal ("git sub-command:x y", "Bash(git sub-command:x *)");
  /* An option, a path, a number or a quoted phrase is an argument: a rule
   * naming it would cover that one call only.  */
  expect_proposal ("ls -la /tmp", "Bash(ls *)");
  expect_proposal ("cat ./notes.txt", "Bash(cat *)");
  expect_proposal ("sleep 300", "Bash(sleep *)");
  expect_proposal ("echo 'two words'", "Bash(echo *)");
  expect_proposal ("echo $HOME", "Bash(echo *)");
}

static void
test_propose_each_command_once (void **state)
{
  expect_proposal ("echo started && sleep 300",
                   "Bash(echo started *)|Bash(sleep *)");
  expect_proposal ("make && make; make", "Bash(make *)");
  expect_proposal ("npm run a | npm run b || ls", "Bash(npm run *)|Bash(ls *)");
  /* `sh -c TEXT` is looked through: the commands in TEXT are proposed.  */
  expect_proposal ("sh -c 'make test'", "Bash(make test *)");
}

static void
test_propose_assignments_and_escapes (void **state)
{
  expect_proposal ("CC=clang make all", "Bash(CC=clang make all *)");
  /* A '*' or '\' of the line is matched as itself, not as a wildcard.  */
  expect_proposal ("GLOB='a*b' make", "Bash(GLOB=a\\*b make *)");
  expect_proposal ("X='a\\b' make", "Bash(X=a\\\\b make *)");
}

static void
test_propose_nothing (void **state)
{
  /* Unread, or nothing run: the "from now on" choice is not offered.  */
  expect_proposal ("echo 'unterminated", "");
  expect_proposal ("", "");
  expect_proposal ("X=1", "");
  expect_proposal ("> out", "");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_agent_calls),
    cmocka_unit_test (test_sleep_then_command),
    cmocka_unit_test (test_person_and_full_access),
    cmocka_unit_test (test_rules_from_config),
    cmocka_unit_test (test_propose_program_and_subcommand),
    cmocka_unit_test (test_propose_each_command_once),
    cmocka_unit_test (test_propose_assignments_and_escapes),
    cmocka_unit_test (test_propose_nothing),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
