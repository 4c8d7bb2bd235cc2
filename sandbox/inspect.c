/* The inspection report, as text and as one line of JSON.  */
#include <config.h>

#include "sandbox/inspect.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/compat.h"
#include "sandbox/registry.h"

/* Column widths of the report (spec, "Reading the report").  */
#define INSPECT_FIELD_WIDTH 10   /* "  mode      " */
#define INSPECT_FEATURE_WIDTH 22 /* "  filesystem            enforced" */
#define INSPECT_ACCESS_WIDTH 12  /* "    read_write  " */
#define INSPECT_ORIGIN_WIDTH 20  /* "workspace           " */
#define INSPECT_CEILING_WIDTH 24 /* "    cpu 60m                 " */

#define INSPECT_COMPAT_PROVENANCE "built in"

struct inspect_report
{
  enum inspect_status status;
  char *workspace;
  struct policy *policy;
  /* The backend reported: the one found, or compatibility when disabled.  */
  char *backend_id;
  char *provenance;
  char *version;      /* known without starting anything, or NULL */
  char *build_digest; /* or NULL */
  struct sandbox_claims claims;
  char *reason;       /* refused: the refusal; unavailable: why not found */
  size_t credentials; /* sandbox.credentials a command would get */
  struct inspect_server *servers; /* mcpServers, names owned */
  size_t n_servers;
};

void
inspect_backend_info_clear (struct inspect_backend_info *info)
{
  free (info->build_digest);
  free (info->why_not_found);
  info->build_digest = info->why_not_found = NULL;
}

const char *
inspect_status_name (enum inspect_status s)
{
  switch (s)
    {
    case INSPECT_READY:
      return "ready";
    case INSPECT_REFUSED:
      return "refused";
    case INSPECT_UNAVAILABLE:
      return "unavailable";
    case INSPECT_FAILED:
      break;
    }
  return "failed";
}

/* Whether c ends a path being redacted: a space, a quote, a closing
 * bracket, a comma or semicolon, or a colon that ends a clause.  */
static bool
inspect_path_ends (const char *c)
{
  return *c == '\0' || isspace ((unsigned char) *c) || strchr ("\"'`),;", *c)
         || (*c == ':' && (c[1] == '\0' || isspace ((unsigned char) c[1])));
}

char *
inspect_redact_paths (const char *text)
{
  struct buf b = BUF_INIT;

  for (const char *c = text; *c != '\0';)
    {
      bool word_start = c == text || isspace ((unsigned char) c[-1])
                        || strchr ("\"'`(=", c[-1]) != NULL;
      if (*c == '/' && word_start)
        {
          buf_puts (&b, "<path>");
          while (!inspect_path_ends (c))
            c++;
          continue;
        }
      buf_putc (&b, *c++);
    }
  return buf_steal (&b, NULL);
}

/* The name the report gives the program a backend starts.  */
static const char *
inspect_program_name (const char *backend_id)
{
  if (strcmp (backend_id, "linux-bubblewrap") == 0)
    return "Bubblewrap";
  return backend_id;
}

/* The mode line: who turned confinement on or off.  */
static const char *
inspect_mode (const struct policy *p)
{
  if (p->enabled)
    return p->enabled_source == POLICY_SOURCE_PROJECT
               ? "required by project configuration"
               : "enabled by home configuration";
  return p->enabled_source == POLICY_SOURCE_HOME
             ? "disabled by home configuration"
             : "disabled by default";
}

/* The JSON word for who set sandbox.enabled.  */
static const char *
inspect_source_name (enum policy_source s)
{
  switch (s)
    {
    case POLICY_SOURCE_HOME:
      return "home";
    case POLICY_SOURCE_PROJECT:
      return "project";
    case POLICY_SOURCE_DEFAULT:
      break;
    }
  return "default";
}

/* Fill the report's backend from the compatibility backend, which starting
 * nothing can describe completely.  */
static void
inspect_use_compat (struct inspect_report *r)
{
  struct sandbox_backend *compat = compat_backend_new ();
  sandbox_claims (compat, &r->claims);
  sandbox_backend_free (compat);
  r->backend_id = xstrdup ("compat");
  r->provenance = xstrdup (INSPECT_COMPAT_PROVENANCE);
  r->version = xstrdup (PACKAGE_VERSION);
}

