/* Unit tests for core/journal.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "core/journal.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

#define ELLIPSIS "\xe2\x80\xa6"

/* A fresh temporary directory for one test, removed afterwards.  */
static int
setup_tmp (void **state)
{
  char *dir = xstrdup ("/tmp/test_journal.XXXXXX");
  assert_non_null (mkdtemp (dir));
  *state = dir;
  return 0;
}

static int
teardown_tmp (void **state)
{
  char *cmd = xasprintf ("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'",
                         (char *) *state, (char *) *state);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (*state);
  return 0;
}

/* unit n times, then tail; the caller frees it.  */
static char *
repeat (const char *unit, size_t n, const char *tail)
{
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < n; i++)
    buf_puts (&b, unit);
  buf_puts (&b, tail);
  return buf_steal (&b, NULL);
}

/* Read a whole file; the caller frees it.  */
static char *
slurp (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  assert_non_null (f);
  char *data = xmalloc (1 << 20);
  size_t n = fread (data, 1, (1 << 20) - 1, f);
  fclose (f);
  data[n] = '\0';
  if (len != NULL)
    *len = n;
  return data;
}

/* The lines of a file, each NUL-terminated without its newline; every
 * line must end with a newline.  */
static size_t
split_lines (char *data, char **lines, size_t max)
{
  size_t n = 0;
  char *p = data;
  while (*p != '\0')
    {
      char *nl = strchr (p, '\n');
      assert_non_null (nl);
      *nl = '\0';
      assert_true (n < max);
      lines[n++] = p;
      p = nl + 1;
    }
  return n;
}

/* Parse one line with yajl; it must be a JSON object.  */
static yajl_val
parse (const char *line)
{
  char errbuf[256];
  yajl_val v = yajl_tree_parse (line, errbuf, sizeof errbuf);
  if (v == NULL)
    fail_msg ("not JSON: %s: %s", errbuf, line);
  assert_true (YAJL_IS_OBJECT (v));
  return v;
}

static const char *
get_str (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  return s != NULL ? YAJL_GET_STRING (s) : NULL;
}

static long long
get_int (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val n = yajl_tree_get (v, path, yajl_t_number);
  assert_non_null (n);
  assert_true (YAJL_IS_INTEGER (n));
  return YAJL_GET_INTEGER (n);
}

static bool
has_key (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (v, path, yajl_t_any) != NULL;
}

/* Whether ts is RFC 3339 UTC with milliseconds: 2024-05-01T12:34:56.789Z.  */
static bool
ts_valid (const char *ts)
{
  const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (strlen (ts) != strlen (shape))
    return false;
  for (size_t i = 0; shape[i] != '\0'; i++)
    if (shape[i] == 'd' ? (ts[i] < '0' || ts[i] > '9') : ts[i] != shape[i])
      return false;
  return true;
}

/* Open a journal in dir; expect success.  */
static struct journal *
open_ok (const char *dir)
{
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  if (journal_open (&j, dir, &err) < 0)
    fail_msg ("journal_open: %s", err->msg);
  assert_null (err);
  assert_non_null (j);
  return j;
}

/* Open and expect a refusal containing msg.  */
static void
open_fails (const char *dir, const char *msg)
{
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (journal_open (&j, dir, &err), -1);
  assert_null (j);
  assert_non_null (err);
  if (strstr (err->msg, msg) == NULL)
    fail_msg ("'%s' does not contain '%s'", err->msg, msg);
  cr_error_free (err);
}

static void
fact_ok (struct journal *j, enum journal_fact fact, uint64_t command,
         const char *call, const struct journal_field *f, size_t n)
{
  struct cr_error *err = NULL;
  if (journal_fact (j, fact, command, call, f, n, &err) < 0)
    fail_msg ("journal_fact: %s", err->msg);
  assert_null (err);
}

/* Read every line of j's file, checking each parses; returns the count.  */
static size_t
read_facts (struct journal *j, yajl_val *out, size_t max, char **raw)
{
  char *data = slurp (journal_path (j), NULL);
  char *lines[64] = { NULL };
  size_t n = split_lines (data, lines, 64);
  assert_true (n <= max);
  for (size_t i = 0; i < n; i++)
    {
      assert_true (strlen (lines[i]) + 1 <= JOURNAL_MAX_LINE);
      out[i] = parse (lines[i]);
      if (raw != NULL)
        raw[i] = xstrdup (lines[i]);
    }
  free (data);
  return n;
}

static void
free_facts (yajl_val *v, char **raw, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      yajl_tree_free (v[i]);
      if (raw != NULL)
        free (raw[i]);
    }
}

