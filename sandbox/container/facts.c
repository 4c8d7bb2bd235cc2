/* The container engine's facts and the report of them
 * (sandbox/container/facts.h).  */
#include <config.h>

#include "sandbox/container/facts.h"

#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/policy.h"

/* What crucible asks for by default (doc/container-backend.md).  */
#define CONTAINER_MEMORY_BYTES (1ull << 30)
#define CONTAINER_PIDS 1024
#define CONTAINER_WORKSPACE_BYTES (1ull << 30)
#define CONTAINER_TMP_BYTES (256ull << 20)
#define CONTAINER_USER "65534:65534"

/* The width of a report row's first column.  */
#define FACTS_WIDTH 22

void
engine_facts_clear (struct engine_facts *f)
{
  free (f->os);
  free (f->kernel);
  free (f->runtime);
  free (f->cgroup_version);
  free (f->cgroup_driver);
  free (f->seccomp_profile);
  free (f->image);
  free (f->image_id);
  free (f->image_why);
  memset (f, 0, sizeof *f);
}

/* A copy of a string member, or NULL.  */
static char *
facts_dup (yajl_val obj, const char *key)
{
  const char *s = json_member_str (obj, key);
  return s != NULL ? xstrdup (s) : NULL;
}

/* Read one of SecurityOptions' entries ("name=seccomp,profile=default").  */
static void
facts_security_option (const char *opt, struct engine_facts *f)
{
  if (strncmp (opt, "name=seccomp", 12) == 0
      && (opt[12] == '\0' || opt[12] == ','))
    {
      const char *p = strstr (opt, "profile=");
      f->seccomp = true;
      free (f->seccomp_profile);
      f->seccomp_profile
          = p != NULL ? xstrndup (p + 8, strcspn (p + 8, ",")) : NULL;
    }
  else if (strcmp (opt, "name=rootless") == 0)
    f->rootless = true;
  else if (strcmp (opt, "name=userns") == 0)
    f->userns = true;
}

void
engine_facts_from_info (yajl_val info, struct engine_facts *f)
{
  f->os = facts_dup (info, "OperatingSystem");
  f->kernel = facts_dup (info, "KernelVersion");
  f->runtime = facts_dup (info, "DefaultRuntime");
  f->cgroup_version = facts_dup (info, "CgroupVersion");
  f->cgroup_driver = facts_dup (info, "CgroupDriver");
  f->memory_limit = json_member_bool (info, "MemoryLimit", false);
  f->swap_limit = json_member_bool (info, "SwapLimit", false);
  f->pids_limit = json_member_bool (info, "PidsLimit", false);
  f->cpu_cfs = json_member_bool (info, "CpuCfsQuota", false);
  /* Podman also says it plainly.  */
  f->rootless = json_member_bool (info, "Rootless", false);
  yajl_val opts = json_member (info, "SecurityOptions");
  for (size_t i = 0;
       opts != NULL && YAJL_IS_ARRAY (opts) && i < opts->u.array.len; i++)
    if (YAJL_IS_STRING (opts->u.array.values[i]))
      facts_security_option (opts->u.array.values[i]->u.string, f);
}

/* Percent-encode what a path segment cannot carry as it is (an image name
 * holds '/' and ':', which the API takes as they are).  Owned.  */
static char *
facts_escape_name (const char *name)
{
  struct buf b = BUF_INIT;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
        || (*p >= '0' && *p <= '9') || strchr ("-._~:/@", *p) != NULL)
      buf_putc (&b, (char) *p);
    else
      buf_printf (&b, "%%%02X", *p);
  return buf_steal (&b, NULL);
}

/* The image's ID, or why there is none.  */
static void
facts_read_image (struct engine_client *c, const char *image,
                  struct engine_facts *f)
{
  struct cr_error *err = NULL;
  cleanup_free char *name = facts_escape_name (image);
  cleanup_free char *path = xasprintf ("/images/%s/json", name);
  struct engine_request req
      = { .method = "GET", .path = path, .answer_max = 1u << 20 };
  yajl_val v = NULL;
  f->image = xstrdup (image);
  if (engine_call_json (c, &req, &v, &err) < 0)
    {
      f->image_why = xstrdup (err->msg);
      cr_error_free (err);
      return;
    }
  const char *id = json_member_str (v, "Id");
  if (id != NULL && strncmp (id, "sha256:", 7) == 0)
    f->image_id = xstrdup (id);
  else
    f->image_why = xasprintf ("engine %s: the image %s has no sha256 ID",
                              engine_client_name (c), image);
  yajl_tree_free (v);
}

