/* Resolving the configuration's sandbox block into one policy.  */
#include <config.h>

#include "sandbox/policy.h"

#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/sha256.h"

#define POLICY_KIB ((uint64_t) 1 << 10)
#define POLICY_MIB ((uint64_t) 1 << 20)
#define POLICY_GIB ((uint64_t) 1 << 30)

/* The canonical text of the only manifest there is until staged inputs
 * exist: nothing staged.  */
#define POLICY_EMPTY_MANIFEST "{\"format_version\":1,\"entries\":[]}"

/* The features every confined command requires: the boundary itself.  The
 * ceilings are added from what the policy states.  */
static const enum sandbox_feature policy_confined_baseline[] = {
  SANDBOX_FILESYSTEM,           SANDBOX_NETWORK_DENY,
  SANDBOX_DESCRIPTOR_ISOLATION, SANDBOX_PROCESS_ISOLATION,
  SANDBOX_KERNEL_SURFACE,       SANDBOX_PRIVILEGE_ISOLATION,
};

const char *
policy_access_name (enum policy_access a)
{
  switch (a)
    {
    case POLICY_READ_WRITE:
      return "read_write";
    case POLICY_READ_ONLY:
      return "read_only";
    case POLICY_PROTECTED:
      break;
    }
  return "protected";
}

const char *
policy_provenance_name (enum policy_provenance p)
{
  switch (p)
    {
    case POLICY_FROM_WORKSPACE:
      return "workspace";
    case POLICY_FROM_PROTECTED_METADATA:
      return "protected_metadata";
    case POLICY_FROM_CONFIGURATION:
      break;
    }
  return "configuration";
}

void
policy_digest (const void *data, size_t len, char out[POLICY_DIGEST_SIZE])
{
  char hex[SHA256_HEX_LEN + 1];
  sha256_buffer (data, len, hex);
  snprintf (out, POLICY_DIGEST_SIZE, "sha256:%s", hex);
}

/* The digest of the n parts, joined by NUL.  */
static void
policy_digest_parts (char out[POLICY_DIGEST_SIZE], const char *const *parts,
                     size_t n)
{
  struct buf b = BUF_INIT;

  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        buf_putc (&b, '\0');
      buf_puts (&b, parts[i]);
    }
  policy_digest (b.data != NULL ? b.data : "", b.len, out);
  buf_free (&b);
}

/* Print v with the fewest digits that read back as exactly v, in the C
 * locale whatever the person's (a report never says "1,5s").  */
void
policy_format_number (double v, char *out, size_t size)
{
  locale_t c = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  locale_t old = c != (locale_t) 0 ? uselocale (c) : (locale_t) 0;
  bool exact = false;

  for (int digits = 0; digits <= 20 && !exact; digits++)
    {
      snprintf (out, size, "%.*f", digits, v);
      exact = strtod (out, NULL) == v;
    }
  for (int digits = 1; digits <= 17 && !exact; digits++)
    {
      snprintf (out, size, "%.*g", digits, v);
      exact = strtod (out, NULL) == v;
    }
  if (old != (locale_t) 0)
    uselocale (old);
  if (c != (locale_t) 0)
    freelocale (c);
}

char *
policy_format_seconds (double seconds)
{
  char num[64];

  /* A whole number of minutes, tested in integers (below 1e15 a double
   * holds every integer exactly): fmod would link libm into every start.  */
  if (seconds >= 60 && seconds < 1e15 && (double) (uint64_t) seconds == seconds
      && (uint64_t) seconds % 60 == 0)
    return xasprintf ("%" PRIu64 "m", (uint64_t) seconds / 60);
  policy_format_number (seconds, num, sizeof num);
  return xasprintf ("%ss", num);
}

