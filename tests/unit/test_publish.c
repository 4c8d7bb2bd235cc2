/* Tests for sandbox/publish.c and its parts (pubplan, wal, publock): the
 * plan's text, the log's records, the lock, and whole publications over
 * hand-made upper directories.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/publish.h"
#include "sandbox/publock.h"
#include "sandbox/pubplan.h"
#include "sandbox/wal.h"

/* A scratch directory with state/, root/ and upper/.  */
struct scratch
{
  char dir[64];
  char *state, *root, *upper;
};

static void
scratch_make (struct scratch *s)
{
  strcpy (s->dir, "/tmp/test_publish.XXXXXX");
  assert_non_null (mkdtemp (s->dir));
  s->state = xasprintf ("%s/state", s->dir);
  s->root = xasprintf ("%s/root", s->dir);
  s->upper = xasprintf ("%s/upper", s->dir);
  assert_int_equal (mkdir (s->state, 0700), 0);
  assert_int_equal (mkdir (s->root, 0755), 0);
  assert_int_equal (mkdir (s->upper, 0755), 0);
}

static void
scratch_free (struct scratch *s)
{
  char *cmd = xasprintf ("rm -rf '%s'", s->dir);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (s->state);
  free (s->root);
  free (s->upper);
}

/* dir/name in a buffer that lives until the next call.  */
static const char *
at (const char *dir, const char *name)
{
  static char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  return path;
}

/* Write text to dir/name.  */
static void
put (const char *dir, const char *name, const char *text)
{
  char *path = xasprintf ("%s/%s", dir, name);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
  free (path);
}

/* What dir/name holds, or "" when absent.  */
static char *
get (const char *dir, const char *name)
{
  static char text[256];
  char *path = xasprintf ("%s/%s", dir, name);
  FILE *f = fopen (path, "r");
  free (path);
  text[0] = '\0';
  if (f != NULL)
    {
      size_t n = fread (text, 1, sizeof text - 1, f);
      text[n] = '\0';
      fclose (f);
    }
  return text;
}

static void
test_escape_round_trip (void **state)
{
  const char *names[]
      = { "", "a b", "100%", "tab\there", "new\nline", "é", "=x" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      char *e = pubplan_escape (names[i]);
      assert_null (strpbrk (e, " \n\t"));
      char *d = pubplan_unescape (e);
      assert_string_equal (d, names[i]);
      free (e);
      free (d);
    }
  assert_null (pubplan_unescape ("no-equals"));
  assert_null (pubplan_unescape ("=%00"));
}

static void
test_plan_round_trip (void **state)
{
  struct pubplan a = { 0 }, b = { 0 };
  struct pubplan_change *c
      = pubplan_add (&a, xstrdup ("dir/a file"), PUBPLAN_LINK);
  c->target = xstrdup ("../t t");
  c->mode = 0755;
  c->mtime.tv_sec = 12345;
  c->mtime.tv_nsec = 678;
  c->before = PUBPLAN_WAS_FILE;
  memset (c->before_digest, 'a', SHA256_HEX_LEN);
  pubplan_add (&a, xstrdup ("gone"), PUBPLAN_DELETE);
  pubplan_leave_out (&a, "p p", "a fifo");
  size_t len;
  char *text = pubplan_serialize (&a, &len);
  struct cr_error *err = NULL;
  assert_int_equal (pubplan_parse (text, len, &b, &err), 0);
  assert_int_equal (b.n, 2);
  assert_string_equal (b.changes[0].path, "dir/a file");
  assert_string_equal (b.changes[0].target, "../t t");
  assert_int_equal (b.changes[0].mode, 0755);
  assert_int_equal (b.changes[0].mtime.tv_nsec, 678);
  assert_int_equal (b.changes[0].before, PUBPLAN_WAS_FILE);
  assert_string_equal (b.changes[0].before_digest, a.changes[0].before_digest);
  assert_int_equal (b.changes[1].kind, PUBPLAN_DELETE);
  assert_int_equal (b.n_left_out, 1);
  assert_string_equal (b.left_out[0], "p p (a fifo)");
  free (text);
  pubplan_clear (&a);
  pubplan_clear (&b);
  /* A path that leaves the root is refused.  */
  const char *bad = "C 0 0 644 0 0 0 0 0 = 0 0 0 0 = =/etc/passwd = =\n";
  assert_int_equal (pubplan_parse (bad, strlen (bad), &b, &err), -1);
  assert_string_equal (err->msg, "the publication plan is malformed");
  cr_error_free (err);
}