int
inspect_build (const struct policy_input *in,
               const struct inspect_backend_info *backend,
               struct inspect_report **out, struct cr_error **err)
{
  struct inspect_report *r = xcalloc (1, sizeof *r);
  struct cr_error *refusal = NULL;

  if (policy_resolve (in, &r->policy, err) < 0)
    {
      free (r);
      return -1;
    }
  r->workspace = xstrdup (in->workspace);
  r->credentials = in->credentials;
  r->status = INSPECT_READY;
  if (!in->enabled)
    inspect_use_compat (r);
  else if (backend == NULL || !backend->found)
    {
      r->status = INSPECT_UNAVAILABLE;
      r->reason = inspect_redact_paths (
          backend != NULL && backend->why_not_found != NULL
              ? backend->why_not_found
              : "no enforcing backend is known to this build of crucible");
    }
  else
    {
      r->backend_id = xstrdup (backend->id);
      r->provenance = xstrdup (backend->provenance);
      if (backend->build_digest != NULL)
        r->build_digest = xstrdup (backend->build_digest);
      r->claims = backend->claims;
      if (sandbox_check_policy (&r->claims, &r->policy->sandbox, backend->id,
                                &refusal)
          < 0)
        {
          r->status = INSPECT_REFUSED;
          r->reason = inspect_redact_paths (refusal->msg);
          cr_error_free (refusal);
        }
    }
  *out = r;
  return 0;
}

void
inspect_report_free (struct inspect_report *r)
{
  if (r == NULL)
    return;
  free (r->workspace);
  policy_free (r->policy);
  free (r->backend_id);
  free (r->provenance);
  free (r->version);
  free (r->build_digest);
  free (r->reason);
  for (size_t i = 0; i < r->n_servers; i++)
    free ((char *) r->servers[i].name);
  free (r->servers);
  free (r);
}

enum inspect_status
inspect_report_status (const struct inspect_report *r)
{
  return r->status;
}

/* "  name      value": a field of a section.  */
static void
inspect_field (struct buf *b, const char *name, const char *value)
{
  buf_printf (b, "  %-*s%s\n", INSPECT_FIELD_WIDTH, name, value);
}

/* The lines above the first section: where, who said so, which backend.  */
static void
inspect_text_head (struct buf *b, const struct inspect_report *r)
{
  buf_printf (b, "sandbox %s in %s\n",
              r->policy->enabled ? "enabled" : "disabled", r->workspace);
  inspect_field (b, "mode", inspect_mode (r->policy));
  if (r->backend_id == NULL)
    return;
  buf_printf (b, "  %-*s%s, %s\n", INSPECT_FIELD_WIDTH, "backend",
              r->backend_id, r->provenance);
  /* How strongly a command here would be contained, in the word its
   * lifecycle facts are stamped with.  */
  inspect_field (b, "isolation", sandbox_registry_isolation (r->backend_id));
  if (r->version != NULL)
    inspect_field (b, "version", r->version);
  else
    buf_printf (b,
                "  %-*sunverified; reading it would start %s, and inspecting "
                "starts nothing\n",
                INSPECT_FIELD_WIDTH, "version",
                inspect_program_name (r->backend_id));
  if (r->policy->enabled)
    inspect_field (b, "build",
                   r->build_digest != NULL ? r->build_digest : "unknown");
}

/* The capability matrix: every feature, as this backend claims it.  */
static void
inspect_text_matrix (struct buf *b, const struct inspect_report *r)
{
  buf_puts (b, "\nwhat this backend can hold:\n");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    buf_printf (b, "  %-*s%s\n", INSPECT_FEATURE_WIDTH,
                sandbox_feature_name ((enum sandbox_feature) f),
                sandbox_support_name (r->claims.support[f]));
}

/* "N things", with the singular for one.  */
static char *
inspect_count (size_t n, const char *one, const char *many)
{
  return xasprintf ("%zu %s", n, n == 1 ? one : many);
}

/* The network line: closed, or what is let through.  */
static char *
inspect_network (const struct policy *p)
{
  struct buf b = BUF_INIT;
  if (p->domains == 0)
    buf_puts (&b, "closed");
  else
    buf_printf (&b, "%zu %s, through the host proxy", p->domains,
                p->domains == 1 ? "domain" : "domains");
  if (p->allow_local_binding)
    buf_puts (&b, ", local binding");
  if (p->unix_sockets > 0)
    buf_printf (&b, ", %zu %s", p->unix_sockets,
                p->unix_sockets == 1 ? "Unix socket" : "Unix sockets");
  return buf_steal (&b, NULL);
}

