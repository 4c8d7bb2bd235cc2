/* Tests for core/config.c: defaults, every key, every error (the exact text
 * doc/strings.md lists under "Configuration errors"), the home/project
 * rules, file loading, and writing the home file.  */
#include <config.h>

#include "core/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/xalloc.h"

#define HOME "home.json"
#define PROJECT "project.json"
#define WS "/ws"

/* Merge text as origin into cfg and require success.  */
static void
merge_ok (struct config *cfg, const char *text, enum config_origin origin)
{
  struct cr_error *err = NULL;
  const char *path = origin == CONFIG_PROJECT ? PROJECT : HOME;
  int ret
      = config_merge_text (cfg, text, strlen (text), path, origin, WS, &err);
  if (ret != 0)
    fail_msg ("unexpected error: %s", err ? err->msg : "?");
  assert_null (err);
}

/* Merge home text (may be NULL) then project text (may be NULL); the last
 * merge must fail with exactly the message expected.  */
static void
expect_error (const char *home, const char *project, const char *expected)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  int ret = 0;
  if (home != NULL)
    ret = config_merge_text (cfg, home, strlen (home), HOME, CONFIG_HOME, WS,
                             &err);
  if (project != NULL)
    {
      if (ret != 0)
        fail_msg ("home failed: %s", err ? err->msg : "?");
      ret = config_merge_text (cfg, project, strlen (project), PROJECT,
                               CONFIG_PROJECT, WS, &err);
    }
  assert_int_equal (ret, -1);
  assert_non_null (err);
  assert_string_equal (err ? err->msg : "(none)", expected);
  assert_int_equal (err ? err->code : -1, 0);
  cr_error_free (err);
  config_free (cfg);
}

/* Home text alone must fail with expected.  */
static void
expect_home_error (const char *home, const char *expected)
{
  expect_error (home, NULL, expected);
}

/* Project text over empty home must fail with expected.  */
static void
expect_project_error (const char *project, const char *expected)
{
  expect_error ("{}", project, expected);
}

/* sandbox.backend: absent is NULL (the platform's own), a known id is
 * kept, an unknown one is refused naming the file, line and the known
 * ids from the registry's table, and a project file may not set it.  */
static void
test_sandbox_backend (void **state)
{
  (void) state;
  struct config *cfg = config_new_defaults ();
  assert_null (cfg->sandbox_backend);
  merge_ok (cfg, "{\"sandbox\": {\"backend\": \"compat\"}}", CONFIG_HOME);
  assert_string_equal (cfg->sandbox_backend, "compat");
  merge_ok (cfg, "{\"sandbox\": {\"backend\": \"linux-bubblewrap\"}}",
            CONFIG_HOME);
  assert_string_equal (cfg->sandbox_backend, "linux-bubblewrap");
  config_free (cfg);
  expect_home_error ("{\"sandbox\": {\n\"backend\": \"containr\"}}",
                     "home.json:2: sandbox.backend: is not a known backend "
                     "(known: linux-bubblewrap, compat, container)");
  /* The container backend is known (inspection and image build reach its
   * engine), with its two home-only keys.  */
  cfg = config_new_defaults ();
  merge_ok (cfg,
            "{\"sandbox\": {\"backend\": \"container\", \"container\": "
            "{\"engine\": \"unix:///run/x.sock\", \"image\": \"i:1\"}}}",
            CONFIG_HOME);
  assert_string_equal (cfg->sandbox_backend, "container");
  assert_string_equal (cfg->container_engine, "unix:///run/x.sock");
  assert_string_equal (cfg->container_image, "i:1");
  config_free (cfg);
  expect_project_error ("{\"sandbox\": {\"container\": {\"image\": \"x\"}}}",
                        "project.json:1: sandbox.container.image: may only be "
                        "set in the home configuration "
                        "(~/.crucible/config.json), not in a project");
  expect_project_error ("{\"sandbox\": {\"backend\": \"compat\"}}",
                        "project.json:1: sandbox.backend: may only be set in "
                        "the home configuration (~/.crucible/config.json), "
                        "not in a project");
}

/* Assert a list holds exactly the strings of want, up to its NULL.  */
static void
assert_list_is (const struct config_list *list, const char *const *want)
{
  size_t i = 0;
  for (; want[i] != NULL; i++)
    {
      assert_true (i < list->count);
      assert_string_equal (list->items[i], want[i]);
    }
  assert_int_equal (list->count, i);
  assert_null (list->items[i]);
}

/* assert_list (list, "a", "b", NULL): the entries, in order.  */
#define assert_list(list, ...)                                                 \
  assert_list_is ((list), (const char *const[]){ __VA_ARGS__, NULL })

/* A new string of n copies of c.  */
static char *
repeat (char c, size_t n)
{
  char *s = xmalloc (n + 1);
  for (size_t i = 0; i < n; i++)
    s[i] = c;
  s[n] = '\0';
  return s;
}

/* workspaces.<path>.allow: only this workspace's list is kept, a
 * workspace's key is a path (dots allowed), and a project may not set it. */
static void
test_workspace_allow (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg,
            "{\"workspaces\": {"
            "\"/other\": {\"allow\": [\"Bash(rm *)\"]},"
            "\"/ws/\": {\"allow\": [\"Bash(npm run *)\", \"Bash(make *)\"]},"
            "\"/my.proj\": {\"allow\": []}}}",
            CONFIG_HOME);
  assert_list (&cfg->workspace_allow, "Bash(npm run *)", "Bash(make *)");
  config_free (cfg);
  expect_project_error ("{\"workspaces\": {}}",
                        "project.json:1: workspaces: may only be set in the "
                        "home configuration (~/.crucible/config.json), not "
                        "in a project");
  expect_home_error ("{\"workspaces\": {\"ws\": {}}}",
                     "home.json:1: workspaces.ws: unknown key");
  expect_home_error ("{\"workspaces\": {\"/ws\": {\"deny\": []}}}",
                     "home.json:1: workspaces.*.deny: unknown key");
  expect_home_error ("{\"workspaces\": {\"/ws\": {\"allow\": [1]}}}",
                     "home.json:1: workspaces.*.allow: expected an array of "
                     "strings");
}

/* workspaces.<path>.domains: this workspace's names join
 * sandbox.network.domains (wherever the key comes in the file), another
 * workspace's do not, a project may then narrow to one of them, and may
 * not add any.  */
