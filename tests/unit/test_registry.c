/* The backend registry (sandbox/registry.c): the one way a configuration
 * becomes a backend.  The Linux backend it makes carries the
 * configuration's limits, unreadable patterns and socket grants (the
 * audit once built its own without them); the names it knows come from
 * its table; the compatibility backend is what a disabled configuration
 * gets, and never what an enabled one is silently given.  */
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
#include "sandbox/bwrap.h"
#include "sandbox/registry.h"

/* A configuration from home text alone.  */
static struct config *
home (const char *text)
{
  struct config *cfg = config_new_defaults ();
  struct cr_error *err = NULL;
  if (config_merge_text (cfg, text, strlen (text), "home.json", CONFIG_HOME,
                         "/ws", &err)
      < 0)
    fail_msg ("unexpected error: %s", err->msg);
  return cfg;
}

/* The configuration's patterns and grants reach the backend made for it,
 * whether asked for by id (the audit's --backend) or by the
 * configuration's choice (a command).  */
static void
test_settings_reach_backend (void **state)
{
  (void) state;
  struct config *cfg
      = home ("{\"sandbox\": {\"enabled\": true, \"filesystem\": "
              "{\"unreadable\": [\"secret.txt\", \"/etc/shadow\"]}, "
              "\"network\": {\"allowUnixSockets\": [\"/run/a.sock\"]}, "
              "\"limits\": {\"cpuSeconds\": 77, \"openFiles\": 99}}}");
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  for (int i = 0; i < 2; i++)
    {
      struct sandbox_backend *b = sandbox_registry_backend_new (
          &bc, i == 0 ? NULL : "linux-bubblewrap");
      assert_non_null (b);
      assert_string_equal (sandbox_backend_id (b), "linux-bubblewrap");
      struct bwrap_options o;
      bwrap_backend_settings (b, &o);
      assert_int_equal (o.n_unreadable, 2);
      assert_string_equal (o.unreadable[0], "secret.txt");
      assert_string_equal (o.unreadable[1], "/etc/shadow");
      assert_int_equal (o.n_unix_sockets, 1);
      assert_string_equal (o.unix_sockets[0], "/run/a.sock");
      assert_int_equal (o.cpu_seconds, 77);
      assert_int_equal (o.open_files, 99);
      sandbox_backend_free (b);
    }
  config_free (cfg);
}

/* The table: its names, its default, and what each confines.  */
static void
test_table (void **state)
{
  (void) state;
  assert_string_equal (sandbox_registry_known (),
                       "linux-bubblewrap, compat, container");
  assert_null (sandbox_registry_find ("nothing"));
  assert_null (sandbox_registry_find (NULL));
  assert_true (sandbox_registry_find ("linux-bubblewrap")->confines);
  assert_false (sandbox_registry_find ("compat")->confines);
  assert_true (sandbox_registry_find ("container")->confines);
  /* Each row's isolation word, stamped on every run's start fact.  */
  assert_string_equal (sandbox_registry_isolation ("linux-bubblewrap"),
                       "namespaces");
  assert_string_equal (sandbox_registry_isolation ("compat"), "process");
  assert_string_equal (sandbox_registry_isolation ("container"), "container");
  assert_string_equal (sandbox_registry_isolation ("nothing"), "process");
  struct sandbox_backend_config bc = { 0 };
  assert_string_equal (sandbox_registry_selected (&bc)->id,
                       SANDBOX_REGISTRY_DEFAULT);
  /* Made without asking its engine anything.  */
  struct sandbox_backend *b = sandbox_registry_backend_new (&bc, "container");
  assert_non_null (b);
  assert_string_equal (sandbox_backend_id (b), "container");
  sandbox_backend_free (b);
}

/* Disabled: compat, whatever sandbox.backend says; enabled with
 * sandbox.backend "compat": compat is selected, and it confines nothing
 * (tui/front.c refuses every command then).  */
static void
test_compat (void **state)
{
  (void) state;
  struct config *cfg
      = home ("{\"sandbox\": {\"backend\": \"linux-bubblewrap\"}}");
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  struct sandbox_backend *b = sandbox_registry_backend_new (&bc, NULL);
  assert_string_equal (sandbox_backend_id (b), "compat");
  sandbox_backend_free (b);
  config_free (cfg);
  cfg = home ("{\"sandbox\": {\"enabled\": true, \"backend\": \"compat\"}}");
  config_backend_input (cfg, &bc);
  assert_false (sandbox_registry_selected (&bc)->confines);
  struct inspect_backend_info info = { 0 };
  sandbox_registry_selected (&bc)->info (&info);
  assert_false (info.found);
  assert_string_equal (info.why_not_found,
                       SANDBOX_REGISTRY_COMPAT_CONFINES_NOTHING);
  inspect_backend_info_clear (&info);
  config_free (cfg);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_settings_reach_backend),
    cmocka_unit_test (test_table),
    cmocka_unit_test (test_compat),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