int
engine_facts_read (struct engine_client *c, const char *image,
                   struct engine_facts *f, struct cr_error **err)
{
  struct engine_request req = { .method = "GET", .path = "/info" };
  yajl_val info = NULL;
  memset (f, 0, sizeof *f);
  if (engine_call_json (c, &req, &info, err) < 0)
    return -1;
  engine_facts_from_info (info, f);
  yajl_tree_free (info);
  facts_read_image (c, image, f);
  return 0;
}

void
container_request_defaults (struct container_request *r,
                            unsigned long cpu_seconds, unsigned long open_files)
{
  r->memory_bytes = CONTAINER_MEMORY_BYTES;
  r->pids = CONTAINER_PIDS;
  r->workspace_bytes = CONTAINER_WORKSPACE_BYTES;
  r->tmp_bytes = CONTAINER_TMP_BYTES;
  r->file_bytes = CONTAINER_WORKSPACE_BYTES;
  r->cpu_seconds = cpu_seconds;
  r->open_files = open_files;
  r->user = CONTAINER_USER;
}

/* Whether c ends a socket path being redacted (as inspect's paths end).  */
static bool
facts_path_ends (const char *c)
{
  return *c == '\0' || *c == ' ' || strchr ("\"'`),;", *c) != NULL
         || (*c == ':' && (c[1] == '\0' || c[1] == ' '));
}

/* Whether the word ending at c (exclusive) is an HTTP method: what follows
 * it is the API's path, not the machine's.  */
static bool
facts_after_method (const char *text, const char *c)
{
  static const char *const methods[]
      = { "GET ", "POST ", "DELETE ", "PUT ", "HEAD " };
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    {
      size_t n = strlen (methods[i]);
      if ((size_t) (c - text) >= n && strncmp (c - n, methods[i], n) == 0)
        return true;
    }
  return false;
}

/* text with every path of the machine replaced by "<path>" (a socket's
 * after "unix://" too), and the API's request paths kept: the report names
 * no path but the workspace's.  Owned.  */
static char *
facts_redact (const char *text)
{
  struct buf b = BUF_INIT;
  for (const char *c = text; *c != '\0';)
    {
      bool word_start = c == text || c[-1] == ' ' || strchr ("\"'`(=", c[-1]);
      bool socket = strncmp (c, "unix:///", 8) == 0;
      if (socket || (*c == '/' && word_start && !facts_after_method (text, c)))
        {
          buf_puts (&b, socket ? "unix://<path>" : "<path>");
          for (c += socket ? 7 : 0; !facts_path_ends (c); c++)
            ;
          continue;
        }
      buf_putc (&b, *c++);
    }
  return buf_steal (&b, NULL);
}

/* "yes" or "no".  */
static const char *
facts_yes (bool b)
{
  return b ? "yes" : "no";
}

/* One row of the side-by-side table: what crucible asks, what the engine
 * says about it.  */
static void
facts_row (struct buf *b, const char *asks, const char *engine)
{
  /* A longer first column still keeps a space before the second.  */
  int width = (int) strlen (asks) < FACTS_WIDTH * 2 ? FACTS_WIDTH * 2
                                                    : (int) strlen (asks) + 1;
  buf_printf (b, "  %-*s%s\n", width, asks, engine);
}

