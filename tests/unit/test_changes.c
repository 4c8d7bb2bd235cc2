/* Tests for sandbox/container/changes.c: the changes stream a job runner
 * sends back, each kind of hostile entry refused by name (and nothing of
 * that set published), and the accepted ones published through
 * sandbox/publish.c's transaction into a scratch root.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/container/changes.h"
#include "sandbox/container/job.h"
#include "sandbox/container/jobproto.h"
#include "sandbox/container/tar.h"

/* A scratch directory with root/ and state/.  */
struct fix
{
  char dir[64];
  char *root, *state;
};

/* A path below the fixture's root (owned).  */
static char *
at (const struct fix *f, const char *rel)
{
  return xasprintf ("%s/%s", f->root, rel);
}

/* Write a small file in the root with mode.  */
static void
put (const struct fix *f, const char *rel, const char *text, mode_t mode)
{
  char *p = at (f, rel);
  int fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  assert_int_equal (chmod (p, mode), 0);
  free (p);
}

/* The root: a.txt, dir/b, link -> a.txt, key.pem, shared/ (setgid).  */
static int
fix_setup (void **state)
{
  struct fix *f = xcalloc (1, sizeof *f);
  strcpy (f->dir, "/tmp/test_changes.XXXXXX");
  assert_non_null (mkdtemp (f->dir));
  f->root = xasprintf ("%s/root", f->dir);
  f->state = xasprintf ("%s/state", f->dir);
  assert_int_equal (mkdir (f->root, 0755), 0);
  assert_int_equal (mkdir (f->state, 0700), 0);
  put (f, "a.txt", "a\n", 0644);
  char *p = at (f, "dir");
  assert_int_equal (mkdir (p, 0755), 0);
  free (p);
  put (f, "dir/b", "b\n", 0600);
  p = at (f, "link");
  assert_int_equal (symlink ("a.txt", p), 0);
  free (p);
  put (f, "key.pem", "k\n", 0600);
  p = at (f, "shared");
  assert_int_equal (mkdir (p, 0755), 0);
  assert_int_equal (chmod (p, 02775), 0);
  free (p);
  *state = f;
  return 0;
}

static int
fix_teardown (void **state)
{
  struct fix *f = *state;
  char *rm = xasprintf ("rm -rf %s", f->dir);
  assert_int_equal (system (rm), 0);
  free (rm);
  free (f->root);
  free (f->state);
  free (f);
  return 0;
}

/* A changes stream being made: archive bytes, then frames.  */
struct stream
{
  struct buf tar;
  struct buf frames;
  unsigned long long n, bytes;
};

/* Move the archive so far into a 'D' frame.  */
static void
s_flush (struct stream *s)
{
  struct cr_error *err = NULL;
  if (s->tar.len > 0)
    assert_int_equal (
        jobproto_put (&s->frames, ANS_CHANGES, s->tar.data, s->tar.len, &err),
        0);
  s->tar.len = 0;
}

/* An entry of the archive (file content given for TAR_FILE).  */
static void
s_entry (struct stream *s, const char *name, enum tar_kind kind, char type,
         unsigned mode, const char *content, const char *link)
{
  struct cr_error *err = NULL;
  size_t len = content ? strlen (content) : 0;
  struct tar_entry e = { .name = name,
                         .kind = kind,
                         .type = type,
                         .mode = mode,
                         .size = len,
                         .link = link,
                         .mtime = 1700000000 };
  assert_int_equal (tar_put_header (&s->tar, &e, &err), 0);
  if (kind == TAR_FILE)
    {
      buf_append (&s->tar, content, len);
      tar_pad (&s->tar, len);
      s->bytes += len;
    }
  s->n++;
}

static void
s_file (struct stream *s, const char *name, unsigned mode, const char *text)
{
  s_entry (s, name, TAR_FILE, '0', mode, text, NULL);
}

static void
s_dir (struct stream *s, const char *name, unsigned mode)
{
  s_entry (s, name, TAR_DIR, '5', mode, NULL, NULL);
}

static void
s_link (struct stream *s, const char *name, const char *target)
{
  s_entry (s, name, TAR_SYMLINK, '2', 0777, NULL, target);
}

