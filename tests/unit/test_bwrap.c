/* Unit tests for sandbox/bwrap.c (argument vector, environment block,
 * trust checks), sandbox/statedir.c and sandbox/sha256.c.  The trust
 * checks need a root-owned, non-writable chain of directories, so those
 * tests make their fixtures under /run and skip when not root.  */
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

#include "sandbox/bwrap.h"
#include "sandbox/sha256.h"
#include "sandbox/statedir.h"

/* The index of s in argv, or -1.  */
static int
argv_find (char **argv, const char *s)
{
  for (int i = 0; argv[i] != NULL; i++)
    if (strcmp (argv[i], s) == 0)
      return i;
  return -1;
}

static char **
plan_argv (void)
{
  struct bwrap_plan plan = { .workspace = "/tmp/ws",
                             .layer_dir = "/var/tmp/state/cmd-1",
                             .shell = "/bin/sh",
                             .line = "echo hi",
                             .cpu_seconds = 3600,
                             .open_files = 4096,
                             .processes = 1024 };
  return bwrap_build_argv (&plan);
}

static void
test_argv_order (void **state)
{
  char **argv = plan_argv ();
  int sep = argv_find (argv, "--");

  assert_string_equal (argv[0], "bwrap");
  assert_true (sep > 0);
  /* --cap-drop ALL before any --cap-add.  */
  assert_true (argv_find (argv, "--cap-drop") < argv_find (argv, "--cap-add"));
  assert_string_equal (argv[argv_find (argv, "--cap-drop") + 1], "ALL");
  /* --disable-userns with --unshare-user spelled out.  */
  assert_true (argv_find (argv, "--unshare-user") > 0);
  assert_true (argv_find (argv, "--disable-userns") > 0);
  /* The workspace's mount point after --tmpfs /tmp (it is under /tmp).  */
  int tmpfs = argv_find (argv, "--tmpfs");
  int dir_ws = -1;
  for (int i = 0; i < sep && argv[i] != NULL; i++)
    if (strcmp (argv[i], "--dir") == 0 && strcmp (argv[i + 1], "/tmp/ws") == 0)
      dir_ws = i;
  assert_true (tmpfs > 0 && dir_ws > tmpfs);
  /* --remount-ro / after every mount, before the program.  */
  assert_true (argv_find (argv, "--remount-ro") < sep);
  assert_string_equal (argv[sep + 1], BWRAP_HIDDEN_BROKER);
  /* The workload's filter goes to the broker, not to bwrap.  */
  int wfd = argv_find (argv, "--seccomp-fd");
  assert_true (wfd > sep);
  assert_int_equal (strtol (argv[wfd + 1], NULL, 10),
                    BWRAP_FD_WORKLOAD_SECCOMP);
  /* The command last: sh -c LINE.  */
  int n = 0;
  while (argv[n] != NULL)
    n++;
  assert_string_equal (argv[n - 3], "/bin/sh");
  assert_string_equal (argv[n - 2], "-c");
  assert_string_equal (argv[n - 1], "echo hi");
  bwrap_argv_free (argv);
}

static void
test_argv_never_run_or_home (void **state)
{
  char **argv = plan_argv ();
  int sep = argv_find (argv, "--");

  for (int i = 0; i < sep; i++)
    {
      assert_false (strcmp (argv[i], "/run") == 0);
      assert_false (strcmp (argv[i], "/var/run") == 0);
      assert_false (strncmp (argv[i], "/home/", 6) == 0);
      assert_false (strcmp (argv[i], "/root") == 0);
      assert_false (strcmp (argv[i], "--setenv") == 0);
    }
  bwrap_argv_free (argv);
}

static void
test_env_block (void **state)
{
  char *envp[] = { "PATH=/bin", "HOME=/root", "TMPDIR=/x", "HOMEX=keep", NULL };
  size_t len;
  char *block = bwrap_env_block (envp, &len);
  const char want[]
      = "PATH=/bin\0HOMEX=keep\0HOME=" BWRAP_HOME "\0TMPDIR=" BWRAP_TMPDIR;

  assert_int_equal (len, sizeof want);
  assert_memory_equal (block, want, sizeof want);
  free (block);
}