/* The credentials line, when a command would get any: a count, never a
 * name, handle or value (they are masked in its output in both modes).  */
static void
inspect_text_credentials (struct buf *b, size_t n)
{
  if (n == 0)
    return;
  /* The name is longer than the column: one space, as the issue words
   * it.  */
  buf_printf (b, "  credentials %zu, masked in output\n", n);
}

/* The reach, hidden and network lines.  */
static void
inspect_text_reach (struct buf *b, const struct policy *p)
{
  char *s;

  if (!p->enabled)
    {
      inspect_field (b, "reach", "not restricted");
      inspect_field (b, "hidden", "not restricted");
      inspect_field (b, "network", "not restricted");
      return;
    }
  s = inspect_count (p->n_roots, "place", "places");
  buf_printf (b, "  %-*s%s, named by digest\n", INSPECT_FIELD_WIDTH, "reach",
              s);
  free (s);
  for (size_t i = 0; i < p->n_roots; i++)
    buf_printf (b, "    %-*s%-*s%s\n", INSPECT_ACCESS_WIDTH,
                policy_access_name (p->roots[i].access), INSPECT_ORIGIN_WIDTH,
                policy_provenance_name (p->roots[i].provenance),
                p->roots[i].digest);
  s = inspect_count (p->unreadable_patterns, "pattern", "patterns");
  inspect_field (b, "hidden", s);
  free (s);
  s = inspect_network (p);
  inspect_field (b, "network", s);
  free (s);
}

/* The ceilings, each beside the claim it rests on.  */
static void
inspect_text_ceilings (struct buf *b, const struct inspect_report *r)
{
  buf_puts (b, "  ceilings\n");
  for (size_t i = 0; i < r->policy->n_ceilings; i++)
    {
      const struct policy_ceiling *c = &r->policy->ceilings[i];
      char *label = policy_ceiling_label (c);
      /* A label too long for the column still keeps a space before its
       * claim, so the two never run together.  */
      int width = (int) strlen (label) < INSPECT_CEILING_WIDTH
                      ? INSPECT_CEILING_WIDTH
                      : (int) strlen (label) + 1;
      buf_printf (b, "    %-*s%s\n", width, label,
                  sandbox_support_name (r->claims.support[c->feature]));
      free (label);
    }
}

/* What a command would run under (or, refused, what was asked for).  */
static void
inspect_text_policy (struct buf *b, const struct inspect_report *r, bool asked)
{
  const struct policy *p = r->policy;
  char *s;

  buf_puts (b, asked ? "\nwhat was asked for:\n"
                     : "\nwhat a command would run under:\n");
  inspect_field (b, "enabled", p->enabled ? "true" : "false");
  inspect_field (b, "cwd", p->cwd_digest);
  inspect_text_reach (b, p);
  inspect_text_credentials (b, r->credentials);
  inspect_text_ceilings (b, r);
  s = p->staged == 0 ? xstrdup ("nothing")
                     : inspect_count (p->staged, "entry", "entries");
  inspect_field (b, "staged", s);
  free (s);
  inspect_field (b, "outlives", p->outlives ? "yes" : "no");
  inspect_field (b, "snapshots", p->snapshots ? "yes" : "no");
  if (!asked && p->enabled)
    inspect_field (b, "confined", "yes");
  else if (!asked)
    inspect_field (b, "confined", "false: " COMPAT_DISABLED_REASON);
  inspect_field (b, "policy",
                 asked ? p->requested_digest : p->effective_digest);
  inspect_field (b, "manifest", p->manifest_digest);
}

/* The servers' section, last, when any is configured: one row each,
 * its name padded to the longest.  */
static void
inspect_text_servers (struct buf *b, const struct inspect_report *r)
{
  int width = 0;

  if (r->n_servers == 0)
    return;
  for (size_t i = 0; i < r->n_servers; i++)
    if ((int) strlen (r->servers[i].name) > width)
      width = (int) strlen (r->servers[i].name);
  buf_puts (
      b, "\nMCP servers (mcpServers), each run as a command here would be:\n");
  for (size_t i = 0; i < r->n_servers; i++)
    {
      cleanup_free char *words = inspect_server_words (
          &r->servers[i], r->policy->enabled, r->status);
      buf_printf (b, "  %-*s  %s\n", width, r->servers[i].name, words);
    }
}

