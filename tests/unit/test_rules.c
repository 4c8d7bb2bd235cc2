/* Unit tests for core/rules.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/rules.h"

static struct rules *
make (const char *mode, char *const *allow, size_t n_allow, char *const *deny,
      size_t n_deny)
{
  struct cr_error *err = NULL;
  struct rules *r = rules_new (mode, allow, n_allow, deny, n_deny, &err);
  if (r == NULL)
    fail_msg ("rules_new: %s", err ? err->msg : "?");
  return r;
}

/* The verdict on a line; an unreadable line is decided as NULL.  */
static enum rules_verdict
decide (const struct rules *r, const char *line, bool typed, const char **rule)
{
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;
  if (cmdline_read (line, strlen (line), &cl, &err) < 0)
    cr_error_free (err);
  enum rules_verdict v = rules_decide (r, cl, typed, rule);
  cmdline_free (cl);
  return v;
}

static void
bad_rule (const char *mode, const char *allow, const char *deny,
          const char *msg)
{
  struct cr_error *err = NULL;
  char *a[] = { (char *) allow }, *d[] = { (char *) deny };
  struct rules *r = rules_new (mode, a, allow ? 1 : 0, d, deny ? 1 : 0, &err);
  assert_null (r);
  assert_non_null (err);
  assert_string_equal (err->msg, msg);
  cr_error_free (err);
}

static void
test_syntax_errors (void **state)
{
  bad_rule (NULL, NULL, "Bash(rm",
            "permissions.deny: rule \"Bash(rm\" does "
            "not end with \")\"");
  bad_rule (NULL, "Bash(", NULL,
            "permissions.allow: rule \"Bash(\" does not "
            "end with \")\"");
  bad_rule (NULL, "Bash()", NULL,
            "permissions.allow: rule \"Bash()\" names no "
            "command; write Bash for every command");
  bad_rule (NULL, "Bash(   )", NULL,
            "permissions.allow: rule \"Bash(   )\" "
            "names no command; write Bash for every command");
  bad_rule (NULL, "", NULL,
            "permissions.allow: rule \"\" names no command; "
            "write Bash for every command");
  bad_rule (NULL, "Read(./src)", NULL,
            "permissions.allow: rule "
            "\"Read(./src)\" is not a command rule; write Bash(command)");
  bad_rule (NULL, NULL, "Bash(a\\x)",
            "permissions.deny: rule \"Bash(a\\x)\" "
            "has a \\ that is not \\* or \\\\");
  bad_rule (NULL, NULL, "Bash(a\\)",
            "permissions.deny: rule \"Bash(a\\)\" "
            "has a \\ that is not \\* or \\\\");
  /* The rule is shown through the shared sanitiser: the newline (or an
   * ESC) never reaches the terminal raw.  */
  bad_rule (NULL, "Bash(a\nb)", NULL,
            "permissions.allow: rule \"Bash(a\\x0ab)\" "
            "holds a control character");
  bad_rule ("auto", NULL, NULL,
            "permissions.mode: \"auto\" is not a mode; "
            "use \"ask\" or \"fullAccess\"");
  /* The first bad rule of a list is named.  */
  struct cr_error *err = NULL;
  char *a[] = { "Bash(ok)", "Bash(bad" };
  assert_null (rules_new ("ask", a, 2, NULL, 0, &err));
  assert_string_equal (err->msg, "permissions.allow: rule \"Bash(bad\" does "
                                 "not end with \")\"");
  cr_error_free (err);
}

static void
test_modes (void **state)
{
  struct rules *r = make (NULL, NULL, 0, NULL, 0);
  assert_int_equal (rules_mode (r), RULES_MODE_ASK);
  rules_free (r);
  r = make ("ask", NULL, 0, NULL, 0);
  assert_int_equal (rules_mode (r), RULES_MODE_ASK);
  assert_int_equal (decide (r, "ls", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "ls", true, NULL), RULES_ALLOW);
  rules_free (r);
  r = make ("fullAccess", NULL, 0, NULL, 0);
  assert_int_equal (rules_mode (r), RULES_MODE_FULL_ACCESS);
  assert_int_equal (decide (r, "rm -rf build", false, NULL), RULES_ALLOW);
  rules_free (r);
  rules_free (NULL);
}