static void
test_line_shape (void **state)
{
  struct journal *j = open_ok (*state);
  const char *id = journal_session (j);
  assert_int_equal (strlen (id), JOURNAL_SESSION_LEN);
  assert_int_equal (strspn (id, "0123456789abcdef"), JOURNAL_SESSION_LEN);
  char *want = xasprintf ("%s/%s.jsonl", (char *) *state, id);
  assert_string_equal (journal_path (j), want);
  free (want);

  struct journal_field f[] = {
    JOURNAL_STR ("outcome", "exited"),
    JOURNAL_INT64 ("status", -3),
    JOURNAL_BOOLEAN ("confined", true),
    JOURNAL_BOOLEAN ("still_arriving", false),
    JOURNAL_INT64 ("big", INT64_MIN),
  };
  fact_ok (j, JOURNAL_FINISH, 7, "toolu_01", f, 5);
  fact_ok (j, JOURNAL_SESSION_START, 0, NULL, NULL, 0);

  yajl_val v[4] = { NULL };
  char *raw[4] = { NULL };
  assert_int_equal (read_facts (j, v, 4, raw), 2);
  char *prefix = xasprintf ("{\"ts\":\"");
  assert_memory_equal (raw[0], prefix, strlen (prefix));
  free (prefix);
  /* Keys come in a fixed order: ts, session, seq, fact, command, call.  */
  const char *order[]
      = { "\"ts\"",   "\"session\"", "\"seq\"",    "\"fact\"",    "\"command\"",
          "\"call\"", "\"outcome\"", "\"status\"", "\"confined\"" };
  const char *last = raw[0];
  for (size_t i = 0; i < 9; i++)
    {
      const char *at = strstr (raw[0], order[i]);
      assert_non_null (at);
      assert_true (at >= last);
      last = at;
    }
  assert_true (ts_valid (get_str (v[0], "ts")));
  assert_string_equal (get_str (v[0], "session"), id);
  assert_int_equal (get_int (v[0], "seq"), 1);
  assert_string_equal (get_str (v[0], "fact"), "finish");
  assert_int_equal (get_int (v[0], "command"), 7);
  assert_string_equal (get_str (v[0], "call"), "toolu_01");
  assert_string_equal (get_str (v[0], "outcome"), "exited");
  assert_int_equal (get_int (v[0], "status"), -3);
  /* yajl's own integer parser stops one short of INT64_MIN (ERANGE), so
   * the text is checked instead.  */
  assert_non_null (strstr (raw[0], ",\"big\":-9223372036854775808}"));
  const char *pc[] = { "confined", NULL };
  assert_true (YAJL_IS_TRUE (yajl_tree_get (v[0], pc, yajl_t_any)));
  const char *ps[] = { "still_arriving", NULL };
  assert_true (YAJL_IS_FALSE (yajl_tree_get (v[0], ps, yajl_t_any)));

  /* No command, no call: the keys are left out, not written empty.  */
  assert_string_equal (get_str (v[1], "fact"), "session_start");
  assert_false (has_key (v[1], "command"));
  assert_false (has_key (v[1], "call"));
  assert_int_equal (v[1]->u.object.len, 4);

  free_facts (v, raw, 2);
  journal_close (j);
}

static void
test_seq_increments (void **state)
{
  struct journal *j = open_ok (*state);
  for (int i = 0; i < 5; i++)
    fact_ok (j, JOURNAL_START, (uint64_t) i + 1, NULL, NULL, 0);
  yajl_val v[8] = { NULL };
  assert_int_equal (read_facts (j, v, 8, NULL), 5);
  for (int i = 0; i < 5; i++)
    {
      assert_int_equal (get_int (v[i], "seq"), i + 1);
      assert_int_equal (get_int (v[i], "command"), i + 1);
    }
  free_facts (v, NULL, 5);
  assert_int_equal (journal_lost (j), 0);
  journal_close (j);
}

static void
test_every_fact_name (void **state)
{
  const char *names[]
      = { "session_start", "session_end", "policy",         "start",
          "finish",        "ending",      "background",     "stop",
          "stop_failed",   "cleanup",     "cleanup_failed", "refusal",
          "approval",      "violation",   "usage",          "publication",
          "capabilities",  "peer",        "network" };
  assert_int_equal (JOURNAL_FACT_COUNT, 19);
  struct journal *j = open_ok (*state);
  for (int i = 0; i < JOURNAL_FACT_COUNT; i++)
    {
      assert_string_equal (journal_fact_name ((enum journal_fact) i), names[i]);
      fact_ok (j, (enum journal_fact) i, 1, NULL, NULL, 0);
    }
  assert_null (journal_fact_name (JOURNAL_FACT_COUNT));
  assert_null (journal_fact_name ((enum journal_fact) - 1));
  yajl_val v[20] = { NULL };
  assert_int_equal (read_facts (j, v, 20, NULL), 19);
  for (int i = 0; i < 19; i++)
    assert_string_equal (get_str (v[i], "fact"), names[i]);
  free_facts (v, NULL, 19);
  journal_close (j);
}

