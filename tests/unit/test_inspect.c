/* Tests for sandbox/inspect.c: the report's exact layout in each variant
 * (ready, refused, unavailable, disabled), the JSON line, path redaction
 * and the Dependencies tab's data, over fabricated backend infos.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/inspect.h"

#define WS "/ws/root"
#define BUILD                                                                  \
  "sha256:523da3e7399044be5163aee6f57a77a6bef7454376e28f0a0627920bae1b76b6"

/* The spec's sample matrix.  */
static struct sandbox_claims
sample_claims (void)
{
  struct sandbox_claims c;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    c.support[f] = SANDBOX_ENFORCED;
  const enum sandbox_feature no[] = { SANDBOX_DISK_LIMIT,
                                      SANDBOX_SESSION_TIME_LIMIT,
                                      SANDBOX_OUTBOUND_BYTE_LIMIT,
                                      SANDBOX_COST_LIMIT,
                                      SANDBOX_PTY,
                                      SANDBOX_FILE_OPERATIONS,
                                      SANDBOX_PERSISTENCE,
                                      SANDBOX_SNAPSHOT,
                                      SANDBOX_RESUME };
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    c.support[no[i]] = SANDBOX_UNSUPPORTED;
  c.support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
  return c;
}

/* A found bwrap with the sample's claims.  */
static struct inspect_backend_info
found_bwrap (void)
{
  struct inspect_backend_info info = {
    .id = "linux-bubblewrap",
    .provenance = "system",
    .build_digest = xstrdup (BUILD),
    .claims = sample_claims (),
    .found = true,
  };
  return info;
}

static struct policy_input
input (bool enabled, enum policy_source source)
{
  struct policy_input in = {
    .enabled = enabled,
    .enabled_source = source,
    .workspace = WS,
    .cpu_seconds = 3600,
    .open_files = 4096,
    .output_bytes = 10485760,
    .command_seconds = 1200,
    .concurrency = 4,
  };
  return in;
}

/* Build a report, requiring success.  */
static struct inspect_report *
build (const struct policy_input *in, const struct inspect_backend_info *info)
{
  struct inspect_report *r = NULL;
  struct cr_error *err = NULL;
  if (inspect_build (in, info, &r, &err) < 0)
    fail_msg ("inspect_build: %s", err->msg);
  return r;
}

static struct policy *
resolve (const struct policy_input *in)
{
  struct policy *p = NULL;
  struct cr_error *err = NULL;
  if (policy_resolve (in, &p, &err) < 0)
    fail_msg ("policy_resolve: %s", err->msg);
  return p;
}

#define SAMPLE_MATRIX                                                          \
  "what this backend can hold:\n"                                              \
  "  filesystem            enforced\n"                                         \
  "  network_deny          enforced\n"                                         \
  "  network_allowlist     enforced\n"                                         \
  "  descriptor_isolation  enforced\n"                                         \
  "  process_isolation     enforced\n"                                         \
  "  kernel_surface        enforced\n"                                         \
  "  privilege_isolation   enforced\n"                                         \
  "  materialization       enforced\n"                                         \
  "  cpu_limit             enforced\n"                                         \
  "  memory_limit          enforced\n"                                         \
  "  disk_limit            unsupported\n"                                      \
  "  process_limit         enforced\n"                                         \
  "  open_file_limit       enforced\n"                                         \
  "  command_time_limit    enforced\n"                                         \
  "  session_time_limit    unsupported\n"                                      \
  "  outbound_byte_limit   unsupported\n"                                      \
  "  output_limit          enforced\n"                                         \
  "  concurrency_limit     enforced\n"                                         \
  "  cost_limit            unsupported\n"                                      \
  "  pty                   unsupported\n"                                      \
  "  file_operations       unsupported\n"                                      \
  "  persistence           unsupported\n"                                      \
  "  snapshot              unsupported\n"                                      \
  "  resume                unsupported\n"                                      \
  "  audit                 enforced\n"                                         \
  "  usage                 observed\n"