static void
test_workspace_domains (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg,
            "{\"workspaces\": {"
            "\"/other\": {\"domains\": [\"evil.test\"]},"
            "\"/ws\": {\"domains\": [\"Pypi.org\", \"*.npmjs.org\"]}},"
            "\"sandbox\": {\"network\": {\"domains\": [\"github.com\"]}}}",
            CONFIG_HOME);
  assert_list (&cfg->workspace_domains, "pypi.org", "*.npmjs.org");
  assert_list (&cfg->net_domains, "github.com", "pypi.org", "*.npmjs.org");
  merge_ok (cfg, "{\"sandbox\": {\"network\": {\"domains\": [\"pypi.org\"]}}}",
            CONFIG_PROJECT);
  assert_list (&cfg->net_domains, "pypi.org");
  config_free (cfg);
  expect_home_error ("{\"workspaces\": {\"/ws\": {\"domains\": [\"a b\"]}}}",
                     "home.json:1: workspaces.*.domains[0]: must be a domain "
                     "name such as example.com or *.example.com");
}

/* --- defaults and parsing --------------------------------------------------
 */

/* Every key has its documented default.  */
static void
test_defaults (void **state)
{
  struct config *cfg = config_new_defaults ();
  assert_false (cfg->sandbox_enabled);
  assert_int_equal (cfg->sandbox_enabled_origin, CONFIG_DEFAULT);
  assert_list (&cfg->fs_writable, NULL);
  assert_list (&cfg->fs_read_only, NULL);
  assert_list (&cfg->fs_protected, NULL);
  assert_list (&cfg->fs_unreadable, NULL);
  assert_list (&cfg->net_domains, NULL);
  assert_false (cfg->net_allow_local_binding);
  assert_list (&cfg->net_unix_sockets, NULL);
  assert_int_equal (cfg->output_bytes, 10485760);
  assert_int_equal (cfg->cpu_seconds, 3600);
  assert_int_equal (cfg->open_files, 4096);
  assert_true (cfg->command_seconds == 1200.0);
  assert_int_equal (cfg->concurrency, 4);
  assert_string_equal (cfg->permissions_mode, "ask");
  assert_list (&cfg->allow, NULL);
  assert_list (&cfg->deny, NULL);
  assert_null (cfg->agent_command);
  assert_null (cfg->theme);
  assert_null (cfg->home_file);
  assert_null (cfg->project_file);
  config_free (cfg);
}

static const char full_home[]
    = "{\n"
      "  \"sandbox\": {\n"
      "    \"enabled\": true,\n"
      "    \"filesystem\": {\n"
      "      \"writable\": [\"/tmp/out\", \"build\", \"/a//b/./c/../d\"],\n"
      "      \"readOnly\": [\"/opt/data\"],\n"
      "      \"protected\": [\"secrets\"],\n"
      "      \"unreadable\": [\"**/*.pem\", \"**/*.pem\"]\n"
      "    },\n"
      "    \"network\": {\n"
      "      \"domains\": [\"Example.COM\", \"*.corp.example\"],\n"
      "      \"allowLocalBinding\": true,\n"
      "      \"allowUnixSockets\": [\"/run/a.sock\", \"/run/b.sock\"]\n"
      "    },\n"
      "    \"limits\": {\n"
      "      \"outputBytes\": 1048576,\n"
      "      \"cpuSeconds\": 60,\n"
      "      \"openFiles\": 256,\n"
      "      \"commandSeconds\": 2.5,\n"
      "      \"concurrency\": 8\n"
      "    }\n"
      "  },\n"
      "  \"permissions\": {\n"
      "    \"mode\": \"fullAccess\",\n"
      "    \"allow\": [\"git status\"],\n"
      "    \"deny\": [\"rm -rf /\"]\n"
      "  },\n"
      "  \"agent\": { \"command\": \"my-agent --stdio\" },\n"
      "  \"theme\": \"solarized-dark\"\n"
      "}\n";

/* A home file sets every key; paths and domains take their stored form.  */
static void
test_home_every_key (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, full_home, CONFIG_HOME);
  assert_true (cfg->sandbox_enabled);
  assert_int_equal (cfg->sandbox_enabled_origin, CONFIG_HOME);
  assert_list (&cfg->fs_writable, "/tmp/out", "/ws/build", "/a/b/d", NULL);
  assert_list (&cfg->fs_read_only, "/opt/data", NULL);
  assert_list (&cfg->fs_protected, "secrets", NULL);
  assert_list (&cfg->fs_unreadable, "**/*.pem", NULL);
  assert_list (&cfg->net_domains, "example.com", "*.corp.example", NULL);
  assert_true (cfg->net_allow_local_binding);
  assert_list (&cfg->net_unix_sockets, "/run/a.sock", "/run/b.sock", NULL);
  assert_int_equal (cfg->output_bytes, 1048576);
  assert_int_equal (cfg->cpu_seconds, 60);
  assert_int_equal (cfg->open_files, 256);
  assert_true (cfg->command_seconds == 2.5);
  assert_int_equal (cfg->concurrency, 8);
  assert_string_equal (cfg->permissions_mode, "fullAccess");
  assert_list (&cfg->allow, "git status", NULL);
  assert_list (&cfg->deny, "rm -rf /", NULL);
  assert_string_equal (cfg->agent_command, "my-agent --stdio");
  assert_string_equal (cfg->theme, "solarized-dark");
  config_free (cfg);
}

/* Bounds are inclusive and whitespace-only text reads as {}.  */
static void
test_bounds_accepted (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "", CONFIG_HOME);
  merge_ok (cfg, " \n\t", CONFIG_HOME);
  merge_ok (cfg, "{}", CONFIG_HOME);
  merge_ok (cfg,
            "{\"sandbox\":{\"limits\":{\"outputBytes\":68719476736,"
            "\"cpuSeconds\":604800,\"openFiles\":1048576,"
            "\"commandSeconds\":604800,\"concurrency\":64}}}",
            CONFIG_HOME);
  assert_int_equal (cfg->output_bytes, 68719476736ULL);
  assert_int_equal (cfg->concurrency, 64);
  merge_ok (cfg,
            "{\"sandbox\":{\"limits\":{\"outputBytes\":1,\"cpuSeconds\":1,"
            "\"openFiles\":1,\"commandSeconds\":0.001,\"concurrency\":1}}}",
            CONFIG_HOME);
  assert_int_equal (cfg->output_bytes, 1);
  assert_true (cfg->command_seconds == 0.001);
  merge_ok (cfg, "{\"sandbox\":{\"limits\":{\"commandSeconds\":30}}}",
            CONFIG_HOME);
  assert_true (cfg->command_seconds == 30.0);
  config_free (cfg);
}

/* A later home merge replaces lists rather than adding to them.  */
static void
test_home_replaces (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "{\"permissions\":{\"deny\":[\"a\",\"b\"]}}", CONFIG_HOME);
  merge_ok (cfg, "{\"permissions\":{\"deny\":[\"c\"]}}", CONFIG_HOME);
  assert_list (&cfg->deny, "c", NULL);
  merge_ok (cfg, "{\"permissions\":{\"mode\":\"ask\"},\"theme\":\"a\"}",
            CONFIG_HOME);
  merge_ok (cfg, "{\"theme\":\"b_2\"}", CONFIG_HOME);
  assert_string_equal (cfg->theme, "b_2");
  config_free (cfg);
}

