/* The compatibility backend (spec, "Unconfined execution"): no boundary,
 * but the command still gets a cleared and rebuilt environment, /dev/null
 * for input, and a supervised process scope.  A forked scope keeper, a
 * child subreaper, owns the command's processes, so that a descendant that
 * leaves the process group is still found and ended, and the scope ends
 * when crucible does, however crucible leaves.  It does not restrict the
 * filesystem or the network and must not be described as a sandbox;
 * process_isolation is unsupported: a hostile process can escape the
 * keeper by double-forking past it before the keeper looks.  */
#ifndef CRUCIBLE_SANDBOX_COMPAT_H
#define CRUCIBLE_SANDBOX_COMPAT_H

#include "sandbox/backend.h"

/* The reason compatibility execution reports with confined: false.  */
#define COMPAT_DISABLED_REASON                                                 \
  "confinement is disabled (sandbox.enabled is false)"

struct sandbox_backend *compat_backend_new (void);

#endif
