/* The monotonic clock in milliseconds.  */
#include <config.h>

#include "lib/clock.h"

#include <time.h>

uint64_t
clock_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}