/* A deletion, after the archive so far.  */
static void
s_del (struct stream *s, const char *path)
{
  struct cr_error *err = NULL;
  s_flush (s);
  assert_int_equal (
      jobproto_put (&s->frames, ANS_DELETED, path, strlen (path), &err), 0);
  s->n++;
}

/* The archive's end and 'Z' with the counts (or z when given).  */
static void
s_end (struct stream *s, const char *z)
{
  struct cr_error *err = NULL;
  char text[64];
  tar_end (&s->tar);
  s_flush (s);
  snprintf (text, sizeof text, "changes=%llu bytes=%llu", s->n, s->bytes);
  if (z == NULL)
    z = text;
  assert_int_equal (jobproto_put (&s->frames, ANS_END, z, strlen (z), &err), 0);
}

/* A change set being fed, and its last answer other than 0.  */
struct feeding
{
  struct job_changes *ch;
  int rc;
};

/* Every frame to the change set, even after its 'Z' (which a caller
 * would stop at): what comes after must be refused.  */
static int
feed_frame (void *data, enum jobproto_type type, const uint8_t *p, size_t len,
            struct cr_error **err)
{
  struct feeding *f = data;
  int rc = job_changes_frame (f->ch, type, p, len, err);
  if (rc != 0)
    f->rc = rc;
  cr_error_clear (err);
  return 0;
}

/* Feed a stream to a change set over the fixture; the last answer.  */
static int
feed (struct job_changes *ch, const struct stream *s)
{
  struct jobproto_reader r;
  struct cr_error *err = NULL;
  struct feeding f = { ch, 0 };
  jobproto_reader_init (&r);
  assert_int_equal (jobproto_reader_feed (&r, s->frames.data, s->frames.len,
                                          feed_frame, &f, &err),
                    0);
  jobproto_reader_clear (&r);
  return f.rc;
}

static void
s_free (struct stream *s)
{
  buf_free (&s->tar);
  buf_free (&s->frames);
}

/* A change set for the fixture with *.pem left out, and sent's paths.  */
static struct job_changes *
changes_for (const struct fix *f, size_t entries_max, uint64_t bytes_max,
             const struct job_sent *sent)
{
  static const char *const leave[] = { "*.pem", NULL };
  struct job job = { .root = f->root,
                     .leave_out = leave,
                     .entries_max = entries_max,
                     .limits = { .changes_max = bytes_max } };
  struct cr_error *err = NULL;
  struct job_changes *ch = job_changes_new (f->state, &job, sent, &err);
  assert_non_null (ch);
  return ch;
}

/* The stream is refused with why in its reason, and publishes nothing,
 * saying so.  */
static void
assert_refused (const struct fix *f, struct stream *s, const char *why)
{
  struct job_changes *ch = changes_for (f, 16, 1024, NULL);
  struct sandbox_publication pub;
  struct publish_baseline base;
  struct cr_error *err = NULL;
  assert_int_equal (
      publish_baseline_take (f->state, f->root, 5000, &base, &err), 0);
  assert_true (feed (ch, s) < 0);
  assert_non_null (changes_refusal (ch));
  if (strstr (changes_refusal (ch), why) == NULL)
    fail_msg ("refused for \"%s\", not \"%s\"", changes_refusal (ch), why);
  assert_false (job_changes_complete (ch));
  assert_int_equal (job_changes_publish (ch, "t", &base, NULL, &pub, &err), 0);
  assert_true (pub.published_nothing);
  assert_string_equal (pub.outcome, "refused");
  assert_non_null (strstr (pub.note, "[published nothing: the changes the "
                                     "container sent back were refused ("));
  free (pub.note);
  job_changes_free (ch);
  s_free (s);
}

/* Whether the root still is as the fixture made it (a.txt's content and
 * dir/b there).  */
static void
assert_root_untouched (const struct fix *f)
{
  struct stat st;
  char *p = at (f, "dir/b");
  assert_int_equal (lstat (p, &st), 0);
  free (p);
  p = at (f, "a.txt");
  assert_int_equal (lstat (p, &st), 0);
  assert_int_equal (st.st_size, 2);
  free (p);
}

