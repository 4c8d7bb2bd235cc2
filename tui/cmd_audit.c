/* `crucible sandbox audit`: run the conformance suite over the backend the
 * configuration selects (or the one --backend names) in the current
 * directory, and print the table, or one line of JSON.
 *
 * The report itself is not translated: like the inspection report, it is
 * compared between machines.  What this command says about itself (usage,
 * errors) is.  */
#include <config.h>

#include "tui/cmd_audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/conformance.h"
#include "sandbox/inspect.h"
#include "sandbox/registry.h"
#include "tui/front.h"
#include "tui/options.h"

struct audit_options
{
  bool json;
  const char *backend; /* an id of sandbox/registry.c, or NULL */
};

/* Print audit's usage.  */
static void
audit_usage (FILE *out)
{
  fputs (_ ("Usage: crucible sandbox audit [--json] [--backend ID]\n\n"
            "Offer the sandbox backend one policy per feature (preparing a\n"
            "session for each and dropping it; no command is started) and\n"
            "check each answer against what the backend claims.\n\n"
            "--backend ID  audit ID (linux-bubblewrap or compat) instead of\n"
            "              the backend the configuration selects\n"
            "--json        one line of JSON\n\n"
            "Exit status: 0 no fault, 1 a fault, 2 usage, 3 no backend could\n"
            "be probed, 4 the audit could not be run.\n"),
         out);
}

/* audit's options.  */
enum audit_option
{
  AUDIT_OPT_JSON,
  AUDIT_OPT_BACKEND,
  AUDIT_OPT_HELP
};

static const struct options_spec audit_specs[] = {
  { "--json", NULL, AUDIT_OPT_JSON, false },
  { "--backend", NULL, AUDIT_OPT_BACKEND, true },
  { "--help", "-h", AUDIT_OPT_HELP, false },
};

static const struct options_table audit_table = OPTIONS_TABLE (audit_specs, 0);

/* Parse the options (argv[0] is "audit"); 1 when --help was printed.  */
static int
audit_parse (int argc, char **argv, struct audit_options *opts)
{
  struct options_parser p;
  int c;
  memset (opts, 0, sizeof *opts);
  options_begin (&p, &audit_table, argc, argv);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case AUDIT_OPT_JSON:
        opts->json = true;
        break;
      case AUDIT_OPT_BACKEND:
        opts->backend = p.value;
        break;
      case AUDIT_OPT_HELP:
        audit_usage (stdout);
        return 1;
      default:
        fprintf (stderr, _ ("crucible: sandbox audit: unknown option '%s'\n"),
                 p.word);
        audit_usage (stderr);
        return -1;
      }
  if (opts->backend != NULL && sandbox_registry_find (opts->backend) == NULL)
    {
      fprintf (
          stderr,
          _ ("crucible: sandbox audit: unknown backend '%s' (known: %s)\n"),
          opts->backend, sandbox_registry_known ());
      return -1;
    }
  return 0;
}

/* The backend to audit: the one named, or the configuration's choice,
 * made as a command's is (sandbox/registry.c), with the configuration's
 * limits, unreadable patterns and socket grants.  */
static struct sandbox_backend *
audit_backend (const struct audit_options *opts, const struct config *cfg)
{
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  return sandbox_registry_backend_new (&bc, opts->backend);
}

/* Generate a string key or value.  */
static void
audit_gen_str (struct jsonw *g, const char *s)
{
  jsonw_string (g, s, strlen (s));
}

/* Generate "key": "value", the value with any path replaced by <path>.  */
static void
audit_gen_text (struct jsonw *g, const char *key, const char *value)
{
  cleanup_free char *redacted = inspect_redact_paths (value);
  audit_gen_str (g, key);
  audit_gen_str (g, redacted);
}

/* Start the one JSON object: format_version, kind, status.  */
static struct jsonw *
audit_json_begin (const char *status)
{
  struct jsonw *g = jsonw_new ();
  jsonw_object_open (g);
  audit_gen_str (g, "format_version");
  jsonw_int (g, 1);
  audit_gen_str (g, "kind");
  audit_gen_str (g, "sandbox-audit");
  audit_gen_str (g, "status");
  audit_gen_str (g, status);
  return g;
}

/* Close the object and print it as one line.  */
static int
audit_json_end (struct jsonw *g, int status)
{
  size_t len;

  jsonw_object_close (g);
  const char *out = jsonw_get (g, &len);
  fwrite (out, 1, len, stdout);
  fputc ('\n', stdout);
  jsonw_free (g);
  if (fflush (stdout) == EOF)
    {
      fprintf (stderr, _ ("crucible: writing the report: %s\n"),
               strerror (errno));
      return AUDIT_EXIT_FAILED;
    }
  return status;
}

/* One feature's row.  */
static void
audit_json_feature (struct jsonw *g, const struct conformance_result *r)
{
  jsonw_object_open (g);
  audit_gen_str (g, "feature");
  audit_gen_str (g, sandbox_feature_name (r->feature));
  audit_gen_str (g, "family");
  audit_gen_str (g,
                 conformance_family_name (conformance_family_of (r->feature)));
  audit_gen_str (g, "claim");
  audit_gen_str (g, sandbox_support_name (r->claim));
  audit_gen_str (g, "answer");
  audit_gen_str (g, conformance_answer_name (r->answer));
  audit_gen_str (g, "exercised");
  jsonw_bool (g, conformance_askable (r->feature));
  audit_gen_str (g, "fault");
  jsonw_bool (g, conformance_is_fault (r->answer));
  if (r->detail != NULL)
    audit_gen_text (g, "reason", r->detail);
  jsonw_object_close (g);
}

