/* The backend registry (sandbox/registry.h): one row per backend.  */
#include <config.h>

#include "sandbox/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "sandbox/bwrap.h"
#include "sandbox/compat.h"
#include "sandbox/container/backend.h"

/* How many trusted bwrap candidates the Dependencies tab lists at most.  */
#define REGISTRY_MAX_CANDIDATES 8

/* --- linux-bubblewrap ------------------------------------------------------
 */

/* The Linux backend with the configuration's limits, unreadable patterns
 * and socket grants: the same for a command, the audit and the panel.  */
static struct sandbox_backend *
registry_bwrap_make (const struct sandbox_backend_config *cfg)
{
  struct bwrap_options opt = {
    .cpu_seconds = cfg->cpu_seconds,
    .open_files = cfg->open_files,
    .processes = BWRAP_DEFAULT_PROCESSES,
    .unreadable = cfg->unreadable,
    .n_unreadable = cfg->n_unreadable,
    .unix_sockets = cfg->unix_sockets,
    .n_unix_sockets = cfg->n_unix_sockets,
  };
  return bwrap_backend_new (&opt);
}

/* Inspection's view: the first trusted bwrap and the trusted broker, found
 * by looking at files only.  Without either no command can run, so the
 * backend is reported not found, with each place looked.  */
static void
registry_bwrap_info (struct inspect_backend_info *info)
{
  struct bwrap_location loc = { .fd = -1 };
  struct cr_error *err = NULL;
  char *broker = NULL;
  int fd = -1;

  info->id = BWRAP_BACKEND_ID;
  info->provenance = "system";
  if (bwrap_locate (&loc, &err) < 0 || broker_locate (&broker, &fd, &err) < 0)
    {
      info->why_not_found = xstrdup (err->msg);
      cr_error_free (err);
      bwrap_location_clear (&loc);
      return;
    }
  free (broker);
  close (fd);
  struct sandbox_backend *b = bwrap_backend_new (NULL);
  sandbox_claims (b, &info->claims);
  sandbox_backend_free (b);
  info->build_digest = xasprintf ("sha256:%s", loc.sha256);
  info->found = true;
  bwrap_location_clear (&loc);
}

/* Whether this kernel lets a user namespace be made, and why not.  */
static bool
registry_userns (char **why)
{
  FILE *f = fopen ("/proc/sys/user/max_user_namespaces", "re");
  char text[32];
  char *end = NULL;
  long max = -1;
  bool read = f != NULL && fgets (text, sizeof text, f) != NULL;
  if (read)
    max = strtol (text, &end, 10);
  read = read && end != text;
  if (f != NULL)
    fclose (f);
  if (!read)
    *why = xstrdup (_ ("/proc/sys/user/max_user_namespaces cannot be read"));
  else if (max <= 0)
    *why = xstrdup (_ ("user.max_user_namespaces is 0"));
  else
    *why = xasprintf (_ ("up to %ld"), max);
  return read && max > 0;
}

/* Whether the kernel knows overlayfs.  */
static bool
registry_overlay (void)
{
  FILE *f = fopen ("/proc/filesystems", "re");
  char line[256];
  bool found = false;
  while (!found && f != NULL && fgets (line, sizeof line, f) != NULL)
    found = strstr (line, "\toverlay\n") != NULL;
  if (f != NULL)
    fclose (f);
  return found;
}

/* The parts of the Linux backend: every trusted bwrap in the order the
 * probe tries them (with none, each place looked and what turned it
 * down), the options the probe asks of each, the broker, user namespaces
 * and overlayfs.  */
static void
registry_bwrap_dependencies (sandbox_dep_fn dep, void *data)
{
  struct bwrap_location loc = { .fd = -1 };
  struct cr_error *err = NULL;
  int n = 0;
  for (; n < REGISTRY_MAX_CANDIDATES
         && bwrap_locate_nth (getenv ("PATH"), n, &loc, &err) == 0;
       n++)
    {
      cleanup_free char *found
          = xasprintf (_ ("%s (SHA-256 %.12s…)"), loc.path, loc.sha256);
      dep (data, SANDBOX_DEP_MET, "bubblewrap", found);
      bwrap_location_clear (&loc);
    }
  if (n == 0)
    dep (data, SANDBOX_DEP_MISSING, "bubblewrap", err->msg);
  cr_error_clear (&err);
  size_t n_opts;
  const char *const *opts = bwrap_probed_options (&n_opts);
  struct buf names = BUF_INIT;
  for (size_t i = 0; i < n_opts; i++)
    buf_printf (&names, "%s%s", i > 0 ? " " : "", opts[i]);
  dep (data, SANDBOX_DEP_NOTE, _ ("probed options"), names.data);
  buf_free (&names);
  char *broker = NULL;
  int fd = -1;
  if (broker_locate (&broker, &fd, &err) == 0)
    dep (data, SANDBOX_DEP_MET, _ ("broker"), broker);
  else
    dep (data, SANDBOX_DEP_MISSING, _ ("broker"), err->msg);
  cr_error_clear (&err);
  free (broker);
  if (fd >= 0)
    close (fd);
  cleanup_free char *why = NULL;
  bool userns = registry_userns (&why);
  dep (data, userns ? SANDBOX_DEP_MET : SANDBOX_DEP_MISSING,
       _ ("user namespaces"), why);
  bool overlay = registry_overlay ();
  dep (data, overlay ? SANDBOX_DEP_MET : SANDBOX_DEP_MISSING, _ ("overlay"),
       overlay ? _ ("in /proc/filesystems") : _ ("not in /proc/filesystems"));
}

