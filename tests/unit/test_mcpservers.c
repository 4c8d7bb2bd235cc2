/* Tests for the MCP server table: mcpServers and disabledMcpServers as
 * core/config.c reads them (every error names the file, the line and the
 * key), the name rules of core/mcpservers.c, and the record of the tools
 * an allow rule mcp__<server> covers (sandbox/statedir.c).  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/env.h"
#include "core/mcpservers.h"
#include "lib/error.h"
#include "sandbox/sha256.h"
#include "sandbox/statedir.h"

#define HOME "home.json"
#define PROJECT "project.json"

/* Merge home, then project (either may be NULL); returns the config, or
 * NULL with *msg set to the error.  */
static struct config *
merge (const char *home, const char *project, char **msg)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  *msg = NULL;
  if ((home != NULL
       && config_merge_text (cfg, home, strlen (home), HOME, CONFIG_HOME, "/ws",
                             &err)
              < 0)
      || (project != NULL
          && config_merge_text (cfg, project, strlen (project), PROJECT,
                                CONFIG_PROJECT, "/ws", &err)
                 < 0))
    {
      *msg = strdup (err->msg);
      cr_error_free (err);
      config_free (cfg);
      return NULL;
    }
  return cfg;
}

/* Home text (and project text) must fail with exactly expected.  */
static void
expect_error (const char *home, const char *project, const char *expected)
{
  char *msg;
  struct config *cfg = merge (home, project, &msg);
  assert_null (cfg);
  assert_string_equal (msg, expected);
  free (msg);
}

/* Every field of an entry, in the file's order; args keep repeats.  */
static void
test_servers (void **state)
{
  char *msg;
  struct config *cfg = merge (
      "{\"mcpServers\": {\n"
      "  \"files\": {\"command\": \"npx\", \"args\": [\"-y\", \"pkg\", "
      "\"-y\"],\n"
      "    \"env\": {\"A\": \"1\", \"EMPTY\": \"\"}, \"optional\": true,\n"
      "    \"credentials\": [\"GITHUB_TOKEN\"]},\n"
      "  \"my-srv_2\": {\"command\": \"/usr/bin/srv\"}\n"
      "}, \"disabledMcpServers\": [\"other\"]}",
      "{\"disabledMcpServers\": [\"files\"]}", &msg);
  assert_non_null (cfg);
  assert_int_equal (cfg->n_mcp_servers, 2);
  const struct mcp_server_config *s = mcpservers_find (cfg, "files");
  assert_ptr_equal (s, &cfg->mcp_servers[0]);
  assert_string_equal (s->command, "npx");
  assert_int_equal (s->args.count, 3);
  assert_string_equal (s->args.items[2], "-y");
  assert_null (s->args.items[3]);
  assert_int_equal (s->env.count, 2);
  assert_string_equal (s->env.items[0], "A=1");
  assert_string_equal (s->env.items[1], "EMPTY=");
  assert_true (s->optional);
  assert_string_equal (s->credentials.items[0], "GITHUB_TOKEN");
  s = mcpservers_find (cfg, "my-srv_2");
  assert_string_equal (s->command, "/usr/bin/srv");
  assert_false (s->optional);
  assert_int_equal (s->args.count, 0);
  assert_null (mcpservers_find (cfg, "nope"));
  /* A project adds to home's list of disabled servers.  */
  assert_true (mcpservers_disabled (cfg, "files"));
  assert_true (mcpservers_disabled (cfg, "other"));
  assert_false (mcpservers_disabled (cfg, "my-srv_2"));
  config_free (cfg);
}

