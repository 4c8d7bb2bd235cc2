/* Tests for sandbox/policy.c: resolution, requirements, digests and the
 * exact formatting of ceilings.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "sandbox/policy.h"
#include "sandbox/sha256.h"

#define WS "/ws/project"

/* The defaults of the configuration, over WS.  */
static struct policy_input
defaults (bool enabled)
{
  struct policy_input in = {
    .enabled = enabled,
    .enabled_source = enabled ? POLICY_SOURCE_HOME : POLICY_SOURCE_DEFAULT,
    .workspace = WS,
    .cpu_seconds = 3600,
    .open_files = 4096,
    .output_bytes = 10485760,
    .command_seconds = 1200,
    .concurrency = 4,
  };
  return in;
}

/* Resolve in, requiring success.  */
static struct policy *
resolve (const struct policy_input *in)
{
  struct policy *p = NULL;
  struct cr_error *err = NULL;
  if (policy_resolve (in, &p, &err) < 0)
    fail_msg ("policy_resolve: %s", err->msg);
  return p;
}

/* Check one time ceiling's text.  */
static void
expect_seconds (double s, const char *want)
{
  char *got = policy_format_seconds (s);
  assert_string_equal (got, want);
  free (got);
}

static void
test_format_seconds (void **state)
{
  expect_seconds (1.5, "1.5s");
  expect_seconds (1200, "20m");
  expect_seconds (3600, "60m");
  expect_seconds (60, "1m");
  expect_seconds (90, "90s");
  expect_seconds (59.5, "59.5s");
  expect_seconds (0.1, "0.1s");
  expect_seconds (0.001, "0.001s");
  expect_seconds (0.25, "0.25s");
  expect_seconds (120.5, "120.5s");
  expect_seconds (604800, "10080m");
  expect_seconds (1, "1s");
  /* Below one second is never rounded down to 0s, however small.  */
  char *tiny = policy_format_seconds (1e-9);
  assert_string_not_equal (tiny, "0s");
  assert_true (strtod (tiny, NULL) == 1e-9);
  free (tiny);
  tiny = policy_format_seconds (1e-300);
  assert_true (strtod (tiny, NULL) == 1e-300);
  free (tiny);
}

/* Check one byte ceiling's text.  */
static void
expect_bytes (uint64_t b, const char *want)
{
  char *got = policy_format_bytes (b);
  assert_string_equal (got, want);
  free (got);
}

static void
test_format_bytes (void **state)
{
  expect_bytes (10485760, "10 MiB");
  expect_bytes (1, "1 byte");
  expect_bytes (1023, "1023 bytes");
  expect_bytes (1024, "1 KiB");
  expect_bytes (1536, "1536 bytes");
  expect_bytes ((uint64_t) 1 << 30, "1 GiB");
  expect_bytes ((uint64_t) 64 << 30, "64 GiB");
  expect_bytes (3 * 1024 * 1024 + 512 * 1024, "3584 KiB");
}

/* Check one ceiling's label.  */
static void
expect_label (enum sandbox_feature f, double v, const char *want)
{
  struct policy_ceiling c = { .feature = f, .value = v };
  char *got = policy_ceiling_label (&c);
  assert_string_equal (got, want);
  free (got);
}

static void
test_ceiling_labels (void **state)
{
  expect_label (SANDBOX_CPU_LIMIT, 3600, "cpu 60m");
  expect_label (SANDBOX_OPEN_FILE_LIMIT, 4096, "4096 open files");
  expect_label (SANDBOX_OPEN_FILE_LIMIT, 1, "1 open file");
  expect_label (SANDBOX_OUTPUT_LIMIT, 10485760, "10 MiB captured");
  expect_label (SANDBOX_CONCURRENCY_LIMIT, 4, "4 at once");
  expect_label (SANDBOX_COMMAND_TIME_LIMIT, 1200, "20m per command");
  expect_label (SANDBOX_COMMAND_TIME_LIMIT, 1.5, "1.5s per command");
  expect_label (SANDBOX_CPU_LIMIT, 0.5, "cpu 0.5s");
}