/* Names: "..", absolute, empty components.  */
static void
test_refused_names (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  s_file (&s, "../escape", 0644, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "holds \"..\"");
  memset (&s, 0, sizeof s);
  s_file (&s, "/tmp/abs", 0644, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "absolute");
  memset (&s, 0, sizeof s);
  s_file (&s, "c.txt", 0644, "fine");
  s_del (&s, "dir/../../x");
  s_end (&s, NULL);
  assert_refused (f, &s, "holds \"..\"");
  assert_root_untouched (f);
}

/* Kinds: devices, fifos, hard links; setuid and setgid bits.  */
static void
test_refused_kinds (void **state)
{
  struct fix *f = *state;
  static const struct
  {
    char type;
    const char *why;
  } kinds[] = { { '3', "a device" },
                { '4', "a device" },
                { '6', "a fifo" },
                { '1', "a hard link" },
                { 'S', "a kind" } };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    {
      struct stream s = { 0 };
      s_entry (&s, "thing", TAR_OTHER, kinds[i].type, 0644, NULL, "a.txt");
      s_end (&s, NULL);
      assert_refused (f, &s, kinds[i].why);
    }
  struct stream s = { 0 };
  s_file (&s, "suid", 04755, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "a setuid or setgid bit");
  memset (&s, 0, sizeof s);
  s_dir (&s, "sgid", 02755);
  s_end (&s, NULL);
  assert_refused (f, &s, "a setuid or setgid bit");
}

/* Links whose target could leave, and entries through links.  */
static void
test_refused_links (void **state)
{
  struct fix *f = *state;
  static const char *const targets[]
      = { "/etc/passwd", "..", "../x", "sub/../../.." };
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    {
      struct stream s = { 0 };
      s_link (&s, "out", targets[i]);
      s_end (&s, NULL);
      assert_refused (f, &s, "a link out of the workspace");
    }
  struct stream s = { 0 };
  s_file (&s, "link/x", 0644, "through the link");
  s_end (&s, NULL);
  assert_refused (f, &s, "below something that is not a directory");
  /* A link the stream itself made is no way through either.  */
  memset (&s, 0, sizeof s);
  s_link (&s, "l2", "dir");
  s_file (&s, "l2/x", 0644, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "below something that is not a directory");
}

/* What the command was never given: a pattern's match or a path the
 * archive left out, at, above or below.  */
static void
test_refused_left_out (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  s_file (&s, "key.pem", 0600, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "left out of the workspace");
  memset (&s, 0, sizeof s);
  s_del (&s, "key.pem");
  s_end (&s, NULL);
  assert_refused (f, &s, "left out of the workspace");

  /* dir/b was left out (say, too big): deleting dir would take it.  */
  struct job_left_out lo = { (char *) "dir/b", (char *) "a test" };
  struct job_sent sent = { .left_out = &lo, .n_left_out = 1 };
  struct job_changes *ch = changes_for (f, 16, 1024, &sent);
  memset (&s, 0, sizeof s);
  s_del (&s, "dir");
  s_end (&s, NULL);
  assert_true (feed (ch, &s) < 0);
  assert_non_null (strstr (changes_refusal (ch), "left out"));
  job_changes_free (ch);
  s_free (&s);
}

/* Metadata of paths the root holds, twice-given paths, missing
 * directories.  */
static void
test_refused_metadata (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  s_file (&s, "a.txt", 0755, "a\n");
  s_end (&s, NULL);
  assert_refused (f, &s, "a change of mode");
  memset (&s, 0, sizeof s);
  s_dir (&s, "dir", 0700);
  s_end (&s, NULL);
  assert_refused (f, &s, "a change of mode");
  memset (&s, 0, sizeof s);
  s_file (&s, "dir", 0755, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "a change of type");
  memset (&s, 0, sizeof s);
  s_dir (&s, "a.txt", 0644);
  s_end (&s, NULL);
  assert_refused (f, &s, "a change of type");
  memset (&s, 0, sizeof s);
  s_file (&s, "c", 0644, "1");
  s_file (&s, "c", 0644, "2");
  s_end (&s, NULL);
  assert_refused (f, &s, "a path given twice");
  memset (&s, 0, sizeof s);
  s_file (&s, "nod/x", 0644, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "neither in the workspace nor in the changes");
  memset (&s, 0, sizeof s);
  s_del (&s, "dir");
  s_file (&s, "dir/x", 0644, "x");
  s_end (&s, NULL);
  assert_refused (f, &s, "below something that is not a directory");
  assert_root_untouched (f);
}