char *
policy_format_bytes (uint64_t bytes)
{
  if (bytes >= POLICY_GIB && bytes % POLICY_GIB == 0)
    return xasprintf ("%" PRIu64 " GiB", bytes / POLICY_GIB);
  if (bytes >= POLICY_MIB && bytes % POLICY_MIB == 0)
    return xasprintf ("%" PRIu64 " MiB", bytes / POLICY_MIB);
  if (bytes >= POLICY_KIB && bytes % POLICY_KIB == 0)
    return xasprintf ("%" PRIu64 " KiB", bytes / POLICY_KIB);
  return xasprintf ("%" PRIu64 " %s", bytes, bytes == 1 ? "byte" : "bytes");
}

char *
policy_ceiling_label (const struct policy_ceiling *c)
{
  uint64_t n = (uint64_t) c->value;
  char *part, *label;

  switch (c->feature)
    {
    case SANDBOX_CPU_LIMIT:
      part = policy_format_seconds (c->value);
      label = xasprintf ("cpu %s", part);
      break;
    case SANDBOX_COMMAND_TIME_LIMIT:
      part = policy_format_seconds (c->value);
      label = xasprintf ("%s per command", part);
      break;
    case SANDBOX_OUTPUT_LIMIT:
      part = policy_format_bytes (n);
      label = xasprintf ("%s captured", part);
      break;
    case SANDBOX_OPEN_FILE_LIMIT:
      return xasprintf ("%" PRIu64 " open %s", n, n == 1 ? "file" : "files");
    case SANDBOX_PROCESS_LIMIT:
      return xasprintf ("%" PRIu64 " %s", n, n == 1 ? "process" : "processes");
    case SANDBOX_CONCURRENCY_LIMIT:
      return xasprintf ("%" PRIu64 " at once", n);
    default:
      return xasprintf ("%s %" PRIu64, sandbox_feature_name (c->feature), n);
    }
  free (part);
  return label;
}

/* path made absolute against workspace and normalised by spelling: empty
 * and "." components dropped, ".." taking one back (never above "/").  No
 * symlink is followed: nothing is read.  */
static char *
policy_spell_path (const char *workspace, const char *path)
{
  char *joined
      = path[0] == '/' ? xstrdup (path) : xasprintf ("%s/%s", workspace, path);
  char *out = xmalloc (strlen (joined) + 2);
  size_t len = 0;
  char *save = NULL;

  for (char *part = strtok_r (joined, "/", &save); part != NULL;
       part = strtok_r (NULL, "/", &save))
    {
      if (strcmp (part, ".") == 0)
        continue;
      if (strcmp (part, "..") == 0)
        {
          while (len > 0 && out[len - 1] != '/')
            len--;
          if (len > 0)
            len--;
          continue;
        }
      out[len++] = '/';
      memcpy (out + len, part, strlen (part));
      len += strlen (part);
    }
  if (len == 0)
    out[len++] = '/';
  out[len] = '\0';
  free (joined);
  return out;
}

/* Add a root; its digest names access, provenance and path.  */
static void
policy_add_root (struct policy *p, enum policy_access access,
                 enum policy_provenance provenance, char *path)
{
  struct policy_root *r;

  p->roots = xrealloc (p->roots, (p->n_roots + 1) * sizeof *p->roots);
  r = &p->roots[p->n_roots++];
  r->access = access;
  r->provenance = provenance;
  r->path = path;
  const char *parts[] = { "crucible-root-v1", policy_access_name (access),
                          policy_provenance_name (provenance), path };
  policy_digest_parts (r->digest, parts, 4);
}

/* Order configured roots by access, then digest, so the effective policy
 * does not depend on the order the configuration listed them in.  */
static int
policy_root_cmp (const void *a, const void *b)
{
  const struct policy_root *ra = a, *rb = b;
  if (ra->provenance != rb->provenance)
    return (int) ra->provenance - (int) rb->provenance;
  if (ra->access != rb->access)
    return (int) ra->access - (int) rb->access;
  return strcmp (ra->digest, rb->digest);
}