static void
test_escaping (void **state)
{
  const char *nasty = "q\"b\\s/n\nr\rt\tc\x01\x1f\x7f é ✓ 🜁";
  struct journal *j = open_ok (*state);
  struct journal_field f[] = { JOURNAL_STR ("reason", nasty) };
  fact_ok (j, JOURNAL_REFUSAL, 3, nasty, f, 1);
  yajl_val v[2] = { NULL };
  char *raw[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, raw), 1);
  assert_string_equal (get_str (v[0], "call"), nasty);
  assert_string_equal (get_str (v[0], "reason"), nasty);
  /* The raw line holds no control byte: a newline inside would split it.  */
  for (const char *p = raw[0]; *p != '\0'; p++)
    assert_true ((unsigned char) *p >= 0x20);
  assert_non_null (strstr (raw[0], "\\u0001"));
  assert_non_null (strstr (raw[0], "\\n"));
  free_facts (v, raw, 1);
  journal_close (j);
}

static void
test_invalid_utf8_replaced (void **state)
{
  struct journal *j = open_ok (*state);
  /* A stray continuation byte, an overlong '/', a surrogate, a cut-off
   * sequence at the end.  */
  struct journal_field f[] = {
    JOURNAL_STR ("a", "x\x80y"),           JOURNAL_STR ("b", "\xc0\xaf"),
    JOURNAL_STR ("c", "\xed\xa0\x80"),     JOURNAL_STR ("d", "ok\xe2\x82"),
    JOURNAL_STR ("e", "\xe0\x80\xaf"),     /* overlong, three bytes */
    JOURNAL_STR ("g", "\xf4\x90\x80\x80"), /* past U+10FFFF */
    JOURNAL_STR ("h", "\xf0\x9f\x9c\x81"), /* valid: kept */
  };
  fact_ok (j, JOURNAL_VIOLATION, 1, NULL, f, 7);
  yajl_val v[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, NULL), 1);
  assert_string_equal (get_str (v[0], "a"), "x\xef\xbf\xbdy");
  assert_string_equal (get_str (v[0], "b"), "\xef\xbf\xbd\xef\xbf\xbd");
  assert_string_equal (get_str (v[0], "c"),
                       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  assert_string_equal (get_str (v[0], "d"), "ok\xef\xbf\xbd\xef\xbf\xbd");
  assert_string_equal (get_str (v[0], "e"),
                       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  assert_string_equal (get_str (v[0], "g"), "\xef\xbf\xbd\xef\xbf\xbd"
                                            "\xef\xbf\xbd\xef\xbf\xbd");
  assert_string_equal (get_str (v[0], "h"), "\xf0\x9f\x9c\x81");
  free_facts (v, NULL, 1);
  journal_close (j);
}

/* The encoded bytes of key's string value in a raw line, quotes excluded.  */
static size_t
encoded_len (const char *raw, const char *key)
{
  char *pat = xasprintf ("\"%s\":\"", key);
  const char *p = strstr (raw, pat);
  assert_non_null (p);
  p += strlen (pat);
  free (pat);
  size_t n = 0;
  while (p[n] != '"')
    n += p[n] == '\\' ? 2 : 1;
  return n;
}

static void
test_string_cut (void **state)
{
  char ascii[400], accents[401], quotes[301], exact[257];
  memset (ascii, 'x', 399);
  ascii[399] = '\0';
  for (size_t i = 0; i < 200; i++)
    memcpy (accents + 2 * i, "\xc3\xa9", 3); /* the NUL is overwritten */
  accents[400] = '\0';
  memset (quotes, '"', 300);
  quotes[300] = '\0';
  memset (exact, 'e', 256);
  exact[256] = '\0';

  struct journal *j = open_ok (*state);
  struct journal_field f[] = {
    JOURNAL_STR ("ascii", ascii),
    JOURNAL_STR ("accents", accents),
    JOURNAL_STR ("quotes", quotes),
    JOURNAL_STR ("exact", exact),
  };
  fact_ok (j, JOURNAL_POLICY, 0, NULL, f, 4);
  yajl_val v[2] = { NULL };
  char *raw[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, raw), 1);

  /* 253 bytes of x, then the 3-byte ellipsis: 256.  */
  char *want = repeat ("x", 253, ELLIPSIS);
  assert_string_equal (get_str (v[0], "ascii"), want);
  free (want);
  /* 126 two-byte characters (252) fit before the ellipsis; a 127th would
   * make 257.  Never half a character.  */
  want = repeat ("\xc3\xa9", 126, ELLIPSIS);
  assert_string_equal (get_str (v[0], "accents"), want);
  free (want);
  /* A quote costs two encoded bytes: 126 of them, then the ellipsis.  */
  want = repeat ("\"", 126, ELLIPSIS);
  assert_string_equal (get_str (v[0], "quotes"), want);
  free (want);
  /* Exactly at the bound: kept whole.  */
  assert_string_equal (get_str (v[0], "exact"), exact);

  assert_true (encoded_len (raw[0], "ascii") <= JOURNAL_MAX_STRING);
  assert_true (encoded_len (raw[0], "accents") <= JOURNAL_MAX_STRING);
  assert_int_equal (encoded_len (raw[0], "quotes"), 255);
  assert_int_equal (encoded_len (raw[0], "exact"), 256);
  free_facts (v, raw, 1);
  journal_close (j);
}