/* The rows of what crucible would ask beside what the engine holds.  */
static void
facts_text_rows (struct buf *b, const struct container_report *r)
{
  const struct engine_facts *f = r->facts;
  const struct container_request *q = r->request;
  cleanup_free char *mem = policy_format_bytes (q->memory_bytes);
  cleanup_free char *ws = policy_format_bytes (q->workspace_bytes);
  cleanup_free char *tmp = policy_format_bytes (q->tmp_bytes);
  cleanup_free char *fsz = policy_format_bytes (q->file_bytes);
  cleanup_free char *memrow = xasprintf ("memory and swap %s together", mem);
  cleanup_free char *memeng
      = xasprintf ("memory limit %s, swap limit %s",
                   facts_yes (f->memory_limit), facts_yes (f->swap_limit));
  cleanup_free char *pids
      = xasprintf ("%llu processes (cgroup)", (unsigned long long) q->pids);
  cleanup_free char *pidseng
      = xasprintf ("pids limit %s", facts_yes (f->pids_limit));
  cleanup_free char *wsrow
      = xasprintf ("workspace on tmpfs %s, nosuid,nodev,exec", ws);
  cleanup_free char *tmprow
      = xasprintf ("/tmp on tmpfs %s, nosuid,nodev,exec", tmp);
  cleanup_free char *rl = xasprintf (
      "rlimits cpu %lus, %lu open files, file size %s, processes %llu",
      q->cpu_seconds, q->open_files, fsz, (unsigned long long) q->pids);
  cleanup_free char *seccomp
      = xasprintf ("seccomp %s%s%s%s", facts_yes (f->seccomp),
                   f->seccomp_profile != NULL ? " (profile " : "",
                   f->seccomp_profile != NULL ? f->seccomp_profile : "",
                   f->seccomp_profile != NULL ? ")" : "");
  cleanup_free char *user = xasprintf ("user %s, no-new-privileges", q->user);
  cleanup_free char *usereng
      = xasprintf ("rootless %s, user namespaces %s", facts_yes (f->rootless),
                   facts_yes (f->userns));
  buf_printf (b, "\nwhat crucible would ask for, beside what the engine "
                 "says it can hold:\n");
  facts_row (b, "network none", "-");
  facts_row (b, "read-only root filesystem", "-");
  facts_row (b, wsrow, "-");
  facts_row (b, tmprow, "-");
  facts_row (b, "every capability dropped", "-");
  facts_row (b, user, usereng);
  facts_row (b, memrow, memeng);
  facts_row (b, pids, pidseng);
  facts_row (b, "the engine's seccomp profile", seccomp);
  facts_row (b, rl, "-");
}

/* The engine lines: where, what, its runtime and cgroups.  */
static void
facts_text_engine (struct buf *b, const struct container_report *r)
{
  const struct engine_facts *f = r->facts;
  buf_printf (b, "\nthe engine:\n");
  buf_printf (b, "  %-*s%s %s, API %s\n", FACTS_WIDTH, "engine",
              engine_client_kind (r->client), engine_client_version (r->client),
              engine_client_api (r->client));
  buf_printf (b, "  %-*s%s\n", FACTS_WIDTH, "runtime",
              f->runtime != NULL ? f->runtime : "unknown");
  buf_printf (b, "  %-*sv%s, %s driver\n", FACTS_WIDTH, "cgroups",
              f->cgroup_version != NULL ? f->cgroup_version : "?",
              f->cgroup_driver != NULL ? f->cgroup_driver : "unknown");
  buf_printf (b, "  %-*s%s\n", FACTS_WIDTH, "kernel",
              f->kernel != NULL ? f->kernel : "unknown");
  if (f->image_id != NULL)
    buf_printf (b, "  %-*s%s, %s\n", FACTS_WIDTH, "image", f->image,
                f->image_id);
  else
    buf_printf (b,
                "  %-*s%s, not on the engine (crucible sandbox image "
                "build makes it)\n",
                FACTS_WIDTH, "image", f->image);
}

char *
container_report_text (const struct container_report *r)
{
  struct buf b = BUF_INIT;
  buf_printf (&b, "sandbox %s in %s\n", r->enabled ? "enabled" : "disabled",
              r->workspace);
  buf_printf (&b, "  %-10s%s\n", "mode", r->mode);
  buf_printf (&b, "  %-10s%s\n", "backend", CONTAINER_BACKEND_ID);
  buf_printf (&b, "  %-10s%s\n", "isolation", "container");
  if (r->endpoint != NULL)
    {
      cleanup_free char *a = facts_redact (r->endpoint->address);
      buf_printf (&b, "  %-10s%s, from %s\n", "engine", a, r->endpoint->source);
    }
  if (r->client == NULL)
    {
      cleanup_free char *why = facts_redact (r->why);
      buf_printf (&b,
                  "  %-10sunavailable\n\nthe engine cannot be used:\n"
                  "  %s\n",
                  "status", why);
      if (r->enabled)
        buf_puts (&b, "  commands are refused, never run unconfined, while "
                      "sandbox.enabled is true\n");
      return buf_steal (&b, NULL);
    }
  buf_printf (&b, "  %-10s%s\n", "status",
              r->facts->image_id != NULL
                  ? "the engine answers; commands run in containers it makes"
                  : "the engine answers; commands are refused until the "
                    "image is on it");
  facts_text_engine (&b, r);
  facts_text_rows (&b, r);
  buf_printf (&b, "\neach item is read back from the engine's description "
                  "of every container and checked from inside before the "
                  "command runs\n");
  return buf_steal (&b, NULL);
}