/* The digest of the NUL-joined parts, computed here independently.  */
static void
digest_of (char out[POLICY_DIGEST_SIZE], const char *const *parts, size_t n)
{
  char buf[1024], hex[SHA256_HEX_LEN + 1];
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    {
      size_t l = strlen (parts[i]);
      memcpy (buf + len, parts[i], l);
      len += l;
      if (i + 1 < n)
        buf[len++] = '\0';
    }
  sha256_buffer (buf, len, hex);
  snprintf (out, POLICY_DIGEST_SIZE, "sha256:%s", hex);
}

static void
test_enabled_defaults (void **state)
{
  struct policy_input in = defaults (true);
  struct policy *p = resolve (&in);
  char want[POLICY_DIGEST_SIZE];

  assert_true (p->enabled);
  assert_int_equal (p->enabled_source, POLICY_SOURCE_HOME);
  assert_int_equal (p->n_roots, 2);
  assert_int_equal (p->roots[0].access, POLICY_READ_WRITE);
  assert_int_equal (p->roots[0].provenance, POLICY_FROM_WORKSPACE);
  assert_string_equal (p->roots[0].path, WS);
  assert_int_equal (p->roots[1].access, POLICY_PROTECTED);
  assert_int_equal (p->roots[1].provenance, POLICY_FROM_PROTECTED_METADATA);

  /* The documented digest inputs (policy.h).  */
  const char *cwd[] = { "crucible-cwd-v1", WS };
  digest_of (want, cwd, 2);
  assert_string_equal (p->cwd_digest, want);
  const char *ws[] = { "crucible-root-v1", "read_write", "workspace", WS };
  digest_of (want, ws, 4);
  assert_string_equal (p->roots[0].digest, want);
  const char *meta[]
      = { "crucible-root-v1", "protected", "protected_metadata", WS };
  digest_of (want, meta, 4);
  assert_string_equal (p->roots[1].digest, want);
  const char *manifest = "{\"format_version\":1,\"entries\":[]}";
  digest_of (want, &manifest, 1);
  assert_string_equal (p->manifest_digest, want);
  digest_of (want, (const char *const *) &p->effective_text, 1);
  assert_string_equal (p->effective_digest, want);
  digest_of (want, (const char *const *) &p->requested_text, 1);
  assert_string_equal (p->requested_digest, want);
  assert_string_not_equal (p->requested_digest, p->effective_digest);
  assert_string_not_equal (p->cwd_digest, p->roots[0].digest);

  /* The ceilings, in the report's order.  */
  assert_int_equal (p->n_ceilings, 5);
  assert_int_equal (p->ceilings[0].feature, SANDBOX_CPU_LIMIT);
  assert_int_equal (p->ceilings[1].feature, SANDBOX_OPEN_FILE_LIMIT);
  assert_int_equal (p->ceilings[2].feature, SANDBOX_OUTPUT_LIMIT);
  assert_int_equal (p->ceilings[3].feature, SANDBOX_CONCURRENCY_LIMIT);
  assert_int_equal (p->ceilings[4].feature, SANDBOX_COMMAND_TIME_LIMIT);
  assert_true (p->ceilings[0].value == 3600);
  assert_true (p->ceilings[4].value == 1200);

  /* What confinement requires, and what it does not ask for.  */
  const enum sandbox_feature needed[] = { SANDBOX_FILESYSTEM,
                                          SANDBOX_NETWORK_DENY,
                                          SANDBOX_DESCRIPTOR_ISOLATION,
                                          SANDBOX_PROCESS_ISOLATION,
                                          SANDBOX_KERNEL_SURFACE,
                                          SANDBOX_PRIVILEGE_ISOLATION,
                                          SANDBOX_CPU_LIMIT,
                                          SANDBOX_OPEN_FILE_LIMIT,
                                          SANDBOX_OUTPUT_LIMIT,
                                          SANDBOX_CONCURRENCY_LIMIT,
                                          SANDBOX_COMMAND_TIME_LIMIT };
  int n = 0;
  for (size_t i = 0; i < sizeof needed / sizeof *needed; i++)
    assert_true (p->sandbox.requires[needed[i]]);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    n += p->sandbox.requires[f];
  assert_int_equal (n, (int) (sizeof needed / sizeof *needed));
  assert_false (p->sandbox.requires[SANDBOX_NETWORK_ALLOWLIST]);
  assert_false (p->sandbox.requires[SANDBOX_MEMORY_LIMIT]);
  assert_false (p->sandbox.requires[SANDBOX_PROCESS_LIMIT]);
  assert_false (p->sandbox.requires[SANDBOX_MATERIALIZATION]);
  assert_true (p->sandbox.enabled);
  assert_true (p->sandbox.command_seconds == 1200);
  assert_int_equal (p->sandbox.output_bytes, 10485760);
  assert_int_equal (p->sandbox.concurrency, 4);
  policy_free (p);
}