/* --- errors -------------------------------------------------------------- */

/* Syntax errors carry yajl's message and the line where it stopped.  */
static void
test_syntax_errors (void **state)
{
  expect_home_error ("{\n  \"theme\" \"x\"\n}",
                     "home.json:2: parse error: object key and value must "
                     "be separated by a colon (':')");
  expect_home_error ("{\n  \"theme\": \"x\",\n\n",
                     "home.json:2: parse error: premature EOF");
  expect_home_error ("{}\n{}", "home.json:2: parse error: trailing garbage");
  expect_home_error ("{\n\"sandbox\": {\"enabled\": tru}}",
                     "home.json:2: lexical error: invalid string in json "
                     "text.");
  expect_home_error ("{\"theme\": \"a\tb\"}",
                     "home.json:1: lexical error: invalid character inside "
                     "string.");
  expect_home_error ("{\"theme\": \"\xff\"}",
                     "home.json:1: lexical error: invalid bytes in UTF8 "
                     "string.");
  expect_home_error ("{\"theme\": \"a\",}",
                     "home.json:1: parse error: invalid object key (must be "
                     "a string)");
}

/* The top level must be an object.  */
static void
test_top_level (void **state)
{
  const char *want = "home.json:1: the top level must be a JSON object";
  expect_home_error ("[]", want);
  expect_home_error ("\"x\"", want);
  expect_home_error ("null", want);
  expect_home_error ("true", want);
  expect_home_error ("3", want);
  expect_home_error ("\n\n3\n", "home.json:3: the top level must be a JSON "
                                "object");
}

/* Unknown keys are refused at any depth, spelled safely.  */
static void
test_unknown_keys (void **state)
{
  expect_home_error ("{\"colour\": 1}", "home.json:1: colour: unknown key");
  expect_home_error ("{\n\"sandbox\": {\n\"limits\": {\n\"memory\": 1}}}",
                     "home.json:4: sandbox.limits.memory: unknown key");
  expect_home_error ("{\"sandbox\": {\"network\": {\"proxy\": {}}}}",
                     "home.json:1: sandbox.network.proxy: unknown key");
  expect_home_error ("{\"agent\": {\"Command\": \"x\"}}",
                     "home.json:1: agent.Command: unknown key");
  expect_home_error ("{\"\": 1}", "home.json:1: \"\": unknown key");
  expect_home_error ("{\"sandbox\": {\"\": 1}}",
                     "home.json:1: sandbox.\"\": unknown key");
  expect_home_error ("{\"sandbox.enabled\": true}",
                     "home.json:1: sandbox.enabled: unknown key (a dotted "
                     "name is written as nested objects)");
  expect_home_error ("{\"sandbox\": {\"enabled\\u0000x\": true}}",
                     "home.json:1: sandbox.enabled\\x00x: unknown key");
  expect_home_error ("{\"\\u001b[31m\\\\\": 1}",
                     "home.json:1: \\x1b[31m\\x5c: unknown key");
  expect_home_error ("{\"\\u009b\": 1}",
                     "home.json:1: \\xc2\\x9b: unknown key");
  expect_home_error (
      "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaa\": 1}",
      "home.json:1: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaa...: unknown key");
}

/* Each kind of key names the type it expected.  */
static void
test_wrong_types (void **state)
{
  expect_home_error ("{\"sandbox\": true}",
                     "home.json:1: sandbox: expected an object");
  expect_home_error ("{\"sandbox\": []}",
                     "home.json:1: sandbox: expected an object");
  expect_home_error ("{\"sandbox\": {\"enabled\": \"yes\"}}",
                     "home.json:1: sandbox.enabled: expected true or false");
  expect_home_error ("{\"sandbox\": {\"enabled\": 1}}",
                     "home.json:1: sandbox.enabled: expected true or false");
  expect_home_error ("{\"sandbox\": {\"enabled\": null}}",
                     "home.json:1: sandbox.enabled: expected true or false");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"cpuSeconds\": \"60\"}}}",
                     "home.json:1: sandbox.limits.cpuSeconds: expected a "
                     "whole number");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"cpuSeconds\": 1.5}}}",
                     "home.json:1: sandbox.limits.cpuSeconds: expected a "
                     "whole number");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"openFiles\": 1e3}}}",
                     "home.json:1: sandbox.limits.openFiles: expected a "
                     "whole number");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"commandSeconds\": {}}}}",
                     "home.json:1: sandbox.limits.commandSeconds: expected a "
                     "number");
  expect_home_error ("{\"theme\": 3}", "home.json:1: theme: expected a string");
  expect_home_error ("{\"agent\": {\"command\": [\"a\"]}}",
                     "home.json:1: agent.command: expected a string");
  expect_home_error ("{\"permissions\": {\"deny\": \"rm\"}}",
                     "home.json:1: permissions.deny: expected an array of "
                     "strings");
  expect_home_error ("{\"sandbox\": {\"filesystem\": {\"writable\": "
                     "[\"a\",\n 3]}}}",
                     "home.json:2: sandbox.filesystem.writable: expected an "
                     "array of strings");
  expect_home_error ("{\"sandbox\": {\"network\": {\"domains\": [[]]}}}",
                     "home.json:1: sandbox.network.domains: expected an "
                     "array of strings");
  expect_home_error ("{\"sandbox\": {\"network\": {\"domains\": [{}]}}}",
                     "home.json:1: sandbox.network.domains: expected an "
                     "array of strings");
  expect_home_error ("{\"sandbox\": {\"network\": {\"domains\": [null]}}}",
                     "home.json:1: sandbox.network.domains: expected an "
                     "array of strings");
}

/* Numbers outside their bounds name the bounds.  */
static void
test_out_of_range (void **state)
{
  expect_home_error ("{\"sandbox\": {\"limits\": {\"concurrency\": 65}}}",
                     "home.json:1: sandbox.limits.concurrency: must be "
                     "between 1 and 64");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"concurrency\": 0}}}",
                     "home.json:1: sandbox.limits.concurrency: must be "
                     "between 1 and 64");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"concurrency\": -1}}}",
                     "home.json:1: sandbox.limits.concurrency: must be "
                     "between 1 and 64");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"outputBytes\": "
                     "99999999999999999999999999}}}",
                     "home.json:1: sandbox.limits.outputBytes: must be "
                     "between 1 and 68719476736");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"cpuSeconds\": 604801}}}",
                     "home.json:1: sandbox.limits.cpuSeconds: must be "
                     "between 1 and 604800");
  expect_home_error ("{\"sandbox\": {\"limits\": {\"openFiles\": 1048577}}}",
                     "home.json:1: sandbox.limits.openFiles: must be "
                     "between 1 and 1048576");
  const char *cs = "home.json:1: sandbox.limits.commandSeconds: must be more "
                   "than 0 and at most 604800";
  expect_home_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":0}}}", cs);
  expect_home_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":-2}}}", cs);
  expect_home_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":604800.5}}}",
                     cs);
  expect_home_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":1e400}}}",
                     cs);
  expect_home_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":1e-400}}}",
                     cs);
}

