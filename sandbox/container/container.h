/* The container backend's entry points while it runs no commands: the
 * inspection of its engine (`crucible sandbox inspect` with
 * sandbox.backend "container") and `crucible sandbox image build`.  Both
 * find the engine as a command's preparation would (engine_discover), and
 * load libcurl only then.  doc/container-backend.md describes them.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_CONTAINER_H
#define CRUCIBLE_SANDBOX_CONTAINER_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/* The backend's id in sandbox.backend.  */
#define CONTAINER_BACKEND_ID "container"

/* The image a command runs when sandbox.container.image is not set.  */
#define CONTAINER_DEFAULT_IMAGE "crucible-sandbox:latest"

/* Why the engine answers and no command can run (doc/strings.md).  */
#define CONTAINER_NO_IMAGE                                                     \
  "the image is not on the engine; `crucible sandbox image build` makes it"

/* What the backend reads of the configuration.  */
struct container_config
{
  const char *engine; /* sandbox.container.engine, or NULL */
  const char *image;  /* sandbox.container.image, or NULL: the default */
  unsigned long cpu_seconds;
  unsigned long open_files;
  /* For commands (sandbox/container/backend.c): the unreadable patterns
   * left out of the workspace, and where the state directory is (NULL:
   * STATEDIR_PARENT).  Borrowed.  */
  const char *const *unreadable;
  size_t n_unreadable;
  const char *state_parent;
};

/* The inspection's input beyond the configuration.  */
struct container_inspect_input
{
  const char *workspace;
  const char *mode; /* the inspection report's mode line */
  bool enabled;
  bool json;
  /* Called once before the engine is asked, so that the person is told
   * (the caller prints "Asking the engine…").  */
  void (*asking) (void *data);
  void *data;
};

/* Ask the engine (/_ping, /version, /info, the image) without creating
 * anything and make the report: text or one line of JSON, owned by the
 * caller.  An engine that cannot be found or reached is a report saying
 * unavailable with the reason, not an error.  */
char *container_inspect (const struct container_config *cfg,
                         const struct container_inspect_input *in);

/* `crucible sandbox image build`: make cfg's image on the engine from
 * busybox_path (the host's busybox-static; from is NULL) or by layering
 * what crucible needs onto the local image from.  *image_id gets the new
 * image's ID (owned).  progress, when not NULL, is told each step.  */
int container_image_build (const struct container_config *cfg, const char *from,
                           const char *busybox_path,
                           void (*progress) (void *data, const char *step),
                           void *data, char **image_id, struct cr_error **err);

#endif