static void
test_disabled (void **state)
{
  struct policy_input in = defaults (false);
  char *w[] = { (char *) "/elsewhere" };
  char *d[] = { (char *) "example.com" };
  in.writable.items = w;
  in.writable.count = 1;
  in.domains.items = d;
  in.domains.count = 1;
  struct policy *p = resolve (&in);

  assert_false (p->enabled);
  assert_int_equal (p->n_roots, 0);
  assert_int_equal (p->domains, 0);
  /* Disabling takes the confining ceilings off with it.  */
  assert_int_equal (p->n_ceilings, 3);
  assert_int_equal (p->ceilings[0].feature, SANDBOX_OUTPUT_LIMIT);
  assert_int_equal (p->ceilings[1].feature, SANDBOX_CONCURRENCY_LIMIT);
  assert_int_equal (p->ceilings[2].feature, SANDBOX_COMMAND_TIME_LIMIT);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    assert_int_equal (p->sandbox.requires[f],
                      f == SANDBOX_OUTPUT_LIMIT
                          || f == SANDBOX_CONCURRENCY_LIMIT
                          || f == SANDBOX_COMMAND_TIME_LIMIT);
  assert_non_null (strstr (p->effective_text, "\"enabled\":false"));
  policy_free (p);
}

/* The policy a backend holding everything but f would refuse, by name.  */
static void
expect_refused_for (const struct policy *p, enum sandbox_feature f,
                    const char *want)
{
  struct sandbox_claims claims;
  struct cr_error *err = NULL;
  for (int i = 0; i < SANDBOX_FEATURE_COUNT; i++)
    claims.support[i] = SANDBOX_ENFORCED;
  claims.support[f] = SANDBOX_UNSUPPORTED;
  assert_int_equal (
      sandbox_check_policy (&claims, &p->sandbox, "linux-bubblewrap", &err),
      -1);
  assert_string_equal (err->msg, want);
  cr_error_free (err);
}

static void
test_network_requirements (void **state)
{
  struct policy_input in = defaults (true);
  char *d[] = { (char *) "example.com", (char *) "*.github.com" };
  in.domains.items = d;
  in.domains.count = 2;
  struct policy *p = resolve (&in);
  assert_true (p->sandbox.requires[SANDBOX_NETWORK_ALLOWLIST]);
  assert_int_equal (p->domains, 2);
  expect_refused_for (p, SANDBOX_NETWORK_ALLOWLIST,
                      "the policy requires network_allowlist, which the "
                      "linux-bubblewrap backend does not enforce");
  /* No domain name reaches the canonical texts.  */
  assert_null (strstr (p->effective_text, "example"));
  assert_null (strstr (p->requested_text, "github"));
  policy_free (p);

  in = defaults (true);
  in.allow_local_binding = true;
  p = resolve (&in);
  assert_true (p->sandbox.requires[SANDBOX_NETWORK_ALLOWLIST]);
  policy_free (p);

  in = defaults (true);
  char *s[] = { (char *) "/run/x.sock" };
  in.unix_sockets.items = s;
  in.unix_sockets.count = 1;
  p = resolve (&in);
  assert_false (p->sandbox.requires[SANDBOX_NETWORK_ALLOWLIST]);
  assert_true (p->sandbox.requires[SANDBOX_KERNEL_SURFACE]);
  assert_int_equal (p->unix_sockets, 1);
  policy_free (p);
}