char *
inspect_format_text (const struct inspect_report *r)
{
  struct buf b = BUF_INIT;

  inspect_text_head (&b, r);
  switch (r->status)
    {
    case INSPECT_UNAVAILABLE:
      buf_printf (&b,
                  "\nno sandbox backend was found:\n  %s\n  commands are "
                  "refused, never run unconfined, while sandbox.enabled is "
                  "true\n",
                  r->reason);
      break;
    case INSPECT_REFUSED:
      inspect_text_matrix (&b, r);
      inspect_text_policy (&b, r, true);
      buf_printf (&b, "\nno command could be run here:\n  %s\n", r->reason);
      break;
    case INSPECT_READY:
    case INSPECT_FAILED:
      inspect_text_matrix (&b, r);
      inspect_text_policy (&b, r, false);
      if (r->policy->enabled)
        buf_printf (&b,
                    "\nnot checked, since checking would start something:\n"
                    "  whether %s starts and can make its namespaces on this "
                    "host, and whether each root passes the checks a "
                    "command's preparation makes\n",
                    inspect_program_name (r->backend_id));
      break;
    }
  inspect_text_servers (&b, r);
  return buf_steal (&b, NULL);
}

/* The backend object and the capability matrix.  */
static void
inspect_json_backend (struct jsonw *w, const struct inspect_report *r)
{
  jsonw_key (w, "backend");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "id", r->backend_id);
  jsonw_member_cstr (w, "isolation",
                     sandbox_registry_isolation (r->backend_id));
  jsonw_member_cstr (w, "provenance", r->provenance);
  jsonw_member_cstr (w, "version", r->version);
  if (r->version == NULL)
    {
      cleanup_free char *why
          = xasprintf ("reading it would start %s, and inspecting starts "
                       "nothing",
                       inspect_program_name (r->backend_id));
      jsonw_member_cstr (w, "version_unverified", why);
    }
  jsonw_member_cstr (w, "build", r->build_digest);
  jsonw_object_close (w);
  jsonw_key (w, "capabilities");
  jsonw_object_open (w);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    jsonw_member_cstr (w, sandbox_feature_name ((enum sandbox_feature) f),
                       sandbox_support_name (r->claims.support[f]));
  jsonw_object_close (w);
}

/* The unit of a ceiling's value.  */
static const char *
inspect_ceiling_unit (enum sandbox_feature f)
{
  switch (f)
    {
    case SANDBOX_CPU_LIMIT:
    case SANDBOX_COMMAND_TIME_LIMIT:
      return "seconds";
    case SANDBOX_OUTPUT_LIMIT:
      return "bytes";
    default:
      break;
    }
  return "count";
}

/* The roots the policy reaches and its network: null when disabled.  */
static void
inspect_json_reach (struct jsonw *w, const struct policy *p)
{
  jsonw_key (w, "reach");
  if (!p->enabled)
    {
      jsonw_null (w);
      jsonw_key (w, "hidden_patterns");
      jsonw_null (w);
      jsonw_key (w, "network");
      jsonw_null (w);
      return;
    }
  policy_write_roots (w, p);
  jsonw_member_uint (w, "hidden_patterns", p->unreadable_patterns);
  jsonw_key (w, "network");
  jsonw_object_open (w);
  jsonw_member_bool (w, "closed", p->domains == 0);
  jsonw_member_uint (w, "domains", p->domains);
  jsonw_member_bool (w, "allow_local_binding", p->allow_local_binding);
  jsonw_member_uint (w, "unix_sockets", p->unix_sockets);
  jsonw_object_close (w);
}

/* The ceilings with their claims.  */
static void
inspect_json_ceilings (struct jsonw *w, const struct inspect_report *r)
{
  const struct policy *p = r->policy;
  jsonw_key (w, "ceilings");
  jsonw_array_open (w);
  for (size_t i = 0; i < p->n_ceilings; i++)
    {
      const struct policy_ceiling *c = &p->ceilings[i];
      char num[64];
      cleanup_free char *label = policy_ceiling_label (c);
      policy_format_number (c->value, num, sizeof num);
      jsonw_object_open (w);
      jsonw_member_cstr (w, "feature", sandbox_feature_name (c->feature));
      jsonw_key (w, "value");
      jsonw_raw (w, num, strlen (num));
      jsonw_member_cstr (w, "unit", inspect_ceiling_unit (c->feature));
      jsonw_member_cstr (w, "label", label);
      jsonw_member_cstr (w, "claim",
                         sandbox_support_name (r->claims.support[c->feature]));
      jsonw_object_close (w);
    }
  jsonw_array_close (w);
}