/* The spec's sample, line for line, with this policy's digests.  */
static void
test_ready_matches_the_spec (void **state)
{
  struct policy_input in = input (true, POLICY_SOURCE_PROJECT);
  struct inspect_backend_info info = found_bwrap ();
  struct inspect_report *r = build (&in, &info);
  struct policy *p = resolve (&in);
  struct buf want = BUF_INIT;

  buf_printf (
      &want,
      "sandbox enabled in " WS "\n"
      "  mode      required by project configuration\n"
      "  backend   linux-bubblewrap, system\n"
      "  isolation namespaces\n"
      "  version   unverified; reading it would start Bubblewrap, and "
      "inspecting starts nothing\n"
      "  build     " BUILD "\n"
      "\n" SAMPLE_MATRIX "\n"
      "what a command would run under:\n"
      "  enabled   true\n"
      "  cwd       %s\n"
      "  reach     2 places, named by digest\n"
      "    read_write  workspace           %s\n"
      "    protected   protected_metadata  %s\n"
      "  hidden    0 patterns\n"
      "  network   closed\n"
      "  ceilings\n"
      "    cpu 60m                 enforced\n"
      "    4096 open files         enforced\n"
      "    10 MiB captured         enforced\n"
      "    4 at once               enforced\n"
      "    20m per command         enforced\n"
      "  staged    nothing\n"
      "  outlives  no\n"
      "  snapshots no\n"
      "  confined  yes\n"
      "  policy    %s\n"
      "  manifest  %s\n"
      "\n"
      "not checked, since checking would start something:\n"
      "  whether Bubblewrap starts and can make its namespaces on this host, "
      "and whether each root passes the checks a command's preparation "
      "makes\n",
      p->cwd_digest, p->roots[0].digest, p->roots[1].digest,
      p->effective_digest, p->manifest_digest);
  char *text = inspect_format_text (r);
  assert_int_equal (inspect_report_status (r), INSPECT_READY);
  assert_string_equal (text, want.data);
  free (text);
  buf_free (&want);
  policy_free (p);
  inspect_report_free (r);
  inspect_backend_info_clear (&info);
}

/* The mode line for each way confinement came to be on or off.  */
static void
test_mode_lines (void **state)
{
  struct
  {
    bool enabled;
    enum policy_source source;
    const char *line;
  } cases[] = {
    { true, POLICY_SOURCE_PROJECT,
      "\n  mode      required by project configuration\n" },
    { true, POLICY_SOURCE_HOME,
      "\n  mode      enabled by home configuration\n" },
    { false, POLICY_SOURCE_HOME,
      "\n  mode      disabled by home configuration\n" },
    { false, POLICY_SOURCE_DEFAULT, "\n  mode      disabled by default\n" },
  };
  struct inspect_backend_info info = found_bwrap ();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct policy_input in = input (cases[i].enabled, cases[i].source);
      struct inspect_report *r = build (&in, &info);
      char *text = inspect_format_text (r);
      assert_non_null (strstr (text, cases[i].line));
      free (text);
      inspect_report_free (r);
    }
  inspect_backend_info_clear (&info);
}

