/* `crucible sandbox inspect|enable|disable` and `crucible --sandbox`.
 *
 * Inspecting starts nothing and writes nothing: it reads the two
 * configuration files, finds the backend without starting it, and prints.
 * enable and disable write the home configuration, and only it, through
 * the writer in core/config.  */
#include <config.h>

#include "tui/cmd_sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mcpservers.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "sandbox/container/container.h"
#include "sandbox/registry.h"
#include "tui/cmd_audit.h"
#include "tui/cmd_quarantine.h"
#include "tui/front.h"
#include "tui/options.h"

/* The report's options: [--json].  */
struct sandbox_report_options
{
  bool json;
};

/* Print a person-facing error and return the failure status.  */
static int
sandbox_fail (struct cr_error *err)
{
  fprintf (stderr, "crucible: %s\n", err->msg);
  cr_error_free (err);
  return SANDBOX_EXIT_FAILED;
}

/* Print sandbox's usage.  */
static void
sandbox_usage (FILE *out)
{
  fputs (_ ("Usage: crucible sandbox inspect [--json]\n"
            "       crucible sandbox audit [--json] [--backend ID]\n"
            "       crucible sandbox enable | disable\n"
            "       crucible sandbox quarantine [list | restore ID | drop ID]\n"
            "       crucible sandbox image build [--from IMAGE]\n"
            "       crucible --sandbox [--json]\n\n"
            "inspect  print the backend and what a command here would run "
            "under,\n"
            "         starting nothing and writing nothing\n"
            "audit    check the backend's claims against its answers\n"
            "enable   turn confinement on in ~/.crucible/config.json, once "
            "this\n"
            "         machine is found able to enforce it\n"
            "disable  turn confinement off in ~/.crucible/config.json\n"
            "quarantine  what publication kept when a rollback could not "
            "be proved\n"
            "image build  make the container backend's image on its engine\n"
            "         from this machine's busybox-static, or on a local "
            "--from IMAGE\n"),
         out);
}

/* The report's options.  */
enum sandbox_report_option
{
  SANDBOX_OPT_JSON,
  SANDBOX_OPT_HELP
};

static const struct options_spec sandbox_report_specs[] = {
  { "--json", NULL, SANDBOX_OPT_JSON, false },
  { "--help", "-h", SANDBOX_OPT_HELP, false },
};

static const struct options_table sandbox_report_table
    = OPTIONS_TABLE (sandbox_report_specs, 0);

/* Parse the report's options (argv[0] is the command's own name).  */
static int
sandbox_report_options (int argc, char **argv,
                        struct sandbox_report_options *opts)
{
  struct options_parser p;
  int c;
  memset (opts, 0, sizeof *opts);
  options_begin (&p, &sandbox_report_table, argc, argv);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case SANDBOX_OPT_JSON:
        opts->json = true;
        break;
      case SANDBOX_OPT_HELP:
        sandbox_usage (stdout);
        return 1;
      default:
        fprintf (stderr, _ ("crucible: sandbox inspect: unknown option '%s'\n"),
                 p.word);
        sandbox_usage (stderr);
        return -1;
      }
  return 0;
}

/* Say that the report could not be made at stage, and why.  */
static int
sandbox_report_failed (const struct sandbox_report_options *opts,
                       const char *stage, struct cr_error *err)
{
  if (opts->json)
    {
      cleanup_free char *line = inspect_failed_json (stage);
      fputs (line, stdout);
    }
  return sandbox_fail (err);
}

/* Write s to standard output, and say so when that fails.  */
static int
sandbox_print (const char *s)
{
  if (fputs (s, stdout) == EOF || fflush (stdout) == EOF)
    {
      fprintf (stderr, _ ("crucible: writing the report: %s\n"),
               strerror (errno));
      return SANDBOX_EXIT_FAILED;
    }
  return SANDBOX_EXIT_OK;
}

/* Whether the configuration selects the container backend.  */
static bool
sandbox_is_container (const struct config *cfg)
{
  return cfg->sandbox_backend != NULL
         && strcmp (cfg->sandbox_backend, CONTAINER_BACKEND_ID) == 0;
}