/* Strings and list entries are checked; entries are named by index.  */
static void
test_bad_strings (void **state)
{
  expect_home_error (
      "{\"sandbox\":{\"filesystem\":{\"readOnly\":[\"a\",\"\"]}}}",
      "home.json:1: sandbox.filesystem.readOnly[1]: must not "
      "be empty");
  expect_home_error ("{\"permissions\":{\"deny\":[\"a\\u0000b\"]}}",
                     "home.json:1: permissions.deny[0]: must not contain a "
                     "NUL character");
  expect_home_error ("{\"agent\":{\"command\":\"\"}}",
                     "home.json:1: agent.command: must not be empty");
  expect_home_error ("{\"sandbox\":{\"network\":{\"allowUnixSockets\":"
                     "[\"run/x.sock\"]}}}",
                     "home.json:1: sandbox.network.allowUnixSockets[0]: must "
                     "be an absolute path");
  const char *dom = "home.json:1: sandbox.network.domains[0]: must be a "
                    "domain name such as example.com or *.example.com";
  const char *bad_domains[]
      = { "*", "a..b", ".a", "a.", "http://a", "a b", "*.*.a", "a_b" };
  for (size_t i = 0; i < sizeof bad_domains / sizeof *bad_domains; i++)
    {
      char *text = xasprintf ("{\"sandbox\":{\"network\":{\"domains\":"
                              "[\"%s\"]}}}",
                              bad_domains[i]);
      expect_home_error (text, dom);
      free (text);
    }
  expect_home_error ("{\"permissions\":{\"mode\":\"auto\"}}",
                     "home.json:1: permissions.mode: must be \"ask\" or "
                     "\"fullAccess\"");
  expect_home_error ("{\"theme\":\"../../etc/passwd\"}",
                     "home.json:1: theme: must be a theme name made of "
                     "letters, digits, '-' and '_'");
}

/* Lengths and counts are bounded.  */
static void
test_size_bounds (void **state)
{
  char *long_theme = repeat ('t', 65);
  char *text = xasprintf ("{\"theme\":\"%s\"}", long_theme);
  expect_home_error (text, "home.json:1: theme: must be at most 64 bytes "
                           "long");
  free (text);
  free (long_theme);
  /* 107 bytes fit a sun_path; 108 do not.  */
  struct config *cfg = config_new_defaults ();
  char *sock = repeat ('s', 107);
  sock[0] = '/';
  text = xasprintf ("{\"sandbox\":{\"network\":{\"allowUnixSockets\":"
                    "[\"%s\"]}}}",
                    sock);
  merge_ok (cfg, text, CONFIG_HOME);
  free (text);
  free (sock);
  sock = repeat ('s', 108);
  sock[0] = '/';
  text = xasprintf ("{\"sandbox\":{\"network\":{\"allowUnixSockets\":"
                    "[\"%s\"]}}}",
                    sock);
  expect_home_error (text, "home.json:1: sandbox.network.allowUnixSockets[0]: "
                           "must be at most 107 bytes long");
  free (text);
  free (sock);

  /* 64 sockets fit; the 65th is refused.  */
  char *list = xstrdup ("{\"sandbox\":{\"network\":{\"allowUnixSockets\":[");
  for (int i = 0; i < 65; i++)
    {
      char *next = xasprintf ("%s%s\"/s%d\"", list, i ? "," : "", i);
      free (list);
      list = next;
      if (i == 63)
        {
          char *fits = xasprintf ("%s]}}}", list);
          merge_ok (cfg, fits, CONFIG_HOME);
          assert_int_equal (cfg->net_unix_sockets.count, 64);
          free (fits);
        }
    }
  text = xasprintf ("%s]}}}", list);
  expect_home_error (text, "home.json:1: sandbox.network.allowUnixSockets: "
                           "more than 64 entries");
  free (text);
  free (list);
  config_free (cfg);
}

/* A key given twice in one object is refused at its second spelling.  */
static void
test_duplicates (void **state)
{
  expect_home_error ("{\"theme\":\"a\",\n\"theme\":\"b\"}",
                     "home.json:2: theme: duplicate key");
  expect_home_error ("{\"sandbox\":{\"enabled\":true},\n\n\"sandbox\":{}}",
                     "home.json:3: sandbox: duplicate key");
  expect_home_error ("{\"sandbox\":{\"limits\":{\"cpuSeconds\":1,"
                     "\"cpuSeconds\":2}}}",
                     "home.json:1: sandbox.limits.cpuSeconds: duplicate key");
}

/* --- home and project ------------------------------------------------------
 */

/* Keys that grant trust cannot come from a project.  */
static void
test_home_only (void **state)
{
  expect_project_error ("{\"agent\": {\"command\": \"evil\"}}",
                        "project.json:1: agent.command: may only be set in "
                        "the home configuration (~/.crucible/config.json), "
                        "not in a project");
  expect_project_error ("{\"permissions\": {\n\"mode\": \"ask\"}}",
                        "project.json:2: permissions.mode: may only be set in "
                        "the home configuration (~/.crucible/config.json), "
                        "not in a project");
  expect_project_error ("{\"permissions\": {\"allow\": []}}",
                        "project.json:1: permissions.allow: may only be set "
                        "in the home configuration (~/.crucible/config.json), "
                        "not in a project");
  /* Refused before its value is even looked at.  */
  expect_project_error ("{\"agent\": {\"command\": 5}}",
                        "project.json:1: agent.command: may only be set in "
                        "the home configuration (~/.crucible/config.json), "
                        "not in a project");
}

/* A project may require confinement and never disable it.  */
static void
test_project_enabled (void **state)
{
  const char *refused = "project.json:1: sandbox.enabled: only the home "
                        "configuration may disable confinement";
  expect_project_error ("{\"sandbox\": {\"enabled\": false}}", refused);
  expect_error ("{\"sandbox\": {\"enabled\": false}}",
                "{\"sandbox\": {\"enabled\": false}}", refused);
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "{\"sandbox\": {\"enabled\": false}}", CONFIG_HOME);
  assert_int_equal (cfg->sandbox_enabled_origin, CONFIG_HOME);
  merge_ok (cfg, "{\"sandbox\": {\"enabled\": true}}", CONFIG_PROJECT);
  assert_true (cfg->sandbox_enabled);
  assert_int_equal (cfg->sandbox_enabled_origin, CONFIG_PROJECT);
  config_free (cfg);
}

