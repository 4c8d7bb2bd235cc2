/* Tests for sandbox/container/jobproto.c (frames, the reader, key=value
 * payloads, the names both directions may carry), the tar reader and
 * writer it carries archives with (sandbox/container/tar.c), and the job
 * as job_put writes it (sandbox/container/job.c, workspace.c).  */
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
#include "sandbox/container/job.h"
#include "sandbox/container/jobproto.h"
#include "sandbox/container/tar.h"

/* What a reader handed on: "T:payload;" per frame.  */
static int
collect (void *data, enum jobproto_type type, const uint8_t *p, size_t len,
         struct cr_error **err)
{
  (void) err;
  buf_printf (data, "%c:%.*s;", (char) type, (int) len, (const char *) p);
  return 0;
}

/* Frames put, then read back whole and one byte at a time.  */
static void
test_frames_round_trip (void **state)
{
  (void) state;
  struct buf b = BUF_INIT, got = BUF_INIT;
  struct cr_error *err = NULL;
  assert_int_equal (jobproto_put (&b, JOB_VERSION, "crucible-job 1", 14, &err),
                    0);
  assert_int_equal (jobproto_put (&b, JOB_GO, "", 0, &err), 0);
  assert_int_equal (jobproto_put (&b, ANS_OUTPUT, "hi", 2, &err), 0);
  assert_int_equal (b.len, 5 * 3 + 14 + 2);
  assert_memory_equal (b.data, "V\0\0\0\x0e", 5);

  struct jobproto_reader r;
  jobproto_reader_init (&r);
  assert_int_equal (
      jobproto_reader_feed (&r, b.data, b.len, collect, &got, &err), 0);
  assert_string_equal (got.data, "V:crucible-job 1;G:;O:hi;");
  assert_false (jobproto_reader_partial (&r));
  got.len = 0;
  for (size_t i = 0; i < b.len; i++)
    assert_int_equal (
        jobproto_reader_feed (&r, b.data + i, 1, collect, &got, &err), 0);
  assert_string_equal (got.data, "V:crucible-job 1;G:;O:hi;");
  /* Half a frame is held, and says so.  */
  assert_int_equal (jobproto_reader_feed (&r, b.data, 7, collect, &got, &err),
                    0);
  assert_true (jobproto_reader_partial (&r));
  jobproto_reader_clear (&r);
  buf_free (&b);
  buf_free (&got);
}

/* An oversized length or an unknown type fails the reader for good, as
 * soon as the header shows it; nothing is handed on.  */
static void
test_frames_refused (void **state)
{
  (void) state;
  struct buf got = BUF_INIT;
  struct cr_error *err = NULL;
  struct jobproto_reader r;
  static const uint8_t big[] = { 'D', 0x00, 0x10, 0x00, 0x01 };
  static const uint8_t unknown[] = { 'Q', 0, 0, 0, 0 };

  jobproto_reader_init (&r);
  assert_true (jobproto_reader_feed (&r, big, sizeof big, collect, &got, &err)
               < 0);
  assert_non_null (strstr (err->msg, "over the"));
  cr_error_clear (&err);
  assert_true (jobproto_reader_feed (&r, "G\0\0\0\0", 5, collect, &got, &err)
               < 0);
  cr_error_clear (&err);
  jobproto_reader_clear (&r);

  jobproto_reader_init (&r);
  assert_true (jobproto_reader_feed (&r, unknown, 1, collect, &got, &err) < 0);
  assert_non_null (strstr (err->msg, "unknown frame type 0x51"));
  cr_error_clear (&err);
  jobproto_reader_clear (&r);
  assert_int_equal (got.len, 0);

  struct buf out = BUF_INIT;
  assert_true (
      jobproto_put (&out, ANS_OUTPUT, NULL, JOBPROTO_FRAME_MAX + 1, &err) < 0);
  cr_error_clear (&err);
  assert_true (jobproto_put (&out, (enum jobproto_type) 'q', "", 0, &err) < 0);
  cr_error_clear (&err);
  assert_int_equal (out.len, 0);
  buf_free (&got);
}

/* key=value lines: found, absent, and a malformed payload reads as
 * nothing at all.  */