static void
test_sha256 (void **state)
{
  char hex[SHA256_HEX_LEN + 1];

  sha256_buffer ("abc", 3, hex);
  assert_string_equal (
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* A root-owned 0755 directory under /run for the trust fixtures.  */
static char *
trusted_dir (void)
{
  char tmpl[] = "/run/crucible-unit-XXXXXX";
  char *d = mkdtemp (tmpl);
  assert_non_null (d);
  chmod (d, 0755);
  return strdup (d);
}

static void
put_file (const char *path, mode_t mode, uid_t uid)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs ("#!/bin/sh\n", f);
  fclose (f);
  assert_int_equal (chmod (path, mode), 0);
  assert_int_equal (chown (path, uid, uid), 0);
}

static void
test_trust (void **state)
{
  if (geteuid () != 0)
    skip ();
  char *d = trusted_dir ();
  char *ok = NULL, *why;
  char path[512], sub[512];

  snprintf (path, sizeof path, "%s/bwrap", d);
  put_file (path, 0755, 0);
  assert_null (ok = bwrap_distrust (path, false, 0));

  chmod (path, 0775);
  why = bwrap_distrust (path, false, 0);
  assert_string_equal (why, "writable by group or others");
  free (why);

  put_file (path, 0755, 65534);
  why = bwrap_distrust (path, false, 0);
  assert_string_equal (why, "owned by someone other than root");
  free (why);
  /* The broker's rule also accepts the user's own.  */
  assert_null (bwrap_distrust (path, true, 65534));

  snprintf (sub, sizeof sub, "%s/gw", d);
  mkdir (sub, 0775);
  chmod (sub, 0775);
  snprintf (path, sizeof path, "%s/gw/" BROKER_PROGRAM_NAME, d);
  put_file (path, 0755, 0);
  why = bwrap_distrust (path, true, 0);
  assert_non_null (strstr (why, "which group or others can write"));
  assert_non_null (strstr (why, sub));
  free (why);

  /* broker_locate_in names both places and what turned each down.  */
  char *found = NULL;
  int fd = -1;
  struct cr_error *err = NULL;
  assert_int_equal (broker_locate_in (sub, &found, &fd, &err), -1);
  assert_non_null (strstr (err->msg, "which group or others can write"));
  assert_non_null (strstr (err->msg, "not found"));
  cr_error_free (err);
  chmod (sub, 0755);
  err = NULL;
  assert_int_equal (broker_locate_in (sub, &found, &fd, &err), 0);
  assert_true (fd >= 0);
  close (fd);
  free (found);

  char cmd[600];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", d);
  assert_int_equal (system (cmd), 0);
  free (d);
}

static void
test_statedir (void **state)
{
  if (geteuid () != 0)
    skip ();
  char *d = trusted_dir ();
  char *path = NULL, name[512];
  int fd = -1;
  struct cr_error *err = NULL;

  assert_int_equal (statedir_open (d, 0, 0, &path, &fd, &err), 0);
  close (fd);
  /* Wrong mode: restore advice.  */
  chmod (path, 0750);
  assert_int_equal (statedir_open (d, 0, 0, &path, &fd, &err), -1);
  assert_non_null (strstr (err->msg, "restore its group and mode"));
  cr_error_clear (&err);
  /* Another user's: named without the path or the id.  */
  chmod (path, 0700);
  chown (path, 65534, 65534);
  assert_int_equal (statedir_open (d, 0, 0, &path, &fd, &err), -1);
  assert_non_null (strstr (err->msg, "another user's directory"));
  assert_null (strstr (err->msg, "65534"));
  assert_null (strstr (err->msg, d));
  cr_error_clear (&err);
  rmdir (path);
  /* A symlink and a plain file.  */
  snprintf (name, sizeof name, STATEDIR_FORMAT, d, 0UL);
  symlink ("/tmp", name);
  assert_int_equal (statedir_open (d, 0, 0, &path, &fd, &err), -1);
  assert_non_null (strstr (err->msg, "a symlink"));
  cr_error_clear (&err);
  unlink (name);
  put_file (name, 0600, 0);
  assert_int_equal (statedir_open (d, 0, 0, &path, &fd, &err), -1);
  assert_non_null (strstr (err->msg, "a plain file"));
  cr_error_clear (&err);
  unlink (name);
  free (path);

  /* A pair, with work/work left mode 000, removed whole.  */
  char *sd = NULL, cmd_path[700];
  assert_int_equal (statedir_open (d, 0, 0, &sd, &fd, &err), 0);
  close (fd);
  struct statedir_pair pair;
  assert_int_equal (statedir_pair_create (sd, d, &pair, &err), 0);
  char ww[600];
  snprintf (ww, sizeof ww, "%s/work", pair.work);
  mkdir (ww, 0);
  char *dir = strdup (pair.dir);
  assert_int_equal (statedir_pair_remove (&pair, &err), 0);
  assert_int_equal (access (dir, F_OK), -1);
  free (dir);

  /* Released by a process about to exit: left whole while the upper holds
   * nothing (overlayfs's scratch is no entry of the upper's), removed at
   * once when it holds anything, a whiteout's mark or an empty directory
   * as much as a file.  */
  bool left = false;
  assert_int_equal (statedir_pair_create (sd, d, &pair, &err), 0);
  snprintf (ww, sizeof ww, "%s/work", pair.work);
  mkdir (ww, 0);
  dir = strdup (pair.dir);
  assert_int_equal (statedir_pair_release (&pair, &left, &err), 0);
  assert_true (left);
  assert_null (pair.dir);
  assert_int_equal (access (ww, F_OK), 0);
  snprintf (cmd_path, sizeof cmd_path, "rm -rf '%s'", dir);
  assert_int_equal (system (cmd_path), 0);
  free (dir);
  static const char *const holds[] = { "f", "d/" };
  for (size_t i = 0; i < sizeof holds / sizeof *holds; i++)
    {
      char entry[600];
      assert_int_equal (statedir_pair_create (sd, d, &pair, &err), 0);
      snprintf (entry, sizeof entry, "%s/%s", pair.upper, holds[i]);
      if (entry[strlen (entry) - 1] == '/')
        assert_int_equal (mkdir (entry, 0700), 0);
      else
        put_file (entry, 0600, getuid ());
      dir = strdup (pair.dir);
      left = true;
      assert_int_equal (statedir_pair_release (&pair, &left, &err), 0);
      assert_false (left);
      assert_int_equal (access (dir, F_OK), -1);
      free (dir);
    }
  free (sd);
  char cmd[600];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", d);
  assert_int_equal (system (cmd), 0);
  free (d);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_argv_order),
    cmocka_unit_test (test_argv_never_run_or_home),
    cmocka_unit_test (test_env_block),
    cmocka_unit_test (test_sha256),
    cmocka_unit_test (test_trust),
    cmocka_unit_test (test_statedir),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
