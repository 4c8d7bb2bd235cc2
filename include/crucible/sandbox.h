/* The sandbox backend interface: what every way of running a command offers
 * the supervisor (prepare, start, stop, dispose, claims, probe), and the
 * features a policy can name.  Installed with libcrucible-sandbox, so that
 * a backend built outside this tree implements the same vtable and can be
 * audited by the same suite (crucible/conformance.h, doc/sandbox-library.md).
 *
 * A backend states, per feature, whether it enforces it, only observes it,
 * or does not support it.  A policy that requires a feature the backend does
 * not support is refused by that feature's name in prepare, before any
 * session exists.  A row says "enforced" only when the backend does it and a
 * test exercises it.  */
#ifndef CRUCIBLE_SANDBOX_H
#define CRUCIBLE_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <crucible/error.h>

/* Every feature, in the order of the inspection report.  */
enum sandbox_feature
{
  SANDBOX_FILESYSTEM,
  SANDBOX_NETWORK_DENY,
  SANDBOX_NETWORK_ALLOWLIST,
  SANDBOX_DESCRIPTOR_ISOLATION,
  SANDBOX_PROCESS_ISOLATION,
  SANDBOX_KERNEL_SURFACE,
  SANDBOX_PRIVILEGE_ISOLATION,
  SANDBOX_MATERIALIZATION,
  SANDBOX_CPU_LIMIT,
  SANDBOX_MEMORY_LIMIT,
  SANDBOX_DISK_LIMIT,
  SANDBOX_PROCESS_LIMIT,
  SANDBOX_OPEN_FILE_LIMIT,
  SANDBOX_COMMAND_TIME_LIMIT,
  SANDBOX_SESSION_TIME_LIMIT,
  SANDBOX_OUTBOUND_BYTE_LIMIT,
  SANDBOX_OUTPUT_LIMIT,
  SANDBOX_CONCURRENCY_LIMIT,
  SANDBOX_COST_LIMIT,
  SANDBOX_PTY,
  SANDBOX_FILE_OPERATIONS,
  SANDBOX_PERSISTENCE,
  SANDBOX_SNAPSHOT,
  SANDBOX_RESUME,
  SANDBOX_AUDIT,
  SANDBOX_USAGE,
  SANDBOX_FEATURE_COUNT
};

enum sandbox_support
{
  SANDBOX_UNSUPPORTED = 0,
  SANDBOX_OBSERVED,
  SANDBOX_ENFORCED
};

struct sandbox_claims
{
  enum sandbox_support support[SANDBOX_FEATURE_COUNT];
};

/* The report's name of a feature ("process_isolation").  */
const char *sandbox_feature_name (enum sandbox_feature f);

/* The report's word for a support level ("enforced").  */
const char *sandbox_support_name (enum sandbox_support s);

/* What one command is to run under, resolved by the host before prepare.  */
struct sandbox_policy
{
  bool enabled; /* confinement asked for */
  /* The workspace root the command will run in, absolute, for a backend
   * that checks it at prepare; NULL when the caller does not say (crucible's
   * supervisor hands it over at start, as sandbox_command.cwd).  */
  const char *workspace;
  bool requires[SANDBOX_FEATURE_COUNT];
  double command_seconds; /* the deadline the supervisor enforces */
  uint64_t output_bytes;  /* the raw-stream ceiling capture enforces */
  uint64_t concurrency;   /* commands at once, enforced by the supervisor */
  /* memory_limit: the address space one process may map, in bytes; 0 when
   * the policy does not ask for one.  */
  uint64_t memory_bytes;
  /* process_limit: processes beneath the sandbox's PID 1, at most 1024 (the
   * cap that holds when nothing is stated); 0 when not stated.  A backend
   * takes the lower of this and its own cap.  */
  uint64_t processes;
  /* sandbox.filesystem.readOnly and .protected entries inside the
   * workspace, relative to it and canonical by spelling (no ".", ".." or
   * empty component): read-only inside, and any change to them refused
   * at publication.  Owned by whoever filled the policy (crucible's
   * sandbox/policy), valid until prepare returns; a backend copies them.  */
  const char *const *read_only;
  size_t n_read_only;
  const char *const *protected_paths;
  size_t n_protected;
  /* A configured root no backend of this library holds as asked: a
   * writable, readOnly or protected root outside the workspace (only the
   * workspace is projected, so nothing outside it is reached at all), or
   * the workspace itself made read-only.  The refusal's text, naming the
   * key and the path; NULL when there is none.  sandbox_check_policy
   * refuses the policy with it, so prepare and inspection agree.  */
  const char *unheld_root;
  /* sandbox.network.domains, as configured (the host's proxy normalises
   * and matches them): a confined command with any reaches those names,
   * and nothing else, through the host-owned proxy (network_allowlist);
   * none keeps the network closed.  Owned by whoever filled the policy,
   * valid until prepare returns.  Appended with the three after it, so a
   * caller built before them still lines up.  */
  const char *const *domains;
  size_t n_domains;
  /* sandbox.network.allowLocalBinding: the workload may bind and listen
   * on its own loopback; false refuses bind(2) and listen(2).  */
  bool allow_local_binding;
  /* sandbox.network.allowPrivateAddresses (home only): the proxy may
   * connect to private ranges an allowed name resolves to.  */
  bool allow_private_addresses;
  /* sandbox.network.ports (home only, with allowLocalBinding): the ports
   * at or above 1024 a server of the command may be reached at from the
   * host's 127.0.0.1 and from the session's other commands; the backend
   * gives a command with any the net channel, over which its broker says
   * which of them something inside listens on.  Appended after the four
   * above; owned like them.  */
  const uint16_t *ports;
  size_t n_ports;
};