static void
test_kv (void **state)
{
  (void) state;
  static const char ok[] = "cpu=5\nas=100\n\nnet=\n";
  char *v = jobproto_kv ((const uint8_t *) ok, strlen (ok), "as");
  assert_string_equal (v, "100");
  free (v);
  v = jobproto_kv ((const uint8_t *) ok, strlen (ok), "net");
  assert_string_equal (v, "");
  free (v);
  assert_null (jobproto_kv ((const uint8_t *) ok, strlen (ok), "c"));
  assert_null (jobproto_kv ((const uint8_t *) ok, strlen (ok), "fsize"));
  static const char bad[] = "cpu=5\nnoequals\n";
  assert_null (jobproto_kv ((const uint8_t *) bad, strlen (bad), "cpu"));
  static const char nul[] = "cpu=5\0as=1";
  assert_null (jobproto_kv ((const uint8_t *) nul, sizeof nul - 1, "cpu"));
}

/* The names the workspace may hold, and the links that stay inside.  */
static void
test_names (void **state)
{
  (void) state;
  assert_true (jobproto_path_ok ("a"));
  assert_true (jobproto_path_ok ("a/b.c/..d"));
  assert_false (jobproto_path_ok (""));
  assert_false (jobproto_path_ok ("/a"));
  assert_false (jobproto_path_ok ("a/../b"));
  assert_false (jobproto_path_ok (".."));
  assert_false (jobproto_path_ok ("./a"));
  assert_false (jobproto_path_ok ("a//b"));
  assert_false (jobproto_path_ok ("a/"));

  assert_true (jobproto_link_inside ("l", "a"));
  assert_true (jobproto_link_inside ("l", "."));
  assert_true (jobproto_link_inside ("d/l", "../a"));
  assert_true (jobproto_link_inside ("d/e/l", "../../a/b"));
  assert_false (jobproto_link_inside ("l", "/etc/passwd"));
  assert_false (jobproto_link_inside ("l", ".."));
  assert_false (jobproto_link_inside ("d/l", "../.."));
  assert_false (jobproto_link_inside ("l", ""));
  /* A ".." after a name could climb from where a link led.  */
  assert_false (jobproto_link_inside ("d/l", "sub/../a"));
  assert_false (jobproto_link_inside ("d/l", "./../x/.."));
}

/* What a tar reader saw: "K name mode size [link];" and content.  */
struct seen
{
  struct buf b;
};

static int
seen_entry (void *data, const struct tar_entry *e, struct cr_error **err)
{
  (void) err;
  buf_printf (&((struct seen *) data)->b, "%d %s %o %llu %s;", e->kind, e->name,
              e->mode, (unsigned long long) e->size, e->link ? e->link : "");
  return 0;
}

static int
seen_content (void *data, const void *p, size_t len, struct cr_error **err)
{
  (void) err;
  buf_append (&((struct seen *) data)->b, p, len);
  return 0;
}

static int
seen_end (void *data, struct cr_error **err)
{
  (void) err;
  buf_puts (&((struct seen *) data)->b, "|");
  return 0;
}

static const struct tar_reader_ops seen_ops
    = { seen_entry, seen_content, seen_end };

/* Entries written with long names come back whole, fed in any pieces;
 * a flipped byte in a header fails the checksum.  */