static void
test_wal_records (void **state)
{
  struct scratch s;
  struct cr_error *err = NULL;
  struct wal_log log;

  scratch_make (&s);
  int dir = open (s.state, O_RDONLY | O_DIRECTORY);
  int fd = wal_create (dir, &err);
  assert_true (fd >= 0);
  assert_int_equal (wal_append (fd, WAL_BEGIN, "root =/x\n", 9, &err), 0);
  assert_int_equal (wal_append (fd, WAL_STAGED, "C\nW x", 5, &err), 0);
  assert_int_equal (wal_append (fd, WAL_APPLY, "0", 1, &err), 0);
  assert_int_equal (wal_read (dir, &log, &err), 0);
  assert_int_equal (log.n, 3);
  assert_false (log.torn);
  assert_false (log.corrupt);
  assert_int_equal (log.records[1].step, WAL_STAGED);
  assert_string_equal (log.records[1].payload, "C\nW x");
  wal_log_clear (&log);

  /* A record cut short is the one being written when the process died.  */
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  assert_int_equal (ftruncate (fd, st.st_size - 1), 0);
  assert_int_equal (wal_read (dir, &log, &err), 0);
  assert_int_equal (log.n, 2);
  assert_true (log.torn);
  assert_false (log.corrupt);
  wal_log_clear (&log);

  /* A damaged record with others after it makes the log untrustworthy. */
  assert_int_equal (wal_append (fd, WAL_APPLY, "1", 1, &err), 0);
  int w = openat (dir, "wal", O_WRONLY);
  assert_int_equal (pwrite (w, "X", 1, 3), 1);
  close (w);
  assert_int_equal (wal_read (dir, &log, &err), 0);
  assert_int_equal (log.n, 0);
  assert_true (log.corrupt);
  wal_log_clear (&log);
  close (fd);
  close (dir);
  assert_string_equal (wal_step_name (WAL_ROLLEDBACK), "rolledback");
  assert_int_equal (wal_step_from_name ("commit"), WAL_COMMIT);
  scratch_free (&s);
}

static void
test_lock_is_exclusive (void **state)
{
  struct scratch s;
  struct cr_error *err = NULL;
  bool busy;

  scratch_make (&s);
  int a = publock_take (s.state, 0, &busy, &err);
  assert_true (a >= 0);
  int b = publock_take (s.state, 50, &busy, &err);
  assert_int_equal (b, -1);
  assert_true (busy);
  struct publish_baseline base;
  assert_int_equal (publish_baseline_take (s.state, s.root, 0, &base, &err),
                    -1);
  assert_string_equal (err->msg, "another publication held the workspace "
                                 "for longer than 0 seconds");
  cr_error_clear (&err);
  publock_drop (a);
  b = publock_take (s.state, 0, &busy, &err);
  assert_true (b >= 0);
  publock_drop (b);
  scratch_free (&s);
}

/* Take a baseline, publish, return the report.  */
static void
publish (struct scratch *s, struct publish_baseline *base, bool take,
         struct publish_report *rep)
{
  struct cr_error *err = NULL;
  if (take)
    assert_int_equal (
        publish_baseline_take (s->state, s->root, 1000, base, &err), 0);
  struct publish_request req = {
    .statedir = s->state, .root = s->root, .upper = s->upper, .baseline = base
  };
  assert_int_equal (publish_run (&req, rep, &err), 0);
}

static void
test_publish_changes (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;

  scratch_make (&s);
  put (s.root, "kept", "kept");
  put (s.root, "old", "old");
  put (s.root, "same", "same");
  put (s.upper, "old", "new");
  put (s.upper, "created", "created");
  assert_int_equal (symlink ("created", at (s.upper, "link")), 0);
  assert_int_equal (mkfifo (at (s.upper, "fifo"), 0600), 0);
  publish (&s, &base, true, &rep);
  assert_int_equal (rep.status, PUBLISH_DONE);
  assert_int_equal (rep.published, 3);
  assert_string_equal (rep.note, "[not published: fifo (a fifo); everything "
                                 "else it wrote was published]");
  assert_string_equal (get (s.root, "old"), "new");
  assert_string_equal (get (s.root, "created"), "created");
  assert_string_equal (get (s.root, "kept"), "kept");
  publish_report_clear (&rep);
  scratch_free (&s);
}

static void
test_publish_refused_by_count (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;
  struct cr_error *err = NULL;

  scratch_make (&s);
  put (s.upper, "mine", "mine");
  assert_int_equal (publish_baseline_take (s.state, s.root, 1000, &base, &err),
                    0);
  assert_int_equal (publock_count_bump (s.state, s.root, &err), 0);
  publish (&s, &base, false, &rep);
  assert_int_equal (rep.status, PUBLISH_REFUSED_COUNT);
  assert_string_equal (rep.note,
                       "[published nothing: another command published into "
                       "the workspace after this one started, so what this "
                       "command wrote was discarded rather than merged]");
  assert_string_equal (get (s.root, "mine"), "");
  publish_report_clear (&rep);
  scratch_free (&s);
}

