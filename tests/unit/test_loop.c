/* Unit tests for core/loop.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/loop.h"
#include "lib/clock.h"

struct record
{
  int calls[8];
  int n;
  uint64_t cancel_me;
  int fd_reads;
  int signals;
};

/* Record which timer fired, in order.  */
static void
timer_fired (struct loop *loop, void *data)
{
  int *slot = data;
  (*slot)++;
}

static void
timer_order (struct loop *loop, void *data)
{
  struct record *r = (struct record *) ((intptr_t *) data)[0];
  r->calls[r->n++] = (int) ((intptr_t *) data)[1];
}

static struct loop *
new_loop (void)
{
  struct cr_error *err = NULL;
  struct loop *loop = loop_new (&err);
  assert_non_null (loop);
  return loop;
}

/* Run the loop until cond points to a non-zero value, bounded.  */
static void
run_until (struct loop *loop, int *cond, int max_turns)
{
  struct cr_error *err = NULL;
  for (int i = 0; i < max_turns && *cond == 0; i++)
    assert_int_equal (loop_run_once (loop, 200, &err), 0);
}

static void
test_timers_fire_in_deadline_order (void **state)
{
  struct loop *loop = new_loop ();
  struct record r = { 0 };
  intptr_t a[2] = { (intptr_t) &r, 3 }, b[2] = { (intptr_t) &r, 1 },
           c[2] = { (intptr_t) &r, 2 };
  loop_add_timer (loop, 30, timer_order, a);
  loop_add_timer (loop, 10, timer_order, b);
  loop_add_timer (loop, 20, timer_order, c);
  uint64_t start = clock_now_ms ();
  struct cr_error *err = NULL;
  while (r.n < 3)
    assert_int_equal (loop_run_once (loop, 100, &err), 0);
  assert_true (clock_now_ms () - start >= 30);
  assert_int_equal (r.calls[0], 1);
  assert_int_equal (r.calls[1], 2);
  assert_int_equal (r.calls[2], 3);
  loop_free (loop);
}

static void
test_cancelled_timer_does_not_fire (void **state)
{
  struct loop *loop = new_loop ();
  int fired = 0, other = 0;
  uint64_t id = loop_add_timer (loop, 5, timer_fired, &fired);
  loop_add_timer (loop, 20, timer_fired, &other);
  loop_cancel_timer (loop, id);
  loop_cancel_timer (loop, 0);
  run_until (loop, &other, 20);
  assert_int_equal (fired, 0);
  assert_int_equal (other, 1);
  loop_free (loop);
}

static void
test_many_timers_heap (void **state)
{
  struct loop *loop = new_loop ();
  int count = 0;
  uint64_t ids[64];
  for (int i = 0; i < 64; i++)
    ids[i] = loop_add_timer (loop, (uint64_t) ((i * 37) % 64), timer_fired,
                             &count);
  for (int i = 0; i < 64; i += 2)
    loop_cancel_timer (loop, ids[i]);
  struct cr_error *err = NULL;
  uint64_t start = clock_now_ms ();
  while (clock_now_ms () - start < 120)
    assert_int_equal (loop_run_once (loop, 10, &err), 0);
  assert_int_equal (count, 32);
  loop_free (loop);
}

static void
fd_readable (struct loop *loop, int fd, short revents, void *data)
{
  struct record *r = data;
  char c;
  assert_true (revents & POLLIN);
  assert_int_equal (read (fd, &c, 1), 1);
  r->fd_reads++;
  /* Removing itself from its own callback is allowed.  */
  loop_remove_fd (loop, fd);
}

static void
test_fd_dispatch_and_self_removal (void **state)
{
  struct loop *loop = new_loop ();
  struct record r = { 0 };
  struct cr_error *err = NULL;
  int p[2];
  assert_int_equal (pipe (p), 0);
  assert_int_equal (loop_add_fd (loop, p[0], POLLIN, fd_readable, &r, &err), 0);
  assert_int_equal (loop_add_fd (loop, p[0], POLLIN, fd_readable, &r, &err),
                    -1);
  assert_int_equal (err->code, EEXIST);
  cr_error_clear (&err);
  assert_int_equal (write (p[1], "ab", 2), 2);
  run_until (loop, &r.fd_reads, 10);
  assert_int_equal (r.fd_reads, 1);
  /* Removed: the second byte is not read.  */
  assert_int_equal (loop_run_once (loop, 20, &err), 0);
  assert_int_equal (r.fd_reads, 1);
  close (p[0]);
  close (p[1]);
  loop_free (loop);
}

static void
test_paused_fd_is_not_dispatched (void **state)
{
  struct loop *loop = new_loop ();
  struct record r = { 0 };
  struct cr_error *err = NULL;
  int p[2];
  assert_int_equal (pipe (p), 0);
  assert_int_equal (loop_add_fd (loop, p[0], POLLIN, fd_readable, &r, &err), 0);
  loop_set_events (loop, p[0], 0);
  assert_int_equal (write (p[1], "a", 1), 1);
  assert_int_equal (loop_run_once (loop, 20, &err), 0);
  assert_int_equal (r.fd_reads, 0);
  loop_set_events (loop, p[0], POLLIN);
  run_until (loop, &r.fd_reads, 10);
  assert_int_equal (r.fd_reads, 1);
  close (p[0]);
  close (p[1]);
  loop_free (loop);
}

static void
got_signal (struct loop *loop, int signo, void *data)
{
  struct record *r = data;
  assert_int_equal (signo, SIGUSR1);
  r->signals++;
}

static void
test_signal_through_self_pipe (void **state)
{
  struct loop *loop = new_loop ();
  struct record r = { 0 };
  struct cr_error *err = NULL;
  assert_int_equal (loop_add_signal (loop, SIGUSR1, got_signal, &r, &err), 0);
  assert_int_equal (loop_add_signal (loop, 0, got_signal, &r, &err), -1);
  cr_error_clear (&err);
  kill (getpid (), SIGUSR1);
  run_until (loop, &r.signals, 10);
  assert_int_equal (r.signals, 1);
  loop_free (loop);
  /* Freed: the disposition is restored (SIG_DFL would end us; check).  */
  struct sigaction sa;
  sigaction (SIGUSR1, NULL, &sa);
  assert_true (sa.sa_handler == SIG_DFL);
}

static void
quit_now (struct loop *loop, void *data)
{
  loop_quit (loop);
}

static void
test_run_until_quit (void **state)
{
  struct loop *loop = new_loop ();
  struct cr_error *err = NULL;
  loop_add_timer (loop, 5, quit_now, NULL);
  assert_int_equal (loop_run (loop, &err), 0);
  loop_free (loop);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_timers_fire_in_deadline_order),
    cmocka_unit_test (test_cancelled_timer_does_not_fire),
    cmocka_unit_test (test_many_timers_heap),
    cmocka_unit_test (test_fd_dispatch_and_self_removal),
    cmocka_unit_test (test_paused_fd_is_not_dispatched),
    cmocka_unit_test (test_signal_through_self_pipe),
    cmocka_unit_test (test_run_until_quit),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