/* sandbox.network.ports: handed to the backend as numbers, in both
 * canonical texts (so the digests tell two policies apart), and absent
 * from the texts of a policy without them (whose digests stay).  */
static void
test_network_ports (void **state)
{
  (void) state;
  struct policy_input in = defaults (true);
  in.allow_local_binding = true;
  struct policy *without = resolve (&in);
  assert_null (strstr (without->requested_text, "ports"));
  assert_null (strstr (without->effective_text, "ports"));
  assert_int_equal (without->sandbox.n_ports, 0);

  char *ports[] = { (char *) "5173", (char *) "8080" };
  in.ports.items = ports;
  in.ports.count = 2;
  struct policy *with = resolve (&in);
  assert_int_equal (with->sandbox.n_ports, 2);
  assert_int_equal (with->sandbox.ports[0], 5173);
  assert_int_equal (with->sandbox.ports[1], 8080);
  assert_non_null (strstr (with->requested_text, "\"ports\":[5173,8080]"));
  assert_non_null (strstr (with->effective_text, "\"ports\":[5173,8080]"));
  assert_memory_not_equal (with->effective_digest, without->effective_digest,
                           POLICY_DIGEST_SIZE);
  policy_free (with);
  policy_free (without);
}

static void
test_configured_roots (void **state)
{
  struct policy_input in = defaults (true);
  char *w[] = { (char *) WS, (char *) "/tmp/build" };
  char *ro[]
      = { (char *) "../shared", (char *) "a/./b//c/..", (char *) "/opt/x/" };
  char *pr[] = { (char *) "secrets" };
  char *un[] = { (char *) "**/*.pem", (char *) ".env" };
  in.writable.items = w;
  in.writable.count = 2;
  in.read_only.items = ro;
  in.read_only.count = 3;
  in.protected_paths.items = pr;
  in.protected_paths.count = 1;
  in.unreadable.items = un;
  in.unreadable.count = 2;
  struct policy *p = resolve (&in);

  /* The workspace named again as writable adds nothing.  */
  assert_int_equal (p->n_roots, 2 + 1 + 3 + 1);
  assert_int_equal (p->unreadable_patterns, 2);
  int found = 0;
  for (size_t i = 2; i < p->n_roots; i++)
    {
      const struct policy_root *r = &p->roots[i];
      assert_int_equal (r->provenance, POLICY_FROM_CONFIGURATION);
      if (i > 2)
        assert_true (r->access >= p->roots[i - 1].access);
      found += strcmp (r->path, "/ws/shared") == 0
               && r->access == POLICY_READ_ONLY;
      found += strcmp (r->path, WS "/a/b") == 0;
      found += strcmp (r->path, "/opt/x") == 0;
      found += strcmp (r->path, "/tmp/build") == 0
               && r->access == POLICY_READ_WRITE;
      found += strcmp (r->path, WS "/secrets") == 0
               && r->access == POLICY_PROTECTED;
    }
  assert_int_equal (found, 5);
  /* No path reaches the canonical texts: they hold digests only.  */
  assert_null (strchr (p->effective_text, '/'));
  assert_null (strchr (p->requested_text, '/'));
  assert_null (strstr (p->effective_text, "pem"));
  policy_free (p);
}

