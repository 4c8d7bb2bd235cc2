/* Configuration: ~/.crucible/config.json (home) and <workspace>/.crucible/
 * config.json (project), read with yajl and merged into one effective view.
 *
 * A cloned repository is untrusted input: its file may narrow and deny,
 * never grant.  Every key doc/configuration.md lists (the reference) is
 * validated here (type, range, home-only rule); later work gives each key
 * its effect.  Any error names the file, the line and the key, and nothing
 * runs on a configuration that failed to load.  */
#ifndef CRUCIBLE_CORE_CONFIG_H
#define CRUCIBLE_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/* A configuration file larger than this is refused unread (1 MiB).  */
#define CONFIG_FILE_MAX_BYTES ((size_t) 1 << 20)

enum config_origin
{
  CONFIG_DEFAULT, /* nobody set it */
  CONFIG_HOME,    /* ~/.crucible/config.json */
  CONFIG_PROJECT  /* <workspace>/.crucible/config.json */
};

/* A NULL-terminated list of strings, owned by the config.  */
struct config_list
{
  char **items;
  size_t count;
};

struct mcp_server_config;
/* One entry of sandbox.credentials (home-only): the variable a command gets
 * and where its value comes from, exactly one of env and file.  The value
 * itself is never in the configuration: core/credentials.c reads it when a
 * command is prepared.  */
struct config_credential
{
  char *name; /* the variable the command gets */
  char *env;  /* "env": a variable of crucible's own, or NULL */
  char *file; /* "file": an absolute path, or NULL */
  struct config_list commands; /* "commands": rules limiting it; empty: all */
  bool limited;                /* "commands" was given */
};

/* Credentials one configuration may name at most.  */
#define CONFIG_CREDENTIALS_MAX 32

/* journal.keepDays unless configured.  */
#define CONFIG_JOURNAL_KEEP_DAYS 30

struct config
{
  bool sandbox_enabled;
  enum config_origin sandbox_enabled_origin;
  char *sandbox_backend; /* sandbox.backend, home-only, or NULL: the
                            platform's own */

  char *container_engine; /* sandbox.container.engine, home-only, or NULL */
  char *container_image;  /* sandbox.container.image, home-only, or NULL */

  struct config_list fs_writable;   /* sandbox.filesystem.writable */
  struct config_list fs_read_only;  /* sandbox.filesystem.readOnly */
  struct config_list fs_protected;  /* sandbox.filesystem.protected */
  struct config_list fs_unreadable; /* sandbox.filesystem.unreadable */

  struct config_list net_domains; /* sandbox.network.domains */
  bool net_allow_local_binding;   /* sandbox.network.allowLocalBinding */
  bool net_allow_private; /* sandbox.network.allowPrivateAddresses, home-only */
  struct config_list net_unix_sockets; /* sandbox.network.allowUnixSockets */
  struct config_list net_ports; /* sandbox.network.ports, home-only; decimal */

  uint64_t output_bytes;  /* sandbox.limits.outputBytes, bytes (10 MiB) */
  uint64_t cpu_seconds;   /* sandbox.limits.cpuSeconds, seconds (3600) */
  uint64_t open_files;    /* sandbox.limits.openFiles (4096) */
  double command_seconds; /* sandbox.limits.commandSeconds, seconds (1200) */
  uint64_t concurrency;   /* sandbox.limits.concurrency (4) */

  char *permissions_mode;     /* permissions.mode, home-only ("ask") */
  struct config_list allow;   /* permissions.allow, home-only */
  struct config_list deny;    /* permissions.deny */
  char *agent_command;        /* agent.command, home-only, or NULL */
  uint64_t journal_keep_days; /* journal.keepDays, home-only (30; 0: all) */
  /* workspaces.<this workspace>.allow, home-only: the allow rules the
   * person added for this workspace from the approval panel.  */
  struct config_list workspace_allow;
  /* workspaces.<this workspace>.domains, home-only: the names the person
   * allowed always for this workspace when a command's connection asked;
   * once the home file is merged they are in net_domains too.  */
  struct config_list workspace_domains;
  char *theme; /* theme, or NULL for the default */
  /* mcpServers, home-only: the MCP servers, in the order the file has
   * them (core/mcpservers.h); disabledMcpServers: names not started here,
   * which a project may add to.  */
  struct mcp_server_config *mcp_servers;
  size_t n_mcp_servers;
  struct config_list mcp_disabled;