/* Project limits may lower or keep, never raise, the inherited value.  */
static void
test_project_limits (void **state)
{
  expect_project_error ("{\"sandbox\":{\"limits\":{\"concurrency\":5}}}",
                        "project.json:1: sandbox.limits.concurrency: a "
                        "project may only lower this limit (inherited: 4)");
  expect_project_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":"
                        "1200.5}}}",
                        "project.json:1: sandbox.limits.commandSeconds: a "
                        "project may only lower this limit (inherited: "
                        "1200)");
  expect_error ("{\"sandbox\":{\"limits\":{\"outputBytes\":1000}}}",
                "{\"sandbox\":{\"limits\":{\"outputBytes\":1001}}}",
                "project.json:1: sandbox.limits.outputBytes: a project may "
                "only lower this limit (inherited: 1000)");
  expect_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":0.25}}}",
                "{\"sandbox\":{\"limits\":{\"commandSeconds\":1}}}",
                "project.json:1: sandbox.limits.commandSeconds: a project "
                "may only lower this limit (inherited: 0.25)");
  expect_error ("{\"sandbox\":{\"limits\":{\"commandSeconds\":0.1234567}}}",
                "{\"sandbox\":{\"limits\":{\"commandSeconds\":0.2}}}",
                "project.json:1: sandbox.limits.commandSeconds: a project "
                "may only lower this limit (inherited: 0.1234567)");
  /* A home value above the default lets a project go up to it.  */
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "{\"sandbox\":{\"limits\":{\"cpuSeconds\":7200}}}",
            CONFIG_HOME);
  merge_ok (cfg,
            "{\"sandbox\":{\"limits\":{\"cpuSeconds\":7200,\"openFiles\":64,"
            "\"outputBytes\":1024,\"commandSeconds\":0.5,"
            "\"concurrency\":1}}}",
            CONFIG_PROJECT);
  assert_int_equal (cfg->cpu_seconds, 7200);
  assert_int_equal (cfg->open_files, 64);
  assert_int_equal (cfg->output_bytes, 1024);
  assert_true (cfg->command_seconds == 0.5);
  assert_int_equal (cfg->concurrency, 1);
  config_free (cfg);
}

/* Private addresses: home's alone; a project may not even turn it off
 * (it grants nothing, but the key is the person's).  */
static void
test_private_addresses (void **state)
{
  (void) state;
  struct config *cfg = config_new_defaults ();
  assert_false (cfg->net_allow_private);
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"allowPrivateAddresses\":true}}}",
            CONFIG_HOME);
  assert_true (cfg->net_allow_private);
  config_free (cfg);
  expect_project_error (
      "{\"sandbox\":{\"network\":{\"allowPrivateAddresses\":true}}}",
      "project.json:1: sandbox.network.allowPrivateAddresses: may only be set "
      "in the home configuration (~/.crucible/config.json), not in a project");
  expect_project_error (
      "{\"sandbox\":{\"network\":{\"allowPrivateAddresses\":false}}}",
      "project.json:1: sandbox.network.allowPrivateAddresses: may only be set "
      "in the home configuration (~/.crucible/config.json), not in a project");
}

/* Local binding: a project may turn it off, or keep home's grant.  */
static void
test_project_local_binding (void **state)
{
  const char *refused = "project.json:1: sandbox.network.allowLocalBinding: "
                        "a project may not grant this; only the home "
                        "configuration can";
  expect_project_error ("{\"sandbox\":{\"network\":{\"allowLocalBinding\":"
                        "true}}}",
                        refused);
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"allowLocalBinding\":false}}}",
            CONFIG_PROJECT);
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"allowLocalBinding\":true}}}",
            CONFIG_HOME);
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"allowLocalBinding\":true}}}",
            CONFIG_PROJECT);
  assert_true (cfg->net_allow_local_binding);
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"allowLocalBinding\":false}}}",
            CONFIG_PROJECT);
  assert_false (cfg->net_allow_local_binding);
  config_free (cfg);
}

static const char net_home[]
    = "{\"sandbox\":{\"network\":{\"domains\":[\"example.com\","
      "\"*.corp.example\"],\"allowUnixSockets\":[\"/run/a.sock\","
      "\"/run/b.sock\"]}}}";

/* Project network lists narrow home's; anything else is refused.  */
static void
test_project_network_subset (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, net_home, CONFIG_HOME);
  merge_ok (cfg,
            "{\"sandbox\":{\"network\":{\"domains\":[\"EXAMPLE.com\","
            "\"api.corp.example\",\"*.eu.corp.example\"],"
            "\"allowUnixSockets\":[\"/run/b.sock\"]}}}",
            CONFIG_PROJECT);
  assert_list (&cfg->net_domains, "example.com", "api.corp.example",
               "*.eu.corp.example", NULL);
  assert_list (&cfg->net_unix_sockets, "/run/b.sock", NULL);
  merge_ok (cfg, "{\"sandbox\":{\"network\":{\"domains\":[]}}}",
            CONFIG_PROJECT);
  assert_list (&cfg->net_domains, NULL);
  config_free (cfg);

  expect_error (net_home,
                "{\"sandbox\":{\"network\":{\"domains\":[\"example.com\",\n"
                "\"evil.example\"]}}}",
                "project.json:2: sandbox.network.domains[1]: "
                "\"evil.example\" is not granted by the home configuration");
  expect_error (net_home,
                "{\"sandbox\":{\"network\":{\"domains\":[\"corp.example\"]}}}",
                "project.json:1: sandbox.network.domains[0]: "
                "\"corp.example\" is not granted by the home configuration");
  expect_error (net_home,
                "{\"sandbox\":{\"network\":{\"domains\":[\"*.example.com\"]}}}",
                "project.json:1: sandbox.network.domains[0]: "
                "\"*.example.com\" is not granted by the home configuration");
  expect_error (net_home,
                "{\"sandbox\":{\"network\":{\"allowUnixSockets\":"
                "[\"/run/c.sock\"]}}}",
                "project.json:1: sandbox.network.allowUnixSockets[0]: "
                "\"/run/c.sock\" is not granted by the home configuration");
  expect_project_error ("{\"sandbox\":{\"network\":{\"domains\":[\"a.b\"]}}}",
                        "project.json:1: sandbox.network.domains[0]: \"a.b\" "
                        "is not granted by the home configuration");
}