/* Time ceilings keep their exact value in the report.  */
static void
test_fractional_ceilings (void **state)
{
  struct policy_input in = input (true, POLICY_SOURCE_HOME);
  struct inspect_backend_info info = found_bwrap ();
  in.command_seconds = 1.5;
  in.cpu_seconds = 90;
  in.output_bytes = 68719476736;
  struct inspect_report *r = build (&in, &info);
  char *text = inspect_format_text (r);
  assert_non_null (strstr (text, "\n    1.5s per command        enforced\n"));
  assert_non_null (strstr (text, "\n    cpu 90s                 enforced\n"));
  assert_non_null (strstr (text, "\n    64 GiB captured         enforced\n"));
  free (text);
  inspect_report_free (r);

  in.command_seconds = 0.001;
  r = build (&in, &info);
  text = inspect_format_text (r);
  assert_non_null (strstr (text, "\n    0.001s per command      enforced\n"));
  assert_null (strstr (text, " 0s "));
  free (text);
  inspect_report_free (r);

  /* A label longer than its column still has a space before the claim.  */
  in.output_bytes = 68719476735;
  r = build (&in, &info);
  text = inspect_format_text (r);
  assert_non_null (
      strstr (text, "\n    68719476735 bytes captured enforced\n"));
  free (text);
  inspect_report_free (r);
  inspect_backend_info_clear (&info);
}

/* A found backend that will not hold the policy: the matrix, what was
 * asked for, and why no command could be run.  */
static void
test_refused (void **state)
{
  struct policy_input in = input (true, POLICY_SOURCE_HOME);
  struct inspect_backend_info info = found_bwrap ();
  char *domains[] = { (char *) "example.com", (char *) "*.npmjs.org" };
  info.claims.support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_UNSUPPORTED;
  in.domains.items = domains;
  in.domains.count = 2;
  struct inspect_report *r = build (&in, &info);
  struct policy *p = resolve (&in);
  char *text = inspect_format_text (r);
  char *expected_tail = xasprintf (
      "\nwhat was asked for:\n"
      "  enabled   true\n"
      "  cwd       %s\n"
      "  reach     2 places, named by digest\n"
      "    read_write  workspace           %s\n"
      "    protected   protected_metadata  %s\n"
      "  hidden    0 patterns\n"
      "  network   2 domains, through the host proxy\n"
      "  ceilings\n"
      "    cpu 60m                 enforced\n"
      "    4096 open files         enforced\n"
      "    10 MiB captured         enforced\n"
      "    4 at once               enforced\n"
      "    20m per command         enforced\n"
      "  staged    nothing\n"
      "  outlives  no\n"
      "  snapshots no\n"
      "  policy    %s\n"
      "  manifest  %s\n"
      "\n"
      "no command could be run here:\n"
      "  the policy requires network_allowlist, which the linux-bubblewrap "
      "backend does not enforce\n",
      p->cwd_digest, p->roots[0].digest, p->roots[1].digest,
      p->requested_digest, p->manifest_digest);

  assert_int_equal (inspect_report_status (r), INSPECT_REFUSED);
  assert_non_null (strstr (text, "\n  network_allowlist     unsupported\n"));
  assert_non_null (strstr (text, "  build     " BUILD "\n\nwhat this backend "
                                 "can hold:\n"));
  size_t tl = strlen (expected_tail), l = strlen (text);
  assert_true (l > tl);
  assert_string_equal (text + l - tl, expected_tail);
  assert_null (strstr (text, "not checked"));
  assert_null (strstr (text, "example"));
  free (expected_tail);
  free (text);
  policy_free (p);
  inspect_report_free (r);
  inspect_backend_info_clear (&info);
}

/* No backend found: the reason, with any path taken out, and no matrix.  */
static void
test_unavailable (void **state)
{
  struct policy_input in = input (true, POLICY_SOURCE_HOME);
  struct inspect_backend_info info = {
    .id = "linux-bubblewrap",
    .provenance = "system",
    .why_not_found = xstrdup ("no trusted bwrap: /usr/bin/bwrap: below "
                              "/usr/bin, which group or others can write"),
  };
  struct inspect_report *r = build (&in, &info);
  char *text = inspect_format_text (r);
  assert_int_equal (inspect_report_status (r), INSPECT_UNAVAILABLE);
  assert_string_equal (
      text, "sandbox enabled in " WS "\n"
            "  mode      enabled by home configuration\n"
            "\n"
            "no sandbox backend was found:\n"
            "  no trusted bwrap: <path>: below <path>, which group or "
            "others can write\n"
            "  commands are refused, never run unconfined, while "
            "sandbox.enabled is true\n");
  free (text);
  text = inspect_format_json (r);
  assert_string_equal (
      text, "{\"format_version\":1,\"kind\":\"sandbox-inspection\","
            "\"status\":\"unavailable\",\"enabled\":true,\"mode\":\"home\","
            "\"backend\":null,\"capabilities\":null,\"reason\":\"no trusted "
            "bwrap: <path>: below <path>, which group or others can "
            "write\"}\n");
  free (text);
  inspect_report_free (r);

  /* No info at all reads the same way, with the generic reason.  */
  r = build (&in, NULL);
  assert_int_equal (inspect_report_status (r), INSPECT_UNAVAILABLE);
  inspect_report_free (r);
  inspect_backend_info_clear (&info);
}

