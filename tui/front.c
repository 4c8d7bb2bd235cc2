/* What every front end does the same way.  */
#include <config.h>

#include "tui/front.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "sandbox/container/backend.h"
#include "sandbox/registry.h"

char *
front_workspace (struct cr_error **err)
{
  char *cwd = getcwd (NULL, 0);
  if (cwd == NULL)
    {
      cr_error_set (err, errno, _ ("finding the current directory"));
      return NULL;
    }
  if (access (cwd, R_OK | X_OK) < 0)
    {
      cr_error_set (err, errno, _ ("the current directory %s cannot be read"),
                    cwd);
      free (cwd);
      return NULL;
    }
  return cwd;
}

char *
front_workspace_dir (const char *dir, struct cr_error **err)
{
  char *path = realpath (dir != NULL ? dir : ".", NULL);
  if (path == NULL)
    {
      cr_error_set (err, errno, _ ("finding the directory %s"),
                    dir != NULL ? dir : ".");
      return NULL;
    }
  if (access (path, R_OK | X_OK) < 0)
    {
      cr_error_set (err, errno, _ ("the directory %s cannot be read"), path);
      free (path);
      return NULL;
    }
  return path;
}

int
front_session_operands (int argc, char **argv, int i, const char **dir,
                        const char *agent, struct cr_error **err)
{
  if (i < argc)
    *dir = argv[i++];
  if (i < argc)
    return cr_error_set (err, 0, _ ("one directory at most, not also '%s'"),
                         argv[i]);
  if (agent != NULL && *agent == '\0')
    return cr_error_set (err, 0, _ ("--agent needs a command"));
  return 0;
}

struct journal *
front_journal (void)
{
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  if (journal_open (&j, NULL, &err) < 0)
    {
      fprintf (stderr,
               _ ("crucible: this session's lifecycle facts are not "
                  "recorded: %s\n"),
               err->msg);
      cr_error_free (err);
      return NULL;
    }
  return j;
}

void
front_journal_retain (const struct config *cfg, const struct journal *j)
{
  struct cr_error *err = NULL;
  uint64_t removed;
  if (journal_retain (j, cfg->journal_keep_days, &removed, &err) < 0)
    {
      fprintf (stderr, _ ("crucible: journal.keepDays: %s\n"), err->msg);
      cr_error_free (err);
    }
}

/* The refusal while confinement is on and cannot be had.  */
static char *
front_no_backend (const char *why)
{
  return xasprintf ("confinement is enabled (sandbox.enabled), but the "
                    "sandbox backend cannot be used here: %s; commands are "
                    "never run unconfined while it is enabled",
                    why);
}

/* The words CRUCIBLE_ALLOW_PROCESS_ISOLATION must hold, exactly.  */
#define FRONT_ALLOW_PROCESS "CRUCIBLE_ALLOW_PROCESS_ISOLATION"

/* With the container backend selected and its engine unreachable, whether
 * commands may run as plain child processes instead: only when crucible's
 * environment holds CRUCIBLE_ALLOW_PROCESS_ISOLATION=true in exactly those
 * words and the home configuration enabled confinement (a project that
 * requires it is never downgraded).  Never silent: stderr says so here,
 * and every result and start fact says so after (core/supervisor.c).  */
static bool
front_process_isolation (const struct config *cfg, const char *why)
{
  const char *v = getenv (FRONT_ALLOW_PROCESS);
  if (v == NULL)
    return false;
  if (strcmp (v, "true") != 0)
    {
      fprintf (stderr, _ ("crucible: %s is \"%s\", not \"true\": ignored\n"),
               FRONT_ALLOW_PROCESS, v);
      return false;
    }
  if (cfg->sandbox_enabled_origin != CONFIG_HOME)
    {
      fprintf (stderr,
               _ ("crucible: %s=true is ignored: the project configuration "
                  "requires confinement\n"),
               FRONT_ALLOW_PROCESS);
      return false;
    }
  fprintf (stderr,
           _ ("crucible: warning: no container engine is reachable (%s); "
              "%s=true: commands run as plain child processes, not "
              "contained\n"),
           why, FRONT_ALLOW_PROCESS);
  return true;
}

struct sandbox_backend *
front_backend (const struct config *cfg, char **refusal)
{
  struct sandbox_backend_config bc;
  struct sandbox_probe probe = { 0 };
  struct cr_error *err = NULL;

  *refusal = NULL;
  config_backend_input (cfg, &bc);
  /* A backend that confines nothing never stands in for one that does:
   * enabled confinement with it refuses every command.  */
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  if (cfg->sandbox_enabled && e != NULL && !e->confines)
    {
      *refusal = front_no_backend (SANDBOX_REGISTRY_COMPAT_CONFINES_NOTHING);
      return NULL;
    }
  struct sandbox_backend *b = sandbox_registry_backend_new (&bc, NULL);
  if (!cfg->sandbox_enabled)
    return b;
  if (b == NULL)
    {
      *refusal = front_no_backend ("sandbox.backend names no known backend");
      return NULL;
    }
  /* The probe starts bwrap (bounded by a short timeout) to see that it can
   * make its namespaces: preparation answers that question before any
   * command does.  What the start confirms itself (a remembered answer's
   * whole key) is left to it, to run beside the preparation.  */
  if (sandbox_probe_starting (b, &probe, &err) < 0)
    *refusal = front_no_backend (err->msg);
  else if (!probe.usable || !probe.confined)
    *refusal = front_no_backend (probe.reason != NULL ? probe.reason
                                                      : "it is not usable");
  bool process = *refusal != NULL && container_backend_unreachable (b)
                 && front_process_isolation (cfg, probe.reason);
  cr_error_free (err);
  sandbox_probe_clear (&probe);
  if (*refusal == NULL)
    return b;
  sandbox_backend_free (b);
  if (process)
    {
      free (*refusal);
      *refusal = NULL;
      return sandbox_registry_backend_new (&bc, SANDBOX_REGISTRY_COMPAT);
    }
  return NULL;
}

bool
front_backend_process_isolation (const struct config *cfg,
                                 const struct sandbox_backend *b)
{
  return cfg->sandbox_enabled && b != NULL
         && strcmp (sandbox_backend_id (b), SANDBOX_REGISTRY_COMPAT) == 0;
}

void
front_backend_info (const struct config *cfg, struct inspect_backend_info *info)
{
  struct sandbox_backend_config bc;

  memset (info, 0, sizeof *info);
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  if (e == NULL)
    {
      info->id = bc.backend;
      info->why_not_found = xstrdup ("sandbox.backend names no known backend");
      return;
    }
  if (e->info_for != NULL)
    e->info_for (&bc, info);
  else
    e->info (info);
}