/* Project writable paths stay inside the workspace and add to home's.  */
static void
test_project_writable (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg, "{\"sandbox\":{\"filesystem\":{\"writable\":[\"/tmp/out\"]}}}",
            CONFIG_HOME);
  merge_ok (cfg,
            "{\"sandbox\":{\"filesystem\":{\"writable\":[\"build\",\"./b/\","
            "\"/ws\",\"/ws/x/../y\",\"/tmp/out/../../ws/z\",\"build\"]}}}",
            CONFIG_PROJECT);
  assert_list (&cfg->fs_writable, "/tmp/out", "/ws/build", "/ws/b", "/ws",
               "/ws/y", "/ws/z", NULL);
  config_free (cfg);

  expect_project_error ("{\"sandbox\":{\"filesystem\":{\"writable\":"
                        "[\"/etc\"]}}}",
                        "project.json:1: sandbox.filesystem.writable[0]: "
                        "\"/etc\" is outside the workspace");
  expect_project_error ("{\"sandbox\":{\"filesystem\":{\"writable\":"
                        "[\"a\",\"../x\"]}}}",
                        "project.json:1: sandbox.filesystem.writable[1]: "
                        "\"../x\" is outside the workspace");
  expect_project_error ("{\"sandbox\":{\"filesystem\":{\"writable\":"
                        "[\"/wsx\"]}}}",
                        "project.json:1: sandbox.filesystem.writable[0]: "
                        "\"/wsx\" is outside the workspace");
  expect_project_error ("{\"sandbox\":{\"filesystem\":{\"writable\":"
                        "[\"/ws/../\\u001b]0;x\"]}}}",
                        "project.json:1: sandbox.filesystem.writable[0]: "
                        "\"/ws/../\\x1b]0;x\" is outside the workspace");

  /* Without a workspace no project path can be shown to be inside one.  */
  cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  const char *t = "{\"sandbox\":{\"filesystem\":{\"writable\":[\"a\"]}}}";
  assert_int_equal (config_merge_text (cfg, t, strlen (t), PROJECT,
                                       CONFIG_PROJECT, NULL, &err),
                    -1);
  assert_string_equal (err->msg, "project.json:1: "
                                 "sandbox.filesystem.writable[0]: \"a\" is "
                                 "outside the workspace");
  cr_error_free (err);
  config_free (cfg);
}

/* Carve-outs and deny rules from a project only add.  */
static void
test_project_unions (void **state)
{
  struct config *cfg = config_new_defaults ();
  merge_ok (cfg,
            "{\"sandbox\":{\"filesystem\":{\"readOnly\":[\"/r\"],"
            "\"protected\":[\"p\"],\"unreadable\":[\"u\"]}},"
            "\"permissions\":{\"deny\":[\"d1\"]}}",
            CONFIG_HOME);
  merge_ok (cfg,
            "{\"sandbox\":{\"filesystem\":{\"readOnly\":[\"/r\",\"/r2\"],"
            "\"protected\":[],\"unreadable\":[\"**/.env\"]}},"
            "\"permissions\":{\"deny\":[\"d2\",\"d1\"]},"
            "\"theme\":\"project-theme\"}",
            CONFIG_PROJECT);
  assert_list (&cfg->fs_read_only, "/r", "/r2", NULL);
  assert_list (&cfg->fs_protected, "p", NULL);
  assert_list (&cfg->fs_unreadable, "u", "**/.env", NULL);
  assert_list (&cfg->deny, "d1", "d2", NULL);
  assert_string_equal (cfg->theme, "project-theme");
  config_free (cfg);
}

/* --- files --------------------------------------------------------------- */

struct dirs
{
  char *root;
  char *home;      /* $HOME */
  char *home_file; /* $HOME/.crucible/config.json */
  char *ws;
  char *ws_file;
};

/* Make a temporary home and workspace, each with its .crucible.  */
static int
dirs_setup (void **state)
{
  struct dirs *d = xcalloc (1, sizeof *d);
  d->root = xstrdup ("/tmp/test_config.XXXXXX");
  assert_non_null (mkdtemp (d->root));
  d->home = xasprintf ("%s/home", d->root);
  d->ws = xasprintf ("%s/ws", d->root);
  d->home_file = xasprintf ("%s/.crucible/config.json", d->home);
  d->ws_file = xasprintf ("%s/.crucible/config.json", d->ws);
  char *home_dot = xasprintf ("%s/.crucible", d->home);
  char *ws_dot = xasprintf ("%s/.crucible", d->ws);
  assert_int_equal (mkdir (d->home, 0700), 0);
  assert_int_equal (mkdir (home_dot, 0700), 0);
  assert_int_equal (mkdir (d->ws, 0700), 0);
  assert_int_equal (mkdir (ws_dot, 0700), 0);
  free (home_dot);
  free (ws_dot);
  *state = d;
  return 0;
}

/* Remove the temporary tree.  */
static int
dirs_teardown (void **state)
{
  struct dirs *d = *state;
  char *cmd = xasprintf ("rm -rf '%s'", d->root);
  int rc = system (cmd);
  free (cmd);
  free (d->root);
  free (d->home);
  free (d->home_file);
  free (d->ws);
  free (d->ws_file);
  free (d);
  return rc == 0 ? 0 : -1;
}

/* Write text to path.  */
static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  assert_int_equal (fputs (text, f) >= 0, 1);
  assert_int_equal (fclose (f), 0);
}

/* Missing files are not errors: the defaults stand.  */
static void
test_load_missing (void **state)
{
  struct dirs *d = *state;
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), 0);
  assert_null (err);
  assert_false (cfg->sandbox_enabled);
  assert_null (cfg->home_file);
  assert_null (cfg->project_file);
  config_free (cfg);
}

/* An empty file is an empty configuration.  */
static void
test_load_empty (void **state)
{
  struct dirs *d = *state;
  write_file (d->home_file, "");
  write_file (d->ws_file, "\n");
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), 0);
  assert_string_equal (cfg->home_file, d->home_file);
  assert_string_equal (cfg->project_file, d->ws_file);
  assert_int_equal (cfg->concurrency, 4);
  config_free (cfg);
}

/* Home then project are read and merged.  */
static void
test_load_both (void **state)
{
  struct dirs *d = *state;
  write_file (d->home_file, "{\"agent\":{\"command\":\"a\"},"
                            "\"sandbox\":{\"limits\":{\"concurrency\":8}}}");
  write_file (d->ws_file, "{\"sandbox\":{\"enabled\":true,"
                          "\"limits\":{\"concurrency\":2},"
                          "\"filesystem\":{\"writable\":[\"out\"]}}}");
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), 0);
  assert_string_equal (cfg->agent_command, "a");
  assert_true (cfg->sandbox_enabled);
  assert_int_equal (cfg->sandbox_enabled_origin, CONFIG_PROJECT);
  assert_int_equal (cfg->concurrency, 2);
  char *out = xasprintf ("%s/out", d->ws);
  assert_list (&cfg->fs_writable, out, NULL);
  free (out);
  assert_string_equal (cfg->home_file, d->home_file);
  assert_string_equal (cfg->project_file, d->ws_file);
  config_free (cfg);
}

