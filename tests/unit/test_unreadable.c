/* Unit tests for broker/unreadable.c: the pattern grammar, matching, and
 * the scan (sorted, no symlink followed, hard links followed to every
 * name, sockets nobody named).  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/unreadable.h"

static void
test_grammar (void **state)
{
  (void) state;
  assert_null (unreadable_check ("*.pem"));
  assert_null (unreadable_check ("**/*.pem"));
  assert_null (unreadable_check ("a/**/b*c/d"));
  assert_null (unreadable_check ("**"));
  assert_string_equal (unreadable_check (""), "is empty");
  assert_string_equal (unreadable_check ("/etc"),
                       "is not relative to the workspace");
  assert_string_equal (unreadable_check ("a//b"), "has an empty component");
  assert_string_equal (unreadable_check ("a/"), "has an empty component");
  assert_string_equal (unreadable_check ("./a"), "has a '.' or '..' component");
  assert_string_equal (unreadable_check ("a/../b"),
                       "has a '.' or '..' component");
  assert_string_equal (unreadable_check ("a**"),
                       "has '**' inside a component (it must be a whole one)");
  assert_string_equal (unreadable_check ("**/a/**"), "has more than one '**'");
}

static void
test_match (void **state)
{
  (void) state;
  assert_true (unreadable_match ("*.pem", "k.pem"));
  assert_true (unreadable_match ("*.pem", ".pem"));
  assert_false (unreadable_match ("*.pem", "d/k.pem"));
  assert_true (unreadable_match ("**/*.pem", "k.pem"));
  assert_true (unreadable_match ("**/*.pem", "a/b/c/k.pem"));
  assert_false (unreadable_match ("**/*.pem", "a/b/k.pem.txt"));
  assert_true (unreadable_match ("a/**", "a/x"));
  assert_true (unreadable_match ("a/**", "a/x/y"));
  assert_false (unreadable_match ("a/**", "b/x"));
  assert_true (unreadable_match ("a/**/z", "a/z"));
  assert_true (unreadable_match ("a/**/z", "a/b/c/z"));
  assert_false (unreadable_match ("a/**/z", "a/b/c/zz"));
  assert_true (unreadable_match ("s*c*t", "secret"));
  assert_true (unreadable_match ("s*c*t", "sct"));
  assert_false (unreadable_match ("s*c*t", "secrets"));
  assert_true (unreadable_match ("secrets", "secrets"));
  assert_false (unreadable_match ("secrets", "secrets/x"));
  /* Outside the grammar: never a match.  */
  assert_false (unreadable_match ("**/a/**", "a"));
}

/* Make path under dir with text.  */
static void
put (const char *dir, const char *path, const char *text)
{
  char full[4096];
  snprintf (full, sizeof full, "%s/%s", dir, path);
  FILE *f = fopen (full, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static char *
scan_text (const char *dir, const char *const *pats, size_t n, bool sockets,
           const char *const *allowed, size_t n_allowed)
{
  struct unreadable_scan s = { .patterns = pats,
                               .n_patterns = n,
                               .sockets = sockets,
                               .allowed = allowed,
                               .n_allowed = n_allowed };
  int fd = open (dir, O_RDONLY | O_DIRECTORY);
  char *out = calloc (1, 65536);
  size_t len = 0;

  assert_true (fd >= 0);
  assert_int_equal (unreadable_scan (fd, &s), 0);
  close (fd);
  for (size_t i = 0; i < s.n_hits; i++)
    {
      int w = snprintf (out + len, 65536 - len, "%s%s", s.hits[i].rel,
                        s.hits[i].dir ? "/ " : " ");
      assert_true (w > 0 && (size_t) w < 65536 - len);
      len += (size_t) w;
    }
  unreadable_scan_free (&s);
  return out;
}

static void
test_scan (void **state)
{
  char dir[] = "/tmp/test_unreadable.XXXXXX", path[4096];
  const char *pem[] = { "**/*.pem", "secrets" };
  const char *allowed[] = { "keep.sock" };

  (void) state;
  assert_non_null (mkdtemp (dir));
  const char *dirs[] = { "d", "d/e", "secrets" };
  for (size_t i = 0; i < 3; i++)
    {
      snprintf (path, sizeof path, "%s/%s", dir, dirs[i]);
      assert_int_equal (mkdir (path, 0755), 0);
    }
  put (dir, "b.pem", "x");
  put (dir, "d/e/z.pem", "x");
  put (dir, "d/fine", "x");
  put (dir, "secrets/inner", "x");
  char a[4096], b[4096];
  snprintf (a, sizeof a, "%s/secrets/inner", dir);
  snprintf (b, sizeof b, "%s/d/alias", dir);
  assert_int_equal (link (a, b), 0);
  /* A symlink whose name matches is neither followed nor hidden.  */
  snprintf (b, sizeof b, "%s/link.pem", dir);
  assert_int_equal (symlink ("d/fine", b), 0);
  char *got = scan_text (dir, pem, 2, false, NULL, 0);
  /* Sorted within each directory; the hard link outside the hidden
   * directory comes from the second pass.  */
  assert_string_equal (got, "b.pem d/e/z.pem secrets/ d/alias ");
  free (got);

  /* Sockets: every one but the named.  */
  for (int i = 0; i < 2; i++)
    {
      struct sockaddr_un sa = { .sun_family = AF_UNIX };
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      snprintf (sa.sun_path, sizeof sa.sun_path, "%s/%s", dir,
                i == 0 ? "keep.sock" : "d/other.sock");
      assert_int_equal (bind (s, (struct sockaddr *) &sa, sizeof sa), 0);
      close (s);
    }
  got = scan_text (dir, NULL, 0, true, allowed, 1);
  assert_string_equal (got, "d/other.sock ");
  free (got);
  char cmd[4200];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal (system (cmd), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_grammar),
    cmocka_unit_test (test_match),
    cmocka_unit_test (test_scan),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
