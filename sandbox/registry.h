/* The backend registry: every sandbox backend this build knows, by id,
 * with how it is made from the resolved configuration, what inspection
 * reports about it without starting it, and what the /sandbox panel's
 * Dependencies tab shows for it.  Every front end gets its backend here
 * (sandbox_registry_backend_new), so a command, the audit, inspection,
 * `sandbox enable` and the panel all see the same one.  A new backend is
 * one more row of the table in sandbox/registry.c.  */
#ifndef CRUCIBLE_SANDBOX_REGISTRY_H
#define CRUCIBLE_SANDBOX_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/backend.h"
#include "sandbox/inspect.h"

/* The platform's own backend: what an absent sandbox.backend means.  */
#ifdef __linux__
#define SANDBOX_REGISTRY_DEFAULT "linux-bubblewrap"
#else
#define SANDBOX_REGISTRY_DEFAULT "compat"
#endif

/* The id of the backend that confines nothing, run while confinement is
 * disabled.  */
#define SANDBOX_REGISTRY_COMPAT "compat"

/* Why sandbox.backend "compat" cannot serve while confinement is enabled
 * (doc/strings.md): it is never a silent downgrade.  */
#define SANDBOX_REGISTRY_COMPAT_CONFINES_NOTHING                               \
  "sandbox.backend is \"compat\", and the compatibility backend confines "     \
  "nothing"

/* What a backend is made from: the resolved configuration's part that
 * backends read (core/config.c fills it: config_backend_input).  The
 * lists are borrowed; each backend copies what it keeps.  */
struct sandbox_backend_config
{
  const char *backend; /* sandbox.backend, or NULL: the platform's own */
  bool enabled;        /* sandbox.enabled */
  unsigned long cpu_seconds;
  unsigned long open_files;
  const char *const *unreadable; /* sandbox.filesystem.unreadable */
  size_t n_unreadable;
  const char *const *unix_sockets; /* sandbox.network.allowUnixSockets */
  size_t n_unix_sockets;
  const char *container_engine; /* sandbox.container.engine, or NULL */
  const char *container_image;  /* sandbox.container.image, or NULL */
};

/* One line of a Dependencies tab.  */
enum sandbox_dep_state
{
  SANDBOX_DEP_MET,     /* ✓: found, with what was found */
  SANDBOX_DEP_MISSING, /* ✗: not found, with why */
  SANDBOX_DEP_NOTE     /* read, not a finding of its own */
};

typedef void (*sandbox_dep_fn) (void *data, enum sandbox_dep_state state,
                                const char *name, const char *detail);

struct sandbox_registry_entry
{
  const char *id;
  bool confines; /* whether it can enforce a confined policy */
  /* The backend for cfg; nothing is started.  */
  struct sandbox_backend *(*make) (const struct sandbox_backend_config *cfg);
  /* What inspection reports, starting nothing (info is cleared first).  */
  void (*info) (struct inspect_backend_info *info);
  /* The Dependencies tab's lines, each given to dep; starts nothing.  */
  void (*dependencies) (sandbox_dep_fn dep, void *data);
  /* How strongly a run through it is contained, the word every run's
   * lifecycle facts and the inspection carry: "namespaces" (bwrap),
   * "container", "process" (compat).  */
  const char *isolation;
  /* info, for a backend whose view depends on the configuration (the
   * container backend's engine and image); NULL: info is used.  */
  void (*info_for) (const struct sandbox_backend_config *cfg,
                    struct inspect_backend_info *info);
};

/* The entry named id, or NULL when this build knows none by that name.  */
const struct sandbox_registry_entry *sandbox_registry_find (const char *id);

/* The isolation word of the backend named id (the entry's isolation),
 * or "process" for a backend this build does not know.  */
const char *sandbox_registry_isolation (const char *id);

/* The known ids, in the table's order, as "a, b" (static).  */
const char *sandbox_registry_known (void);

/* The entry a configuration selects for confined commands: sandbox.backend,
 * or the platform's own when absent.  NULL for an unknown name (which the
 * configuration refuses on loading).  */
const struct sandbox_registry_entry *
sandbox_registry_selected (const struct sandbox_backend_config *cfg);

/* The one way a configuration becomes a backend: the backend named id (or,
 * when id is NULL, the configuration's choice: the compatibility backend
 * while confinement is disabled, the selected one while it is enabled),
 * made with cfg's settings.  NULL for an unknown id.  Nothing is
 * started.  */
struct sandbox_backend *
sandbox_registry_backend_new (const struct sandbox_backend_config *cfg,
                              const char *id);

#endif