/* A project error names the project file's path, line and key.  */
static void
test_load_project_error (void **state)
{
  struct dirs *d = *state;
  write_file (d->ws_file,
              "{\n  \"agent\": {\n    \"command\": \"x\"\n  }\n}\n");
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), -1);
  assert_null (cfg);
  char *want = xasprintf ("%s:3: agent.command: may only be set in the home "
                          "configuration (~/.crucible/config.json), not in "
                          "a project",
                          d->ws_file);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_free (err);
}

/* A home error stops before the project is read.  */
static void
test_load_home_error (void **state)
{
  struct dirs *d = *state;
  write_file (d->home_file, "{\"sandbox\":{\"enabled\":1}}");
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), -1);
  char *want = xasprintf ("%s:1: sandbox.enabled: expected true or false",
                          d->home_file);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_free (err);
}

/* A directory where the file should be is unreadable, named.  (Tests run
 * as root, for whom mode 000 still reads.)  */
static void
test_load_unreadable (void **state)
{
  struct dirs *d = *state;
  assert_int_equal (mkdir (d->ws_file, 0700), 0);
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), -1);
  char *want = xasprintf ("cannot read %s: %s", d->ws_file, strerror (EISDIR));
  assert_string_equal (err->msg, want);
  assert_int_equal (err->code, EISDIR);
  free (want);
  cr_error_free (err);
}

/* A fifo is refused without blocking.  */
static void
test_load_fifo (void **state)
{
  struct dirs *d = *state;
  assert_int_equal (mkfifo (d->home_file, 0600), 0);
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), -1);
  char *want = xasprintf ("cannot read %s: not a regular file", d->home_file);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_free (err);
}

/* A file over CONFIG_FILE_MAX_BYTES is refused; one at it is read.  */
static void
test_load_too_large (void **state)
{
  struct dirs *d = *state;
  size_t n = CONFIG_FILE_MAX_BYTES;
  char *text = repeat (' ', n + 1);
  text[0] = '{';
  text[n - 1] = '}';
  text[n] = '\0';
  write_file (d->home_file, text);
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), 0);
  config_free (cfg);
  text[n] = ' ';
  text[n + 1] = '\0';
  write_file (d->home_file, text);
  free (text);
  assert_int_equal (config_load (&cfg, d->home_file, d->ws, &err), -1);
  char *want = xasprintf ("cannot read %s: larger than 1048576 bytes, the "
                          "most a configuration file may hold",
                          d->home_file);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_free (err);
}

/* $HOME finds the home file; with HOME unset there is a clear error.  */
static void
test_home_path (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  char *saved = getenv ("HOME") ? xstrdup (getenv ("HOME")) : NULL;

  setenv ("HOME", d->home, 1);
  char *path = config_home_path (&err);
  assert_string_equal (path, d->home_file);
  free (path);
  setenv ("HOME", "/", 1);
  path = config_home_path (&err);
  assert_string_equal (path, "/.crucible/config.json");
  free (path);

  const char *want = "HOME is not set to an absolute path, so the home "
                     "configuration (~/.crucible/config.json) cannot be found";
  unsetenv ("HOME");
  assert_null (config_home_path (&err));
  assert_string_equal (err->msg, want);
  cr_error_clear (&err);
  setenv ("HOME", "relative", 1);
  struct config *cfg = NULL;
  assert_int_equal (config_load (&cfg, NULL, d->ws, &err), -1);
  assert_string_equal (err->msg, want);
  cr_error_clear (&err);

  /* config_load with NULL reads $HOME's file.  */
  setenv ("HOME", d->home, 1);
  write_file (d->home_file, "{\"theme\":\"from-home\"}");
  assert_int_equal (config_load (&cfg, NULL, d->ws, &err), 0);
  assert_string_equal (cfg->theme, "from-home");
  config_free (cfg);

  if (saved)
    setenv ("HOME", saved, 1);
  else
    unsetenv ("HOME");
  free (saved);
}

/* A workspace that is the home directory reads its file once, as home.  */
static void
test_load_workspace_is_home (void **state)
{
  struct dirs *d = *state;
  write_file (d->home_file, "{\"agent\":{\"command\":\"mine\"}}");
  struct config *cfg = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, d->home, &err), 0);
  assert_string_equal (cfg->agent_command, "mine");
  assert_null (cfg->project_file);
  config_free (cfg);
}

/* The whole of the file at path.  Owned.  */
static char *
read_file (const char *path)
{
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  char *text = xcalloc (1, 65536);
  size_t n = fread (text, 1, 65535, f);
  fclose (f);
  text[n] = '\0';
  return text;
}

/* sandbox.enabled is set where it was, every other key and value kept as
 * it was spelled, and the file left 0600; a missing file and its
 * directory are made.  */