/* --- compat -----------------------------------------------------------------
 */

/* The compatibility backend: nothing of the configuration changes it.  */
static struct sandbox_backend *
registry_compat_make (const struct sandbox_backend_config *cfg)
{
  (void) cfg;
  return compat_backend_new ();
}

/* Inspection's view of compat as the enforcing backend: there is none.  */
static void
registry_compat_info (struct inspect_backend_info *info)
{
  info->id = SANDBOX_REGISTRY_COMPAT;
  info->provenance = "built in";
  info->why_not_found = xstrdup (SANDBOX_REGISTRY_COMPAT_CONFINES_NOTHING);
}

/* compat needs nothing beyond crucible itself.  */
static void
registry_compat_dependencies (sandbox_dep_fn dep, void *data)
{
  dep (data, SANDBOX_DEP_NOTE, "compat", _ ("built in; confines nothing"));
}

/* --- container --------------------------------------------------------------
 */

/* The container backend with the configuration's engine, image, limits
 * and unreadable patterns; the engine is asked nothing until a probe or a
 * preparation.  */
static struct sandbox_backend *
registry_container_make (const struct sandbox_backend_config *cfg)
{
  struct container_config cc = {
    .engine = cfg->container_engine,
    .image = cfg->container_image,
    .cpu_seconds = cfg->cpu_seconds,
    .open_files = cfg->open_files,
    .unreadable = cfg->unreadable,
    .n_unreadable = cfg->n_unreadable,
  };
  return container_backend_new (&cc);
}

/* Inspection's view: the configured engine (or the one the environment
 * names) is asked what it holds, creating nothing.  Unreachable, or without the
 * image, it is not found, with why: its claims depend on what the engine says
 * it enforces.  */
static void
registry_container_info_for (const struct sandbox_backend_config *cfg,
                             struct inspect_backend_info *info)
{
  struct sandbox_backend *b = registry_container_make (cfg);
  struct sandbox_probe probe = { 0 };
  struct cr_error *err = NULL;
  info->id = CONTAINER_BACKEND_ID;
  info->provenance = "built in";
  if (sandbox_probe (b, &probe, &err) < 0 || !probe.usable)
    info->why_not_found = xstrdup (err != NULL            ? err->msg
                                   : probe.reason != NULL ? probe.reason
                                                          : "not usable");
  else
    {
      sandbox_claims (b, &info->claims);
      info->found = true;
    }
  cr_error_free (err);
  sandbox_probe_clear (&probe);
  sandbox_backend_free (b);
}

/* The same without a configuration: the engine the environment names.  */
static void
registry_container_info (struct inspect_backend_info *info)
{
  struct sandbox_backend_config cfg = { .backend = CONTAINER_BACKEND_ID };
  registry_container_info_for (&cfg, info);
}

/* The container backend needs libcurl (loaded when used) and an engine,
 * which only its inspection asks.  */
static void
registry_container_dependencies (sandbox_dep_fn dep, void *data)
{
  dep (data, SANDBOX_DEP_NOTE, _ ("engine"),
       _ ("asked by `crucible sandbox inspect`"));
}

/* --- the table --------------------------------------------------------------
 */

/* Every backend, the platform's own first.  */
static const struct sandbox_registry_entry registry_table[] = {
  { BWRAP_BACKEND_ID, true, registry_bwrap_make, registry_bwrap_info,
    registry_bwrap_dependencies, "namespaces", NULL },
  { SANDBOX_REGISTRY_COMPAT, false, registry_compat_make, registry_compat_info,
    registry_compat_dependencies, "process", NULL },
  { CONTAINER_BACKEND_ID, true, registry_container_make,
    registry_container_info, registry_container_dependencies, "container",
    registry_container_info_for },
};

#define REGISTRY_COUNT (sizeof registry_table / sizeof registry_table[0])

const struct sandbox_registry_entry *
sandbox_registry_find (const char *id)
{
  for (size_t i = 0; id != NULL && i < REGISTRY_COUNT; i++)
    if (strcmp (registry_table[i].id, id) == 0)
      return &registry_table[i];
  return NULL;
}

const char *
sandbox_registry_isolation (const char *id)
{
  const struct sandbox_registry_entry *e = sandbox_registry_find (id);
  return e != NULL ? e->isolation : "process";
}

const char *
sandbox_registry_known (void)
{
  static char known[256];
  if (known[0] == '\0')
    {
      size_t len = 0;
      for (size_t i = 0; i < REGISTRY_COUNT; i++)
        len += (size_t) snprintf (known + len, sizeof known - len, "%s%s",
                                  i > 0 ? ", " : "", registry_table[i].id);
    }
  return known;
}

const struct sandbox_registry_entry *
sandbox_registry_selected (const struct sandbox_backend_config *cfg)
{
  return sandbox_registry_find (
      cfg->backend != NULL ? cfg->backend : SANDBOX_REGISTRY_DEFAULT);
}

struct sandbox_backend *
sandbox_registry_backend_new (const struct sandbox_backend_config *cfg,
                              const char *id)
{
  const struct sandbox_registry_entry *e
      = id != NULL     ? sandbox_registry_find (id)
        : cfg->enabled ? sandbox_registry_selected (cfg)
                       : sandbox_registry_find (SANDBOX_REGISTRY_COMPAT);
  return e != NULL ? e->make (cfg) : NULL;
}