/* Disabled: the compatibility matrix and confined: false with the reason,
 * whatever backend was found.  */
static void
test_disabled (void **state)
{
  struct policy_input in = input (false, POLICY_SOURCE_HOME);
  struct inspect_backend_info info = found_bwrap ();
  struct inspect_report *r = build (&in, &info);
  struct policy *p = resolve (&in);
  struct buf want = BUF_INIT;

  buf_printf (&want, "sandbox disabled in " WS "\n"
                     "  mode      disabled by home configuration\n"
                     "  backend   compat, built in\n"
                     "  isolation process\n"
                     "  version   " PACKAGE_VERSION "\n"
                     "\n"
                     "what this backend can hold:\n");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    buf_printf (&want, "  %-22s%s\n",
                sandbox_feature_name ((enum sandbox_feature) f),
                f == SANDBOX_COMMAND_TIME_LIMIT || f == SANDBOX_OUTPUT_LIMIT
                        || f == SANDBOX_CONCURRENCY_LIMIT
                    ? "enforced"
                : f == SANDBOX_AUDIT || f == SANDBOX_USAGE ? "observed"
                                                           : "unsupported");
  buf_printf (&want,
              "\n"
              "what a command would run under:\n"
              "  enabled   false\n"
              "  cwd       %s\n"
              "  reach     not restricted\n"
              "  hidden    not restricted\n"
              "  network   not restricted\n"
              "  ceilings\n"
              "    10 MiB captured         enforced\n"
              "    4 at once               enforced\n"
              "    20m per command         enforced\n"
              "  staged    nothing\n"
              "  outlives  no\n"
              "  snapshots no\n"
              "  confined  false: confinement is disabled (sandbox.enabled "
              "is false)\n"
              "  policy    %s\n"
              "  manifest  %s\n",
              p->cwd_digest, p->effective_digest, p->manifest_digest);
  char *text = inspect_format_text (r);
  assert_int_equal (inspect_report_status (r), INSPECT_READY);
  assert_string_equal (text, want.data);
  free (text);
  text = inspect_format_json (r);
  assert_non_null (strstr (text, ",\"confined\":false,\"disabled_reason\":"
                                 "\"confinement is disabled (sandbox.enabled "
                                 "is false)\"}\n"));
  assert_non_null (strstr (
      text, "\"backend\":{\"id\":\"compat\",\"isolation\":\"process\""));
  free (text);
  buf_free (&want);
  policy_free (p);
  inspect_report_free (r);
  inspect_backend_info_clear (&info);
}