/* Add every entry of list as a configured root at access.  */
static void
policy_add_configured (struct policy *p, const struct policy_input *in,
                       const struct policy_list *list,
                       enum policy_access access)
{
  for (size_t i = 0; i < list->count; i++)
    {
      char *path = policy_spell_path (in->workspace, list->items[i]);
      /* The workspace is writable already; naming it again adds nothing.  */
      if (access == POLICY_READ_WRITE && strcmp (path, p->roots[0].path) == 0)
        free (path);
      else
        policy_add_root (p, access, POLICY_FROM_CONFIGURATION, path);
    }
}

static int
policy_str_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Write a JSON array of the digests of list's entries (kind names the
 * domain), sorted, so order in the configuration does not matter.  */
static void
policy_put_digests (struct jsonw *w, const char *kind,
                    const struct policy_list *list)
{
  char **d = xcalloc (list->count + 1, sizeof *d);

  for (size_t i = 0; i < list->count; i++)
    {
      d[i] = xmalloc (POLICY_DIGEST_SIZE);
      const char *parts[] = { kind, list->items[i] };
      policy_digest_parts (d[i], parts, 2);
    }
  qsort (d, list->count, sizeof *d, policy_str_cmp);
  jsonw_array_open (w);
  for (size_t i = 0; i < list->count; i++)
    {
      jsonw_cstr (w, d[i]);
      free (d[i]);
    }
  jsonw_array_close (w);
  free (d);
}

/* Write the digests of the configured roots at access, sorted.  */
static void
policy_put_root_digests (struct jsonw *w, const struct policy *p,
                         enum policy_access access)
{
  jsonw_array_open (w);
  for (size_t i = 0; i < p->n_roots; i++)
    if (p->roots[i].provenance == POLICY_FROM_CONFIGURATION
        && p->roots[i].access == access)
      jsonw_cstr (w, p->roots[i].digest);
  jsonw_array_close (w);
}

/* Write "key": and a number as policy_format_number spells it.  */
static void
policy_put_number (struct jsonw *w, const char *key, double v)
{
  char num[64];
  policy_format_number (v, num, sizeof num);
  jsonw_key (w, key);
  jsonw_raw (w, num, strlen (num));
}

/* A policy document being written: its format version and mode.  */
static struct jsonw *
policy_doc_begin (bool enabled)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_member_uint (w, "format_version", 1);
  jsonw_member_bool (w, "enabled", enabled);
  return w;
}

/* The network members of a policy document.  */
static void
policy_put_network (struct jsonw *w, const struct policy_input *in,
                    bool allow_local_binding)
{
  jsonw_key (w, "network");
  jsonw_object_open (w);
  jsonw_key (w, "domains");
  policy_put_digests (w, "crucible-domain-v1", &in->domains);
  jsonw_member_bool (w, "allow_local_binding", allow_local_binding);
  jsonw_key (w, "unix_sockets");
  policy_put_digests (w, "crucible-unix_socket-v1", &in->unix_sockets);
  /* Whether the proxy may reach private addresses: two policies that
   * differ in it are not the same policy.  Only when set, so the digests
   * of every policy without it stay what they were.  */
  if (in->allow_private_addresses)
    jsonw_member_bool (w, "allow_private_addresses", true);
  /* sandbox.network.ports, in the order given; only when there are any,
   * so the digests of every policy without them stay what they were.  */
  if (in->ports.count > 0)
    {
      jsonw_key (w, "ports");
      jsonw_array_open (w);
      for (size_t i = 0; i < in->ports.count; i++)
        jsonw_uint (w, strtoull (in->ports.items[i], NULL, 10));
      jsonw_array_close (w);
    }
  jsonw_object_close (w);
}

