/* A poll(2) loop with a timer heap and self-pipe signals.  */
#include <config.h>

#include "core/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xalloc.h"

#define LOOP_MAX_SIGNAL 65

struct loop_watch
{
  int fd;
  short events;
  loop_fd_fn fn;
  void *data;
  bool removed; /* removed during a dispatch; swept afterwards */
};

struct loop_timer
{
  uint64_t deadline;
  uint64_t id;
  loop_timer_fn fn;
  void *data;
};

struct loop_signal
{
  loop_signal_fn fn;
  void *data;
  struct sigaction old;
};

struct loop
{
  struct loop_watch *watches;
  size_t n_watches, cap_watches;
  struct pollfd *pfds;
  size_t cap_pfds;

  struct loop_timer *heap; /* min-heap on deadline */
  size_t n_timers, cap_timers;
  uint64_t next_timer_id;

  int sig_pipe[2];
  struct loop_signal signals[LOOP_MAX_SIGNAL];
  bool quit;
};

/* The write end of the self-pipe, for the signal handler.  A handler cannot
 * be given an argument, so this is the one place the loop needs a global;
 * it is written once by loop_new and cleared by loop_free.  */
static volatile sig_atomic_t loop_sig_fd = -1;

/* Record a signal in the self-pipe; async-signal-safe.  */
static void
loop_signal_handler (int signo)
{
  int saved = errno;
  unsigned char byte = (unsigned char) signo;
  if (loop_sig_fd >= 0)
    {
      ssize_t n = write (loop_sig_fd, &byte, 1);
      (void) n; /* a full pipe already holds a wake-up */
    }
  errno = saved;
}