static void
test_line_bound (void **state)
{
  /* Sixteen long fields and a long call id would pass 4 KiB at 256 bytes
   * each: every string is cut further, to one common bound.  */
  static const char *names[JOURNAL_MAX_FIELDS]
      = { "a_long_field_name_number_one_xxx",
          "f1",
          "f2",
          "f3",
          "f4",
          "f5",
          "f6",
          "f7",
          "f8",
          "f9",
          "f10",
          "f11",
          "f12",
          "f13",
          "f14",
          "f15" };
  char big[600];
  memset (big, '\x01', 599); /* each costs 6 encoded bytes */
  big[599] = '\0';
  struct journal_field f[JOURNAL_MAX_FIELDS];
  for (int i = 0; i < JOURNAL_MAX_FIELDS; i++)
    f[i] = (struct journal_field) JOURNAL_STR (names[i], big);
  assert_int_equal (strlen (names[0]), JOURNAL_MAX_NAME);

  struct journal *j = open_ok (*state);
  fact_ok (j, JOURNAL_CLEANUP_FAILED, UINT64_MAX, big, f, JOURNAL_MAX_FIELDS);
  yajl_val v[2] = { NULL };
  char *raw[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, raw), 1);
  size_t len = strlen (raw[0]) + 1;
  assert_true (len <= JOURNAL_MAX_LINE);
  /* The largest common bound: one more escaped byte each would not fit.  */
  assert_true (len + (size_t) 17 * 6 > JOURNAL_MAX_LINE);
  const char *first = get_str (v[0], "f1");
  assert_non_null (first);
  assert_true (strlen (first) > 3);
  for (int i = 0; i < JOURNAL_MAX_FIELDS; i++)
    {
      const char *s = get_str (v[0], names[i]);
      assert_non_null (s);
      assert_string_equal (s, first);
      assert_string_equal (s + strlen (s) - 3, ELLIPSIS);
    }
  assert_string_equal (get_str (v[0], "call"), first);
  free_facts (v, raw, 1);
  journal_close (j);
}

/* Expect journal_fact to refuse, writing nothing and taking no seq.  */
static void
fact_refused (struct journal *j, enum journal_fact fact,
              const struct journal_field *f, size_t n, const char *msg)
{
  struct cr_error *err = NULL;
  assert_int_equal (journal_fact (j, fact, 1, NULL, f, n, &err), -1);
  assert_non_null (err);
  if (strstr (err->msg, msg) == NULL)
    fail_msg ("'%s' does not contain '%s'", err->msg, msg);
  cr_error_free (err);
}