/* Check one JSON report: one line, valid, the fixed fields, no path.  */
static void
check_json (const char *json, const char *status)
{
  char why[256] = "";
  size_t len = strlen (json);

  assert_true (len > 1 && json[len - 1] == '\n');
  assert_ptr_equal (strchr (json, '\n'), json + len - 1);
  assert_null (strchr (json, '/'));
  assert_null (strstr (json, WS));
  yajl_val root = yajl_tree_parse (json, why, sizeof why);
  if (root == NULL)
    fail_msg ("not JSON: %s: %s", why, json);
  const char *fv[] = { "format_version", NULL };
  const char *kind[] = { "kind", NULL };
  const char *st[] = { "status", NULL };
  yajl_val v = yajl_tree_get (root, fv, yajl_t_number);
  assert_non_null (v);
  assert_int_equal (YAJL_GET_INTEGER (v), 1);
  v = yajl_tree_get (root, kind, yajl_t_string);
  assert_string_equal (YAJL_GET_STRING (v), "sandbox-inspection");
  v = yajl_tree_get (root, st, yajl_t_string);
  assert_string_equal (YAJL_GET_STRING (v), status);
  yajl_tree_free (root);
}

static void
test_json_every_variant (void **state)
{
  struct inspect_backend_info info = found_bwrap ();
  struct inspect_backend_info none
      = { .why_not_found = xstrdup ("nothing at /usr/bin/bwrap") };
  char *domains[] = { (char *) "example.com" };
  char *paths[] = { (char *) "/etc/secret", (char *) "rel/dir" };
  char *inside[] = { (char *) "rel/dir", (char *) WS "/abs/dir" };
  struct policy_input in = input (true, POLICY_SOURCE_PROJECT);
  in.read_only.items = inside;
  in.read_only.count = 2;
  in.unreadable.items = paths;
  in.unreadable.count = 2;
  struct inspect_report *r;
  char *json;

  r = build (&in, &info);
  json = inspect_format_json (r);
  check_json (json, "ready");
  assert_non_null (strstr (json, "\"confined\":true"));
  assert_non_null (strstr (json, "\"hidden_patterns\":2"));
  free (json);
  inspect_report_free (r);

  /* A readOnly root outside the workspace is held by nothing: refused by
   * name, the path redacted, never "confined": true.  */
  in.read_only.items = paths;
  r = build (&in, &info);
  json = inspect_format_json (r);
  check_json (json, "refused");
  assert_non_null (strstr (json, "\"reason\":\"sandbox.filesystem.readOnly: "
                                 "'<path>' is outside the workspace, and a "
                                 "confined command reaches nothing outside "
                                 "it\""));
  assert_null (strstr (json, "\"confined\":true"));
  free (json);
  inspect_report_free (r);
  in.read_only.items = inside;

  in.domains.items = domains;
  in.domains.count = 1;
  info.claims.support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_UNSUPPORTED;
  r = build (&in, &info);
  json = inspect_format_json (r);
  check_json (json, "refused");
  assert_non_null (strstr (json, "\"reason\":\"the policy requires "
                                 "network_allowlist, which the "
                                 "linux-bubblewrap backend does not "
                                 "enforce\""));
  free (json);
  inspect_report_free (r);

  r = build (&in, &none);
  json = inspect_format_json (r);
  check_json (json, "unavailable");
  free (json);
  inspect_report_free (r);

  in.enabled = false;
  in.enabled_source = POLICY_SOURCE_HOME;
  r = build (&in, &none);
  json = inspect_format_json (r);
  check_json (json, "ready");
  free (json);
  inspect_report_free (r);

  json = inspect_failed_json ("configuration");
  check_json (json, "failed");
  assert_string_equal (json, "{\"format_version\":1,\"kind\":\"sandbox-"
                             "inspection\",\"status\":\"failed\",\"stage\":"
                             "\"configuration\"}\n");
  free (json);
  inspect_backend_info_clear (&info);
  inspect_backend_info_clear (&none);
}

/* Check one redaction.  */
static void
expect_redacted (const char *in, const char *want)
{
  char *got = inspect_redact_paths (in);
  assert_string_equal (got, want);
  free (got);
}

