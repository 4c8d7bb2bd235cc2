/* Unit tests for core/env.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/env.h"

/* Build with named variables; expect success.  */
static struct env *
build_ok (char *const *host, const struct env_var *named, size_t n)
{
  struct env *env = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (env_build (&env, host, named, n, &err), 0);
  assert_null (err);
  return env;
}

/* Build and expect the given refusal.  */
static void
build_fails (char *const *host, const struct env_var *named, size_t n,
             const char *msg)
{
  struct env *env = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (env_build (&env, host, named, n, &err), -1);
  assert_non_null (err);
  assert_string_equal (err->msg, msg);
  assert_null (env);
  cr_error_free (err);
}

static void
test_base_list_only (void **state)
{
  char *host[] = { "PATH=/bin",  "SECRET=x",         "HOME=/h",   "LC_ALL=C",
                   "LC_CTYPE=C", "LANG=C",           "TERM=dumb", "TMPDIR=/t",
                   "PATHX=no",   "OPENAI_API_KEY=k", NULL };
  struct env *env = build_ok (host, NULL, 0);
  const char *want[] = { "PATH=/bin", "HOME=/h",   "LC_ALL=C", "LC_CTYPE=C",
                         "LANG=C",    "TERM=dumb", "TMPDIR=/t" };
  assert_int_equal (env->count, 7);
  for (size_t i = 0; i < 7; i++)
    assert_string_equal (env->vars[i], want[i]);
  assert_null (env->vars[7]);
  env_free (env);
}

static void
test_unset_base_stays_unset (void **state)
{
  char *host[] = { "PATH=/bin", NULL };
  struct env *env = build_ok (host, NULL, 0);
  assert_int_equal (env->count, 1);
  assert_string_equal (env->vars[0], "PATH=/bin");
  env_free (env);
}

static void
test_named_added_and_replacing (void **state)
{
  char *host[] = { "PATH=/bin", "HOME=/h", NULL };
  struct env_var named[] = { { "HOME", "/o", 2 }, { "FOO", "bar", 3 } };
  struct env *env = build_ok (host, named, 2);
  assert_int_equal (env->count, 3);
  assert_string_equal (env->vars[0], "PATH=/bin");
  assert_string_equal (env->vars[1], "HOME=/o");
  assert_string_equal (env->vars[2], "FOO=bar");
  env_free (env);
}