/* The one command to start in a prepared session.  */
struct sandbox_command
{
  const char *shell; /* absolute path of the POSIX shell */
  const char *line;  /* the command line given to sh -c */
  const char *cwd;   /* the workspace root */
  char *const *envp; /* the built environment */
  int output_fd;     /* write end of the pipe stdout and stderr share */
  /* A workload that talks over its standard streams (an MCP server):
   * with stdio set, input_fd is its standard input, output_fd its
   * standard output alone and error_fd its standard error.  Without it
   * (the zero value, so a caller built before these lines up) its input
   * is /dev/null and output_fd takes stdout and stderr.  A backend that
   * cannot give a workload separate streams fails start, saying so.  */
  bool stdio;
  int input_fd;
  int error_fd;
};

/* What the process scope reported, read from the session's status fd.  */
enum sandbox_event_kind
{
  SANDBOX_EVENT_NONE,   /* nothing complete yet */
  SANDBOX_EVENT_EXITED, /* the workload ended; wait_status says how */
  SANDBOX_EVENT_FAILED, /* the workload could not be started; error says why */
  SANDBOX_EVENT_DONE    /* nothing of the scope is left; cleanup confirmed */
};

/* How far a launch that failed (SANDBOX_EVENT_FAILED) got, in words every
 * backend can fill: the supervisor says "setting up the command" for the
 * one and "starting the shell" for the other.  */
enum sandbox_failure
{
  /* The workload's program never started: the scope, its mounts, limits
   * or the process to run it could not be made.  Nothing follows; the
   * failure stands for the command's ending.  The zero value.  */
  SANDBOX_FAILED_SETUP = 0,
  /* Everything was made and starting the program itself failed (its
   * exec); the workload's ending (exit 127) follows.  */
  SANDBOX_FAILED_EXEC = 1
};

struct sandbox_event
{
  enum sandbox_event_kind kind;
  int wait_status;
  int error;                    /* errno, for SANDBOX_EVENT_FAILED */
  enum sandbox_failure failure; /* for SANDBOX_EVENT_FAILED */
  /* For SANDBOX_EVENT_FAILED: what the launcher or the keeper said in its
   * own words (bwrap's refusal, the broker's failed step), to be quoted;
   * NULL when nothing.  For SANDBOX_EVENT_EXITED: what the backend
   * verified of the scope the workload ran in (the container backend: the
   * hardening read back from the engine and checked from inside), for the
   * run's finish fact: lines "NAME TEXT", NAME lower-case letters and '_',
   * each a field of the fact (at most four); NULL when it says nothing.
   * Owned by the session, valid until dispose.  */
  const char *message;
};

/* What a command's whole scope used, measured when it is disposed of.  */
struct sandbox_usage
{
  bool known;
  int64_t cpu_user_ms;
  int64_t cpu_system_ms;
  int64_t max_rss_kib; /* the largest of its processes */
};

/* What became of a command's writes once it ended cleanly, for a backend
 * that keeps them private until then (crucible's sandbox/publish).  */
struct sandbox_publication
{
  bool busy;              /* another publication holds the lock: ask again */
  bool published_nothing; /* what the command wrote was discarded */
  char *note;             /* the result's note, or NULL; owned */
  const char *outcome;    /* the journal's word: "published", "unchanged",
                             "refused", "rolled_back", "quarantined" */
  uint64_t paths;         /* paths published */
  uint64_t bytes;         /* bytes of file content published */
};

void sandbox_publication_clear (struct sandbox_publication *p);

struct sandbox_backend;
struct sandbox_session;

/* The result of asking whether a backend can run here at all.  */
struct sandbox_probe
{
  bool usable;
  bool confined; /* false for the compatibility backend */
  char *reason;  /* why not usable, or why not confined; owned */
  char *version; /* owned, or NULL */
};