/* The audit as one line of JSON.  */
static int
audit_print_json (const struct conformance_audit *a, int status)
{
  struct jsonw *g
      = audit_json_begin (conformance_faults (a) > 0 ? "fault" : "pass");

  audit_gen_str (g, "backend");
  jsonw_object_open (g);
  audit_gen_str (g, "id");
  audit_gen_str (g, a->backend_id);
  audit_gen_str (g, "version");
  if (a->version != NULL)
    audit_gen_str (g, a->version);
  else
    jsonw_null (g);
  jsonw_object_close (g);
  /* The plan's mode: every policy offered asked for confinement, or none
   * did (spec, "Unconfined execution").  */
  audit_gen_str (g, "enabled");
  jsonw_bool (g, a->confined);
  audit_gen_str (g, "confined");
  jsonw_bool (g, a->confined);
  if (!a->confined && a->unconfined_reason != NULL)
    audit_gen_text (g, "disabled_reason", a->unconfined_reason);
  audit_gen_str (g, "features");
  jsonw_array_open (g);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    audit_json_feature (g, &a->results[f]);
  jsonw_array_close (g);
  audit_gen_str (g, "families");
  jsonw_object_open (g);
  for (int i = 0; i < CONFORMANCE_FAMILY_COUNT; i++)
    {
      enum conformance_family fam = (enum conformance_family) i;
      audit_gen_str (g, conformance_family_name (fam));
      audit_gen_str (
          g, conformance_verdict_name (conformance_family_verdict (a, fam)));
    }
  jsonw_object_close (g);
  audit_gen_str (g, "faults");
  jsonw_int (g, (int64_t) conformance_faults (a));
  audit_gen_str (g, "unreached");
  jsonw_int (g, (int64_t) conformance_unreached (a));
  return audit_json_end (g, status);
}

/* Say the audit could not be run at stage, and why.  */
static int
audit_failed (const struct audit_options *opts, const char *stage,
              struct cr_error *err)
{
  if (opts->json)
    {
      struct jsonw *g = audit_json_begin ("failed");
      audit_gen_str (g, "stage");
      audit_gen_str (g, stage);
      audit_json_end (g, AUDIT_EXIT_FAILED);
    }
  fprintf (stderr, _ ("crucible: sandbox audit: %s\n"), err->msg);
  cr_error_free (err);
  return AUDIT_EXIT_FAILED;
}

/* Say there was no backend to audit: the probe's error, not a table.  */
static int
audit_no_backend (const struct audit_options *opts, const char *id,
                  struct cr_error *err)
{
  if (opts->json)
    {
      struct jsonw *g = audit_json_begin ("unavailable");
      audit_gen_str (g, "backend");
      jsonw_object_open (g);
      audit_gen_str (g, "id");
      audit_gen_str (g, id);
      jsonw_object_close (g);
      audit_gen_text (g, "reason", err->msg);
      audit_json_end (g, AUDIT_EXIT_NO_BACKEND);
    }
  fprintf (stderr, _ ("crucible: sandbox audit: no backend to audit: %s\n"),
           err->msg);
  cr_error_free (err);
  return AUDIT_EXIT_NO_BACKEND;
}

/* Run the audit over backend in workspace and print it.  */
static int
audit_print (const struct audit_options *opts, struct sandbox_backend *backend,
             const char *workspace)
{
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;
  int ret = conformance_run (backend, workspace, &a, &err);

  if (ret == CONFORMANCE_NO_BACKEND)
    return audit_no_backend (opts, sandbox_backend_id (backend), err);
  if (ret < 0)
    return audit_failed (opts, "audit", err);
  int status = conformance_faults (a) > 0 ? AUDIT_EXIT_FAULT : AUDIT_EXIT_PASS;
  if (opts->json)
    status = audit_print_json (a, status);
  else
    {
      cleanup_free char *text = conformance_report (a);
      if (fputs (text, stdout) == EOF || fflush (stdout) == EOF)
        {
          fprintf (stderr, _ ("crucible: writing the report: %s\n"),
                   strerror (errno));
          status = AUDIT_EXIT_FAILED;
        }
    }
  conformance_free (a);
  return status;
}

int
cmd_audit (int argc, char **argv)
{
  struct audit_options opts;
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  int ret = audit_parse (argc, argv, &opts);

  if (ret != 0)
    return ret > 0 ? AUDIT_EXIT_PASS : AUDIT_EXIT_USAGE;
  cleanup_free char *workspace = front_workspace (&err);
  if (workspace == NULL)
    return audit_failed (&opts, "workspace", err);
  if (config_load (&cfg, NULL, workspace, &err) < 0)
    return audit_failed (&opts, "configuration", err);
  /* Enabled confinement over a backend that confines nothing gets no
   * backend at all, so there is none to audit (tui/front.c refuses every
   * command the same way).  */
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  bool none = opts.backend == NULL && cfg->sandbox_enabled && e != NULL
              && !e->confines;
  struct sandbox_backend *backend = none ? NULL : audit_backend (&opts, cfg);
  config_free (cfg);
  if (none)
    {
      cr_error_set (&err, 0, "%s", SANDBOX_REGISTRY_COMPAT_CONFINES_NOTHING);
      return audit_no_backend (&opts, e->id, err);
    }
  ret = audit_print (&opts, backend, workspace);
  sandbox_backend_free (backend);
  return ret;
}