static void
test_patterns (void **state)
{
  char *allow[]
      = { "Bash(git status)",     "Bash(npm run *)", "Bash(echo a\\*b)",
          "Bash(  make   -j*  )", "ls -la",          "Bash(x \\\\ y)",
          "Bash(cat *.txt)" };
  struct rules *r = make ("ask", allow, 7, NULL, 0);
  const char *yes[] = { "git status",  "npm run build", "npm run test -- --ci",
                        "npm run",     "echo 'a*b'",    "make -j4",
                        "make -j",     "ls -la",        "x '\\' y",
                        "cat a b.txt", "git   status",  "'git' \"status\"" };
  const char *no[] = { "git status --short",
                       "git statusx",
                       "npm runx",
                       "npm",
                       "echo axb",
                       "make",
                       "ls",
                       "ls -la x",
                       "x y",
                       "cat a.txtx",
                       " npm install" };
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    if (decide (r, yes[i], false, NULL) != RULES_ALLOW)
      fail_msg ("%s was not allowed", yes[i]);
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
    if (decide (r, no[i], false, NULL) != RULES_ASK)
      fail_msg ("%s was not asked about", no[i]);
  rules_free (r);

  char *every[] = { "Bash" };
  r = make ("ask", every, 1, NULL, 0);
  assert_int_equal (decide (r, "anything | goes && echo $(x)", false, NULL),
                    RULES_ALLOW);
  assert_int_equal (decide (r, "$X", false, NULL), RULES_ASK);
  rules_free (r);
}

static void
test_every_command_must_be_allowed (void **state)
{
  char *allow[] = { "Bash(npm run *)", "Bash(tail *)", "Bash(cd *)" };
  struct rules *r = make ("ask", allow, 3, NULL, 0);
  assert_int_equal (decide (r, "npm run build 2>&1 | tail -50", false, NULL),
                    RULES_ALLOW);
  assert_int_equal (decide (r, "cd web && npm run dev", false, NULL),
                    RULES_ALLOW);
  assert_int_equal (decide (r, "npm run build && rm -rf dist", false, NULL),
                    RULES_ASK);
  assert_int_equal (decide (r, "npm run $(curl evil)", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "npm run `id`", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "(cd x; make)", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "npm run x > /etc/passwd", false, NULL),
                    RULES_ALLOW); /* `*` covers the redirection too */
  assert_int_equal (decide (r, "FOO=1 npm run x", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "X=1; npm run x", false, NULL), RULES_ASK);
  /* A shell -c stands for the commands read inside it.  */
  assert_int_equal (decide (r, "bash -c 'npm run a && tail x'", false, NULL),
                    RULES_ALLOW);
  assert_int_equal (decide (r, "bash -c 'npm run a; make'", false, NULL),
                    RULES_ASK);
  assert_int_equal (decide (r, "sudo bash -c 'npm run a'", false, NULL),
                    RULES_ASK);
  assert_int_equal (decide (r, "sh -c ''", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "# nothing", false, NULL), RULES_ASK);
  rules_free (r);

  char *git[] = { "Bash(git status)" };
  r = make ("ask", git, 1, NULL, 0);
  assert_int_equal (decide (r, "git status > out", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "git status 2>&1 >/dev/null", false, NULL),
                    RULES_ALLOW);
  rules_free (r);
}

static void
test_unreadable (void **state)
{
  char *allow[] = { "Bash" };
  char *deny[] = { "Bash(rm *)" };
  struct rules *r = make ("ask", allow, 1, deny, 1);
  const char *rule = "x";
  assert_int_equal (decide (r, "echo 'oops", false, &rule), RULES_ASK);
  assert_null (rule);
  assert_int_equal (decide (r, "$CMD", false, NULL), RULES_ASK);
  assert_int_equal (decide (r, "$CMD", true, NULL), RULES_ALLOW);
  assert_int_equal (rules_decide (r, NULL, false, NULL), RULES_ASK);
  rules_free (r);
  r = make ("fullAccess", NULL, 0, deny, 1);
  assert_int_equal (decide (r, "eval $X", false, NULL), RULES_ALLOW);
  struct rules_denial *d = (struct rules_denial *) 1;
  assert_int_equal (rules_denials (r, NULL, &d), 0);
  assert_null (d);
  assert_null (rules_deny_message (r, NULL));
  rules_free (r);
}