static void
test_refusals (void **state)
{
  struct journal *j = open_ok (*state);
  fact_refused (j, JOURNAL_FACT_COUNT, NULL, 0, "is not one");
  fact_refused (j, (enum journal_fact) 1000, NULL, 0, "is not one");
  fact_refused (j, (enum journal_fact) - 1, NULL, 0, "is not one");

  const char *bad[] = { "",
                        "Bad",
                        "has-dash",
                        "1abc",
                        "_x",
                        "sp ace",
                        "ts",
                        "session",
                        "seq",
                        "fact",
                        "command",
                        "call",
                        "argv",
                        "args",
                        "env",
                        "environment",
                        "description",
                        "cmdline",
                        "secret",
                        "token",
                        "password",
                        "credentials",
                        "a_long_field_name_number_one_xxxy" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      struct journal_field f[] = { JOURNAL_INT64 (bad[i], 1) };
      fact_refused (j, JOURNAL_START, f, 1, "refused");
    }
  struct journal_field nul[] = { { .name = NULL, .kind = JOURNAL_INT } };
  fact_refused (j, JOURNAL_START, nul, 1, "refused");

  struct journal_field twice[]
      = { JOURNAL_INT64 ("pid", 1), JOURNAL_INT64 ("pid", 2) };
  fact_refused (j, JOURNAL_START, twice, 2, "given twice");
  struct journal_field nostr[] = { JOURNAL_STR ("reason", NULL) };
  fact_refused (j, JOURNAL_REFUSAL, nostr, 1, "has no string");
  struct journal_field kind[]
      = { { .name = "x", .kind = (enum journal_kind) 9 } };
  fact_refused (j, JOURNAL_START, kind, 1, "no valid kind");

  struct journal_field many[JOURNAL_MAX_FIELDS + 1];
  char names[JOURNAL_MAX_FIELDS + 1][8];
  for (int i = 0; i <= JOURNAL_MAX_FIELDS; i++)
    {
      snprintf (names[i], sizeof names[i], "f%d", i);
      many[i] = (struct journal_field) JOURNAL_INT64 (names[i], i);
    }
  fact_refused (j, JOURNAL_START, many, JOURNAL_MAX_FIELDS + 1,
                "17 fields (at most 16)");

  /* Nothing was written; the next fact is seq 1, and the maximum passes.  */
  struct stat st;
  assert_int_equal (stat (journal_path (j), &st), 0);
  assert_int_equal (st.st_size, 0);
  fact_ok (j, JOURNAL_START, 1, NULL, many, JOURNAL_MAX_FIELDS);
  yajl_val v[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, NULL), 1);
  assert_int_equal (get_int (v[0], "seq"), 1);
  assert_int_equal (get_int (v[0], "f15"), 15);
  assert_int_equal (v[0]->u.object.len, 5 + JOURNAL_MAX_FIELDS);
  free_facts (v, NULL, 1);
  journal_close (j);
}

static void
test_usage (void **state)
{
  struct journal *j = open_ok (*state);
  struct journal_usage u = { 12, 3, 4096, 1 << 20, 99 };
  struct cr_error *err = NULL;
  assert_int_equal (journal_usage (j, 5, "c1", &u, &err), 0);
  assert_null (err);
  yajl_val v[2] = { NULL };
  assert_int_equal (read_facts (j, v, 2, NULL), 1);
  assert_string_equal (get_str (v[0], "fact"), "usage");
  assert_int_equal (get_int (v[0], "cpu_user_ms"), 12);
  assert_int_equal (get_int (v[0], "cpu_system_ms"), 3);
  assert_int_equal (get_int (v[0], "max_rss_kib"), 4096);
  assert_int_equal (get_int (v[0], "bytes"), 1 << 20);
  assert_int_equal (get_int (v[0], "lines"), 99);
  free_facts (v, NULL, 1);
  journal_close (j);
}

static void
assert_mode (const char *path, mode_t want, bool dir)
{
  struct stat st;
  assert_int_equal (lstat (path, &st), 0);
  assert_int_equal (S_ISDIR (st.st_mode), dir);
  assert_int_equal (st.st_mode & 07777, want);
}

static void
test_xdg_state_home (void **state)
{
  const char *tmp = *state;
  char *xdg = xasprintf ("%s/x/y", tmp);
  setenv ("XDG_STATE_HOME", xdg, 1);
  setenv ("HOME", "/nonexistent-home", 1);
  struct journal *j = open_ok (NULL);
  char *want = xasprintf ("%s/crucible/%s.jsonl", xdg, journal_session (j));
  assert_string_equal (journal_path (j), want);
  /* Every missing component is made 0700; the file is 0600.  */
  char *x = xasprintf ("%s/x", tmp), *dir = xasprintf ("%s/crucible", xdg);
  assert_mode (x, 0700, true);
  assert_mode (xdg, 0700, true);
  assert_mode (dir, 0700, true);
  assert_mode (want, 0600, false);
  journal_close (j);
  free (x);
  free (dir);
  free (want);
  free (xdg);
  unsetenv ("XDG_STATE_HOME");
}

