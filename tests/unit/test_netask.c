/* Tests for tui/netask.c, the network question: what it says, and which
 * answer each key gives.  The screen's line helpers are stood in for here,
 * so the panel is tested without a terminal.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/loop.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "tui/netask.h"
#include "tui/screen.h"

/* The screen's helpers the panel uses.  */
void
screen_lines_add (struct screen_lines *l, enum theme_role role, const char *fmt,
                  ...)
{
  va_list ap;
  va_start (ap, fmt);
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n].role = role;
  if (vasprintf (&l->v[l->n].text, fmt, ap) < 0)
    abort ();
  l->n++;
  va_end (ap);
}

char *
screen_rule (int cols)
{
  return xasprintf ("rule %d", cols);
}

/* The host: one question, the answers given, dirty marks.  */
struct fake
{
  struct netask_question q;
  bool open;
  int answers;
  enum netask_answer last;
  int dirty;
};

static void
fake_dirty (void *data)
{
  ((struct fake *) data)->dirty++;
}

static const struct netask_question *
fake_question (void *data)
{
  struct fake *f = data;
  return f->open ? &f->q : NULL;
}

static void
fake_answer (void *data, enum netask_answer a)
{
  struct fake *f = data;
  f->answers++;
  f->last = a;
  f->open = false;
}

/* A panel over f.  */
static struct panel
open_panel (struct fake *f, struct panel_host *h, struct netask_host *a)
{
  *h = (struct panel_host){ .dirty = fake_dirty, .data = f };
  *a = (struct netask_host){ .question = fake_question,
                             .answer = fake_answer,
                             .data = f };
  *f = (struct fake){
    .q = { .name = "pypi.org",
           .label = "Bash(pip download x)",
           .deadline_ms = clock_now_ms () + 59500 },
    .open = true,
  };
  return netask_panel_new (h, a);
}

/* Free lines drawn by the stand-in.  */
static void
lines_free (struct screen_lines *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->v[i].text);
  free (l->v);
  l->v = NULL;
  l->n = 0;
}

/* What it says: the name, the command, the wait, the three choices. */
static void
test_draw (void **state)
{
  struct fake f;
  struct panel_host h;
  struct netask_host a;
  struct panel p = open_panel (&f, &h, &a);
  struct screen_lines l = { 0 };
  p.ops->draw (p.state, 80, &l);
  const char *want[] = {
    "rule 80",
    "A command wants to reach pypi.org, which is not allowed",
    "  Bash(pip download x)",
    "  its connection waits; refused in 60 s without an answer",
    "",
    "\xe2\x80\xba 1. Allow pypi.org for this command",
    "  2. Allow pypi.org always in this workspace",
    "  3. Refuse",
    "enter chooses \xc2\xb7 esc refuses",
  };
  assert_int_equal (l.n, sizeof want / sizeof *want);
  for (size_t i = 0; i < l.n; i++)
    assert_string_equal (l.v[i].text, want[i]);
  assert_int_equal (l.v[5].role, THEME_ACCENT);
  assert_true (p.ops->ticks);
  lines_free (&l);
  /* Gone: nothing drawn, keys do nothing.  */
  f.open = false;
  p.ops->draw (p.state, 80, &l);
  assert_int_equal (l.n, 0);
  TermKeyKey k = { .type = TERMKEY_TYPE_UNICODE, .code.codepoint = '1' };
  p.ops->key (p.state, NULL, &k);
  assert_int_equal (f.answers, 0);
  p.ops->free (p.state);
}

/* Press one key on a fresh panel; the answer it gave, or -1.  */
static int
press (TermKeyType type, int code, int then_enter)
{
  struct fake f;
  struct panel_host h;
  struct netask_host a;
  struct panel p = open_panel (&f, &h, &a);
  TermKeyKey k = { .type = type };
  if (type == TERMKEY_TYPE_KEYSYM)
    k.code.sym = code;
  else
    k.code.codepoint = code;
  p.ops->key (p.state, NULL, &k);
  if (then_enter && f.answers == 0)
    {
      TermKeyKey e
          = { .type = TERMKEY_TYPE_KEYSYM, .code.sym = TERMKEY_SYM_ENTER };
      p.ops->key (p.state, NULL, &e);
    }
  p.ops->free (p.state);
  assert_true (f.answers <= 1);
  return f.answers == 1 ? (int) f.last : -1;
}

/* Each key's answer: the numbers as shown, n and Esc refuse, Enter takes
 * the selection (first "this command"), arrows move it.  */
static void
test_keys (void **state)
{
  assert_int_equal (press (TERMKEY_TYPE_UNICODE, '1', 0), NETASK_COMMAND);
  assert_int_equal (press (TERMKEY_TYPE_UNICODE, '2', 0), NETASK_ALWAYS);
  assert_int_equal (press (TERMKEY_TYPE_UNICODE, '3', 0), NETASK_REFUSE);
  assert_int_equal (press (TERMKEY_TYPE_UNICODE, 'n', 0), NETASK_REFUSE);
  assert_int_equal (press (TERMKEY_TYPE_UNICODE, '4', 0), -1);
  assert_int_equal (press (TERMKEY_TYPE_KEYSYM, TERMKEY_SYM_ESCAPE, 0),
                    NETASK_REFUSE);
  assert_int_equal (press (TERMKEY_TYPE_KEYSYM, TERMKEY_SYM_ENTER, 0),
                    NETASK_COMMAND);
  assert_int_equal (press (TERMKEY_TYPE_KEYSYM, TERMKEY_SYM_DOWN, 1),
                    NETASK_ALWAYS);
  assert_int_equal (press (TERMKEY_TYPE_KEYSYM, TERMKEY_SYM_UP, 1),
                    NETASK_COMMAND);
  /* Down past the last stays on it.  */
  struct fake f;
  struct panel_host h;
  struct netask_host a;
  struct panel p = open_panel (&f, &h, &a);
  TermKeyKey d = { .type = TERMKEY_TYPE_KEYSYM, .code.sym = TERMKEY_SYM_DOWN };
  for (int i = 0; i < 5; i++)
    p.ops->key (p.state, NULL, &d);
  assert_int_equal (f.dirty, 5);
  TermKeyKey e = { .type = TERMKEY_TYPE_KEYSYM, .code.sym = TERMKEY_SYM_ENTER };
  p.ops->key (p.state, NULL, &e);
  assert_int_equal (f.last, NETASK_REFUSE);
  p.ops->free (p.state);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_draw),
    cmocka_unit_test (test_keys),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