static void
test_publish_nothing (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;

  scratch_make (&s);
  publish (&s, &base, true, &rep);
  assert_int_equal (rep.status, PUBLISH_NOTHING);
  assert_null (rep.note);
  publish_report_clear (&rep);
  char *note = publish_note_wait_over (60000);
  assert_string_equal (note, "[published nothing: another publication held "
                             "the workspace for longer than 60 seconds, so "
                             "what the command wrote was discarded]");
  free (note);
  scratch_free (&s);
}

/* The baseline waits for no clock tick, yet tells apart a write made
 * just before it (the command's own starting point: published over) from
 * one made just after it (from outside: refused), round after round.  */
static void
test_baseline_instant (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;
  struct cr_error *err = NULL;
  char text[32];

  scratch_make (&s);
  for (int i = 0; i < 50; i++)
    {
      snprintf (text, sizeof text, "before %d", i);
      put (s.root, "f", text);
      snprintf (text, sizeof text, "mine %d", i);
      put (s.upper, "f", text);
      publish (&s, &base, true, &rep);
      assert_int_equal (rep.status, PUBLISH_DONE);
      assert_string_equal (get (s.root, "f"), text);
      publish_report_clear (&rep);

      assert_int_equal (
          publish_baseline_take (s.state, s.root, 1000, &base, &err), 0);
      put (s.root, "f", "outside");
      put (s.upper, "f", "mine again");
      publish (&s, &base, false, &rep);
      assert_int_equal (rep.status, PUBLISH_REFUSED_CHANGED);
      assert_string_equal (get (s.root, "f"), "outside");
      publish_report_clear (&rep);
    }
  scratch_free (&s);
}

/* A replaced file is backed up by a link only when it has no other name:
 * a name hard-linked to it keeps the old content, and the transaction
 * leaves nothing behind.  */
static void
test_publish_hard_linked (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;

  scratch_make (&s);
  put (s.root, "a", "old a");
  char *a = xasprintf ("%s/a", s.root);
  assert_int_equal (link (a, at (s.dir, "other-name")), 0);
  free (a);
  put (s.root, "c", "old c");
  put (s.upper, "a", "new a");
  put (s.upper, "c", "new c");
  publish (&s, &base, true, &rep);
  assert_int_equal (rep.status, PUBLISH_DONE);
  assert_string_equal (get (s.root, "a"), "new a");
  assert_string_equal (get (s.dir, "other-name"), "old a");
  assert_string_equal (get (s.root, "c"), "new c");
  struct stat st;
  assert_int_equal (stat (at (s.root, "c"), &st), 0);
  assert_int_equal (st.st_nlink, 1);
  char *txn = xasprintf ("%s/txn", s.state);
  char *cmd = xasprintf ("test -z \"$(ls -A '%s')\"", txn);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (txn);
  publish_report_clear (&rep);
  scratch_free (&s);
}

/* Deletions and replaced directories need whiteouts, which need root.  */
static void
test_publish_whiteouts (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;

  scratch_make (&s);
  if (mknod (at (s.upper, "gone"), S_IFCHR, makedev (0, 0)) < 0)
    {
      scratch_free (&s);
      skip ();
      return;
    }
  put (s.root, "gone", "gone");
  char *d = xasprintf ("%s/d", s.root), *ud = xasprintf ("%s/d", s.upper);
  assert_int_equal (mkdir (d, 0755), 0);
  put (d, "old", "old");
  assert_int_equal (mkdir (ud, 0755), 0);
  assert_int_equal (setxattr (ud, "user.overlay.opaque", "y", 1, 0), 0);
  put (ud, "new", "new");
  publish (&s, &base, true, &rep);
  assert_int_equal (rep.status, PUBLISH_DONE);
  assert_int_equal (access (at (s.root, "gone"), F_OK), -1);
  assert_string_equal (get (d, "old"), "");
  assert_string_equal (get (d, "new"), "new");
  publish_report_clear (&rep);
  free (d);
  free (ud);
  scratch_free (&s);
}

/* A socket, a device and a file over 8 GiB are left out and named; a
 * file of exactly 8 GiB is not.  */