/* The container backend's configuration.  */
static void
sandbox_container_config (const struct config *cfg, struct container_config *cc)
{
  cc->engine = cfg->container_engine;
  cc->image = cfg->container_image;
  cc->cpu_seconds = (unsigned long) cfg->cpu_seconds;
  cc->open_files = (unsigned long) cfg->open_files;
}

/* The inspection report's mode line for cfg.  */
static const char *
sandbox_mode_line (const struct config *cfg)
{
  if (cfg->sandbox_enabled)
    return cfg->sandbox_enabled_origin == CONFIG_PROJECT
               ? "required by project configuration"
               : "enabled by home configuration";
  return cfg->sandbox_enabled_origin == CONFIG_HOME
             ? "disabled by home configuration"
             : "disabled by default";
}

/* Tell the person the engine is being asked, before the wait.  */
static void
sandbox_asking (void *data)
{
  (void) data;
  fprintf (stderr, "%s\n", _ ("Asking the engine…"));
  fflush (stderr);
}

/* The container backend's report: the engine asked, nothing created.  */
static char *
sandbox_container_inspect (const struct config *cfg, const char *workspace,
                           const struct sandbox_report_options *opts)
{
  struct container_config cc;
  struct container_inspect_input in = {
    .workspace = workspace,
    .mode = sandbox_mode_line (cfg),
    .enabled = cfg->sandbox_enabled,
    .json = opts->json,
    .asking = sandbox_asking,
  };
  sandbox_container_config (cfg, &cc);
  return container_inspect (&cc, &in);
}

/* Give the report the MCP servers cfg configures, each with whether the
 * project disables it.  */
static void
sandbox_inspect_servers (const struct config *cfg, struct inspect_report *r)
{
  size_t n = cfg->n_mcp_servers;
  cleanup_free struct inspect_server *v = xcalloc (n + 1, sizeof *v);

  for (size_t i = 0; i < n; i++)
    v[i] = (struct inspect_server){
      .name = cfg->mcp_servers[i].name,
      .optional = cfg->mcp_servers[i].optional,
      .disabled = mcpservers_disabled (cfg, cfg->mcp_servers[i].name),
    };
  inspect_report_servers (r, v, n);
}

/* Make and print the report for the current directory.  */
static int
sandbox_inspect (const struct sandbox_report_options *opts)
{
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  struct inspect_backend_info info;
  struct inspect_report *report = NULL;
  struct policy_input in;
  cleanup_free char *workspace = front_workspace (&err);
  cleanup_free char *text = NULL;

  if (workspace == NULL)
    return sandbox_report_failed (opts, "workspace", err);
  if (config_load (&cfg, NULL, workspace, &err) < 0)
    return sandbox_report_failed (opts, "configuration", err);
  if (sandbox_is_container (cfg))
    {
      text = sandbox_container_inspect (cfg, workspace, opts);
      config_free (cfg);
      return sandbox_print (text);
    }
  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  int ret = inspect_build (&in, &info, &report, &err);
  inspect_backend_info_clear (&info);
  if (ret == 0)
    sandbox_inspect_servers (cfg, report);
  config_free (cfg);
  if (ret < 0)
    return sandbox_report_failed (opts, "policy", err);
  text = opts->json ? inspect_format_json (report)
                    : inspect_format_text (report);
  inspect_report_free (report);
  return sandbox_print (text);
}

int
cmd_sandbox_report (int argc, char **argv)
{
  struct sandbox_report_options opts;
  int ret = sandbox_report_options (argc, argv, &opts);
  if (ret != 0)
    return ret > 0 ? SANDBOX_EXIT_OK : SANDBOX_EXIT_USAGE;
  return sandbox_inspect (&opts);
}

/* Why confinement cannot be enforced here, or NULL when it can: a backend
 * is found, its claims hold the policy enabling would give, and its probe
 * says it is usable and confined.  Owned.  */
