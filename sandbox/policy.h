/* The policy a command would run under, resolved from the configuration's
 * sandbox block: whether confinement is on and who said so, the roots a
 * command reaches and at what access, the hidden patterns, the network
 * shape, the ceilings, the features the policy requires of a backend, and
 * the requested and effective policies as canonical text and SHA-256.
 *
 * Resolution is by spelling only: it reads nothing from the filesystem
 * (inspection starts nothing and the paths are checked when a command is
 * prepared).  The input is a plain struct, filled by the caller from the
 * configuration, so this module does not reach up into core/.
 *
 * Digests (doc/strings.md, "Digests"): every digest is
 * "sha256:" and 64 hex digits of SHA-256 over a domain-separated text, a
 * function of the paths and values alone (no salt, host name, time or inode
 * number), so two reports over the same directory agree on every machine:
 *   cwd                 "crucible-cwd-v1" NUL <path>
 *   a root              "crucible-root-v1" NUL <access> NUL <provenance>
 *                       NUL <path>   (protected_metadata: the workspace)
 *   a pattern, domain   "crucible-<kind>-v1" NUL <text>
 *   or socket           (kind: unreadable, domain, unix_socket)
 *   a policy, manifest  its canonical text (policy_canonical), which holds
 *                       digests only, never a path, domain or socket.  */
#ifndef CRUCIBLE_SANDBOX_POLICY_H
#define CRUCIBLE_SANDBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "sandbox/backend.h"

/* "sha256:" + 64 hex digits + NUL.  */
#define POLICY_DIGEST_SIZE 72

/* The processes the broker allows beneath it whether or not a policy
 * states a number (spec, "process_limit").  */
#define POLICY_PROCESS_CAP 1024

/* Who set sandbox.enabled.  */
enum policy_source
{
  POLICY_SOURCE_DEFAULT,
  POLICY_SOURCE_HOME,
  POLICY_SOURCE_PROJECT
};

/* A list of strings the caller owns.  */
struct policy_list
{
  char *const *items;
  size_t count;
};

/* The configuration's sandbox block, as the caller read it.  */
struct policy_input
{
  bool enabled;
  enum policy_source enabled_source;
  const char *workspace; /* absolute; the one path a report prints */

  struct policy_list writable;  /* absolute (the config resolved them) */
  struct policy_list read_only; /* as written; relative to the workspace */
  struct policy_list protected_paths;
  struct policy_list unreadable; /* patterns */

  struct policy_list domains;
  bool allow_local_binding;
  struct policy_list unix_sockets;
  bool allow_private_addresses; /* home-only; the proxy's, not the view's */
  struct policy_list ports;     /* sandbox.network.ports, decimal, home-only */

  uint64_t cpu_seconds;
  uint64_t open_files;
  uint64_t output_bytes;
  double command_seconds;
  uint64_t concurrency;

  /* sandbox.credentials: how many a command would get at most (a count
   * only: inspection shows no name, handle or value).  Not part of the
   * policy's digests.  */
  size_t credentials;
};

enum policy_access
{
  POLICY_READ_WRITE,
  POLICY_READ_ONLY,
  POLICY_PROTECTED
};

/* Where a root comes from.  */
enum policy_provenance
{
  POLICY_FROM_WORKSPACE,          /* the workspace itself */
  POLICY_FROM_PROTECTED_METADATA, /* .git and .crucible inside it */
  POLICY_FROM_CONFIGURATION       /* sandbox.filesystem.* */
};

struct policy_root
{
  enum policy_access access;
  enum policy_provenance provenance;
  char *path; /* absolute, by spelling; owned; never printed */
  char digest[POLICY_DIGEST_SIZE];
};

/* One ceiling the policy states: value is seconds (cpu_limit,
 * command_time_limit), bytes (output_limit) or a count.  */
struct policy_ceiling
{
  enum sandbox_feature feature;
  double value;
};

#define POLICY_MAX_CEILINGS 5

struct policy
{
  bool enabled;
  enum policy_source enabled_source;
  char cwd_digest[POLICY_DIGEST_SIZE];

  /* Empty when disabled: compatibility restricts no path.  */
  struct policy_root *roots;
  size_t n_roots;
  size_t unreadable_patterns;

  size_t domains;
  bool allow_local_binding;
  size_t unix_sockets;

  struct policy_ceiling ceilings[POLICY_MAX_CEILINGS];
  size_t n_ceilings;

  size_t staged;  /* manifest entries; always 0 until staged inputs exist */
  bool outlives;  /* persistence: never asked for */
  bool snapshots; /* snapshot: never asked for */

  /* What the policy requires of a backend, for sandbox_check_policy;
   * its configured roots point into the three fields after it.  */
  struct sandbox_policy sandbox;
  char **read_only_rel; /* inside the workspace, relative; owned */
  char **protected_rel;
  char *unheld_root; /* the refusal of a root nothing holds, or NULL */
  /* sandbox.network.ports as numbers; sandbox.ports points here.  */
  uint16_t ports[16];

  char *requested_text; /* canonical, owned */
  char *effective_text; /* canonical, owned */
  char requested_digest[POLICY_DIGEST_SIZE];
  char effective_digest[POLICY_DIGEST_SIZE];
  char manifest_digest[POLICY_DIGEST_SIZE];
};

/* Resolve in into a new policy (the caller frees it with policy_free).
 * Fails when the workspace is not an absolute path.  */
int policy_resolve (const struct policy_input *in, struct policy **out,
                    struct cr_error **err);
void policy_free (struct policy *p);

/* The report's words for an access ("read_write") and a provenance
 * ("protected_metadata").  */
const char *policy_access_name (enum policy_access a);
const char *policy_provenance_name (enum policy_provenance p);

/* v with the fewest digits that read back as exactly v ("1.5", "1200",
 * "0.001"), in the C locale whatever the person's.  */
void policy_format_number (double v, char *out, size_t size);

/* Write the policy's roots as a JSON array of {"access", "provenance",
 * "digest"}, in their order; the canonical text and the inspection's
 * report both hold it.  */
struct jsonw;
void policy_write_roots (struct jsonw *w, const struct policy *p);

/* Write the features the policy requires as a JSON array of their names,
 * in the features' order.  */
void policy_write_requires (struct jsonw *w, const struct policy *p);

/* A time ceiling, exactly: whole minutes as "20m", anything else in seconds
 * with every digit it needs ("1.5s", "90s", "0.001s"); never rounded, so a
 * limit below one second is never "0s".  Owned by the caller.  */
char *policy_format_seconds (double seconds);

/* A byte ceiling: "10 MiB", "1 GiB", "512 KiB" when exact, else "N bytes"
 * ("1 byte").  Owned by the caller.  */
char *policy_format_bytes (uint64_t bytes);

/* A ceiling as the report prints it ("cpu 60m", "4096 open files",
 * "10 MiB captured", "4 at once", "20m per command").  Owned.  */
char *policy_ceiling_label (const struct policy_ceiling *c);

/* "sha256:" and the hex digest of len bytes at data.  */
void policy_digest (const void *data, size_t len, char out[POLICY_DIGEST_SIZE]);

#endif