static void
test_refusals (void **state)
{
  char *host[] = { NULL };
  struct env_var twice[] = { { "A", "1", 1 }, { "A", "2", 1 } };
  build_fails (host, twice, 2, "environment variable A is named twice");
  struct env_var nul[] = { { "A", "x\0y", 3 } };
  build_fails (host, nul, 1,
               "environment variable A: its value contains a NUL byte");
  struct env_var bad[] = { { "A-B", "x", 1 } };
  build_fails (host, bad, 1,
               "environment variable name is not a valid name (letters, digits "
               "and _, not starting with a digit): 'A-B'");
  struct env_var empty[] = { { "", "x", 1 } };
  build_fails (host, empty, 1,
               "environment variable name is not a valid name (letters, digits "
               "and _, not starting with a digit): ''");
  char longname[ENV_MAX_NAME + 2];
  memset (longname, 'N', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  struct env_var lng[] = { { longname, "x", 1 } };
  build_fails (host, lng, 1,
               "environment variable name is longer than 128 bytes: "
               "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN...");
}

static void
test_bounds (void **state)
{
  char *host[] = { NULL };
  struct env_var many[ENV_MAX_VARS + 1];
  char names[ENV_MAX_VARS + 1][8];
  for (int i = 0; i <= ENV_MAX_VARS; i++)
    {
      snprintf (names[i], sizeof names[i], "V%d", i);
      many[i] = (struct env_var){ names[i], "x", 1 };
    }
  struct env *env = build_ok (host, many, ENV_MAX_VARS);
  assert_int_equal (env->count, ENV_MAX_VARS);
  env_free (env);
  build_fails (host, many, ENV_MAX_VARS + 1,
               "more than 64 environment variables");

  /* The size bound counts NAME=VALUE and the NUL: exactly at it passes.  */
  size_t len = ENV_MAX_BYTES - strlen ("BIG=") - 1;
  char *big = malloc (len);
  memset (big, 'x', len);
  struct env_var fits[] = { { "BIG", big, len } };
  env = build_ok (host, fits, 1);
  assert_int_equal (env->bytes, ENV_MAX_BYTES);
  env_free (env);
  struct env_var over[] = { { "BIG", big, len }, { "B", "", 0 } };
  build_fails (host, over, 2, "environment is larger than 65536 bytes (at B)");
  free (big);
}

static void
test_parse_assignment (void **state)
{
  struct env_var v;
  struct cr_error *err = NULL;
  assert_int_equal (env_parse_assignment ("A=b=c", &v, &err), 0);
  assert_string_equal (v.name, "A");
  assert_string_equal (v.value, "b=c");
  assert_int_equal (v.value_len, 3);
  free ((char *) v.name);
  assert_int_equal (env_parse_assignment ("=x", &v, &err), -1);
  assert_string_equal (err->msg, "--env takes NAME=VALUE, not '=x'");
  cr_error_clear (&err);
  assert_int_equal (env_parse_assignment ("A", &v, &err), -1);
  cr_error_free (err);
}

/* With a proxy: the six variables come last with the URL and the
 * loopback exceptions, replacing nothing inherited (nothing inherited is
 * a proxy setting); a call naming one is refused, saying so; without a
 * proxy a call may name them as any other.  */
static void
test_proxy (void **state)
{
  char *host[] = { "PATH=/bin", "HTTPS_PROXY=http://host-upstream:8080",
                   "http_proxy=http://up:1", NULL };
  const char *url = "http://crucible:0123@127.0.0.1:3128";
  struct env *env = NULL;
  struct cr_error *err = NULL;
  struct env_var named[] = { { "FOO", "bar", 3 } };

  (void) state;
  assert_int_equal (env_build_proxied (&env, host, named, 1, url, &err), 0);
  const char *want[] = { "PATH=/bin",
                         "FOO=bar",
                         "HTTP_PROXY=http://crucible:0123@127.0.0.1:3128",
                         "HTTPS_PROXY=http://crucible:0123@127.0.0.1:3128",
                         "http_proxy=http://crucible:0123@127.0.0.1:3128",
                         "https_proxy=http://crucible:0123@127.0.0.1:3128",
                         "NO_PROXY=localhost,127.0.0.1,::1",
                         "no_proxy=localhost,127.0.0.1,::1" };
  assert_int_equal (env->count, 8);
  for (size_t i = 0; i < 8; i++)
    assert_string_equal (env->vars[i], want[i]);
  env_free (env);
  for (const char *const *p = env_proxy_names; *p != NULL; p++)
    {
      struct env_var mine[] = { { *p, "http://elsewhere:1", 18 } };
      char *msg = NULL;
      env = NULL;
      assert_int_equal (env_build_proxied (&env, host, mine, 1, url, &err), -1);
      assert_null (env);
      assert_true (asprintf (&msg,
                             "environment variable %s is crucible's own "
                             "for this command: its network goes through "
                             "the host's proxy, which %s names; do not "
                             "send it",
                             *p, *p)
                   > 0);
      assert_string_equal (err->msg, msg);
      free (msg);
      cr_error_clear (&err);
      env = build_ok (host, mine, 1);
      env_free (env);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_base_list_only),
    cmocka_unit_test (test_unset_base_stays_unset),
    cmocka_unit_test (test_named_added_and_replacing),
    cmocka_unit_test (test_refusals),
    cmocka_unit_test (test_bounds),
    cmocka_unit_test (test_parse_assignment),
    cmocka_unit_test (test_proxy),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