  /* sandbox.credentials, home-only, in the order the file names them.  */
  struct config_credential credentials[CONFIG_CREDENTIALS_MAX];
  size_t n_credentials;
  /* sandbox.withheldCredentials: names no command gets (a project adds).  */
  struct config_list withheld_credentials;

  char *home_file;    /* the home file that was read, or NULL if none was */
  char *project_file; /* the project file that was read, or NULL */
};

/* A config holding every default.  */
struct config *config_new_defaults (void);
void config_free (struct config *cfg);

/* Merge one file's text into cfg, as origin (home or project).  path is used
 * in messages only.  On error cfg may be partly merged: discard it.
 * workspace (absolute, or NULL) is what relative writable paths are
 * relative to and what a project's writable paths must stay inside; with
 * NULL every project writable path is refused.  Merge the home text first:
 * a project value is checked against what cfg holds when it is merged.  */
int config_merge_text (struct config *cfg, const char *text, size_t len,
                       const char *path, enum config_origin origin,
                       const char *workspace, struct cr_error **err);

/* Load the effective configuration for a workspace: defaults, then the home
 * file (home_path, or $HOME/.crucible/config.json when NULL), then the
 * project file under workspace.  A missing file is not an error; an
 * unreadable one is.  */
int config_load (struct config **out, const char *home_path,
                 const char *workspace, struct cr_error **err);

/* The project configuration file's path (<workspace>/.crucible/config.json),
 * owned by the caller.  */
char *config_project_path (const char *workspace);

/* The home configuration file's path ($HOME/.crucible/config.json), owned by
 * the caller, or NULL with *err set when HOME is unset.  */
char *config_home_path (struct cr_error **err);

/* The sandbox policy's input from a configuration, for a workspace (both
 * borrowed by the input).  */
struct policy_input;
void config_policy_input (const struct config *cfg, const char *workspace,
                          struct policy_input *in);

/* Set sandbox.enabled in the home configuration file home_file, keeping
 * every other key and value of it: read, parsed, rewritten and checked to
 * load, then written to a temporary file beside it (mode 0600) and renamed
 * over it.  A missing file (and its directory, 0700) is made; a symlinked
 * file is written at its target; a file that is not a JSON object is left
 * as it is, and that is the error.  */
int config_home_set_enabled (const char *home_file, bool enabled,
                             struct cr_error **err);

/* Add rules (n of them) to workspaces.<workspace>.allow in home_file, as
 * config_home_set_enabled writes it: the rules the list held stay first,
 * and a rule already in it is not added twice.  */
int config_home_add_allow (const char *home_file, const char *workspace,
                           char *const *rules, size_t n, struct cr_error **err);

/* Add name to workspaces.<workspace>.domains in home_file, as
 * config_home_add_allow adds rules: kept once, after what the list held.  */
int config_home_add_domain (const char *home_file, const char *workspace,
                            const char *name, struct cr_error **err);

/* Allow name (normalised, as the proxy gives it) for the rest of this
 * configuration's life, as workspaces.<this workspace>.domains would: it
 * joins workspace_domains and net_domains, each once.  */
void config_allow_domain (struct config *cfg, const char *name);

/* What the backend registry makes a backend from (sandbox/registry.h),
 * borrowed from cfg.  */
struct sandbox_backend_config;
void config_backend_input (const struct config *cfg,
                           struct sandbox_backend_config *out);

#endif