/* The configured roots a backend is handed: readOnly and protected ones
 * inside the workspace, relative; any root outside it (or the workspace
 * made read-only) refuses the policy by name, in sandbox_check_policy,
 * whatever the claims.  */
static void
test_backend_roots (void **state)
{
  struct policy_input in = defaults (true);
  char *ro[] = { (char *) "ro", (char *) WS "/a/./b" };
  char *pr[] = { (char *) "secret.txt" };
  struct sandbox_claims all = { 0 };
  struct cr_error *err = NULL;
  (void) state;
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    all.support[f] = SANDBOX_ENFORCED;
  in.read_only.items = ro;
  in.read_only.count = 2;
  in.protected_paths.items = pr;
  in.protected_paths.count = 1;
  struct policy *p = resolve (&in);
  assert_int_equal (p->sandbox.n_read_only, 2);
  assert_int_equal (p->sandbox.n_protected, 1);
  int found = 0;
  for (size_t i = 0; i < p->sandbox.n_read_only; i++)
    found += strcmp (p->sandbox.read_only[i], "ro") == 0
             || strcmp (p->sandbox.read_only[i], "a/b") == 0;
  assert_int_equal (found, 2);
  assert_string_equal (p->sandbox.protected_paths[0], "secret.txt");
  assert_null (p->sandbox.unheld_root);
  assert_int_equal (sandbox_check_policy (&all, &p->sandbox, "x", &err), 0);
  policy_free (p);

  static const struct
  {
    int list; /* 0 writable, 1 readOnly, 2 protected */
    const char *path, *refusal;
  } cases[] = {
    { 0, "/tmp/elsewhere",
      "sandbox.filesystem.writable: '/tmp/elsewhere' is outside the "
      "workspace, and a confined command reaches nothing outside it" },
    { 1, "../shared",
      "sandbox.filesystem.readOnly: '/ws/shared' is outside the workspace, "
      "and a confined command reaches nothing outside it" },
    { 2, "/etc/shadow",
      "sandbox.filesystem.protected: '/etc/shadow' is outside the "
      "workspace, and a confined command reaches nothing outside it" },
    { 1, ".",
      "sandbox.filesystem.readOnly: '" WS "' is the workspace itself, which "
      "a confined command writes" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *one[] = { (char *) cases[i].path };
      struct policy_input c = defaults (true);
      struct policy_list *l = cases[i].list == 0   ? &c.writable
                              : cases[i].list == 1 ? &c.read_only
                                                   : &c.protected_paths;
      l->items = one;
      l->count = 1;
      p = resolve (&c);
      assert_string_equal (p->sandbox.unheld_root, cases[i].refusal);
      assert_int_equal (sandbox_check_policy (&all, &p->sandbox, "x", &err),
                        -1);
      assert_string_equal (err->msg, cases[i].refusal);
      assert_int_equal (err->refused_feature, SANDBOX_FILESYSTEM);
      cr_error_free (err);
      err = NULL;
      policy_free (p);
    }
  /* Disabled, nothing is restricted and nothing is refused.  */
  char *out[] = { (char *) "/tmp/elsewhere" };
  in = defaults (false);
  in.writable.items = out;
  in.writable.count = 1;
  p = resolve (&in);
  assert_null (p->sandbox.unheld_root);
  assert_int_equal (p->sandbox.n_read_only + p->sandbox.n_protected, 0);
  policy_free (p);
}

static void
test_digests_are_stable (void **state)
{
  struct policy_input a = defaults (true), b = defaults (true);
  char *w1[] = { (char *) "/x", (char *) "/y" };
  char *w2[] = { (char *) "/y", (char *) "/x" };
  a.writable.items = w1;
  a.writable.count = 2;
  b.writable.items = w2;
  b.writable.count = 2;
  struct policy *pa = resolve (&a), *pb = resolve (&b);

  /* The same directory and settings: the same digests, whatever order the
   * configuration listed them in.  */
  assert_string_equal (pa->cwd_digest, pb->cwd_digest);
  assert_string_equal (pa->effective_digest, pb->effective_digest);
  assert_string_equal (pa->requested_digest, pb->requested_digest);
  policy_free (pb);

  /* Another directory, another cwd and policy.  */
  b.workspace = "/ws/other";
  pb = resolve (&b);
  assert_string_not_equal (pa->cwd_digest, pb->cwd_digest);
  assert_string_not_equal (pa->effective_digest, pb->effective_digest);
  policy_free (pb);

  /* A lower limit changes both policies.  */
  b = a;
  b.command_seconds = 1.5;
  pb = resolve (&b);
  assert_string_equal (pa->cwd_digest, pb->cwd_digest);
  assert_string_not_equal (pa->effective_digest, pb->effective_digest);
  assert_string_not_equal (pa->requested_digest, pb->requested_digest);
  assert_non_null (strstr (pb->effective_text, "\"command_time_limit\":1.5"));
  policy_free (pb);

  /* Who enabled it is not part of the policy.  */
  b = a;
  b.enabled_source = POLICY_SOURCE_PROJECT;
  pb = resolve (&b);
  assert_string_equal (pa->effective_digest, pb->effective_digest);
  assert_int_equal (pb->enabled_source, POLICY_SOURCE_PROJECT);
  policy_free (pb);
  policy_free (pa);
}

/* A stated ceiling asks for its feature: a backend that does not hold it
 * refuses the policy by that name, as if requires[] said so.  */
static void
test_stated_ceilings_refused_by_name (void **state)
{
  struct sandbox_policy pol = { .enabled = true };
  struct sandbox_claims claims;
  struct cr_error *err = NULL;
  (void) state;
  for (int i = 0; i < SANDBOX_FEATURE_COUNT; i++)
    claims.support[i] = SANDBOX_ENFORCED;
  claims.support[SANDBOX_MEMORY_LIMIT] = SANDBOX_UNSUPPORTED;
  claims.support[SANDBOX_PROCESS_LIMIT] = SANDBOX_UNSUPPORTED;
  assert_int_equal (sandbox_check_policy (&claims, &pol, "compat", &err), 0);
  pol.memory_bytes = 1 << 28;
  assert_int_equal (sandbox_check_policy (&claims, &pol, "compat", &err), -1);
  assert_string_equal (err->msg, "the policy requires memory_limit, which the "
                                 "compat backend does not enforce");
  assert_int_equal (err->refused_feature, SANDBOX_MEMORY_LIMIT);
  cr_error_free (err);
  err = NULL;
  pol.memory_bytes = 0;
  pol.processes = 100;
  assert_int_equal (sandbox_check_policy (&claims, &pol, "compat", &err), -1);
  assert_int_equal (err->refused_feature, SANDBOX_PROCESS_LIMIT);
  cr_error_free (err);
}

static void
test_relative_workspace_refused (void **state)
{
  struct policy_input in = defaults (true);
  struct policy *p = NULL;
  struct cr_error *err = NULL;
  in.workspace = "ws";
  assert_int_equal (policy_resolve (&in, &p, &err), -1);
  assert_null (p);
  assert_string_equal (err->msg, "resolving the sandbox policy: the workspace "
                                 "is not an absolute path");
  cr_error_free (err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_format_seconds),
    cmocka_unit_test (test_format_bytes),
    cmocka_unit_test (test_ceiling_labels),
    cmocka_unit_test (test_enabled_defaults),
    cmocka_unit_test (test_disabled),
    cmocka_unit_test (test_network_requirements),
    cmocka_unit_test (test_network_ports),
    cmocka_unit_test (test_configured_roots),
    cmocka_unit_test (test_backend_roots),
    cmocka_unit_test (test_digests_are_stable),
    cmocka_unit_test (test_stated_ceilings_refused_by_name),
    cmocka_unit_test (test_relative_workspace_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
