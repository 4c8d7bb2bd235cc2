/* This user's private sandbox state directory,
 * /var/tmp/crucible-code-sandbox-<uid>-v1, and the per-command overlay
 * upper/work pairs kept in it.
 *
 * The name is predictable, so another local user can create it first: what
 * is found there is checked, never trusted, and refused without printing the
 * path or the other user's id.  */
#ifndef CRUCIBLE_SANDBOX_STATEDIR_H
#define CRUCIBLE_SANDBOX_STATEDIR_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/error.h"

#define STATEDIR_PARENT "/var/tmp"
#define STATEDIR_FORMAT "%s/crucible-code-sandbox-%lu-v1"

/* Why a state directory was refused.  */
enum statedir_verdict
{
  STATEDIR_OK = 0,
  STATEDIR_OTHER_USER, /* a directory that belongs to someone else */
  STATEDIR_SYMLINK,    /* a symbolic link, wherever it points */
  STATEDIR_NOT_DIR,    /* a plain file (or anything not a directory) */
  STATEDIR_WRONG_MODE  /* ours, with the wrong group or mode */
};

/* uid's state directory under parent as a workspace below it would see
 * it: the path from the workspace root root (resolved, as realpath gives
 * it) when the directory is below root, or NULL.  Resolved through
 * parent, so that a directory not made yet is found too.  */
char *statedir_below (const char *parent, uid_t uid, const char *root);

/* Refuse a workspace root (resolved) that is uid's state directory under
 * parent or below it: what a command wrote would be published into it,
 * as that user's own records.  */
int statedir_refuse_workspace (const char *parent, uid_t uid, const char *root,
                               struct cr_error **err);

/* Open (creating 0700 when absent) the state directory for uid under
 * parent (STATEDIR_PARENT outside tests).  On success *path_out (owned by
 * the caller) names it and *fd_out holds it open.  A refusal says which
 * kind of thing was found, without the path.  */
int statedir_open (const char *parent, uid_t uid, gid_t gid, char **path_out,
                   int *fd_out, struct cr_error **err);

/* The verdict on what lstat found at the state directory's name.  */
enum statedir_verdict statedir_judge (const struct stat *st, uid_t uid,
                                      gid_t gid);

/* One command's private overlay layers, inside the state directory.  */
struct statedir_pair
{
  char *dir;   /* holds upper/ and work/; bound into the sandbox */
  char *upper; /* the command's writes land here */
  char *work;  /* overlayfs's scratch space */
};

/* Make a fresh pair in the state directory.  upper/ takes the owner (when
 * running as root) and the permission bits of the workspace root, which the
 * merged root shows.  */
int statedir_pair_create (const char *statedir, const char *workspace,
                          struct statedir_pair *out, struct cr_error **err);

/* Pairs are named cmd-<pid>-<start>-XXXXXX: the pid of the crucible that
 * made it and that process's start time (clock ticks after boot, from
 * /proc/<pid>/stat), then mkdtemp's six characters.  */
#define STATEDIR_PAIR_PREFIX "cmd-"

/* The start time of process pid; -1 with errno (ENOENT: no such process).  */
int statedir_start_time (pid_t pid, unsigned long long *out);

/* Remove the pairs in statedir whose maker is provably gone (its pid no
 * longer runs, or runs a process started at another time).  Pairs of
 * other crucible processes of this user, which share the directory, are
 * left alone, and so is anything not named like a pair.  *removed counts
 * the pairs removed; -1 when one could not be (it stays).  */
int statedir_recover (const char *statedir, int *removed);

/* Remove a pair and everything in it (overlayfs leaves work/work mode 000),
 * following no symlink.  The strings are freed even when removal fails.  */
int statedir_pair_remove (struct statedir_pair *pair, struct cr_error **err);

/* Release a pair whose maker is about to exit: when its upper holds
 * nothing (the workload wrote nothing, or publication took all of it),
 * leave it for the next start's statedir_recover, which removes it beside
 * that start's launch once this process is gone; otherwise remove it now,
 * as statedir_pair_remove, so that nothing the workload wrote outlives
 * its command.  *left says which.  The strings are freed either way.  */