/* The requested policy: what the configuration asks for, as written.  */
static char *
policy_requested_text (const struct policy *p, const struct policy_input *in,
                       const struct policy *confined)
{
  struct jsonw *w = policy_doc_begin (in->enabled);

  jsonw_key (w, "filesystem");
  jsonw_object_open (w);
  jsonw_key (w, "writable");
  policy_put_root_digests (w, confined, POLICY_READ_WRITE);
  jsonw_key (w, "read_only");
  policy_put_root_digests (w, confined, POLICY_READ_ONLY);
  jsonw_key (w, "protected");
  policy_put_root_digests (w, confined, POLICY_PROTECTED);
  jsonw_key (w, "unreadable");
  policy_put_digests (w, "crucible-unreadable-v1", &in->unreadable);
  jsonw_object_close (w);
  policy_put_network (w, in, in->allow_local_binding);
  jsonw_key (w, "limits");
  jsonw_object_open (w);
  jsonw_member_uint (w, "cpu_seconds", in->cpu_seconds);
  jsonw_member_uint (w, "open_files", in->open_files);
  jsonw_member_uint (w, "output_bytes", in->output_bytes);
  policy_put_number (w, "command_seconds", in->command_seconds);
  jsonw_member_uint (w, "concurrency", in->concurrency);
  jsonw_object_close (w);
  jsonw_object_close (w);
  return jsonw_steal (w, NULL);
}

void
policy_write_roots (struct jsonw *w, const struct policy *p)
{
  jsonw_array_open (w);
  for (size_t i = 0; i < p->n_roots; i++)
    {
      jsonw_object_open (w);
      jsonw_member_cstr (w, "access", policy_access_name (p->roots[i].access));
      jsonw_member_cstr (w, "provenance",
                         policy_provenance_name (p->roots[i].provenance));
      jsonw_member_cstr (w, "digest", p->roots[i].digest);
      jsonw_object_close (w);
    }
  jsonw_array_close (w);
}

void
policy_write_requires (struct jsonw *w, const struct policy *p)
{
  jsonw_array_open (w);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (p->sandbox.requires[f])
      jsonw_cstr (w, sandbox_feature_name ((enum sandbox_feature) f));
  jsonw_array_close (w);
}

/* The roots of an enabled policy, its hidden patterns, network and
 * process cap.  */
static void
policy_put_reach (struct jsonw *w, const struct policy *p,
                  const struct policy_input *in)
{
  jsonw_key (w, "roots");
  policy_write_roots (w, p);
  jsonw_key (w, "unreadable");
  policy_put_digests (w, "crucible-unreadable-v1", &in->unreadable);
  policy_put_network (w, in, p->allow_local_binding);
  jsonw_member_uint (w, "process_cap", POLICY_PROCESS_CAP);
}

/* The effective policy: what a backend is offered.  */
static char *
policy_effective_text (const struct policy *p, const struct policy_input *in)
{
  struct jsonw *w = policy_doc_begin (p->enabled);

  jsonw_member_cstr (w, "cwd", p->cwd_digest);
  if (!p->enabled)
    {
      jsonw_member_cstr (w, "filesystem", "unrestricted");
      jsonw_member_cstr (w, "network", "unrestricted");
    }
  else
    policy_put_reach (w, p, in);
  jsonw_key (w, "ceilings");
  jsonw_object_open (w);
  for (size_t i = 0; i < p->n_ceilings; i++)
    policy_put_number (w, sandbox_feature_name (p->ceilings[i].feature),
                       p->ceilings[i].value);
  jsonw_object_close (w);
  jsonw_key (w, "requires");
  policy_write_requires (w, p);
  jsonw_member_cstr (w, "manifest", p->manifest_digest);
  jsonw_member_bool (w, "outlives", false);
  jsonw_member_bool (w, "snapshots", false);
  jsonw_object_close (w);
  return jsonw_steal (w, NULL);
}

/* Add a ceiling the policy states, and require its feature.  */
static void
policy_add_ceiling (struct policy *p, enum sandbox_feature f, double value)
{
  p->ceilings[p->n_ceilings].feature = f;
  p->ceilings[p->n_ceilings].value = value;
  p->n_ceilings++;
  p->sandbox.requires[f] = true;
}

/* The roots a confined command reaches: the workspace read-write, its
 * control metadata protected, then what the configuration adds.  */