static void
test_redact_paths (void **state)
{
  expect_redacted ("no path here", "no path here");
  expect_redacted ("/usr/bin/bwrap: not root-owned", "<path>: not root-owned");
  expect_redacted ("looked at /a/b, /c and (/d/e)",
                   "looked at <path>, <path> and (<path>)");
  expect_redacted ("read and/or write", "read and/or write");
  expect_redacted ("file '/x y'", "file '<path> y'");
  expect_redacted ("a:/b:c/d", "a:/b:c/d");
  expect_redacted ("PATH=/bin", "PATH=<path>");
  expect_redacted ("", "");
}

static void
test_dependencies (void **state)
{
  struct inspect_dependencies deps;
  struct cr_error *err = NULL;
  struct policy_input in = input (false, POLICY_SOURCE_DEFAULT);
  struct inspect_backend_info info = found_bwrap ();
  struct inspect_backend_info none
      = { .why_not_found = xstrdup ("bwrap at /usr/bin/bwrap is "
                                    "group-writable") };
  char *domains[] = { (char *) "example.com" };

  /* Found, and holding what enabling would ask for.  */
  assert_int_equal (inspect_dependencies (&deps, &in, &info, &err), 0);
  assert_false (deps.enabled);
  assert_true (deps.available);
  assert_true (deps.holds_policy);
  assert_null (deps.refusal);
  assert_string_equal (deps.backend_id, "linux-bubblewrap");
  assert_string_equal (deps.provenance, "system");
  assert_string_equal (deps.build_digest, BUILD);
  assert_int_equal (deps.claims.support[SANDBOX_USAGE], SANDBOX_OBSERVED);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    assert_false (deps.missing[f]);
  inspect_dependencies_clear (&deps);

  /* Found, but missing what the configured network needs.  */
  in.domains.items = domains;
  in.domains.count = 1;
  info.claims.support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_UNSUPPORTED;
  assert_int_equal (inspect_dependencies (&deps, &in, &info, &err), 0);
  assert_true (deps.available);
  assert_false (deps.holds_policy);
  assert_true (deps.missing[SANDBOX_NETWORK_ALLOWLIST]);
  assert_false (deps.missing[SANDBOX_FILESYSTEM]);
  assert_string_equal (deps.refusal,
                       "the policy requires network_allowlist, which the "
                       "linux-bubblewrap backend does not enforce");
  inspect_dependencies_clear (&deps);

  /* Not found: why, without the path.  */
  in.enabled = true;
  assert_int_equal (inspect_dependencies (&deps, &in, &none, &err), 0);
  assert_true (deps.enabled);
  assert_false (deps.available);
  assert_false (deps.holds_policy);
  assert_null (deps.backend_id);
  assert_string_equal (deps.why_unavailable,
                       "bwrap at <path> is group-writable");
  inspect_dependencies_clear (&deps);
  inspect_backend_info_clear (&info);
  inspect_backend_info_clear (&none);
}

/* The configured MCP servers, last, in every variant: confined while a
 * command would be, unconfined while confinement is off, not started
 * when a command would be refused, when no backend is found, or when
 * disabledMcpServers names it; optional ones say so.  None configured:
 * neither the section nor the JSON member.  */