struct sandbox_backend_ops
{
  const char *id; /* "compat", "linux-bubblewrap" */
  void (*claims) (const struct sandbox_backend *b, struct sandbox_claims *out);
  int (*probe) (struct sandbox_backend *b, struct sandbox_probe *out,
                struct cr_error **err);
  int (*prepare) (struct sandbox_backend *b,
                  const struct sandbox_policy *policy,
                  struct sandbox_session **out, struct cr_error **err);
  int (*start) (struct sandbox_session *s, const struct sandbox_command *cmd,
                struct cr_error **err);
  /* Descriptor to poll for events once started; read with next_event.  */
  int (*status_fd) (const struct sandbox_session *s);
  int (*next_event) (struct sandbox_session *s, struct sandbox_event *ev,
                     struct cr_error **err);
  /* End the whole scope with signo; returns at once, DONE follows.  */
  int (*stop) (struct sandbox_session *s, int signo, struct cr_error **err);
  /* Release the session; fails (and keeps what it holds) while the scope
   * has not been confirmed empty.  usage, when not NULL, gets what the
   * scope used.  */
  int (*dispose) (struct sandbox_session *s, struct sandbox_usage *usage,
                  struct cr_error **err);
  /* Give up on a session whose scope never confirmed it was empty, because
   * crucible is leaving: close the channel (the keeper ends the scope when
   * it sees that) and free what the host holds.  */
  void (*abandon) (struct sandbox_session *s);
  void (*free) (struct sandbox_backend *b);
  /* Publish what the command wrote, once its scope is confirmed empty
   * after an ordinary exit; never waits for the lock (out->busy).  NULL
   * for a backend whose commands write in place.  Dispose discards
   * whatever was not published.  Last, so that a backend built before it
   * existed still lines up.  */
  int (*publish) (struct sandbox_session *s, const char *call_id,
                  struct sandbox_publication *out, struct cr_error **err);
  /* The host's end of the net channel once started: a SOCK_SEQPACKET
   * socket on which each connection the workload made to the proxy's
   * inside port arrives as one descriptor (SCM_RIGHTS); -1 when the
   * command has no domains.  NULL for a backend without one.  After
   * publish, for the same reason.  */
  int (*network_fd) (const struct sandbox_session *s);
  /* Make, ahead of its command, everything of a prepared session that
   * does not depend on the command, so that start only lets it run (with
   * bwrap: the layers, the cgroup, the filters, and bwrap with the broker
   * started, waiting on the status channel).  The baseline, the
   * environment, the output and the line are still given at start, and
   * nothing of the workspace is mounted before.  cwd and shell are what
   * start will be given.  Dispose releases a session prepared ahead and
   * never started at once.  NULL for a backend that makes nothing ahead.
   * Appended after network_fd, for the same reason.  */
  int (*prepare_ahead) (struct sandbox_session *s, const char *cwd,
                        const char *shell, struct cr_error **err);
  /* Whether a session prepared ahead may still start a command of shell
   * in cwd: what it was made from (the workspace's identity and owner,
   * what it read there) still holds and it still waits.  */
  bool (*ahead_current) (const struct sandbox_session *s, const char *cwd,
                         const char *shell);
  /* Answer publish without publishing when the backend can tell at once,
   * in the caller's process, what publish would answer: 1 with *out
   * filled exactly as publish would have filled it (the publication has
   * then settled), 0 when publish must run (where the caller runs it, in
   * a process of its own).  It never fails: anything it cannot tell is 0.
   * NULL for a backend that cannot.  Appended after ahead_current, for the
   * same reason.  */
  int (*publish_inline) (struct sandbox_session *s,
                         struct sandbox_publication *out);
  /* Remove, in the process that ran publish and once its answer has been
   * given, what that publication left to remove later (with bwrap: the
   * committed transaction, whose backups are the last links to the files
   * it replaced, so that removing them frees their blocks).  The
   * workspace is as publish answered either way.  NULL for a backend that
   * leaves nothing; dispose removes what is left.  Appended after
   * publish_inline, for the same reason.  */
  void (*publish_tidy) (struct sandbox_session *s);
  /* dispose, for a host that exits once this session is released (crucible
   * run): what the next start's recovery removes anyway, and nothing of
   * the workload's, may be left to it (with bwrap: a layer pair whose
   * upper holds nothing).  NULL for a backend with nothing to leave;
   * sandbox_dispose_leaving calls dispose then.  Appended after
   * publish_tidy, for the same reason.  */
  int (*dispose_leaving) (struct sandbox_session *s,
                          struct sandbox_usage *usage, struct cr_error **err);
  /* probe, for a host about to prepare and start a sandbox with the
   * answer: what part of the answer the start itself confirms may be
   * left to it, so that the confirmation runs beside the preparation
   * (with bwrap: a remembered probe's whole key, which waits on the
   * broker's digest; a start whose whole key differs probes afresh, and
   * one that then fails says why, as prepare would have).  NULL for a
   * backend whose probe confirms nothing later; sandbox_probe_starting
   * calls probe then.  Appended after dispose_leaving, for the same
   * reason.  */
  int (*probe_starting) (struct sandbox_backend *b, struct sandbox_probe *out,
                         struct cr_error **err);
};