static void
policy_resolve_roots (struct policy *p, const struct policy_input *in)
{
  policy_add_root (p, POLICY_READ_WRITE, POLICY_FROM_WORKSPACE,
                   policy_spell_path ("/", in->workspace));
  policy_add_root (p, POLICY_PROTECTED, POLICY_FROM_PROTECTED_METADATA,
                   xstrdup (p->roots[0].path));
  policy_add_configured (p, in, &in->writable, POLICY_READ_WRITE);
  policy_add_configured (p, in, &in->read_only, POLICY_READ_ONLY);
  policy_add_configured (p, in, &in->protected_paths, POLICY_PROTECTED);
  if (p->n_roots > 2)
    qsort (p->roots + 2, p->n_roots - 2, sizeof *p->roots, policy_root_cmp);
}

/* The configuration key of a configured root at access.  */
static const char *
policy_root_key (enum policy_access a)
{
  switch (a)
    {
    case POLICY_READ_WRITE:
      return "writable";
    case POLICY_READ_ONLY:
      return "readOnly";
    case POLICY_PROTECTED:
      break;
    }
  return "protected";
}

/* Hand each configured root to the backend: a readOnly or protected one
 * inside the workspace by its path relative to it, kept read-only inside
 * and out of every publication; a writable one inside adds nothing (the
 * workspace is writable); any other is one nothing projects, and the
 * policy is refused naming the first (sandbox_check_policy).  */
static void
policy_resolve_backend_roots (struct policy *p)
{
  const char *ws = p->roots[0].path;
  size_t n = strlen (ws), n_ro = 0, n_prot = 0;

  p->read_only_rel = xcalloc (p->n_roots + 1, sizeof *p->read_only_rel);
  p->protected_rel = xcalloc (p->n_roots + 1, sizeof *p->protected_rel);
  for (size_t i = 0; i < p->n_roots; i++)
    {
      const struct policy_root *r = &p->roots[i];
      const char *path = r->path;
      bool top = strcmp (ws, "/") == 0;
      bool inside = top ? path[1] != '\0'
                        : strncmp (path, ws, n) == 0 && path[n] == '/';
      const char *rel = top ? path + 1 : path + n + 1;
      if (r->provenance != POLICY_FROM_CONFIGURATION
          || (inside && r->access == POLICY_READ_WRITE))
        continue;
      if (inside && r->access == POLICY_READ_ONLY)
        p->read_only_rel[n_ro++] = xstrdup (rel);
      else if (inside)
        p->protected_rel[n_prot++] = xstrdup (rel);
      else if (p->unheld_root == NULL)
        p->unheld_root = xasprintf (
            strcmp (path, ws) == 0
                ? "sandbox.filesystem.%s: '%s' is the workspace itself, "
                  "which a confined command writes"
                : "sandbox.filesystem.%s: '%s' is outside the workspace, and "
                  "a confined command reaches nothing outside it",
            policy_root_key (r->access), path);
    }
  p->sandbox.read_only = (const char *const *) p->read_only_rel;
  p->sandbox.n_read_only = n_ro;
  p->sandbox.protected_paths = (const char *const *) p->protected_rel;
  p->sandbox.n_protected = n_prot;
  p->sandbox.unheld_root = p->unheld_root;
}

/* What the policy requires and states.  Confined: the boundary, the
 * network shape and all five ceilings.  Disabled: only the three ceilings
 * crucible itself enforces; disabling confinement takes the two confining
 * ceilings (cpu, open files) off with it (spec, "Capability matrix").  */
