/* The Linux backend: a trusted system bubblewrap starting
 * crucible-sandbox-broker as PID 1 of fresh user, PID, IPC, UTS, network
 * and mount namespaces, the broker mounting the workspace's overlay
 * projection and dropping what bwrap left it (doc/linux-confinement.md,
 * doc/broker.md).
 *
 * Finding the parts starts nothing: bwrap_locate and broker_locate only
 * look at files, so inspection can call them.  Probing (the option
 * surface, the version, that the namespaces can be made) starts bwrap,
 * bounded by a short timeout, from an empty environment.  */
#ifndef CRUCIBLE_SANDBOX_BWRAP_H
#define CRUCIBLE_SANDBOX_BWRAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/error.h"
#include "sandbox/backend.h"
#include "sandbox/sha256.h"

#define BWRAP_BACKEND_ID "linux-bubblewrap"
#define BROKER_PROGRAM_NAME "crucible-sandbox-broker"

/* The fixed places a bwrap is looked for after PATH, and how many PATH
 * entries are looked at.  */
#define BWRAP_FIXED_CANDIDATES                                                 \
  {                                                                            \
    "/usr/bin/bwrap", "/bin/bwrap"                                             \
  }
#define BWRAP_MAX_PATH_ENTRIES 32

/* Inside the sandbox: everything the host hands in sits below this
 * directory, which the broker covers before the workload starts.  */
#define BWRAP_HIDDEN_DIR "/.crucible-sandbox"
#define BWRAP_HIDDEN_BROKER BWRAP_HIDDEN_DIR "/broker"
#define BWRAP_HIDDEN_LOWER BWRAP_HIDDEN_DIR "/lower"
#define BWRAP_HIDDEN_LAYER BWRAP_HIDDEN_DIR "/layer"

/* The private HOME and TMPDIR each command gets (a fresh tmpfs each).  */
#define BWRAP_HOME "/tmp/home"
#define BWRAP_TMPDIR "/tmp"

/* A bwrap that passed the trust checks.  */
struct bwrap_location
{
  char *path;                      /* canonical; owned */
  char sha256[SHA256_HEX_LEN + 1]; /* of the file fd holds: the build */
  int fd; /* the digested file, read-only, close-on-exec; -1 when none */
};

void bwrap_location_clear (struct bwrap_location *loc);

/* Why path cannot be trusted, as an owned sentence fragment ("writable by
 * group or others", "below /x, which group or others can write"), or NULL
 * when it can: a regular file, and every directory above it, owned by root
 * (or by user too, when allow_user) and writable by neither group nor
 * others.  Symlinks on the way are resolved first; the real path is
 * judged.  */
char *bwrap_distrust (const char *path, bool allow_user, uid_t user);

/* Find the first trusted bwrap among the bounded PATH entries (path_env,
 * normally getenv ("PATH"); relative entries are skipped) and then the
 * fixed candidates, digest it and pin it.  Starts nothing.  On failure the
 * error names each place looked and what turned it down.  */
int bwrap_locate_in (const char *path_env, struct bwrap_location *out,
                     struct cr_error **err);
int bwrap_locate (struct bwrap_location *out, struct cr_error **err);
/* The same, passing over the first nth trusted candidates: the probe tries
 * each trusted one in turn until one passes.  Fails when there are no
 * more.  */
int bwrap_locate_nth (const char *path_env, int nth, struct bwrap_location *out,
                      struct cr_error **err);

/* The options the probe requires bwrap's --help to list, which are the
 * options the launch uses; *n gets how many.  Static.  */
const char *const *bwrap_probed_options (size_t *n);

/* Find crucible-sandbox-broker beside the program in exe_dir or in the
 * directory above it, accepted when it and every directory above belong
 * to root or this user and are writable by neither group nor others.  The
 * copy is pinned: *fd_out is open on it (read-only, close-on-exec) and is
 * what bwrap binds, so the file checked is the file run.  */
int broker_locate_in (const char *exe_dir, char **path_out, int *fd_out,
                      struct cr_error **err);
/* The same, beside the running program (/proc/self/exe).  */
int broker_locate (char **path_out, int *fd_out, struct cr_error **err);

/* The backend's own settings; zero fields take the defaults.  */
struct bwrap_options
{
  unsigned long cpu_seconds; /* RLIMIT_CPU per process: 3600 */
  unsigned long open_files;  /* RLIMIT_NOFILE: 4096 */
  unsigned long processes;   /* the process cap: 1024, never more */
  const char *state_parent;  /* where the state directory is: /var/tmp */
  /* RLIMIT_AS per process, in bytes (memory_limit); 0: none.  */
  unsigned long long memory_bytes;
  /* sandbox.filesystem.unreadable, as configured; copied.  */
  const char *const *unreadable;
  size_t n_unreadable;
  /* sandbox.network.allowUnixSockets: absolute socket paths; copied.  */
  const char *const *unix_sockets;
  size_t n_unix_sockets;
};