int statedir_pair_release (struct statedir_pair *pair, bool *left,
                           struct cr_error **err);

/* The remembered probe (sandbox/bwrap_probe.c): a record in the state
 * directory, named for the digest of what a passed probe depended on
 * but the broker's digest, which says only that a probe passed for that
 * key, the digest of the whole key (the broker's digest with the rest,
 * which the prober compares once it has it), and the version text it
 * read (which the report shows).  It is read only from this user's own
 * state directory, judged by descriptor, and only when the record is a
 * regular file of one name that this user owns and nobody else can
 * write; root running another user's sandbox still reads its own.  A
 * record of another key, another build or another uid is never found:
 * its name differs.  */
#define STATEDIR_PROBE_PREFIX "probe-"
#define STATEDIR_PROBE_HEAD "crucible probe record v2: passed"
#define STATEDIR_PROBE_NAME_MAX 96
#define STATEDIR_PROBE_BYTES 256
/* A record not written for this long is removed when another is.  */
#define STATEDIR_PROBE_KEEP_S (30L * 86400)

/* 1 with the whole key's digest in whole (whole_n bytes at most) and the
 * recorded version text in version (n bytes at most) when a trusted
 * record for key_digest is in uid's state directory; 0 when there is
 * none, or none that can be believed.  Makes nothing.  */
int statedir_probe_recall (const char *parent, uid_t uid, gid_t gid,
                           const char *key_digest, char *whole, size_t whole_n,
                           char *version, size_t n);

/* Record that the probe passed for key_digest and the whole key whole
 * (making the state directory when absent), and remove records not
 * written for STATEDIR_PROBE_KEEP_S.  -1 when it could not be written:
 * the next preparation then probes again.  */
int statedir_probe_remember (const char *parent, uid_t uid, gid_t gid,
                             const char *key_digest, const char *whole,
                             const char *version);

/* Drop the record for key_digest, if any.  */
void statedir_probe_forget (const char *parent, uid_t uid, gid_t gid,
                            const char *key_digest);

/* The tools an allow rule mcp__<server> covers (core/mcphost.c): a record
 * in the state directory, named for the digest of its key (the home
 * configuration file, the server, the rule as written), holding the tool
 * names of the listing crucible saw first together with the rule.  It is
 * written once, aside and renamed into place without replacing one that
 * is there, mode 0600; read only from this user's own state directory,
 * judged by descriptor, and only when it is a regular file of one name
 * that this user owns and nobody else can write.  */
#define STATEDIR_GRANT_PREFIX "mcpgrant-"
#define STATEDIR_GRANT_HEAD "crucible mcp grant record v1"
#define STATEDIR_GRANT_BYTES ((size_t) 256 * 1024)

/* The digest (SHA256_HEX_LEN + 1 bytes into hex) naming the record of
 * rule, an allow rule mcp__<server> in home_file.  */
void statedir_grant_key (const char *home_file, const char *server,
                         const char *rule, char *hex);

/* The path the record for key_digest has in uid's state directory (owned
 * by the caller), for messages.  */
char *statedir_grant_path (const char *parent, uid_t uid,
                           const char *key_digest);

/* 1 with the recorded tool names (*tools_out, NULL-terminated, *n_out of
 * them, owned by the caller) when the record for key_digest is there and
 * sound; 0 when there is none; -1 when one is there that cannot be read,
 * is not to be trusted or does not parse (or the state directory is
 * refused), err saying why.  */
int statedir_grant_recall (const char *parent, uid_t uid, gid_t gid,
                           const char *key_digest, const char *server,
                           const char *rule, char ***tools_out, size_t *n_out,
                           struct cr_error **err);

/* Record tools (n names) for key_digest, making the state directory when
 * absent.  0 when written; 1 when another record was there first (it is
 * kept: recall it); -1 with err when it could not be written.  */
int statedir_grant_remember (const char *parent, uid_t uid, gid_t gid,
                             const char *key_digest, const char *server,
                             const char *rule, char *const *tools, size_t n,
                             struct cr_error **err);

#endif