/* Bounds, counts and the stream's own shape.  */
static void
test_refused_bounds (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  for (int i = 0; i < 17; i++)
    {
      char name[16];
      snprintf (name, sizeof name, "f%d", i);
      s_file (&s, name, 0644, "x");
    }
  s_end (&s, NULL);
  assert_refused (f, &s, "more entries than the changes' bound");
  memset (&s, 0, sizeof s);
  char big[1100];
  memset (big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  s_file (&s, "big", 0644, big);
  s_end (&s, NULL);
  assert_refused (f, &s, "more content than the changes' bound");
  memset (&s, 0, sizeof s);
  s_file (&s, "c", 0644, "1");
  s_end (&s, "changes=5 bytes=1");
  assert_refused (f, &s, "its end counts other changes than came");
  memset (&s, 0, sizeof s);
  s_end (&s, "changes=0 bytes=0 more");
  assert_refused (f, &s, "a malformed end");
  memset (&s, 0, sizeof s);
  s_end (&s, NULL);
  s_del (&s, "a.txt");
  assert_refused (f, &s, "frames after the end");
  memset (&s, 0, sizeof s);
  struct cr_error *err = NULL;
  assert_int_equal (jobproto_put (&s.frames, ANS_OUTPUT, "o", 1, &err), 0);
  s_end (&s, NULL);
  assert_refused (f, &s, "a 'O' frame among the changes");
  /* Half an archive, then the end.  */
  memset (&s, 0, sizeof s);
  s_file (&s, "c", 0644, "123");
  s_flush (&s);
  s.frames.len -= 300;
  s.frames.data[1] = 0, s.frames.data[2] = 0;
  s.frames.data[3] = (char) ((512 + 512 - 300) >> 8);
  s.frames.data[4] = (char) ((512 + 512 - 300) & 0xff);
  assert_int_equal (
      jobproto_put (&s.frames, ANS_END, "changes=1 bytes=3", 17, &err), 0);
  assert_refused (f, &s, "cut short");
}

/* A stream that ends before its 'Z' publishes nothing, in the words of
 * doc/strings.md.  */
static void
test_incomplete (void **state)
{
  struct fix *f = *state;
  struct job_changes *ch = changes_for (f, 16, 1024, NULL);
  struct sandbox_publication pub;
  struct publish_baseline base;
  struct cr_error *err = NULL;
  struct stream s = { 0 };
  s_file (&s, "c.txt", 0644, "new\n");
  tar_end (&s.tar);
  s_flush (&s);
  assert_int_equal (
      publish_baseline_take (f->state, f->root, 5000, &base, &err), 0);
  assert_int_equal (feed (ch, &s), 0);
  job_changes_refuse (ch, "the stream ended before its end");
  assert_int_equal (job_changes_publish (ch, "t", &base, NULL, &pub, &err), 0);
  assert_string_equal (pub.note, "[published nothing: the changes the "
                                 "container sent back were refused (the "
                                 "stream ended before its end)]");
  free (pub.note);
  char *p = at (f, "c.txt");
  assert_int_equal (access (p, F_OK), -1);
  free (p);
  job_changes_free (ch);
  s_free (&s);
}

/* Read a file of the root (owned).  */
static char *
slurp (const struct fix *f, const char *rel)
{
  char *p = at (f, rel), buf[256];
  int fd = open (p, O_RDONLY | O_NOFOLLOW);
  free (p);
  if (fd < 0)
    return NULL;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  return n < 0 ? NULL : xstrndup (buf, (size_t) n);
}

/* Publish a stream over the fixture; the publication.  */
static void
publish_stream (const struct fix *f, struct stream *s,
                struct sandbox_publication *pub, const char *touch)
{
  struct job_changes *ch = changes_for (f, 64, 1 << 20, NULL);
  struct publish_baseline base;
  struct cr_error *err = NULL;
  assert_int_equal (
      publish_baseline_take (f->state, f->root, 5000, &base, &err), 0);
  if (touch != NULL)
    {
      char *p = at (f, touch);
      assert_int_equal (chmod (p, 0644), 0); /* a ctime after the baseline */
      free (p);
    }
  assert_int_equal (feed (ch, s), 1);
  assert_true (job_changes_complete (ch));
  assert_int_equal (job_changes_publish (ch, "t", &base, NULL, pub, &err), 0);
  job_changes_free (ch);
  s_free (s);
}

/* New, changed and deleted files, new directories and links inside: all
 * published.  */
static void
test_published (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  struct sandbox_publication pub;
  s_file (&s, "a.txt", 0644, "changed\n");
  s_file (&s, "c.txt", 0640, "new\n");
  s_dir (&s, "newd", 0750);
  s_file (&s, "newd/f", 0600, "x");
  s_link (&s, "newd/up", "../a.txt");
  s_link (&s, "l2", "a.txt");
  s_file (&s, "shared/x", 0644, "in the setgid directory");
  s_del (&s, "dir/b");
  s_end (&s, NULL);
  publish_stream (f, &s, &pub, NULL);
  assert_string_equal (pub.outcome, "published");
  assert_false (pub.published_nothing);
  free (pub.note);
  char *t = slurp (f, "a.txt");
  assert_string_equal (t, "changed\n");
  free (t);
  t = slurp (f, "newd/f");
  assert_string_equal (t, "x");
  free (t);
  struct stat st;
  char *p = at (f, "c.txt");
  assert_int_equal (lstat (p, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0640);
  free (p);
  p = at (f, "newd/up");
  assert_int_equal (lstat (p, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  free (p);
  p = at (f, "dir/b");
  assert_int_equal (lstat (p, &st), -1);
  free (p);
  t = slurp (f, "shared/x");
  assert_string_equal (t, "in the setgid directory");
  free (t);
}

/* A deletion then a new entry of another kind: a replacement, and a
 * replaced directory keeps nothing of the old one.  */
static void
test_replaced (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  struct sandbox_publication pub;
  s_del (&s, "link");
  s_file (&s, "link", 0644, "a file now\n");
  s_del (&s, "dir");
  s_dir (&s, "dir", 0755);
  s_file (&s, "dir/new", 0644, "n");
  s_end (&s, NULL);
  publish_stream (f, &s, &pub, NULL);
  assert_string_equal (pub.outcome, "published");
  free (pub.note);
  struct stat st;
  char *p = at (f, "link");
  assert_int_equal (lstat (p, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  free (p);
  p = at (f, "dir/b");
  assert_int_equal (lstat (p, &st), -1);
  free (p);
  char *t = slurp (f, "dir/new");
  assert_string_equal (t, "n");
  free (t);
}

/* A root changed while the command ran publishes nothing.  */
static void
test_root_changed (void **state)
{
  struct fix *f = *state;
  struct stream s = { 0 };
  struct sandbox_publication pub;
  s_file (&s, "a.txt", 0644, "changed\n");
  s_end (&s, NULL);
  publish_stream (f, &s, &pub, "a.txt");
  assert_string_equal (pub.outcome, "refused");
  assert_true (pub.published_nothing);
  assert_non_null (strstr (pub.note, "changed by something outside"));
  free (pub.note);
  char *t = slurp (f, "a.txt");
  assert_string_equal (t, "a\n");
  free (t);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_refused_names, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_refused_kinds, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_refused_links, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_refused_left_out, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_refused_metadata, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_refused_bounds, fix_setup,
                                     fix_teardown),
    cmocka_unit_test_setup_teardown (test_incomplete, fix_setup, fix_teardown),
    cmocka_unit_test_setup_teardown (test_published, fix_setup, fix_teardown),
    cmocka_unit_test_setup_teardown (test_replaced, fix_setup, fix_teardown),
    cmocka_unit_test_setup_teardown (test_root_changed, fix_setup,
                                     fix_teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