/* The errors: each names the file, the line and the key.  */
static void
test_errors (void **state)
{
  expect_error (NULL, "{\"mcpServers\": {}}",
                "project.json:1: mcpServers: may only be set in the home "
                "configuration (~/.crucible/config.json), not in a project");
  expect_error ("{\"mcpServers\": {\"a__b\": {\"command\": \"x\"}}}", NULL,
                "home.json:1: mcpServers.a__b: must be a server name of at "
                "most 32 letters, digits, '-' and '_', with no \"__\" and no "
                "'_' at either end");
  expect_error ("{\"mcpServers\": {\"a.b\": {\"command\": \"x\"}}}", NULL,
                "home.json:1: mcpServers.a.b: must be a server name of at "
                "most 32 letters, digits, '-' and '_', with no \"__\" and no "
                "'_' at either end");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\"},\n"
                "\"a\": {\"command\": \"y\"}}}",
                NULL, "home.json:2: mcpServers.a: duplicate key");
  expect_error ("{\"mcpServers\": {\"a\": {\"args\": []}}}", NULL,
                "home.json:1: mcpServers.a: needs a command (only servers on "
                "standard input and output are supported)");
  expect_error ("{\"mcpServers\": {\"a\": {\"url\": \"http://x\"}}}", NULL,
                "home.json:1: mcpServers.a.url: unknown key");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": 1}}}", NULL,
                "home.json:1: mcpServers.a.command: expected a string");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\",\n"
                "\"command\": \"y\"}}}",
                NULL, "home.json:2: mcpServers.a.command: duplicate key");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": "
                "[\"\"]}}}",
                NULL, "home.json:1: mcpServers.a.args[0]: must not be empty");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"optional\": "
                "\"yes\"}}}",
                NULL,
                "home.json:1: mcpServers.a.optional: expected true or "
                "false");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": "
                "{\"1X\": \"v\"}}}}",
                NULL,
                "home.json:1: mcpServers.a.env.1X: must be an "
                "environment variable name (letters, digits and _, not "
                "starting with a digit, at most 128 bytes)");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": "
                "{\"X\": \"v\", \"X\": \"w\"}}}}",
                NULL, "home.json:1: mcpServers.a.env.X: duplicate key");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": "
                "{\"X\": 1}}}}",
                NULL, "home.json:1: mcpServers.a.env.X: expected a string");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", "
                "\"credentials\": [\"NOT-A-NAME\"]}}}",
                NULL,
                "home.json:1: mcpServers.a.credentials[0]: must be an "
                "environment variable name (letters, digits and _, not "
                "starting with a digit, at most 128 bytes)");
  expect_error (NULL, "{\"disabledMcpServers\": [\"_x\"]}",
                "project.json:1: disabledMcpServers[0]: must be a server "
                "name of at most 32 letters, digits, '-' and '_', with no "
                "\"__\" and no '_' at either end");
  expect_error ("{\"mcpServers\": {\"a\": \"npx\"}}", NULL,
                "home.json:1: mcpServers.a: expected an object");
  expect_error ("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": []}}}",
                NULL, "home.json:1: mcpServers.a.env: expected an object");
  expect_error (NULL, "{\"disabledMcpServers\": \"x\"}",
                "project.json:1: disabledMcpServers: expected an array of "
                "strings");
}

/* Server names stay within the mcp__<server>__<tool> syntax.  */
static void
test_names (void **state)
{
  assert_null (mcpservers_name_refuse ("files"));
  assert_null (mcpservers_name_refuse ("a_b-C9"));
  assert_null (mcpservers_name_refuse ("abcdefghijklmnopqrstuvwxyz012345"));
  assert_non_null (
      mcpservers_name_refuse ("abcdefghijklmnopqrstuvwxyz0123456"));
  assert_non_null (mcpservers_name_refuse (""));
  assert_non_null (mcpservers_name_refuse ("a__b"));
  assert_non_null (mcpservers_name_refuse ("a_"));
  assert_non_null (mcpservers_name_refuse ("_a"));
  assert_non_null (mcpservers_name_refuse ("a b"));
  assert_non_null (mcpservers_name_refuse ("\xc3\xa9"));
  assert_true (env_name_ok ("_X1"));
  assert_false (env_name_ok ("X-1"));
}

/* mcp__<server>__<tool> reads one way.  */
static void
test_qualified (void **state)
{
  char *server, *tool;
  char *q = mcpservers_qualified ("my-srv", "_read__file");
  assert_string_equal (q, "mcp__my-srv___read__file");
  assert_true (mcpservers_split (q, &server, &tool));
  assert_string_equal (server, "my-srv");
  assert_string_equal (tool, "_read__file");
  free (q);
  free (server);
  free (tool);
  assert_true (mcpservers_split ("mcp__files", &server, &tool));
  assert_string_equal (server, "files");
  assert_null (tool);
  free (server);
  assert_false (mcpservers_split ("mcp__files__", &server, &tool));
  assert_false (mcpservers_split ("mcp___x__t", &server, &tool));
  assert_false (mcpservers_split ("mcp__", &server, &tool));
  assert_false (mcpservers_split ("Bash(ls)", &server, &tool));
}

