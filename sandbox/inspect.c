/* The inspection report, as text and as one line of JSON.  */
#include <config.h>

#include "sandbox/inspect.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/compat.h"

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
  char *reason; /* refused: the refusal; unavailable: why not found */
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
    buf_printf (&b, "%zu %s through the host proxy", p->domains,
                p->domains == 1 ? "domain" : "domains");
  if (p->allow_local_binding)
    buf_puts (&b, ", local binding");
  if (p->unix_sockets > 0)
    buf_printf (&b, ", %zu %s", p->unix_sockets,
                p->unix_sockets == 1 ? "Unix socket" : "Unix sockets");
  return buf_steal (&b, NULL);
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
  return buf_steal (&b, NULL);
}

/* Append s as a JSON string.  */
static void
inspect_json_string (struct buf *b, const char *s)
{
  buf_putc (b, '"');
  for (; *s != '\0'; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        buf_printf (b, "\\%c", c);
      else if (c == '\n')
        buf_puts (b, "\\n");
      else if (c < 0x20)
        buf_printf (b, "\\u%04x", c);
      else
        buf_putc (b, (char) c);
    }
  buf_putc (b, '"');
}

/* Append "name":"value", preceded by a comma.  */
static void
inspect_json_field (struct buf *b, const char *name, const char *value)
{
  buf_printf (b, ",\"%s\":", name);
  if (value == NULL)
    buf_puts (b, "null");
  else
    inspect_json_string (b, value);
}

/* The backend object and the capability matrix.  */
static void
inspect_json_backend (struct buf *b, const struct inspect_report *r)
{
  buf_puts (b, ",\"backend\":{\"id\":");
  inspect_json_string (b, r->backend_id);
  inspect_json_field (b, "provenance", r->provenance);
  inspect_json_field (b, "version", r->version);
  if (r->version == NULL)
    buf_printf (b,
                ",\"version_unverified\":\"reading it would start %s, and "
                "inspecting starts nothing\"",
                inspect_program_name (r->backend_id));
  inspect_json_field (b, "build", r->build_digest);
  buf_puts (b, "},\"capabilities\":{");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    buf_printf (b, "%s\"%s\":\"%s\"", f > 0 ? "," : "",
                sandbox_feature_name ((enum sandbox_feature) f),
                sandbox_support_name (r->claims.support[f]));
  buf_putc (b, '}');
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

/* The policy object: digests, reach, network, ceilings with their claims.  */
static void
inspect_json_policy (struct buf *b, const struct inspect_report *r)
{
  const struct policy *p = r->policy;
  bool first = true;

  buf_printf (b, ",\"policy\":{\"cwd\":\"%s\"", p->cwd_digest);
  if (p->enabled)
    {
      buf_puts (b, ",\"reach\":[");
      for (size_t i = 0; i < p->n_roots; i++)
        buf_printf (b,
                    "%s{\"access\":\"%s\",\"provenance\":\"%s\","
                    "\"digest\":\"%s\"}",
                    i > 0 ? "," : "", policy_access_name (p->roots[i].access),
                    policy_provenance_name (p->roots[i].provenance),
                    p->roots[i].digest);
      buf_printf (b,
                  "],\"hidden_patterns\":%zu,\"network\":{\"closed\":%s,"
                  "\"domains\":%zu,\"allow_local_binding\":%s,"
                  "\"unix_sockets\":%zu}",
                  p->unreadable_patterns, p->domains == 0 ? "true" : "false",
                  p->domains, p->allow_local_binding ? "true" : "false",
                  p->unix_sockets);
    }
  else
    buf_puts (b, ",\"reach\":null,\"hidden_patterns\":null,\"network\":null");
  buf_puts (b, ",\"ceilings\":[");
  for (size_t i = 0; i < p->n_ceilings; i++)
    {
      const struct policy_ceiling *c = &p->ceilings[i];
      char num[64], *label = policy_ceiling_label (c);
      policy_format_number (c->value, num, sizeof num);
      buf_printf (b, "%s{\"feature\":\"%s\",\"value\":%s,\"unit\":\"%s\",",
                  i > 0 ? "," : "", sandbox_feature_name (c->feature), num,
                  inspect_ceiling_unit (c->feature));
      buf_printf (b, "\"label\":\"%s\",\"claim\":\"%s\"}", label,
                  sandbox_support_name (r->claims.support[c->feature]));
      free (label);
    }
  buf_printf (b, "],\"staged\":%zu,\"outlives\":%s,\"snapshots\":%s", p->staged,
              p->outlives ? "true" : "false", p->snapshots ? "true" : "false");
  buf_puts (b, ",\"requires\":[");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (p->sandbox.requires[f])
      {
        buf_printf (b, "%s\"%s\"", first ? "" : ",",
                    sandbox_feature_name ((enum sandbox_feature) f));
        first = false;
      }
  buf_printf (b,
              "],\"requested\":\"%s\",\"effective\":\"%s\","
              "\"manifest\":\"%s\"}",
              p->requested_digest, p->effective_digest, p->manifest_digest);
}

char *
inspect_format_json (const struct inspect_report *r)
{
  struct buf b = BUF_INIT;

  buf_printf (&b,
              "{\"format_version\":1,\"kind\":\"sandbox-inspection\","
              "\"status\":\"%s\",\"enabled\":%s,\"mode\":\"%s\"",
              inspect_status_name (r->status),
              r->policy->enabled ? "true" : "false",
              inspect_source_name (r->policy->enabled_source));
  if (r->status == INSPECT_UNAVAILABLE)
    {
      buf_puts (&b, ",\"backend\":null,\"capabilities\":null");
      inspect_json_field (&b, "reason", r->reason);
      buf_puts (&b, "}\n");
      return buf_steal (&b, NULL);
    }
  inspect_json_backend (&b, r);
  inspect_json_policy (&b, r);
  if (r->status == INSPECT_REFUSED)
    {
      inspect_json_field (&b, "reason", r->reason);
      buf_puts (&b, ",\"confined\":false");
    }
  else if (r->policy->enabled)
    buf_printf (&b,
                ",\"confined\":true,\"not_checked\":[\"whether %s starts and "
                "can make its namespaces on this host\",\"whether each root "
                "passes the checks a command's preparation makes\"]",
                inspect_program_name (r->backend_id));
  else
    buf_puts (
        &b, ",\"confined\":false,\"disabled_reason\":\"" COMPAT_DISABLED_REASON
            "\"");
  buf_puts (&b, "}\n");
  return buf_steal (&b, NULL);
}

char *
inspect_failed_json (const char *stage)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "{\"format_version\":1,\"kind\":\"sandbox-inspection\","
                "\"status\":\"failed\",\"stage\":");
  inspect_json_string (&b, stage);
  buf_puts (&b, "}\n");
  return buf_steal (&b, NULL);
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