static void
test_home_set_enabled (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  write_file (d->home_file, "{\"theme\": \"dark\", \"sandbox\": {\"enabled\": "
                            "false, \"limits\": {\"commandSeconds\": "
                            "1200.5}}, \"agent\": {\"command\": \"a\"}}");
  assert_int_equal (config_home_set_enabled (d->home_file, true, &err), 0);
  char *text = read_file (d->home_file);
  assert_string_equal (text, "{\n"
                             "  \"theme\": \"dark\",\n"
                             "  \"sandbox\": {\n"
                             "    \"enabled\": true,\n"
                             "    \"limits\": {\n"
                             "      \"commandSeconds\": 1200.5\n"
                             "    }\n"
                             "  },\n"
                             "  \"agent\": {\n"
                             "    \"command\": \"a\"\n"
                             "  }\n"
                             "}\n");
  free (text);
  struct stat st;
  assert_int_equal (stat (d->home_file, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  char *fresh = xasprintf ("%s/new/config.json", d->root);
  assert_int_equal (config_home_set_enabled (fresh, false, &err), 0);
  text = read_file (fresh);
  assert_string_equal (text, "{\n  \"sandbox\": {\n    \"enabled\": false\n  "
                             "}\n}\n");
  free (text);
  free (fresh);
}

/* A file that is not an object, or whose new text would not load, is
 * left as it was, and the error says so.  */
static void
test_home_write_refused (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  write_file (d->home_file, "[1]");
  assert_int_equal (config_home_set_enabled (d->home_file, true, &err), -1);
  char *want
      = xasprintf ("%s: not a JSON object; it was left as it is", d->home_file);
  assert_string_equal (err->msg, want);
  cr_error_clear (&err);
  free (want);
  write_file (d->home_file, "{\"sandbox\": {\"bogus\": 1}}");
  assert_int_equal (config_home_set_enabled (d->home_file, true, &err), -1);
  assert_non_null (strstr (err->msg, "sandbox.bogus: unknown key"));
  cr_error_clear (&err);
  char *text = read_file (d->home_file);
  assert_string_equal (text, "{\"sandbox\": {\"bogus\": 1}}");
  free (text);
  /* Read as the loader reads: a fifo there is refused, not waited on.  */
  assert_int_equal (unlink (d->home_file), 0);
  assert_int_equal (mkfifo (d->home_file, 0600), 0);
  assert_int_equal (config_home_set_enabled (d->home_file, true, &err), -1);
  want = xasprintf ("cannot read %s: not a regular file", d->home_file);
  assert_string_equal (err->msg, want);
  cr_error_clear (&err);
  free (want);
}

/* Rules join this workspace's allow list after what it held, each once;
 * another workspace's list is left alone; what is written loads.  */
static void
test_home_add_allow (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  char *first[] = { "Bash(make *)" };
  char *more[] = { "Bash(make *)", "Bash(npm run *)" };
  write_file (d->home_file, "{\"workspaces\": {\"/other\": {\"allow\": "
                            "[\"Bash(ls *)\"]}}}");
  assert_int_equal (config_home_add_allow (d->home_file, "/ws", first, 1, &err),
                    0);
  assert_int_equal (config_home_add_allow (d->home_file, "/ws", more, 2, &err),
                    0);
  char *text = read_file (d->home_file);
  assert_string_equal (text, "{\n"
                             "  \"workspaces\": {\n"
                             "    \"/other\": {\n"
                             "      \"allow\": [\n"
                             "        \"Bash(ls *)\"\n"
                             "      ]\n"
                             "    },\n"
                             "    \"/ws\": {\n"
                             "      \"allow\": [\n"
                             "        \"Bash(make *)\",\n"
                             "        \"Bash(npm run *)\"\n"
                             "      ]\n"
                             "    }\n"
                             "  }\n"
                             "}\n");
  free (text);
  struct config *cfg = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, "/ws", &err), 0);
  assert_int_equal (cfg->workspace_allow.count, 2);
  assert_string_equal (cfg->workspace_allow.items[1], "Bash(npm run *)");
  config_free (cfg);
}

/* A name joins this workspace's domains once, beside its allow rules;
 * what is written loads and allows it.  */
static void
test_home_add_domain (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  char *rules[] = { "Bash(make *)" };
  assert_int_equal (config_home_add_allow (d->home_file, "/ws", rules, 1, &err),
                    0);
  assert_int_equal (
      config_home_add_domain (d->home_file, "/ws", "pypi.org", &err), 0);
  assert_int_equal (
      config_home_add_domain (d->home_file, "/ws", "pypi.org", &err), 0);
  char *text = read_file (d->home_file);
  assert_string_equal (text, "{\n"
                             "  \"workspaces\": {\n"
                             "    \"/ws\": {\n"
                             "      \"allow\": [\n"
                             "        \"Bash(make *)\"\n"
                             "      ],\n"
                             "      \"domains\": [\n"
                             "        \"pypi.org\"\n"
                             "      ]\n"
                             "    }\n"
                             "  }\n"
                             "}\n");
  free (text);
  struct config *cfg = NULL;
  assert_int_equal (config_load (&cfg, d->home_file, "/ws", &err), 0);
  assert_list (&cfg->net_domains, "pypi.org");
  config_free (cfg);
  assert_int_equal (config_load (&cfg, d->home_file, "/elsewhere", &err), 0);
  assert_list (&cfg->net_domains, NULL);
  /* Allowed in a loaded configuration as the file would, each once.  */
  config_allow_domain (cfg, "pypi.org");
  config_allow_domain (cfg, "pypi.org");
  assert_list (&cfg->net_domains, "pypi.org");
  assert_list (&cfg->workspace_domains, "pypi.org");
  config_free (cfg);
}

/* A symlinked home file is written at its target, and stays a link.  */
static void
test_home_write_symlink (void **state)
{
  struct dirs *d = *state;
  struct cr_error *err = NULL;
  char *target = xasprintf ("%s/kept.json", d->root);
  write_file (target, "{}");
  assert_int_equal (symlink (target, d->home_file), 0);
  assert_int_equal (config_home_set_enabled (d->home_file, true, &err), 0);
  struct stat st;
  assert_int_equal (lstat (d->home_file, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  char *text = read_file (target);
  assert_string_equal (text, "{\n  \"sandbox\": {\n    \"enabled\": true\n  "
                             "}\n}\n");
  free (text);
  free (target);
}

/* The project path is under the workspace.  */
static void
test_project_path (void **state)
{
  char *p = config_project_path ("/w");
  assert_string_equal (p, "/w/.crucible/config.json");
  free (p);
  p = config_project_path ("/w/");
  assert_string_equal (p, "/w/.crucible/config.json");
  free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_defaults),
    cmocka_unit_test (test_home_every_key),
    cmocka_unit_test (test_bounds_accepted),
    cmocka_unit_test (test_home_replaces),
    cmocka_unit_test (test_syntax_errors),
    cmocka_unit_test (test_top_level),
    cmocka_unit_test (test_unknown_keys),
    cmocka_unit_test (test_wrong_types),
    cmocka_unit_test (test_out_of_range),
    cmocka_unit_test (test_bad_strings),
    cmocka_unit_test (test_size_bounds),
    cmocka_unit_test (test_duplicates),
    cmocka_unit_test (test_home_only),
    cmocka_unit_test (test_sandbox_backend),
    cmocka_unit_test (test_project_enabled),
    cmocka_unit_test (test_project_limits),
    cmocka_unit_test (test_project_local_binding),
    cmocka_unit_test (test_private_addresses),
    cmocka_unit_test (test_project_network_subset),
    cmocka_unit_test (test_project_writable),
    cmocka_unit_test (test_project_unions),
    cmocka_unit_test (test_project_path),
    cmocka_unit_test_setup_teardown (test_load_missing, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_set_enabled, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_write_refused, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_add_allow, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_add_domain, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_write_symlink, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_empty, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_both, dirs_setup, dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_project_error, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_home_error, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_unreadable, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_fifo, dirs_setup, dirs_teardown),
    cmocka_unit_test_setup_teardown (test_load_too_large, dirs_setup,
                                     dirs_teardown),
    cmocka_unit_test_setup_teardown (test_home_path, dirs_setup, dirs_teardown),
    cmocka_unit_test (test_workspace_allow),
    cmocka_unit_test (test_workspace_domains),
    cmocka_unit_test_setup_teardown (test_load_workspace_is_home, dirs_setup,
                                     dirs_teardown),
  };
  return cmocka_run_group_tests_name ("config", tests, NULL, NULL);
}
