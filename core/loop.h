/* The event loop: descriptors through poll(2), a heap of timers on the
 * monotonic clock, and signals delivered through a self-pipe so that a
 * handler never runs crucible code.  One loop per process; everything that
 * waits (capture, the supervisor, the UI) registers here.  */
#ifndef CRUCIBLE_CORE_LOOP_H
#define CRUCIBLE_CORE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"

struct loop;

typedef void (*loop_fd_fn) (struct loop *loop, int fd, short revents,
                            void *data);
typedef void (*loop_timer_fn) (struct loop *loop, void *data);
typedef void (*loop_signal_fn) (struct loop *loop, int signo, void *data);

/* Make a loop.  Fails only if the self-pipe cannot be made.  */
struct loop *loop_new (struct cr_error **err);

/* Free a loop and restore the dispositions of the signals it caught.  The
 * descriptors it watched are the callers' to close.  */
void loop_free (struct loop *loop);

/* Watch fd for events (POLLIN, POLLOUT); fn is called with revents.  An fd
 * may be watched once; a second add fails with EEXIST.  */
int loop_add_fd (struct loop *loop, int fd, short events, loop_fd_fn fn,
                 void *data, struct cr_error **err);

/* Change the events watched on fd; 0 pauses it.  */
void loop_set_events (struct loop *loop, int fd, short events);

/* Stop watching fd.  Safe to call from any callback, including fd's own.  */
void loop_remove_fd (struct loop *loop, int fd);

/* Call fn once after delay_ms.  Returns a timer id (never 0).  */
uint64_t loop_add_timer (struct loop *loop, uint64_t delay_ms, loop_timer_fn fn,
                         void *data);

/* Cancel a timer that has not fired; an id that already fired or 0 is
 * ignored.  */
void loop_cancel_timer (struct loop *loop, uint64_t id);

/* Deliver signo to fn from the loop rather than from a handler.  One
 * callback per signal.  */
int loop_add_signal (struct loop *loop, int signo, loop_signal_fn fn,
                     void *data, struct cr_error **err);

/* Wait at most max_wait_ms (-1: until something happens) and dispatch what
 * is ready.  */
int loop_run_once (struct loop *loop, int max_wait_ms, struct cr_error **err);

/* Dispatch until loop_quit() is called.  */
int loop_run (struct loop *loop, struct cr_error **err);

/* Make loop_run() return after the current dispatch.  */
void loop_quit (struct loop *loop);

#endif