static void
test_home_fallback (void **state)
{
  const char *tmp = *state;
  char *home = xasprintf ("%s/home", tmp);
  assert_int_equal (mkdir (home, 0755), 0);
  setenv ("HOME", home, 1);
  /* A relative XDG_STATE_HOME is ignored, as the XDG rules say.  */
  setenv ("XDG_STATE_HOME", "relative/state", 1);
  struct journal *j = open_ok (NULL);
  char *want = xasprintf ("%s/.local/state/crucible/%s.jsonl", home,
                          journal_session (j));
  assert_string_equal (journal_path (j), want);
  char *local = xasprintf ("%s/.local", home);
  char *st = xasprintf ("%s/.local/state", home);
  char *dir = xasprintf ("%s/.local/state/crucible", home);
  assert_mode (local, 0700, true);
  assert_mode (st, 0700, true);
  assert_mode (dir, 0700, true);
  assert_mode (want, 0600, false);
  /* An existing component keeps its own mode.  */
  assert_mode (home, 0755, true);
  fact_ok (j, JOURNAL_SESSION_START, 0, NULL, NULL, 0);
  journal_close (j);

  /* A second session gets its own file beside the first.  */
  j = open_ok (NULL);
  char *other = xasprintf ("%s/%s.jsonl", dir, journal_session (j));
  assert_string_not_equal (other, want);
  assert_mode (other, 0600, false);
  journal_close (j);

  free (other);
  free (local);
  free (st);
  free (dir);
  free (want);
  free (home);
  unsetenv ("XDG_STATE_HOME");
}

static void
test_home_not_absolute (void **state)
{
  unsetenv ("XDG_STATE_HOME");
  setenv ("HOME", "relative/home", 1);
  open_fails (NULL, "HOME 'relative/home' is not an absolute path");
  setenv ("HOME", "", 1);
  open_fails (NULL, "neither XDG_STATE_HOME nor HOME is set");
  unsetenv ("HOME");
  open_fails (NULL, "neither XDG_STATE_HOME nor HOME is set");
  open_fails ("relative/dir", "is not an absolute path");
}

static void
test_symlink_refused (void **state)
{
  const char *tmp = *state;
  char *target = xasprintf ("%s/target", tmp);
  char *link = xasprintf ("%s/crucible", tmp);
  assert_int_equal (mkdir (target, 0700), 0);
  assert_int_equal (symlink (target, link), 0);
  open_fails (link, "is a symbolic link; refusing it");
  /* Also with a trailing slash, which would make open() follow it.  */
  char *slash = xasprintf ("%s/", link);
  open_fails (slash, "is a symbolic link; refusing it");
  /* Nothing was written through it.  */
  char *cmd = xasprintf ("test -z \"$(ls -A '%s')\"", target);
  assert_int_equal (system (cmd), 0);

  /* A link to a directory earlier in the path is followed.  */
  char *via = xasprintf ("%s/crucible/sub", tmp);
  struct journal *j = open_ok (via);
  journal_close (j);
  char *real = xasprintf ("%s/sub", target);
  assert_mode (real, 0700, true);

  free (real);
  free (via);
  free (cmd);
  free (slash);
  free (link);
  free (target);
}

static void
test_bad_directories (void **state)
{
  const char *tmp = *state;
  char *file = xasprintf ("%s/file", tmp);
  int fd = open (file, O_CREAT | O_WRONLY, 0600);
  assert_true (fd >= 0);
  close (fd);
  open_fails (file, "is not a directory");
  char *under = xasprintf ("%s/file/sub", tmp);
  open_fails (under, "Not a directory");

  char *open_dir = xasprintf ("%s/shared", tmp);
  assert_int_equal (mkdir (open_dir, 0700), 0);
  assert_int_equal (chmod (open_dir, 0777), 0);
  open_fails (open_dir, "is writable by others (mode 0777); refusing it");
  assert_int_equal (chmod (open_dir, 0720), 0);
  open_fails (open_dir, "is writable by others (mode 0720)");
  /* Readable by others is not a refusal: the content is not secret.  */
  assert_int_equal (chmod (open_dir, 0755), 0);
  journal_close (open_ok (open_dir));

  free (open_dir);
  free (under);
  free (file);
}

static void
test_not_owned_refused (void **state)
{
  const char *tmp = *state;
  char *dir = xasprintf ("%s/theirs", tmp);
  assert_int_equal (mkdir (dir, 0700), 0);
  if (geteuid () == 0)
    assert_int_equal (chown (dir, 65534, 65534), 0);
  else
    {
      /* An ordinary user cannot give a directory away; "/" is root's.  */
      free (dir);
      dir = xstrdup ("/");
    }
  open_fails (dir, "not by you");
  free (dir);
}