static void
test_deny_beats_everything (void **state)
{
  char *allow[] = { "Bash" };
  char *deny[] = { "Bash(git push --force*)", "Bash(rm *)" };
  const char *rule = NULL;
  const char *modes[] = { "ask", "fullAccess" };
  for (size_t m = 0; m < 2; m++)
    {
      struct rules *r = make (modes[m], allow, 1, deny, 2);
      for (int typed = 0; typed < 2; typed++)
        {
          assert_int_equal (decide (r, "rm -rf build", typed, &rule),
                            RULES_DENY);
          assert_string_equal (rule, "Bash(rm *)");
          assert_int_equal (
              decide (r, "git push --force origin main", typed, &rule),
              RULES_DENY);
          assert_string_equal (rule, "Bash(git push --force*)");
          assert_int_equal (decide (r, "git push origin main", typed, &rule),
                            RULES_ALLOW);
          assert_null (rule);
        }
      rules_free (r);
    }
}

static void
test_deny_reaches_inside (void **state)
{
  char *deny[] = { "Bash(rm *)" };
  struct rules *r = make ("fullAccess", NULL, 0, deny, 1);
  const char *lines[] = {
    "echo $(rm -rf x)",
    "echo `rm -rf x`",
    "(cd y && rm -rf x)",
    "{ rm -rf x; }",
    "bash -c 'rm -rf x'",
    "sh -c \"sh -c 'rm -rf x'\"",
    "eval 'rm -rf x'",
    "trap 'rm -rf x' EXIT",
    "if true; then rm -rf x; fi",
    "for f in a; do rm $f; done",
    "cat <<EOF\n$(rm -rf x)\nEOF",
    "sudo -u root rm -rf x",
    "env A=1 rm -rf x",
    "nohup nice -n 5 rm -rf x",
    "X=1 rm -rf x",
    "r\\m -rf x",
    "'rm' -rf x",
    "find . -name y -exec rm {} \\;",
    "xargs rm < list",
    "timeout 5 rm -rf x",
    "rm -rf x &",
    "echo ${X:-$(rm -rf x)}",
    "sudo --user root rm -rf x",
    "exec rm -rf x",
    "/bin/rm -rf x" + 0,
  };
  for (size_t i = 0; i < sizeof lines / sizeof lines[0] - 1; i++)
    if (decide (r, lines[i], false, NULL) != RULES_DENY)
      fail_msg ("%s was not denied", lines[i]);
  /* Past 64 words only the program the reader found is tried.  */
  char line[2048] = "sudo";
  size_t at = strlen (line);
  for (int i = 0; i < 100; i++)
    at += (size_t) snprintf (line + at, sizeof line - at, " -u x");
  snprintf (line + at, sizeof line - at, " rm -rf /");
  assert_int_equal (decide (r, line, false, NULL), RULES_DENY);
  /* A path is another program name: the rule says what it names.  */
  assert_int_equal (decide (r, "/bin/rm -rf x", false, NULL), RULES_ALLOW);
  assert_int_equal (decide (r, "echo rm -rf x", false, NULL), RULES_ALLOW);
  assert_int_equal (decide (r, "cat <<'EOF'\n$(rm -rf x)\nEOF", false, NULL),
                    RULES_ALLOW);
  rules_free (r);
}

static void
test_denials_and_message (void **state)
{
  char *deny[] = { "Bash(rm *)", "Bash(curl *)" };
  struct rules *r = make ("ask", NULL, 0, deny, 2);
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;
  const char *line = "ls; rm -rf build && echo $(curl -s x) > out";
  assert_int_equal (cmdline_read (line, strlen (line), &cl, &err), 0);
  struct rules_denial *d = NULL;
  assert_int_equal (rules_denials (r, cl, &d), 2);
  assert_string_equal (cl->cmds[d[0].command].argv[0], "rm");
  assert_string_equal (d[0].rule, "Bash(rm *)");
  assert_string_equal (cl->cmds[d[1].command].argv[0], "curl");
  assert_string_equal (d[1].rule, "Bash(curl *)");
  free (d);
  char *msg = rules_deny_message (r, cl);
  assert_string_equal (msg, "the deny rules refuse it (`rm -rf "
                            "build` matches Bash(rm *); `curl -s x` matches "
                            "Bash(curl *))");
  free (msg);
  cmdline_free (cl);

  line = "ls";
  assert_int_equal (cmdline_read (line, strlen (line), &cl, &err), 0);
  d = (struct rules_denial *) 1;
  assert_int_equal (rules_denials (r, cl, &d), 0);
  assert_null (d);
  assert_null (rules_deny_message (r, cl));
  cmdline_free (cl);
  rules_free (r);
}