static char *
sandbox_cannot_enforce (const struct config *cfg, const char *workspace)
{
  struct inspect_backend_info info;
  struct inspect_dependencies deps;
  struct policy_input in;
  struct cr_error *err = NULL;
  char *why = NULL;

  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  if (inspect_dependencies (&deps, &in, &info, &err) < 0)
    {
      why = xstrdup (err->msg);
      cr_error_free (err);
    }
  else if (!deps.available)
    why = xasprintf ("no sandbox backend was found: %s", deps.why_unavailable);
  else if (!deps.holds_policy)
    why = xstrdup (deps.refusal);
  inspect_dependencies_clear (&deps);
  /* The backend enabling would give, made as a command's is.  */
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  struct sandbox_backend *backend
      = why == NULL && e != NULL ? sandbox_registry_backend_new (&bc, e->id)
                                 : NULL;
  if (backend != NULL)
    {
      struct sandbox_probe probe = { 0 };
      if (sandbox_probe (backend, &probe, &err) < 0)
        {
          why = xstrdup (err->msg);
          cr_error_free (err);
        }
      else if (!probe.usable || !probe.confined)
        why = xstrdup (probe.reason != NULL ? probe.reason
                                            : "the backend is not usable");
      sandbox_probe_clear (&probe);
      sandbox_backend_free (backend);
    }
  inspect_backend_info_clear (&info);
  return why;
}

int
cmd_sandbox_set (bool enabled, const char *workspace, char **message)
{
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  cleanup_free char *home_file = NULL;
  cleanup_free char *why = NULL;

  *message = NULL;
  if (config_load (&cfg, NULL, workspace, &err) < 0
      || (home_file = config_home_path (&err)) == NULL)
    {
      config_free (cfg);
      *message = xstrdup (err->msg);
      cr_error_free (err);
      return SANDBOX_EXIT_FAILED;
    }
  if (!enabled && cfg->sandbox_enabled_origin == CONFIG_PROJECT)
    {
      *message = xasprintf (
          _ ("confinement stays enabled: this project's configuration "
             "requires it (sandbox.enabled in %s), and only a project can "
             "lift its own requirement; nothing was changed"),
          cfg->project_file);
      config_free (cfg);
      return SANDBOX_EXIT_FAILED;
    }
  if (enabled)
    why = sandbox_cannot_enforce (cfg, workspace);
  config_free (cfg);
  if (why != NULL)
    {
      *message = xasprintf (_ ("confinement was not enabled: %s; nothing was "
                               "changed"),
                            why);
      return SANDBOX_EXIT_FAILED;
    }
  if (config_home_set_enabled (home_file, enabled, &err) < 0)
    {
      *message = xstrdup (err->msg);
      cr_error_free (err);
      return SANDBOX_EXIT_FAILED;
    }
  *message = xasprintf (enabled ? _ ("sandbox enabled: %s sets "
                                     "sandbox.enabled to true")
                                : _ ("sandbox disabled: %s sets "
                                     "sandbox.enabled to false"),
                        home_file);
  return SANDBOX_EXIT_OK;
}

/* `crucible sandbox enable` or `disable`.  */
static int
sandbox_set (bool enabled)
{
  struct cr_error *err = NULL;
  cleanup_free char *workspace = front_workspace (&err);
  cleanup_free char *message = NULL;

  if (workspace == NULL)
    return sandbox_fail (err);
  int status = cmd_sandbox_set (enabled, workspace, &message);
  if (status == SANDBOX_EXIT_OK)
    printf ("%s\n", message);
  else
    fprintf (stderr, "crucible: %s\n", message);
  return status;
}

/* `crucible sandbox enable` or `disable` (argv[0]), which take nothing.  */
static int
sandbox_cmd_set (int argc, char **argv)
{
  static const struct options_table none = { NULL, 0, 0 };
  struct options_parser p;
  options_begin (&p, &none, argc, argv);
  if (options_next (&p) == OPTIONS_END)
    return sandbox_set (strcmp (argv[0], "enable") == 0);
  fprintf (stderr, _ ("crucible: sandbox %s: unexpected argument '%s'\n"),
           argv[0], p.word);
  sandbox_usage (stderr);
  return SANDBOX_EXIT_USAGE;
}