static void
test_exclusive (void **state)
{
  const char *id = "0123456789abcdef0123456789abcdef";
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (journal_open_session (&j, *state, id, &err), 0);
  assert_string_equal (journal_session (j), id);
  fact_ok (j, JOURNAL_SESSION_START, 0, NULL, NULL, 0);

  struct journal *again = NULL;
  assert_int_equal (journal_open_session (&again, *state, id, &err), -1);
  assert_null (again);
  assert_int_equal (err->code, EEXIST);
  assert_non_null (strstr (err->msg, "creating journal"));
  cr_error_clear (&err);
  journal_close (j);

  /* A planted link in place of the file is refused, not followed.  */
  const char *id2 = "ffffffffffffffffffffffffffffffff";
  char *victim = xasprintf ("%s/victim", (char *) *state);
  char *link = xasprintf ("%s/%s.jsonl", (char *) *state, id2);
  assert_int_equal (symlink (victim, link), 0);
  assert_int_equal (journal_open_session (&j, *state, id2, &err), -1);
  assert_non_null (err);
  cr_error_clear (&err);
  assert_int_equal (access (victim, F_OK), -1);

  const char *bad[] = { "0123", "0123456789ABCDEF0123456789ABCDEF",
                        "0123456789abcdef0123456789abcdeg",
                        "../../../../etc/passwd0123456789a" };
  for (size_t i = 0; i < 4; i++)
    {
      assert_int_equal (journal_open_session (&j, *state, bad[i], &err), -1);
      assert_non_null (strstr (err->msg, "is not 32 lowercase hex digits"));
      cr_error_clear (&err);
    }
  free (link);
  free (victim);
}

static void
test_sessions_differ (void **state)
{
  struct journal *a = open_ok (*state), *b = open_ok (*state);
  assert_string_not_equal (journal_session (a), journal_session (b));
  journal_close (a);
  journal_close (b);
  journal_close (NULL);
}