struct loop *
loop_new (struct cr_error **err)
{
  struct loop *loop = xcalloc (1, sizeof *loop);

  if (pipe2 (loop->sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      cr_error_set (err, errno, "making the event loop's signal pipe");
      free (loop);
      return NULL;
    }
  loop->next_timer_id = 1;
  loop_sig_fd = loop->sig_pipe[1];
  return loop;
}

void
loop_free (struct loop *loop)
{
  if (loop == NULL)
    return;
  for (int s = 1; s < LOOP_MAX_SIGNAL; s++)
    if (loop->signals[s].fn != NULL)
      sigaction (s, &loop->signals[s].old, NULL);
  loop_sig_fd = -1;
  close (loop->sig_pipe[0]);
  close (loop->sig_pipe[1]);
  free (loop->watches);
  free (loop->pfds);
  free (loop->heap);
  free (loop);
}

/* Find the live watch on fd, or NULL.  */
static struct loop_watch *
loop_find_watch (struct loop *loop, int fd)
{
  for (size_t i = 0; i < loop->n_watches; i++)
    if (loop->watches[i].fd == fd && !loop->watches[i].removed)
      return &loop->watches[i];
  return NULL;
}

int
loop_add_fd (struct loop *loop, int fd, short events, loop_fd_fn fn, void *data,
             struct cr_error **err)
{
  if (loop_find_watch (loop, fd) != NULL)
    return cr_error_set (err, EEXIST, "watching descriptor %d", fd);
  if (loop->n_watches == loop->cap_watches)
    {
      loop->cap_watches = loop->cap_watches ? loop->cap_watches * 2 : 8;
      loop->watches
          = xrealloc (loop->watches, loop->cap_watches * sizeof *loop->watches);
    }
  loop->watches[loop->n_watches++] = (struct loop_watch){
    .fd = fd, .events = events, .fn = fn, .data = data
  };
  return 0;
}

void
loop_set_events (struct loop *loop, int fd, short events)
{
  struct loop_watch *w = loop_find_watch (loop, fd);
  if (w != NULL)
    w->events = events;
}

void
loop_remove_fd (struct loop *loop, int fd)
{
  struct loop_watch *w = loop_find_watch (loop, fd);
  if (w != NULL)
    w->removed = true;
}

/* Drop the watches removed since the last sweep.  */
static void
loop_sweep_watches (struct loop *loop)
{
  size_t kept = 0;
  for (size_t i = 0; i < loop->n_watches; i++)
    if (!loop->watches[i].removed)
      loop->watches[kept++] = loop->watches[i];
  loop->n_watches = kept;
}

/* Swap two heap entries.  */
static void
loop_heap_swap (struct loop *loop, size_t a, size_t b)
{
  struct loop_timer t = loop->heap[a];
  loop->heap[a] = loop->heap[b];
  loop->heap[b] = t;
}

/* Restore the heap order upwards from i.  */
static void
loop_heap_up (struct loop *loop, size_t i)
{
  while (i > 0)
    {
      size_t parent = (i - 1) / 2;
      if (loop->heap[parent].deadline <= loop->heap[i].deadline)
        break;
      loop_heap_swap (loop, parent, i);
      i = parent;
    }
}

/* Restore the heap order downwards from i.  */
static void
loop_heap_down (struct loop *loop, size_t i)
{
  for (;;)
    {
      size_t least = i, l = 2 * i + 1, r = l + 1;
      if (l < loop->n_timers
          && loop->heap[l].deadline < loop->heap[least].deadline)
        least = l;
      if (r < loop->n_timers
          && loop->heap[r].deadline < loop->heap[least].deadline)
        least = r;
      if (least == i)
        return;
      loop_heap_swap (loop, least, i);
      i = least;
    }
}

/* Take the entry at i out of the heap.  */
static void
loop_heap_remove (struct loop *loop, size_t i)
{
  loop->n_timers--;
  if (i == loop->n_timers)
    return;
  loop->heap[i] = loop->heap[loop->n_timers];
  loop_heap_up (loop, i);
  loop_heap_down (loop, i);
}

uint64_t
loop_add_timer (struct loop *loop, uint64_t delay_ms, loop_timer_fn fn,
                void *data)
{
  if (loop->n_timers == loop->cap_timers)
    {
      loop->cap_timers = loop->cap_timers ? loop->cap_timers * 2 : 8;
      loop->heap = xrealloc (loop->heap, loop->cap_timers * sizeof *loop->heap);
    }
  uint64_t id = loop->next_timer_id++;
  loop->heap[loop->n_timers] = (struct loop_timer){
    .deadline = clock_now_ms () + delay_ms, .id = id, .fn = fn, .data = data
  };
  loop_heap_up (loop, loop->n_timers++);
  return id;
}

void
loop_cancel_timer (struct loop *loop, uint64_t id)
{
  if (id == 0)
    return;
  for (size_t i = 0; i < loop->n_timers; i++)
    if (loop->heap[i].id == id)
      {
        loop_heap_remove (loop, i);
        return;
      }
}

int
loop_add_signal (struct loop *loop, int signo, loop_signal_fn fn, void *data,
                 struct cr_error **err)
{
  struct sigaction sa;

  if (signo <= 0 || signo >= LOOP_MAX_SIGNAL)
    return cr_error_set (err, EINVAL, "catching signal %d", signo);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = loop_signal_handler;
  sigemptyset (&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction (signo, &sa, &loop->signals[signo].old) < 0)
    return cr_error_set (err, errno, "catching signal %d", signo);
  loop->signals[signo].fn = fn;
  loop->signals[signo].data = data;
  return 0;
}

/* Fire every timer whose deadline has passed.  */
static void
loop_fire_timers (struct loop *loop)
{
  uint64_t now = clock_now_ms ();
  while (loop->n_timers > 0 && loop->heap[0].deadline <= now)
    {
      struct loop_timer t = loop->heap[0];
      loop_heap_remove (loop, 0);
      t.fn (loop, t.data);
    }
}

/* Deliver the signals recorded in the self-pipe.  */
static void
loop_drain_signals (struct loop *loop)
{
  unsigned char sigs[64];
  ssize_t n;

  while ((n = read (loop->sig_pipe[0], sigs, sizeof sigs)) > 0)
    for (ssize_t i = 0; i < n; i++)
      {
        struct loop_signal *s = &loop->signals[sigs[i] % LOOP_MAX_SIGNAL];
        if (s->fn != NULL)
          s->fn (loop, sigs[i], s->data);
      }
}

/* How long poll may sleep: until the next timer, capped by max_wait_ms.  */
static int
loop_poll_timeout (struct loop *loop, int max_wait_ms)
{
  if (loop->n_timers == 0)
    return max_wait_ms;
  uint64_t now = clock_now_ms ();
  uint64_t due = loop->heap[0].deadline;
  int until
      = due <= now ? 0 : (due - now > 86400000u ? 86400000 : (int) (due - now));
  if (max_wait_ms < 0 || until < max_wait_ms)
    return until;
  return max_wait_ms;
}

/* Fill the pollfd array: the signal pipe first, then each watch.  */
static size_t
loop_fill_pollfds (struct loop *loop)
{
  size_t need = loop->n_watches + 1;
  if (need > loop->cap_pfds)
    {
      loop->cap_pfds = need * 2;
      loop->pfds = xrealloc (loop->pfds, loop->cap_pfds * sizeof *loop->pfds);
    }
  loop->pfds[0] = (struct pollfd){ .fd = loop->sig_pipe[0], .events = POLLIN };
  for (size_t i = 0; i < loop->n_watches; i++)
    loop->pfds[i + 1]
        = (struct pollfd){ .fd
                           = loop->watches[i].events ? loop->watches[i].fd : -1,
                           .events = loop->watches[i].events };
  return need;
}

int
loop_run_once (struct loop *loop, int max_wait_ms, struct cr_error **err)
{
  size_t n = loop_fill_pollfds (loop);
  int rc = poll (loop->pfds, n, loop_poll_timeout (loop, max_wait_ms));

  if (rc < 0 && errno != EINTR)
    return cr_error_set (err, errno, "waiting for events");
  if (rc > 0)
    {
      if (loop->pfds[0].revents)
        loop_drain_signals (loop);
      /* Watches added by a callback sit past n and wait for the next turn;
       * removed ones are skipped and swept afterwards.  */
      for (size_t i = 1; i < n; i++)
        {
          struct loop_watch w = loop->watches[i - 1];
          if (loop->pfds[i].revents && !w.removed && w.events)
            w.fn (loop, w.fd, loop->pfds[i].revents, w.data);
        }
    }
  loop_fire_timers (loop);
  loop_sweep_watches (loop);
  return 0;
}

int
loop_run (struct loop *loop, struct cr_error **err)
{
  loop->quit = false;
  while (!loop->quit)
    if (loop_run_once (loop, -1, err) < 0)
      return -1;
  return 0;
}

void
loop_quit (struct loop *loop)
{
  loop->quit = true;
}
