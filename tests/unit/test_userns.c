/* Unit tests for sandbox/userns.c (which groups /etc/subgid gives a user)
 * and the bwrap argument vector in crucible's own user namespaces
 * (sandbox/bwrap_argv.c).  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/bwrap.h"
#include "sandbox/userns.h"

/* The index of s in argv, or -1.  */
static int
userns_argv_find (char **argv, const char *s)
{
  for (int i = 0; argv[i] != NULL; i++)
    if (strcmp (argv[i], s) == 0)
      return i;
  return -1;
}

/* newgidmap's rule: a line for the user, by name or uid, whose range
 * holds the group; anyone else's line, a malformed one or an empty range
 * gives nothing.  */
static void
test_subgid (void **state)
{
  const char *text = "alice:100000:65536\n"
                     "alice:100:1\n"
                     "1001:50:2\n"
                     "bob:27:1\n"
                     "# alice:44:1\n"
                     "alice:60:0\n"
                     "alice:x:1\n"
                     "alice:70\n";

  assert_true (userns_subgid_allows (text, "alice", 1000, 100));
  assert_true (userns_subgid_allows (text, "alice", 1000, 100000));
  assert_true (userns_subgid_allows (text, "alice", 1000, 165535));
  assert_false (userns_subgid_allows (text, "alice", 1000, 165536));
  assert_false (userns_subgid_allows (text, "alice", 1000, 101));
  assert_false (userns_subgid_allows (text, "alice", 1000, 27));
  assert_false (userns_subgid_allows (text, "alice", 1000, 44));
  assert_false (userns_subgid_allows (text, "alice", 1000, 60));
  assert_false (userns_subgid_allows (text, "alice", 1000, 70));
  /* By uid.  */
  assert_true (userns_subgid_allows (text, "carol", 1001, 51));
  assert_false (userns_subgid_allows (text, "carol", 1001, 52));
  /* A prefix of a name is not the name.  */
  assert_false (userns_subgid_allows (text, "ali", 1000, 100));
  assert_false (userns_subgid_allows ("", "alice", 1000, 100));
  (void) state;
}

/* In crucible's namespaces: bwrap is given them at the descriptors after
 * the granted sockets, with the limit asserted, and none of the options
 * that would have it make its own (--userns refuses them).  */
static void
test_argv_userns (void **state)
{
  char *dests[] = { "/run/a.sock", "/run/b.sock" };
  struct bwrap_plan plan = { .workspace = "/tmp/ws",
                             .layer_dir = "/var/tmp/state/cmd-1",
                             .shell = "/bin/sh",
                             .line = "echo hi",
                             .socket_dests = dests,
                             .n_socket_binds = 2,
                             .userns = true };
  char **argv = bwrap_build_argv (&plan);
  int sep = userns_argv_find (argv, "--");
  int outer = userns_argv_find (argv, "--userns");
  int inner = userns_argv_find (argv, "--userns2");

  assert_true (outer > 0 && outer < sep && inner > 0 && inner < sep);
  assert_int_equal (strtol (argv[outer + 1], NULL, 10), BWRAP_FD_EXTRA + 2);
  assert_int_equal (strtol (argv[inner + 1], NULL, 10), BWRAP_FD_EXTRA + 3);
  assert_true (userns_argv_find (argv, "--assert-userns-disabled") > 0);
  assert_int_equal (userns_argv_find (argv, "--unshare-user"), -1);
  assert_int_equal (userns_argv_find (argv, "--unshare-all"), -1);
  assert_int_equal (userns_argv_find (argv, "--disable-userns"), -1);
  const char *named[]
      = { "--unshare-ipc",     "--unshare-pid",        "--unshare-net",
          "--unshare-uts",     "--unshare-cgroup-try", "--new-session",
          "--die-with-parent", "--as-pid-1",           "--clearenv" };
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    assert_true (userns_argv_find (argv, named[i]) > 0);
  assert_true (userns_argv_find (argv, "--cap-drop")
               < userns_argv_find (argv, "--cap-add"));
  bwrap_argv_free (argv);
  (void) state;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_subgid),
    cmocka_unit_test (test_argv_userns),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
