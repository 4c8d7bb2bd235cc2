/* What the parts of the Linux backend (sandbox/bwrap*.c) share and nothing
 * else sees: bwrap.c holds the backend, its sessions and their events;
 * bwrap_locate.c finding and trusting bwrap and the broker;
 * bwrap_argv.c the argument vector and the workload's environment, which
 * the probe's own bwrap is built from as well.  */
#ifndef CRUCIBLE_SANDBOX_BWRAP_INT_H
#define CRUCIBLE_SANDBOX_BWRAP_INT_H

#include <stddef.h>

/* An argument vector being built, NULL-terminated all along.  */
struct bwrap_argv
{
  char **v;
  size_t n, cap;
};

/* Append copies of the NULL-terminated strings that follow a.  */
void bwrap_args (struct bwrap_argv *a, ...);

/* The namespaces and session options every bwrap is started with.  */
void bwrap_args_namespaces (struct bwrap_argv *a);

/* The read-only runtime every bwrap binds.  */
void bwrap_args_runtime (struct bwrap_argv *a);

#endif
