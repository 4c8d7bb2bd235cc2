/* Unit tests for tui/prompt.c: editing and the history file.  */
#include <config.h>

#include <locale.h>
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

#include "tui/prompt.h"

/* Type text into p.  */
static void
type (struct prompt *p, const char *text)
{
  prompt_insert (p, text, strlen (text));
}

/* The editing keys, over characters of several bytes.  */
static void
test_editing (void **state)
{
  struct prompt p;
  prompt_init (&p, NULL);
  type (&p, "h\xc3\xa9llo big world");
  prompt_edit (&p, PROMPT_KILL_WORD);
  assert_string_equal (p.text.data, "h\xc3\xa9llo big ");
  prompt_edit (&p, PROMPT_HOME);
  prompt_edit (&p, PROMPT_RIGHT);
  prompt_edit (&p, PROMPT_RIGHT);
  type (&p, "X");
  assert_string_equal (p.text.data, "h\xc3\xa9Xllo big ");
  prompt_edit (&p, PROMPT_BACKSPACE);
  prompt_edit (&p, PROMPT_BACKSPACE);
  assert_string_equal (p.text.data, "hllo big ");
  prompt_edit (&p, PROMPT_KILL_END);
  assert_string_equal (p.text.data, "h");
  prompt_edit (&p, PROMPT_END);
  type (&p, "ey");
  prompt_edit (&p, PROMPT_LEFT);
  prompt_edit (&p, PROMPT_KILL_HOME);
  assert_string_equal (p.text.data, "y");
  prompt_edit (&p, PROMPT_DELETE);
  assert_true (prompt_empty (&p));
  prompt_clear_all (&p);
}

/* History: browsing keeps the draft; the file keeps entries of several
 * lines whole, and is private.  */
static void
test_history (void **state)
{
  char dir[] = "/tmp/crucible-prompt-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char file[64];
  snprintf (file, sizeof file, "%s/sub/history", dir);
  struct prompt p;
  prompt_init (&p, file);
  type (&p, "one");
  free (prompt_take (&p));
  type (&p, "two\nlines \\ here");
  free (prompt_take (&p));
  type (&p, "draft");
  prompt_edit (&p, PROMPT_HISTORY_UP);
  assert_string_equal (p.text.data, "two\nlines \\ here");
  prompt_edit (&p, PROMPT_HISTORY_UP);
  assert_string_equal (p.text.data, "one");
  prompt_edit (&p, PROMPT_HISTORY_DOWN);
  prompt_edit (&p, PROMPT_HISTORY_DOWN);
  assert_string_equal (p.text.data, "draft");
  prompt_clear_all (&p);

  struct stat st;
  assert_int_equal (stat (file, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  prompt_init (&p, file);
  assert_int_equal (p.n_history, 2);
  assert_string_equal (p.history[1], "two\nlines \\ here");
  prompt_clear_all (&p);
  unlink (file);
  char sub[64];
  snprintf (sub, sizeof sub, "%s/sub", dir);
  rmdir (sub);
  rmdir (dir);
}

int
main (void)
{
  setlocale (LC_ALL, "C.UTF-8");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_editing),
    cmocka_unit_test (test_history),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