#define BWRAP_DEFAULT_CPU_SECONDS 3600
#define BWRAP_DEFAULT_OPEN_FILES 4096
#define BWRAP_DEFAULT_PROCESSES 1024
/* The most sockets allowUnixSockets may name (as the configuration).  */
#define BWRAP_MAX_SOCKETS 64

/* The backend; opt may be NULL.  Nothing is looked up until probe or
 * prepare.  */
struct sandbox_backend *bwrap_backend_new (const struct bwrap_options *opt);

/* The settings b was made with, defaults filled in, its lists b's own
 * copies (borrowed): what a configuration gave the backend.  */
void bwrap_backend_settings (const struct sandbox_backend *b,
                             struct bwrap_options *out);

/* Descriptor numbers bwrap is started with.  */
#define BWRAP_FD_STATUS 3  /* the broker's end of the status channel */
#define BWRAP_FD_BROKER 4  /* the pinned broker, for --ro-bind-fd */
#define BWRAP_FD_SECCOMP 5 /* the filter, for --seccomp */
#define BWRAP_FD_ENV 6     /* the workload's environment, for the broker */
#define BWRAP_FD_OUTPUT 7  /* the workload's stdout and stderr */
#define BWRAP_FD_SELF 8    /* bwrap itself, executed through it */
#define BWRAP_FD_WORKLOAD_SECCOMP                                              \
  9                       /* the workload's filter, for the broker             \
                           */
#define BWRAP_FD_NET 10   /* the broker's end of the net channel, or none */
#define BWRAP_FD_HOSTS 11 /* the view's /etc/hosts, for --ro-bind-data */
#define BWRAP_FD_EXTRA 12 /* the granted sockets, for --ro-bind-fd */

/* Everything one launch's argument vector depends on.  */
struct bwrap_plan
{
  const char *workspace; /* canonical absolute path of the workspace root */
  const char *layer_dir; /* the command's upper/work pair on the host */
  const char *gitdir;    /* a gitdir: target inside it, relative; or NULL */
  /* The configured readOnly and protected roots, relative (and what each
   * resolves to inside the workspace), kept read-only like .git.  */
  char *const *protect;
  size_t n_protect;
  const char *shell;                                /* absolute */
  const char *line;                                 /* given to sh -c */
  unsigned long cpu_seconds, open_files, processes; /* 0: not set */
  unsigned long long memory_bytes;                  /* 0: not set */
  /* Unreadable patterns, relative to the workspace (checked).  */
  char *const *unreadable;
  size_t n_unreadable;
  /* A Unix socket grant exists: cover every socket in the workspace but
   * the named ones (relative), and bind the others (outside it) from the
   * descriptors BWRAP_FD_EXTRA + i at socket_dests[i].  */
  bool hide_sockets;
  char *const *socket_names;
  size_t n_socket_names;
  char *const *socket_dests;
  size_t n_socket_binds;
  /* The command has domains: the broker gets the net channel at
   * BWRAP_FD_NET (--net-fd) and listens for the proxy inside.  */
  bool net;
  /* sandbox.network.ports: each given to the broker as --port, the ports
   * it watches and may connect to or listen on for the host.  */
  const uint16_t *ports;
  size_t n_ports;
  /* Prepared ahead: the broker is given --await and no line (NULL), and
   * waits for the host's GO (broker/status.h).  */
  bool await;
  /* In crucible's own user namespaces (sandbox/userns.h): bwrap gets them
   * at BWRAP_FD_EXTRA + n_socket_binds and the next.  */
  bool userns;
};

/* The bwrap argument vector for plan, NULL-terminated, argv[0] "bwrap";
 * free with bwrap_argv_free.  No environment value is in it.  */
char **bwrap_build_argv (const struct bwrap_plan *plan);
void bwrap_argv_free (char **argv);

/* The /etc/hosts every confined view gets, whether or not the network is
 * open: localhost and nothing else, so that names the workload reaches
 * go through the proxy's own resolution.  */
#define BWRAP_HOSTS                                                            \
  "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"

/* The environment the workload gets: envp without HOME and TMPDIR, then
 * the private ones.  As one block of NAME=VALUE strings, each ending in
 * NUL, for the broker's --env-fd.  *len_out gets its length; the caller
 * frees it.  */
char *bwrap_env_block (char *const *envp, size_t *len_out);

/* What bwrap or the broker said on their own stderr (kept apart from the
 * command's output) when a launch ended without the workload being
 * reported, quoted for the refusal; NULL when nothing.  Owned by the
 * session.  */
const char *bwrap_session_message (const struct sandbox_session *s);

#endif