/* Tool rules: what is refused, each with the list and the rule named.  */
static void
test_tool_rule_syntax (void **state)
{
  (void) state;
  bad_rule (NULL, "mcp__", NULL,
            "permissions.allow: rule \"mcp__\" is a tool rule without a "
            "server name; write mcp__SERVER or mcp__SERVER__TOOL");
  bad_rule (NULL, NULL, "mcp____echo",
            "permissions.deny: rule \"mcp____echo\" is a tool rule without "
            "a server name; write mcp__SERVER or mcp__SERVER__TOOL");
  bad_rule (NULL, "mcp__a b__echo", NULL,
            "permissions.allow: rule \"mcp__a b__echo\" is a tool rule whose "
            "server is not a server name (at most 32 letters, digits, '-' "
            "and '_', with no \"__\" and no '_' at either end)");
  bad_rule (NULL, "mcp___fs", NULL,
            "permissions.allow: rule \"mcp___fs\" is a tool rule whose "
            "server is not a server name (at most 32 letters, digits, '-' "
            "and '_', with no \"__\" and no '_' at either end)");
  bad_rule (NULL, "mcp__fs__", NULL,
            "permissions.allow: rule \"mcp__fs__\" names no tool; write "
            "mcp__SERVER for the server's tools");
  bad_rule (NULL, NULL, "mcp__fs__*",
            "permissions.deny: rule \"mcp__fs__*\" names a tool with a "
            "character other than letters, digits, '_', '-' and '.' (a tool "
            "rule has no pattern: it names one tool)");
  bad_rule (NULL, "mcp__fs__read file", NULL,
            "permissions.allow: rule \"mcp__fs__read file\" names a tool "
            "with a character other than letters, digits, '_', '-' and '.' "
            "(a tool rule has no pattern: it names one tool)");
  char longer[200];
  snprintf (longer, sizeof longer, "mcp__fs__%0129d", 0);
  assert_string_equal (rules_refuse (longer),
                       "names a tool longer than 128 bytes");
  longer[strlen (longer) - 1] = '\0';
  assert_null (rules_refuse (longer));
  assert_null (rules_refuse ("mcp__fs"));
  assert_null (rules_refuse ("mcp__server-everything__printEnv"));
  assert_null (rules_refuse ("mcp__fs__read_text.v2-x"));
  /* The tool's name may hold "__" and begin with '_': the server's name
   * ends at the first "__".  */
  assert_null (rules_refuse ("mcp__fs___private__x"));
  /* Not tool rules, and compiled as before: a command pattern in Bash( ),
   * and a server-like bare word without the prefix.  */
  assert_null (rules_refuse ("Bash(mcp__fs__*)"));
  assert_null (rules_refuse ("Bash(mcp__*)"));
  /* A bare mcp__ pattern, a command pattern before tool rules, is now
   * refused rather than read as one.  */
  assert_non_null (rules_refuse ("mcp__*"));
  assert_null (rules_refuse ("MCP__fs"));
}

/* The decision on a tool: deny in every mode, fullAccess, allow rules
 * naming it or (initial tools only) its server, and ask otherwise.  */