/* The policy object: digests, reach, network, ceilings with their claims.  */
static void
inspect_json_policy (struct jsonw *w, const struct inspect_report *r)
{
  const struct policy *p = r->policy;

  jsonw_key (w, "policy");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "cwd", p->cwd_digest);
  inspect_json_reach (w, p);
  jsonw_member_uint (w, "credentials", r->credentials);
  inspect_json_ceilings (w, r);
  jsonw_member_uint (w, "staged", p->staged);
  jsonw_member_bool (w, "outlives", p->outlives);
  jsonw_member_bool (w, "snapshots", p->snapshots);
  jsonw_key (w, "requires");
  policy_write_requires (w, p);
  jsonw_member_cstr (w, "requested", p->requested_digest);
  jsonw_member_cstr (w, "effective", p->effective_digest);
  jsonw_member_cstr (w, "manifest", p->manifest_digest);
  jsonw_object_close (w);
}

/* An inspection document being written: its format and kind.  */
static struct jsonw *
inspect_json_begin (const char *status)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_key (w, "format_version");
  jsonw_int (w, 1);
  jsonw_member_cstr (w, "kind", "sandbox-inspection");
  jsonw_member_cstr (w, "status", status);
  return w;
}

/* Close the document and return it, with its newline.  */
static char *
inspect_json_end (struct jsonw *w)
{
  struct buf b = BUF_INIT;
  size_t len;
  jsonw_object_close (w);
  const char *text = jsonw_get (w, &len);
  buf_append (&b, text, len);
  buf_putc (&b, '\n');
  jsonw_free (w);
  return buf_steal (&b, NULL);
}

/* What was not checked by a confined inspection.  */
static void
inspect_json_not_checked (struct jsonw *w, const struct inspect_report *r)
{
  cleanup_free char *starts
      = xasprintf ("whether %s starts and can make its namespaces on this "
                   "host",
                   inspect_program_name (r->backend_id));
  jsonw_key (w, "not_checked");
  jsonw_array_open (w);
  jsonw_cstr (w, starts);
  jsonw_cstr (w, "whether each root passes the checks a command's "
                 "preparation makes");
  jsonw_array_close (w);
}

/* "mcp_servers": each configured server, with how it would run: "runs"
 * is "confined", "unconfined" or "not_started", "reason" why it is not
 * confined (null when it is).  Only when any is configured.  */
static void
inspect_json_servers (struct jsonw *w, const struct inspect_report *r)
{
  static const char *const runs[] = {
    [INSPECT_SERVER_CONFINED] = "confined",
    [INSPECT_SERVER_UNCONFINED] = "unconfined",
    [INSPECT_SERVER_NOT_STARTED] = "not_started",
  };

  if (r->n_servers == 0)
    return;
  jsonw_key (w, "mcp_servers");
  jsonw_array_open (w);
  for (size_t i = 0; i < r->n_servers; i++)
    {
      const char *why;
      enum inspect_server_run run = inspect_server_run (
          &r->servers[i], r->policy->enabled, r->status, &why);
      jsonw_object_open (w);
      jsonw_member_cstr (w, "name", r->servers[i].name);
      jsonw_member_bool (w, "optional", r->servers[i].optional);
      jsonw_member_cstr (w, "runs", runs[run]);
      jsonw_member_cstr (w, "reason", why);
      jsonw_object_close (w);
    }
  jsonw_array_close (w);
}

char *
inspect_format_json (const struct inspect_report *r)
{
  struct jsonw *w = inspect_json_begin (inspect_status_name (r->status));

  jsonw_member_bool (w, "enabled", r->policy->enabled);
  jsonw_member_cstr (w, "mode",
                     inspect_source_name (r->policy->enabled_source));
  if (r->status == INSPECT_UNAVAILABLE)
    {
      jsonw_member_cstr (w, "backend", NULL);
      jsonw_member_cstr (w, "capabilities", NULL);
      jsonw_member_cstr (w, "reason", r->reason);
      inspect_json_servers (w, r);
      return inspect_json_end (w);
    }
  inspect_json_backend (w, r);
  inspect_json_policy (w, r);
  if (r->status == INSPECT_REFUSED)
    {
      jsonw_member_cstr (w, "reason", r->reason);
      jsonw_member_bool (w, "confined", false);
    }
  else if (r->policy->enabled)
    {
      jsonw_member_bool (w, "confined", true);
      inspect_json_not_checked (w, r);
    }
  else
    {
      jsonw_member_bool (w, "confined", false);
      jsonw_member_cstr (w, "disabled_reason", COMPAT_DISABLED_REASON);
    }
  inspect_json_servers (w, r);
  return inspect_json_end (w);
}