struct sandbox_backend
{
  const struct sandbox_backend_ops *ops;
};

/* The hex digits of a sandbox ID.  */
#define SANDBOX_ID_LEN 16

/* The first member of every backend's session.  */
struct sandbox_session
{
  const struct sandbox_backend_ops *ops;
  /* The sandbox ID: 64 random bits in hex, given by sandbox_prepare, which
   * names this sandbox in every lifecycle fact (doc/journal.md).  */
  char id[SANDBOX_ID_LEN + 1];
};

/* Refuse a policy because the backend does not hold feature: the message
 * names the feature and the backend ("the policy requires cpu_limit, which
 * the compat backend does not enforce") and err->refused_feature is set,
 * which is how the conformance audit tells a refusal from a backend
 * failing for its own reasons.  Returns -1.  */
int sandbox_refuse (struct cr_error **err, enum sandbox_feature feature,
                    const char *backend_id);

/* Refuse a policy requiring a feature the claims mark unsupported, by name
 * (sandbox_refuse); an observed feature is bounded measurement, and is not
 * refused.  A stated memory or process ceiling counts as requiring its
 * feature.  Every backend's prepare calls this first.  */
int sandbox_check_policy (const struct sandbox_claims *claims,
                          const struct sandbox_policy *policy,
                          const char *backend_id, struct cr_error **err);

void sandbox_probe_clear (struct sandbox_probe *p);

/* Calls through the vtable, so callers never reach into ops.  */
const char *sandbox_backend_id (const struct sandbox_backend *b);
void sandbox_claims (const struct sandbox_backend *b,
                     struct sandbox_claims *out);
int sandbox_probe (struct sandbox_backend *b, struct sandbox_probe *out,
                   struct cr_error **err);
/* sandbox_probe, for a host about to start a sandbox (the probe_starting
 * op).  */
int sandbox_probe_starting (struct sandbox_backend *b,
                            struct sandbox_probe *out, struct cr_error **err);
int sandbox_prepare (struct sandbox_backend *b,
                     const struct sandbox_policy *policy,
                     struct sandbox_session **out, struct cr_error **err);
int sandbox_start (struct sandbox_session *s, const struct sandbox_command *cmd,
                   struct cr_error **err);
int sandbox_status_fd (const struct sandbox_session *s);
int sandbox_next_event (struct sandbox_session *s, struct sandbox_event *ev,
                        struct cr_error **err);
int sandbox_stop (struct sandbox_session *s, int signo, struct cr_error **err);
int sandbox_dispose (struct sandbox_session *s, struct sandbox_usage *usage,
                     struct cr_error **err);
/* sandbox_dispose, for a host about to exit (the dispose_leaving op).  */
int sandbox_dispose_leaving (struct sandbox_session *s,
                             struct sandbox_usage *usage,
                             struct cr_error **err);
void sandbox_abandon (struct sandbox_session *s);
/* Whether the session keeps a command's writes private until publish.  */
bool sandbox_keeps_writes (const struct sandbox_session *s);
int sandbox_publish (struct sandbox_session *s, const char *call_id,
                     struct sandbox_publication *out, struct cr_error **err);
void sandbox_backend_free (struct sandbox_backend *b);
/* The session's net channel (network_fd above), to poll for reading; -1
 * when it has none.  */
int sandbox_network_fd (const struct sandbox_session *s);
/* prepare_ahead above: 1 when the session was prepared ahead, 0 when its
 * backend makes nothing ahead (start does it all), -1 on failure.  */
int sandbox_prepare_ahead (struct sandbox_session *s, const char *cwd,
                           const char *shell, struct cr_error **err);
/* ahead_current above; false for a backend without it.  */
bool sandbox_ahead_current (const struct sandbox_session *s, const char *cwd,
                            const char *shell);
/* publish_inline above: 1 when *out holds publish's answer, 0 (and *out
 * empty) when publish must run; 0 for a backend without it.  */
int sandbox_publish_inline (struct sandbox_session *s,
                            struct sandbox_publication *out);
/* publish_tidy above; nothing for a backend without it.  */
void sandbox_publish_tidy (struct sandbox_session *s);

#endif