static void
policy_resolve_requirements (struct policy *p, const struct policy_input *in)
{
  p->sandbox.enabled = in->enabled;
  p->sandbox.command_seconds = in->command_seconds;
  p->sandbox.output_bytes = in->output_bytes;
  p->sandbox.concurrency = in->concurrency;
  if (in->enabled)
    {
      for (size_t i = 0; i < sizeof policy_confined_baseline
                                 / sizeof *policy_confined_baseline;
           i++)
        p->sandbox.requires[policy_confined_baseline[i]] = true;
      /* Any way out beyond a closed network is mediated by the proxy.  */
      if (in->domains.count > 0 || in->allow_local_binding)
        p->sandbox.requires[SANDBOX_NETWORK_ALLOWLIST] = true;
      policy_add_ceiling (p, SANDBOX_CPU_LIMIT, (double) in->cpu_seconds);
      policy_add_ceiling (p, SANDBOX_OPEN_FILE_LIMIT, (double) in->open_files);
    }
  policy_add_ceiling (p, SANDBOX_OUTPUT_LIMIT, (double) in->output_bytes);
  policy_add_ceiling (p, SANDBOX_CONCURRENCY_LIMIT, (double) in->concurrency);
  policy_add_ceiling (p, SANDBOX_COMMAND_TIME_LIMIT, in->command_seconds);
}

int
policy_resolve (const struct policy_input *in, struct policy **out,
                struct cr_error **err)
{
  struct policy *p, confined = { 0 };

  if (in->workspace == NULL || in->workspace[0] != '/')
    return cr_error_set (err, 0,
                         "resolving the sandbox policy: the workspace is not "
                         "an absolute path");
  p = xcalloc (1, sizeof *p);
  p->enabled = in->enabled;
  p->enabled_source = in->enabled_source;
  policy_resolve_roots (&confined, in);
  const char *cwd[] = { "crucible-cwd-v1", confined.roots[0].path };
  policy_digest_parts (p->cwd_digest, cwd, 2);
  if (in->enabled)
    {
      p->roots = confined.roots;
      p->n_roots = confined.n_roots;
      confined.roots = NULL;
      confined.n_roots = 0;
      p->unreadable_patterns = in->unreadable.count;
      p->domains = in->domains.count;
      p->allow_local_binding = in->allow_local_binding;
      p->unix_sockets = in->unix_sockets.count;
      /* The network the backend makes: the names for the host's proxy,
       * whether the workload may listen, and the proxy's address rule.  */
      p->sandbox.domains = (const char *const *) in->domains.items;
      p->sandbox.n_domains = in->domains.count;
      p->sandbox.allow_local_binding = in->allow_local_binding;
      p->sandbox.allow_private_addresses = in->allow_private_addresses;
      /* Checked by the configuration (1024..65535, at most 16).  */
      for (size_t i = 0; i < in->ports.count && i < 16; i++)
        p->ports[i] = (uint16_t) strtoul (in->ports.items[i], NULL, 10);
      p->sandbox.ports = p->ports;
      p->sandbox.n_ports = in->ports.count < 16 ? in->ports.count : 16;
    }
  policy_resolve_requirements (p, in);
  if (in->enabled)
    policy_resolve_backend_roots (p);
  policy_digest (POLICY_EMPTY_MANIFEST, strlen (POLICY_EMPTY_MANIFEST),
                 p->manifest_digest);
  p->requested_text = policy_requested_text (p, in, p->enabled ? p : &confined);
  p->effective_text = policy_effective_text (p, in);
  policy_digest (p->requested_text, strlen (p->requested_text),
                 p->requested_digest);
  policy_digest (p->effective_text, strlen (p->effective_text),
                 p->effective_digest);
  for (size_t i = 0; i < confined.n_roots; i++)
    free (confined.roots[i].path);
  free (confined.roots);
  *out = p;
  return 0;
}

void
policy_free (struct policy *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n_roots; i++)
    free (p->roots[i].path);
  free (p->roots);
  for (size_t i = 0; p->read_only_rel != NULL && p->read_only_rel[i]; i++)
    free (p->read_only_rel[i]);
  for (size_t i = 0; p->protected_rel != NULL && p->protected_rel[i]; i++)
    free (p->protected_rel[i]);
  free (p->read_only_rel);
  free (p->protected_rel);
  free (p->unheld_root);
  free (p->requested_text);
  free (p->effective_text);
  free (p);
}