/* Where image build finds the host's busybox-static.  */
#define SANDBOX_BUSYBOX "/bin/busybox"

/* image build's options.  */
enum sandbox_image_option
{
  SANDBOX_IMAGE_FROM,
  SANDBOX_IMAGE_HELP
};

static const struct options_spec sandbox_image_specs[] = {
  { "--from", NULL, SANDBOX_IMAGE_FROM, true },
  { "--help", "-h", SANDBOX_IMAGE_HELP, false },
};

static const struct options_table sandbox_image_table
    = OPTIONS_TABLE (sandbox_image_specs, 0);

/* Say which engine the image is being built on.  */
static void
sandbox_image_progress (void *data, const char *engine)
{
  (void) data;
  fprintf (stderr, _ ("Building the image on the engine %s…\n"), engine);
  fflush (stderr);
}

/* Build the configured image, from busybox-static or from.  */
static int
sandbox_image_build (const char *from)
{
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  struct container_config cc;
  cleanup_free char *workspace = front_workspace (&err);
  cleanup_free char *id = NULL;
  if (workspace == NULL || config_load (&cfg, NULL, workspace, &err) < 0)
    return sandbox_fail (err);
  sandbox_container_config (cfg, &cc);
  const char *image = cc.image != NULL ? cc.image : CONTAINER_DEFAULT_IMAGE;
  cleanup_free char *name = xstrdup (image);
  int ret = container_image_build (&cc, from, SANDBOX_BUSYBOX,
                                   sandbox_image_progress, NULL, &id, &err);
  config_free (cfg);
  if (ret < 0)
    return sandbox_fail (err);
  printf (_ ("built %s: %s\n"), name, id);
  return SANDBOX_EXIT_OK;
}

/* `crucible sandbox image build [--from IMAGE]` (argv[0] is "image").  */
static int
sandbox_cmd_image (int argc, char **argv)
{
  struct options_parser p;
  const char *from = NULL;
  int c;
  if (argc < 2 || strcmp (argv[1], "build") != 0)
    {
      fprintf (stderr, _ ("crucible: sandbox image: expected 'build'\n"));
      sandbox_usage (stderr);
      return SANDBOX_EXIT_USAGE;
    }
  options_begin (&p, &sandbox_image_table, argc - 1, argv + 1);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case SANDBOX_IMAGE_FROM:
        from = p.value;
        break;
      case SANDBOX_IMAGE_HELP:
        sandbox_usage (stdout);
        return SANDBOX_EXIT_OK;
      default:
        fprintf (stderr,
                 _ ("crucible: sandbox image build: unknown option '%s'\n"),
                 p.word);
        sandbox_usage (stderr);
        return SANDBOX_EXIT_USAGE;
      }
  return sandbox_image_build (from);
}

/* A subcommand of `crucible sandbox`: its name, and what runs it with
 * argv[0] its name.  */
struct sandbox_subcommand
{
  const char *name;
  int (*run) (int argc, char **argv);
};

static const struct sandbox_subcommand sandbox_subcommands[] = {
  { "inspect", cmd_sandbox_report }, { "audit", cmd_audit },
  { "enable", sandbox_cmd_set },     { "disable", sandbox_cmd_set },
  { "quarantine", cmd_quarantine },  { "image", sandbox_cmd_image },
};

int
cmd_sandbox (int argc, char **argv)
{
  if (argc < 2)
    {
      sandbox_usage (stderr);
      return SANDBOX_EXIT_USAGE;
    }
  if (options_find (&sandbox_report_table, argv[1]) == SANDBOX_OPT_HELP)
    {
      sandbox_usage (stdout);
      return SANDBOX_EXIT_OK;
    }
  for (size_t i = 0;
       i < sizeof sandbox_subcommands / sizeof *sandbox_subcommands; i++)
    if (strcmp (argv[1], sandbox_subcommands[i].name) == 0)
      return sandbox_subcommands[i].run (argc - 1, argv + 1);
  fprintf (stderr, _ ("crucible: sandbox: unknown command '%s'\n"), argv[1]);
  sandbox_usage (stderr);
  return SANDBOX_EXIT_USAGE;
}