static void
test_publish_left_out (void **state)
{
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;

  scratch_make (&s);
  int sock = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  const char *sock_path = at (s.upper, "sock");
  assert_true (strlen (sock_path) < sizeof addr.sun_path);
  memcpy (addr.sun_path, sock_path, strlen (sock_path) + 1);
  assert_int_equal (bind (sock, (struct sockaddr *) &addr, sizeof addr), 0);
  close (sock);
  int fd = open (at (s.upper, "big"), O_WRONLY | O_CREAT, 0644);
  assert_int_equal (ftruncate (fd, (off_t) PUBPLAN_MAX_BYTES + 1), 0);
  close (fd);
  bool dev = mknod (at (s.upper, "null"), S_IFCHR | 0600, makedev (1, 3)) == 0;
  publish (&s, &base, true, &rep);
  assert_int_equal (rep.status, PUBLISH_DONE);
  assert_string_equal (rep.note,
                       dev ? "[not published: big (a file over 8 GiB), null "
                             "(a device), sock (a socket); everything else "
                             "it wrote was published]"
                           : "[not published: big (a file over 8 GiB), sock "
                             "(a socket); everything else it wrote was "
                             "published]");
  assert_int_equal (access (at (s.root, "big"), F_OK), -1);
  publish_report_clear (&rep);
  scratch_free (&s);
}

/* How many entries dir holds (. and .. aside); -1 when it cannot be read.  */
static int
entries (const char *dir)
{
  DIR *d = opendir (dir);
  int n = 0;
  if (d == NULL)
    return -1;
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  closedir (d);
  return n;
}

/* With defer_tidy the answer comes with the committed transaction still
 * there (rep.tidy, holding the backup of what was replaced), the root
 * already as published; publish_tidy removes it.  One left behind (its
 * publishing process killed after answering) is removed by the next
 * publication's recovery, with the root as it was published, and a tidy
 * that comes after that recovery finds nothing to do.  */
static void
test_publish_tidy_after_answer (void **state)
{
  (void) state;
  struct scratch s;
  struct publish_baseline base;
  struct publish_report rep;
  struct cr_error *err = NULL;

  scratch_make (&s);
  char *txn = xasprintf ("%s/txn", s.state);
  put (s.root, "file", "old");
  put (s.upper, "file", "new");
  assert_int_equal (publish_baseline_take (s.state, s.root, 1000, &base, &err),
                    0);
  struct publish_request req = { .statedir = s.state,
                                 .root = s.root,
                                 .upper = s.upper,
                                 .baseline = &base,
                                 .defer_tidy = true };
  assert_int_equal (publish_run (&req, &rep, &err), 0);
  assert_int_equal (rep.status, PUBLISH_DONE);
  assert_string_equal (get (s.root, "file"), "new");
  assert_non_null (rep.tidy);
  assert_int_equal (entries (txn), 1);
  assert_int_equal (entries (at (rep.tidy, "backup")), 1);
  publish_tidy (&rep.tidy);
  assert_null (rep.tidy);
  assert_int_equal (entries (txn), 0);
  publish_report_clear (&rep);

  /* Left behind, then recovered under the lock by the next publication.  */
  put (s.upper, "file", "newer");
  assert_int_equal (publish_baseline_take (s.state, s.root, 1000, &base, &err),
                    0);
  assert_int_equal (publish_run (&req, &rep, &err), 0);
  assert_int_equal (rep.status, PUBLISH_DONE);
  char *left = steal_pointer (&rep.tidy);
  publish_report_clear (&rep);
  assert_int_equal (entries (txn), 1);
  bool busy = false;
  int lock = publock_take (s.state, 1000, &busy, &err);
  assert_true (lock >= 0);
  assert_int_equal (publish_recover (s.state, &err), 1);
  publock_drop (lock);
  assert_int_equal (entries (txn), 0);
  assert_string_equal (get (s.root, "file"), "newer");
  publish_tidy (&left);
  assert_null (left);

  /* Without defer_tidy the transaction is gone before the answer.  */
  put (s.upper, "file", "newest");
  req.defer_tidy = false;
  assert_int_equal (publish_baseline_take (s.state, s.root, 1000, &base, &err),
                    0);
  assert_int_equal (publish_run (&req, &rep, &err), 0);
  assert_null (rep.tidy);
  assert_int_equal (entries (txn), 0);
  assert_string_equal (get (s.root, "file"), "newest");
  publish_report_clear (&rep);
  free (txn);
  scratch_free (&s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_escape_round_trip),
    cmocka_unit_test (test_plan_round_trip),
    cmocka_unit_test (test_wal_records),
    cmocka_unit_test (test_lock_is_exclusive),
    cmocka_unit_test (test_publish_changes),
    cmocka_unit_test (test_publish_refused_by_count),
    cmocka_unit_test (test_publish_nothing),
    cmocka_unit_test (test_publish_whiteouts),
    cmocka_unit_test (test_publish_left_out),
    cmocka_unit_test (test_baseline_instant),
    cmocka_unit_test (test_publish_hard_linked),
    cmocka_unit_test (test_publish_tidy_after_answer),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