static void
test_servers (void **state)
{
  (void) state;
  const struct inspect_server servers[] = {
    { .name = "files" },
    { .name = "everything-else", .optional = true },
    { .name = "old", .disabled = true },
  };
  const char *section_head
      = "\n\nMCP servers (mcpServers), each run as a command here would "
        "be:\n";
  struct
  {
    bool enabled, found, refusing;
    const char *rows;
    const char *json;
  } cases[] = {
    { true, true, false,
      "  files            confined\n"
      "  everything-else  confined, optional\n"
      "  old              not started: disabledMcpServers names it\n",
      "\"mcp_servers\":[{\"name\":\"files\",\"optional\":false,\"runs\":"
      "\"confined\",\"reason\":null},{\"name\":\"everything-else\","
      "\"optional\":true,\"runs\":\"confined\",\"reason\":null},{\"name\":"
      "\"old\",\"optional\":false,\"runs\":\"not_started\",\"reason\":"
      "\"disabledMcpServers names it\"}]}\n" },
    { false, true, false,
      "  files            not confined: confinement is disabled "
      "(sandbox.enabled is false)\n"
      "  everything-else  not confined: confinement is disabled "
      "(sandbox.enabled is false), optional\n"
      "  old              not started: disabledMcpServers names it\n",
      "{\"name\":\"files\",\"optional\":false,\"runs\":\"unconfined\","
      "\"reason\":\"confinement is disabled (sandbox.enabled is false)\"}" },
    { true, true, true,
      "  files            not started: the policy is refused here, as a "
      "command's would be\n"
      "  everything-else  not started: the policy is refused here, as a "
      "command's would be, optional\n"
      "  old              not started: disabledMcpServers names it\n",
      "{\"name\":\"files\",\"optional\":false,\"runs\":\"not_started\","
      "\"reason\":\"the policy is refused here, as a command's would be\"}" },
    { true, false, false,
      "  files            not started: no sandbox backend was found, and "
      "servers are never run unconfined while sandbox.enabled is true\n"
      "  everything-else  not started: no sandbox backend was found, and "
      "servers are never run unconfined while sandbox.enabled is true, "
      "optional\n"
      "  old              not started: disabledMcpServers names it\n",
      "\"reason\":\"no trusted bwrap\",\"mcp_servers\":[{\"name\":\"files\","
      "\"optional\":false,\"runs\":\"not_started\"" },
  };

  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct policy_input in = input (cases[i].enabled, POLICY_SOURCE_HOME);
      struct inspect_backend_info info = found_bwrap ();
      char *domains[] = { (char *) "example.com" };
      if (cases[i].refusing)
        {
          info.claims.support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_UNSUPPORTED;
          in.domains.items = domains;
          in.domains.count = 1;
        }
      if (!cases[i].found)
        {
          info.found = false;
          info.why_not_found = xstrdup ("no trusted bwrap");
        }
      struct inspect_report *r = build (&in, &info);
      char *bare = inspect_format_text (r),
           *bare_json = inspect_format_json (r);
      inspect_report_servers (r, servers, 3);
      char *text = inspect_format_text (r), *json = inspect_format_json (r);
      char *want = xasprintf ("%.*s%s%s", (int) strlen (bare) - 1, bare,
                              section_head, cases[i].rows);
      /* The same report, and the section after it, last.  */
      assert_string_equal (text, want);
      assert_null (strstr (bare, "MCP servers"));
      assert_null (strstr (bare_json, "mcp_servers"));
      assert_non_null (strstr (json, cases[i].json));
      assert_int_equal (strncmp (json, bare_json, strlen (bare_json) - 2), 0);
      free (want);
      free (text);
      free (json);
      free (bare);
      free (bare_json);
      inspect_report_free (r);
      inspect_backend_info_clear (&info);
    }

  /* The words and the answer by themselves, as /sandbox shows them.  */
  const char *why = "unset";
  assert_int_equal (inspect_server_run (&servers[0], true, INSPECT_READY, &why),
                    INSPECT_SERVER_CONFINED);
  assert_null (why);
  assert_int_equal (inspect_server_run (&servers[2], true, INSPECT_READY, NULL),
                    INSPECT_SERVER_NOT_STARTED);
  char *words = inspect_server_words (&servers[1], true, INSPECT_READY);
  assert_string_equal (words, "confined, optional");
  free (words);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ready_matches_the_spec),
    cmocka_unit_test (test_mode_lines),
    cmocka_unit_test (test_fractional_ceilings),
    cmocka_unit_test (test_refused),
    cmocka_unit_test (test_unavailable),
    cmocka_unit_test (test_disabled),
    cmocka_unit_test (test_json_every_variant),
    cmocka_unit_test (test_redact_paths),
    cmocka_unit_test (test_dependencies),
    cmocka_unit_test (test_servers),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