char *
inspect_failed_json (const char *stage)
{
  struct jsonw *w = inspect_json_begin ("failed");
  jsonw_member_cstr (w, "stage", stage);
  return inspect_json_end (w);
}

int
inspect_dependencies (struct inspect_dependencies *out,
                      const struct policy_input *in,
                      const struct inspect_backend_info *backend,
                      struct cr_error **err)
{
  struct policy_input confined = *in;
  struct policy *p = NULL;
  struct cr_error *refusal = NULL;

  memset (out, 0, sizeof *out);
  out->enabled = in->enabled;
  confined.enabled = true;
  if (policy_resolve (&confined, &p, err) < 0)
    return -1;
  out->available = backend != NULL && backend->found;
  if (!out->available)
    out->why_unavailable = inspect_redact_paths (
        backend != NULL && backend->why_not_found != NULL
            ? backend->why_not_found
            : "no enforcing backend is known to this build of crucible");
  else
    {
      out->backend_id = backend->id;
      out->provenance = backend->provenance;
      if (backend->build_digest != NULL)
        out->build_digest = xstrdup (backend->build_digest);
      out->claims = backend->claims;
      for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
        out->missing[f] = p->sandbox.requires[f]
                          && out->claims.support[f] != SANDBOX_ENFORCED;
      out->holds_policy = sandbox_check_policy (&out->claims, &p->sandbox,
                                                backend->id, &refusal)
                          == 0;
      if (refusal != NULL)
        out->refusal = inspect_redact_paths (refusal->msg);
      cr_error_free (refusal);
    }
  policy_free (p);
  return 0;
}

void
inspect_dependencies_clear (struct inspect_dependencies *d)
{
  free (d->why_unavailable);
  free (d->build_digest);
  free (d->refusal);
  memset (d, 0, sizeof *d);
}

enum inspect_server_run
inspect_server_run (const struct inspect_server *s, bool enabled,
                    enum inspect_status status, const char **why)
{
  const char *unused;

  if (why == NULL)
    why = &unused;
  *why = NULL;
  if (s->disabled)
    {
      *why = "disabledMcpServers names it";
      return INSPECT_SERVER_NOT_STARTED;
    }
  if (!enabled)
    {
      *why = COMPAT_DISABLED_REASON;
      return INSPECT_SERVER_UNCONFINED;
    }
  switch (status)
    {
    case INSPECT_READY:
      return INSPECT_SERVER_CONFINED;
    case INSPECT_REFUSED:
      *why = "the policy is refused here, as a command's would be";
      return INSPECT_SERVER_NOT_STARTED;
    case INSPECT_UNAVAILABLE:
      *why = "no sandbox backend was found, and servers are never run "
             "unconfined while sandbox.enabled is true";
      return INSPECT_SERVER_NOT_STARTED;
    default:
      *why = "the report could not be made";
      return INSPECT_SERVER_NOT_STARTED;
    }
}

char *
inspect_server_words (const struct inspect_server *s, bool enabled,
                      enum inspect_status status)
{
  const char *why;
  const char *tail = s->optional ? ", optional" : "";

  switch (inspect_server_run (s, enabled, status, &why))
    {
    case INSPECT_SERVER_CONFINED:
      return xasprintf ("confined%s", tail);
    case INSPECT_SERVER_UNCONFINED:
      return xasprintf ("not confined: %s%s", why, tail);
    default:
      return xasprintf ("not started: %s%s", why, tail);
    }
}

void
inspect_report_servers (struct inspect_report *r,
                        const struct inspect_server *servers, size_t n)
{
  for (size_t i = 0; i < r->n_servers; i++)
    free ((char *) r->servers[i].name);
  free (r->servers);
  r->servers = n > 0 ? xcalloc (n, sizeof *r->servers) : NULL;
  r->n_servers = n;
  for (size_t i = 0; i < n; i++)
    {
      r->servers[i] = servers[i];
      r->servers[i].name = xstrdup (servers[i].name);
    }
}