static void
test_write_failure (void **state)
{
  int fd = open ("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    skip ();
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (journal_open_fd (&j, fd, NULL, &err), 0);
  assert_null (journal_path (j));

  assert_int_equal (journal_fact (j, JOURNAL_START, 1, NULL, NULL, 0, &err),
                    -1);
  assert_non_null (err);
  assert_int_equal (err->code, ENOSPC);
  assert_string_equal (err->msg, "writing journal fact start (seq 1) to the "
                                 "journal: No space left on device");
  cr_error_clear (&err);
  assert_int_equal (journal_lost (j), 1);

  /* A caller recording its own failure keeps it: the journal's failure
   * neither replaces nor changes it.  */
  struct cr_error *original = NULL;
  cr_error_set (&original, EIO, "stopping command 4");
  struct cr_error *held = original;
  assert_int_equal (
      journal_fact (j, JOURNAL_STOP_FAILED, 4, NULL, NULL, 0, &original), -1);
  assert_ptr_equal (original, held);
  assert_string_equal (original->msg, "stopping command 4: Input/output error");
  cr_error_free (original);

  /* And with no error at all, only the return value says so.  */
  assert_int_equal (journal_fact (j, JOURNAL_STOP, 4, NULL, NULL, 0, NULL), -1);
  assert_int_equal (journal_lost (j), 3);
  journal_close (j);

  /* A refused descriptor journal still takes the descriptor.  */
  fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (journal_open_fd (&j, fd, "nothex", &err), -1);
  assert_null (j);
  cr_error_clear (&err);
  assert_int_equal (fcntl (fd, F_GETFD), -1);
  assert_int_equal (errno, EBADF);
}

static void
test_torn_write (void **state)
{
  /* RLIMIT_FSIZE makes the kernel take only part of a line, then refuse
   * the remainder (EFBIG): the retry happens, the failure is reported, and
   * the torn line does not spoil the next one.  */
  char *path = xasprintf ("%s/torn.jsonl", (char *) *state);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
  assert_true (fd >= 0);
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (journal_open_fd (&j, fd, NULL, &err), 0);
  fact_ok (j, JOURNAL_START, 1, NULL, NULL, 0);
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);

  struct rlimit old, small;
  assert_int_equal (getrlimit (RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = (rlim_t) st.st_size + 20;
  void (*was) (int) = signal (SIGXFSZ, SIG_IGN);
  assert_int_equal (setrlimit (RLIMIT_FSIZE, &small), 0);
  int ret = journal_fact (j, JOURNAL_FINISH, 1, NULL, NULL, 0, &err);
  assert_int_equal (setrlimit (RLIMIT_FSIZE, &old), 0);
  signal (SIGXFSZ, was);
  assert_int_equal (ret, -1);
  assert_int_equal (err->code, EFBIG);
  cr_error_clear (&err);
  assert_int_equal (journal_lost (j), 1);

  fact_ok (j, JOURNAL_CLEANUP, 1, NULL, NULL, 0);
  journal_close (j);

  char *data = slurp (path, NULL);
  char *lines[8] = { NULL };
  assert_int_equal (split_lines (data, lines, 8), 3);
  yajl_val a = parse (lines[0]);
  assert_int_equal (lines[1] != NULL ? strlen (lines[1]) : 0, 20);
  assert_null (yajl_tree_parse (lines[1], NULL, 0));
  yajl_val c = parse (lines[2]);
  assert_int_equal (get_int (a, "seq"), 1);
  assert_int_equal (get_int (c, "seq"), 3); /* seq 2 is the lost one */
  assert_string_equal (get_str (c, "fact"), "cleanup");
  yajl_tree_free (a);
  yajl_tree_free (c);
  free (data);
  free (path);
}

/* The name of old file i: its first two digits are i's last two hex
 * digits, the lower first, so the first two digits run through every
 * pair; then i in hex, so no two are alike.  The caller frees it.  */
static char *
old_file_name (unsigned i)
{
  return xasprintf ("%x%x%030x.jsonl", i % 16, (i / 16) % 16, i);
}

/* Make n ended sessions' files in dir (old_file_name), last written 40
 * days ago.  */
static void
make_old_files (const char *dir, unsigned n)
{
  time_t then = time (NULL) - (time_t) 40 * 86400;
  struct timespec old[2] = { { .tv_sec = then }, { .tv_sec = then } };
  for (unsigned i = 0; i < n; i++)
    {
      char *name = old_file_name (i);
      char *path = xasprintf ("%s/%s", dir, name);
      int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      assert_true (fd >= 0);
      assert_int_equal (futimens (fd, old), 0);
      close (fd);
      free (path);
      free (name);
    }
}

/* Whether dir still holds the file named name.  */
static bool
file_left (const char *dir, const char *name)
{
  char *path = xasprintf ("%s/%s", dir, name);
  bool left = access (path, F_OK) == 0;
  free (path);
  return left;
}

/* Retention at one start of session id in dir over n old files: exactly
 * those whose name begins with the id's first `digits` digits go.  */
static void
retain_share (const char *dir, unsigned n, const char *id, size_t digits)
{
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  uint64_t removed = 0, expected = 0;
  make_old_files (dir, n);
  assert_int_equal (journal_open_session (&j, dir, id, &err), 0);
  assert_int_equal (journal_retain (j, 30, &removed, &err), 0);
  for (unsigned i = 0; i < n; i++)
    {
      char *name = old_file_name (i);
      bool chosen = strncmp (name, id, digits) == 0;
      expected += chosen;
      if (file_left (dir, name) == chosen)
        fail_msg ("%u old files, %zu digits: %s %s", n, digits, name,
                  chosen ? "was kept" : "was removed");
      free (name);
    }
  assert_int_equal (removed, expected);
  journal_close (j);
}

/* A start looks at every old file while there are at most 64, then at
 * the share whose names begin with its id's first digit, then its first
 * two (doc/journal.md, "Retention"); the listing keeps only the names
 * that can still be chosen as the count grows, and must choose the same.  */
static void
test_retention_share (void **state)
{
  const char *id = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";
  const unsigned files[] = { 64, 300, 1100 };
  const size_t digits[] = { 0, 1, 2 };
  for (size_t k = 0; k < 3; k++)
    {
      char *dir = xasprintf ("%s/%zu", (char *) *state, k);
      assert_int_equal (mkdir (dir, 0700), 0);
      retain_share (dir, files[k], id, digits[k]);
      free (dir);
    }
}

int
main (void)
{
#define T(f) cmocka_unit_test_setup_teardown (f, setup_tmp, teardown_tmp)
  const struct CMUnitTest tests[] = {
    T (test_line_shape),
    T (test_seq_increments),
    T (test_every_fact_name),
    T (test_escaping),
    T (test_invalid_utf8_replaced),
    T (test_string_cut),
    T (test_line_bound),
    T (test_refusals),
    T (test_usage),
    T (test_xdg_state_home),
    T (test_home_fallback),
    T (test_home_not_absolute),
    T (test_symlink_refused),
    T (test_bad_directories),
    T (test_not_owned_refused),
    T (test_exclusive),
    T (test_sessions_differ),
    T (test_write_failure),
    T (test_torn_write),
    T (test_retention_share),
  };
#undef T
  return cmocka_run_group_tests (tests, NULL, NULL);
}