static void
test_tar_round_trip (void **state)
{
  (void) state;
  struct buf t = BUF_INIT;
  struct cr_error *err = NULL;
  char long_name[300];
  memset (long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  struct tar_entry d = { .name = "dir", .kind = TAR_DIR, .mode = 0755 };
  struct tar_entry f
      = { .name = long_name, .kind = TAR_FILE, .mode = 0600, .size = 3 };
  struct tar_entry l = {
    .name = "dir/l", .kind = TAR_SYMLINK, .mode = 0777, .link = long_name
  };
  assert_int_equal (tar_put_header (&t, &d, &err), 0);
  assert_int_equal (tar_put_header (&t, &f, &err), 0);
  buf_append (&t, "abc", 3);
  tar_pad (&t, 3);
  assert_int_equal (tar_put_header (&t, &l, &err), 0);
  tar_end (&t);

  for (size_t piece = 1; piece <= t.len; piece = piece * 3 + 1)
    {
      struct seen s = { BUF_INIT };
      struct tar_reader r;
      tar_reader_init (&r);
      for (size_t at = 0; at < t.len; at += piece)
        assert_int_equal (
            tar_reader_feed (&r, t.data + at,
                             at + piece <= t.len ? piece : t.len - at,
                             &seen_ops, &s, &err),
            0);
      assert_true (tar_reader_done (&r));
      char *want = xasprintf ("1 dir 755 0 ;0 %s 600 3 ;abc|2 dir/l 777 0 %s;",
                              long_name, long_name);
      assert_string_equal (s.b.data, want);
      free (want);
      buf_free (&s.b);
      tar_reader_clear (&r);
    }

  struct seen s = { BUF_INIT };
  struct tar_reader r;
  tar_reader_init (&r);
  t.data[0] ^= 1;
  assert_true (tar_reader_feed (&r, t.data, t.len, &seen_ops, &s, &err) < 0);
  assert_non_null (strstr (err->msg, "malformed header"));
  cr_error_clear (&err);
  tar_reader_clear (&r);
  buf_free (&s.b);
  buf_free (&t);
}

/* A sink that keeps what it is given.  */
static int
keep (void *data, const void *bytes, size_t len, struct cr_error **err)
{
  (void) err;
  buf_append (data, bytes, len);
  return 0;
}

/* The frames of a job, in order, as "T;" and the archive's entries.  */
struct job_seen
{
  struct buf order;
  struct tar_reader tar;
  struct seen entries;
};

static int
job_frames (void *data, enum jobproto_type type, const uint8_t *p, size_t len,
            struct cr_error **err)
{
  struct job_seen *j = data;
  buf_printf (&j->order, "%c", (char) type);
  if (type == JOB_WORKSPACE)
    return tar_reader_feed (&j->tar, p, len, &seen_ops, &j->entries, err);
  if (type == JOB_LIMITS || type == JOB_ENV || type == JOB_COMMAND)
    buf_printf (&j->order, "(%.*s)", (int) len, (const char *) p);
  return 0;
}

/* Write a small file.  */
static void
put_file (const char *dir, const char *name, const char *text, mode_t mode)
{
  char *path = xasprintf ("%s/%s", dir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  assert_int_equal (chmod (path, mode), 0);
  free (path);
}

/* The whole job: V, L, E..., C, W..., G in that order; the archive holds
 * the root but for what is left out, and names what it left out.  */
static void
test_job_put (void **state)
{
  (void) state;
  char dir[] = "/tmp/test_jobproto.XXXXXX";
  assert_non_null (mkdtemp (dir));
  put_file (dir, "a", "A", 0644);
  put_file (dir, "key.pem", "K", 0600);
  put_file (dir, "s", "S", 04755);
  char *p = xasprintf ("%s/sub", dir);
  assert_int_equal (mkdir (p, 0750), 0);
  free (p);
  put_file (dir, "sub/b", "B", 0600);
  p = xasprintf ("%s/out", dir);
  assert_int_equal (symlink ("/etc/passwd", p), 0);
  free (p);
  p = xasprintf ("%s/in", dir);
  assert_int_equal (symlink ("sub/b", p), 0);
  free (p);
  p = xasprintf ("%s/fifo", dir);
  assert_int_equal (mkfifo (p, 0600), 0);
  free (p);

  static const char *const leave[] = { "*.pem", NULL };
  char *envp[] = { (char *) "A=1", (char *) "B=2", NULL };
  struct job job = { .line = "true",
                     .envp = envp,
                     .root = dir,
                     .leave_out = leave,
                     .limits = { .cpu_s = 7, .deadline_ms = 900 } };
  struct buf out = BUF_INIT;
  struct job_sent sent;
  struct cr_error *err = NULL;
  assert_int_equal (job_put (&job, keep, &out, &sent, &err), 0);

  struct job_seen j;
  memset (&j, 0, sizeof j);
  struct jobproto_reader r;
  jobproto_reader_init (&r);
  tar_reader_init (&j.tar);
  assert_int_equal (
      jobproto_reader_feed (&r, out.data, out.len, job_frames, &j, &err), 0);
  assert_string_equal (j.order.data,
                       "VL(cpu=7\ndeadline_ms=900\nchanges_max=268435456\n)"
                       "E(A=1)E(B=2)C(true)WG");
  assert_true (tar_reader_done (&j.tar));
  /* Setuid off, links out and fifos and the pattern's match left out.  */
  assert_string_equal (j.entries.b.data, "0 a 644 1 ;A|2 in 777 0 sub/b;"
                                         "0 s 755 1 ;S|1 sub 750 0 ;"
                                         "0 sub/b 600 1 ;B|");
  assert_int_equal (sent.entries, 5);
  assert_int_equal (sent.bytes, 3);
  assert_int_equal (sent.n_left_out, 3);
  assert_string_equal (sent.left_out[0].path, "fifo");
  assert_string_equal (sent.left_out[1].path, "key.pem");
  assert_string_equal (sent.left_out[2].path, "out");
  assert_string_equal (sent.left_out[2].why, "a link out of the workspace");
  job_sent_clear (&sent);

  /* Over the content bound: no job at all, saying which bound.  */
  job.workspace_max = 2;
  out.len = 0;
  assert_true (job_put (&job, keep, &out, &sent, &err) < 0);
  assert_non_null (strstr (err->msg, "more than 2 bytes"));
  cr_error_clear (&err);
  job_sent_clear (&sent);
  job.workspace_max = 0;
  job.entries_max = 2;
  assert_true (job_put (&job, keep, &out, &sent, &err) < 0);
  assert_non_null (strstr (err->msg, "more than 2 entries"));
  cr_error_clear (&err);
  job_sent_clear (&sent);

  jobproto_reader_clear (&r);
  tar_reader_clear (&j.tar);
  buf_free (&j.order);
  buf_free (&j.entries.b);
  buf_free (&out);
  char *rm = xasprintf ("rm -rf %s", dir);
  assert_int_equal (system (rm), 0);
  free (rm);
}

/* The frames appended for standard streams of the workload's own ('I',
 * 'N' in, 'Y' out) are read like the others, and a job asking for them
 * says "stdio=1" in its limits; one that does not is as before.  */
static void
test_frames_stdio (void **state)
{
  (void) state;
  struct buf b = BUF_INIT, got = BUF_INIT;
  struct cr_error *err = NULL;
  assert_int_equal (jobproto_put (&b, JOB_INPUT, "in", 2, &err), 0);
  assert_int_equal (jobproto_put (&b, JOB_INPUT_END, "", 0, &err), 0);
  assert_int_equal (jobproto_put (&b, ANS_ERROR_OUTPUT, "err", 3, &err), 0);
  struct jobproto_reader r;
  jobproto_reader_init (&r);
  assert_int_equal (
      jobproto_reader_feed (&r, b.data, b.len, collect, &got, &err), 0);
  assert_string_equal (got.data, "I:in;N:;Y:err;");
  jobproto_reader_clear (&r);

  char dir[] = "/tmp/test_jobproto_stdio.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *envp[] = { NULL };
  struct job job = { .line = "true",
                     .envp = envp,
                     .root = dir,
                     .limits = { .deadline_ms = 5, .stdio = 1 } };
  struct job_sent sent;
  b.len = 0;
  got.len = 0;
  assert_int_equal (job_put (&job, keep, &b, &sent, &err), 0);
  job_sent_clear (&sent);
  rmdir (dir);
  jobproto_reader_init (&r);
  assert_int_equal (
      jobproto_reader_feed (&r, b.data, b.len, collect, &got, &err), 0);
  assert_non_null (strstr (got.data, "L:deadline_ms=5\nchanges_max=268435456\n"
                                     "stdio=1\n;"));
  jobproto_reader_clear (&r);
  buf_free (&b);
  buf_free (&got);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_frames_round_trip),
    cmocka_unit_test (test_frames_refused),
    cmocka_unit_test (test_frames_stdio),
    cmocka_unit_test (test_kv),
    cmocka_unit_test (test_names),
    cmocka_unit_test (test_tar_round_trip),
    cmocka_unit_test (test_job_put),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