static void
test_decide_tool (void **state)
{
  (void) state;
  char *allow[] = { (char *) "mcp__fs", (char *) "mcp__everything__echo",
                    (char *) "Bash" };
  char *deny[] = { (char *) "mcp__fs__write_file", (char *) "mcp__danger" };
  struct rules *r = make ("ask", allow, 3, deny, 2);
  const char *rule = "unset";

  /* mcp__fs allows the tools of the first listing, not a later one.  */
  assert_int_equal (rules_decide_tool (r, "fs", "read_file", true, &rule),
                    RULES_ALLOW);
  assert_string_equal (rule, "mcp__fs");
  assert_int_equal (rules_decide_tool (r, "fs", "new_tool", false, &rule),
                    RULES_ASK);
  assert_null (rule);
  /* A rule naming the tool allows it whenever it came.  */
  assert_int_equal (rules_decide_tool (r, "everything", "echo", false, &rule),
                    RULES_ALLOW);
  assert_string_equal (rule, "mcp__everything__echo");
  assert_int_equal (rules_decide_tool (r, "everything", "add", true, &rule),
                    RULES_ASK);
  assert_null (rule);
  /* Deny beats the server's allow rule, and mcp__danger denies every tool
   * of its server, later ones too.  */
  assert_int_equal (rules_decide_tool (r, "fs", "write_file", true, &rule),
                    RULES_DENY);
  assert_string_equal (rule, "mcp__fs__write_file");
  assert_int_equal (rules_decide_tool (r, "danger", "x", false, &rule),
                    RULES_DENY);
  assert_string_equal (rule, "mcp__danger");
  /* Names are exact: no prefix of a server or a tool matches.  */
  assert_int_equal (rules_decide_tool (r, "fs2", "read_file", true, NULL),
                    RULES_ASK);
  assert_int_equal (rules_decide_tool (r, "everything", "echo2", true, NULL),
                    RULES_ASK);
  assert_int_equal (rules_decide_tool (r, "dangerous", "x", true, NULL),
                    RULES_ASK);
  /* Bash allows every command, and no tool.  */
  assert_int_equal (rules_decide_tool (r, "other", "t", true, NULL), RULES_ASK);
  /* fullAccess allows what no deny rule names, and no more.  */
  rules_set_mode (r, RULES_MODE_FULL_ACCESS);
  assert_int_equal (rules_decide_tool (r, "other", "t", false, &rule),
                    RULES_ALLOW);
  assert_null (rule);
  assert_int_equal (rules_decide_tool (r, "fs", "write_file", false, &rule),
                    RULES_DENY);
  assert_string_equal (rule, "mcp__fs__write_file");
  assert_int_equal (rules_decide_tool (r, "danger", "y", true, NULL),
                    RULES_DENY);
  rules_free (r);

  /* An allow rule added later (the person's "always") counts at once.  */
  r = make (NULL, NULL, 0, NULL, 0);
  assert_int_equal (rules_decide_tool (r, "fs", "t", true, NULL), RULES_ASK);
  assert_int_equal (rules_add_allow (r, "mcp__fs__t", "test", NULL), 0);
  assert_int_equal (rules_decide_tool (r, "fs", "t", false, NULL), RULES_ALLOW);
  rules_free (r);
}

/* Tool rules take no part in deciding commands: a command named like one
 * is neither allowed nor denied by it, while Bash(mcp__...) still is a
 * command pattern.  */
static void
test_tool_rules_are_not_commands (void **state)
{
  (void) state;
  char *allow[] = { (char *) "mcp__fs" };
  char *deny[] = { (char *) "mcp__danger__x" };
  struct rules *r = make (NULL, allow, 1, deny, 1);
  const char *rule = "unset";

  assert_int_equal (decide (r, "mcp__fs", false, &rule), RULES_ASK);
  assert_null (rule);
  assert_int_equal (decide (r, "mcp__danger__x", false, &rule), RULES_ASK);
  assert_null (rule);
  rules_set_mode (r, RULES_MODE_FULL_ACCESS);
  assert_int_equal (decide (r, "mcp__danger__x", false, NULL), RULES_ALLOW);
  rules_free (r);

  char *cmd_allow[] = { (char *) "Bash(mcp__fs *)" };
  char *cmd_deny[] = { (char *) "Bash(mcp__danger__x)" };
  r = make (NULL, cmd_allow, 1, cmd_deny, 1);
  assert_int_equal (decide (r, "mcp__fs run", false, NULL), RULES_ALLOW);
  assert_int_equal (decide (r, "mcp__danger__x", true, &rule), RULES_DENY);
  assert_string_equal (rule, "Bash(mcp__danger__x)");
  assert_int_equal (rules_decide_tool (r, "fs", "run", true, NULL), RULES_ASK);
  assert_int_equal (rules_decide_tool (r, "danger", "x", true, NULL),
                    RULES_ASK);
  rules_free (r);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_syntax_errors),
    cmocka_unit_test (test_modes),
    cmocka_unit_test (test_patterns),
    cmocka_unit_test (test_every_command_must_be_allowed),
    cmocka_unit_test (test_unreadable),
    cmocka_unit_test (test_deny_beats_everything),
    cmocka_unit_test (test_deny_reaches_inside),
    cmocka_unit_test (test_denials_and_message),
    cmocka_unit_test (test_tool_rule_syntax),
    cmocka_unit_test (test_decide_tool),
    cmocka_unit_test (test_tool_rules_are_not_commands),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
