/* The container backend: each command in a container of its own, made
 * through the Docker Engine API (dockerd or Podman's compatible service,
 * local or remote) with every hardening item of the spec asked for, read
 * back from the engine's own description of the container, and checked
 * from inside through the job runner's 'R' facts before the command runs.
 * The job goes in on the attached stdin and the answer comes out on its
 * stdout (sandbox/container/jobproto.h); nothing is staged on the host.
 *
 * Each started session has a thread of its own, because libcurl's calls
 * block: it makes the container, attaches, starts it, feeds the job,
 * relays the command's output to the session's output pipe and reports
 * events on a pipe the supervisor polls, as every backend's status
 * descriptor.  The container ends itself when its input closes (the
 * dead-man switch): a SIGKILLed crucible closes the connection, the
 * runner kills the command, and the engine removes the container (made
 * with AutoRemove).  doc/container-backend.md describes it.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_BACKEND_H
#define CRUCIBLE_SANDBOX_CONTAINER_BACKEND_H

#include "sandbox/backend.h"
#include "sandbox/container/container.h"

/* The labels every container crucible makes carries: that crucible made
 * it, the sandbox ID, and its maker (boot ID, pid, start time), by which
 * a later preparation tells a container whose maker is provably gone.  */
#define CONTAINER_LABEL_MADE "org.crucible.made-by"
#define CONTAINER_LABEL_SESSION "org.crucible.sandbox"
#define CONTAINER_LABEL_MAKER "org.crucible.maker"

/* The backend for cfg; nothing is asked of the engine until it is
 * probed or prepared.  */
struct sandbox_backend *
container_backend_new (const struct container_config *cfg);

/* Whether b is the container backend and its last try to reach its
 * engine failed (not: the engine answered without the image).  */
bool container_backend_unreachable (const struct sandbox_backend *b);

#endif
