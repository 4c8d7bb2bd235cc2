/* The monotonic clock in milliseconds: deadlines, budgets and durations
 * (never wall-clock time, which can step).  */
#ifndef CRUCIBLE_LIB_CLOCK_H
#define CRUCIBLE_LIB_CLOCK_H

#include <stdint.h>

uint64_t clock_now_ms (void);

#endif
