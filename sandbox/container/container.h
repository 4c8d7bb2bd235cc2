/* The container backend's entry points beside running commands
 * (sandbox/container/backend.h): the inspection of its engine (`crucible
 * sandbox inspect` with sandbox.backend "container") and `crucible sandbox
 * image build`.  Both find the engine as a command's preparation would
 * (engine_discover), and load libcurl only then.  doc/container-backend.md
 * describes them.  */
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

/* --- appended by the runner part: the job runner in the image ------- */

/* Where `crucible sandbox image build` puts the job runner
 * (sandbox/container/runner/) in the image, with and without --from, and
 * the image label that holds its SHA-256, so that preparation can tell an
 * image made by another crucible build ("rebuild the image with `crucible
 * sandbox image build`").  */
#define CONTAINER_RUNNER_PATH "/usr/local/lib/crucible/crucible-job-runner"
#define CONTAINER_RUNNER_LABEL "org.crucible.runner.sha256"

/* The installed runner's path (owned): the pkglibexecdir beside the
 * running crucible's bin directory (../libexec/crucible/), the build
 * tree's (beside crucible itself), then the configured pkglibexecdir;
 * the first that exists.  */
int container_runner_locate (char **path, struct cr_error **err);

/* The runner this crucible bakes into images, checked to be a static
 * 64-bit ELF program: its bytes (when body is not NULL) and its SHA-256
 * as hex, which the image's CONTAINER_RUNNER_LABEL must hold.  */
struct buf;
int container_runner_read (struct buf *body, char *hex, struct cr_error **err);

#endif