/* The "engine" object of the JSON report.  */
static void
facts_json_engine (struct jsonw *w, const struct container_report *r)
{
  const struct engine_facts *f = r->facts;
  jsonw_key (w, "engine");
  jsonw_object_open (w);
  const struct engine_endpoint *ep = engine_client_endpoint (r->client);
  cleanup_free char *a = facts_redact (ep->address);
  jsonw_member_cstr (w, "address", a);
  jsonw_member_cstr (w, "source", ep->source);
  jsonw_member_cstr (w, "kind", engine_client_kind (r->client));
  jsonw_member_cstr (w, "version", engine_client_version (r->client));
  jsonw_member_cstr (w, "api", engine_client_api (r->client));
  jsonw_member_cstr (w, "runtime", f->runtime);
  jsonw_member_cstr (w, "cgroup_version", f->cgroup_version);
  jsonw_member_cstr (w, "cgroup_driver", f->cgroup_driver);
  jsonw_member_bool (w, "memory_limit", f->memory_limit);
  jsonw_member_bool (w, "swap_limit", f->swap_limit);
  jsonw_member_bool (w, "pids_limit", f->pids_limit);
  jsonw_member_bool (w, "seccomp", f->seccomp);
  jsonw_member_cstr (w, "seccomp_profile", f->seccomp_profile);
  jsonw_member_bool (w, "rootless", f->rootless);
  jsonw_member_bool (w, "userns", f->userns);
  jsonw_object_close (w);
  jsonw_key (w, "image");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "name", f->image);
  jsonw_member_cstr (w, "id", f->image_id);
  jsonw_object_close (w);
}

/* The "asks" object: what crucible would ask for each command.  */
static void
facts_json_request (struct jsonw *w, const struct container_request *q)
{
  jsonw_key (w, "asks");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "network", "none");
  jsonw_member_bool (w, "read_only_root", true);
  jsonw_member_uint (w, "workspace_tmpfs_bytes", q->workspace_bytes);
  jsonw_member_uint (w, "tmp_tmpfs_bytes", q->tmp_bytes);
  jsonw_member_cstr (w, "tmpfs_options", "nosuid,nodev,exec");
  jsonw_member_cstr (w, "capabilities", "none");
  jsonw_member_bool (w, "no_new_privileges", true);
  jsonw_member_cstr (w, "user", q->user);
  jsonw_member_uint (w, "memory_bytes", q->memory_bytes);
  jsonw_member_uint (w, "memory_swap_bytes", q->memory_bytes);
  jsonw_member_uint (w, "pids", q->pids);
  jsonw_member_uint (w, "rlimit_cpu_seconds", q->cpu_seconds);
  jsonw_member_uint (w, "rlimit_open_files", q->open_files);
  jsonw_member_uint (w, "rlimit_file_bytes", q->file_bytes);
  jsonw_member_uint (w, "rlimit_processes", q->pids);
  jsonw_object_close (w);
}

char *
container_report_json (const struct container_report *r)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_member_uint (w, "format_version", 1);
  jsonw_member_cstr (w, "kind", "sandbox-inspection");
  bool available = r->client != NULL && r->facts->image_id != NULL;
  jsonw_member_cstr (w, "status", available ? "available" : "unavailable");
  jsonw_member_bool (w, "enabled", r->enabled);
  jsonw_member_cstr (w, "backend", CONTAINER_BACKEND_ID);
  jsonw_member_cstr (w, "isolation", "container");
  jsonw_member_bool (w, "engine_reachable", r->client != NULL);
  if (r->endpoint != NULL && r->client == NULL)
    {
      cleanup_free char *a = facts_redact (r->endpoint->address);
      jsonw_key (w, "engine");
      jsonw_object_open (w);
      jsonw_member_cstr (w, "address", a);
      jsonw_member_cstr (w, "source", r->endpoint->source);
      jsonw_object_close (w);
    }
  if (r->client != NULL)
    {
      facts_json_engine (w, r);
      facts_json_request (w, r->request);
    }
  const char *why = r->client == NULL ? r->why
                    : available       ? NULL
                                      : CONTAINER_NO_IMAGE;
  cleanup_free char *reason = why != NULL ? facts_redact (why) : NULL;
  if (reason != NULL)
    jsonw_member_cstr (w, "reason", reason);
  jsonw_object_close (w);
  size_t len;
  char *s = jsonw_steal (w, &len);
  struct buf b = BUF_INIT;
  buf_append (&b, s, len);
  buf_putc (&b, '\n');
  free (s);
  return buf_steal (&b, NULL);
}