/* Recall the record for key in parent; its result, the tools joined by
 * ',' into out (n bytes).  */
static int
grant_recall (const char *parent, const char *key, char *out, size_t n)
{
  char **tools = NULL;
  size_t count = 0;
  struct cr_error *err = NULL;
  int rc = statedir_grant_recall (parent, getuid (), getgid (), key, "g",
                                  "mcp__g", &tools, &count, &err);
  out[0] = '\0';
  for (size_t i = 0; i < count; i++)
    {
      if (i > 0)
        strncat (out, ",", n - strlen (out) - 1);
      strncat (out, tools[i], n - strlen (out) - 1);
      free (tools[i]);
    }
  free (tools);
  if (rc < 0)
    assert_non_null (err);
  cr_error_free (err);
  return rc;
}

/* A record is written once (0600), recalled as written, never replaced,
 * and one that is corrupt or writable by others is an error, not a
 * grant.  */
static void
test_grant_record (void **state)
{
  char parent[] = "/tmp/crucible-grant-XXXXXX", key[SHA256_HEX_LEN + 1],
       other[SHA256_HEX_LEN + 1], got[256];
  char *first[] = { "echo", "sh", NULL }, *second[] = { "echo", "b", NULL };
  struct cr_error *err = NULL;
  struct stat st;
  (void) state;

  assert_non_null (mkdtemp (parent));
  statedir_grant_key ("/h/.crucible/config.json", "g", "mcp__g", key);
  statedir_grant_key ("/h2/.crucible/config.json", "g", "mcp__g", other);
  assert_string_not_equal (key, other);
  /* No state directory, no record: nothing recorded yet.  */
  assert_int_equal (grant_recall (parent, key, got, sizeof got), 0);
  assert_int_equal (statedir_grant_remember (parent, getuid (), getgid (), key,
                                             "g", "mcp__g", first, 2, &err),
                    0);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), 1);
  assert_string_equal (got, "echo,sh");
  char *path = statedir_grant_path (parent, getuid (), key);
  assert_int_equal (lstat (path, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0600);
  /* The first record stays: a later listing does not replace it.  */
  assert_int_equal (statedir_grant_remember (parent, getuid (), getgid (), key,
                                             "g", "mcp__g", second, 2, &err),
                    1);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), 1);
  assert_string_equal (got, "echo,sh");
  assert_int_equal (grant_recall (parent, other, got, sizeof got), 0);
  /* Writable by the group: not believed.  */
  assert_int_equal (chmod (path, 0620), 0);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), -1);
  assert_string_equal (got, "");
  assert_int_equal (chmod (path, 0600), 0);
  /* Cut short (no "end"), or with a tool no listing can offer.  */
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (STATEDIR_GRANT_HEAD "\nserver g\nrule mcp__g\ntool echo\n", f);
  fclose (f);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), -1);
  f = fopen (path, "w");
  assert_non_null (f);
  fputs (STATEDIR_GRANT_HEAD "\nserver g\nrule mcp__g\ntool a*\nend\n", f);
  fclose (f);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), -1);
  /* Written for another rule: not this rule's.  */
  f = fopen (path, "w");
  assert_non_null (f);
  fputs (STATEDIR_GRANT_HEAD "\nserver h\nrule mcp__h\ntool echo\nend\n", f);
  fclose (f);
  assert_int_equal (grant_recall (parent, key, got, sizeof got), -1);
  unlink (path);
  free (path);
  char *dir = statedir_grant_path (parent, getuid (), "");
  *strrchr (dir, '/') = '\0';
  assert_int_equal (rmdir (dir), 0);
  free (dir);
  assert_int_equal (rmdir (parent), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_servers),      cmocka_unit_test (test_errors),
    cmocka_unit_test (test_names),        cmocka_unit_test (test_qualified),
    cmocka_unit_test (test_grant_record),
  };
  return cmocka_run_group_tests_name ("mcpservers", tests, NULL, NULL);
}
