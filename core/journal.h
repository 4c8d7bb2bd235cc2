/* The session journal: lifecycle facts, one JSON object per line, one file
 * per session (doc/journal.md describes the format).
 *
 * What it must never hold is made structural where C allows it: there is no
 * field for a command line, its arguments, its environment or its
 * description, fact names are an enumeration, field names are checked, and
 * every string is escaped and bounded.  What remains is the callers' rule:
 * they pass numbers, ids (session, command, tool call, sandbox), outcomes
 * (fixed words such as "exited", "deadline") and digests, never text that
 * came from the command, the model or the environment.
 *
 * A journal is used from one thread (the event loop); it is not locked.  */
#ifndef CRUCIBLE_CORE_JOURNAL_H
#define CRUCIBLE_CORE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

#define JOURNAL_MAX_STRING 256 /* encoded bytes of one string, "…" included */
#define JOURNAL_MAX_FIELDS 16  /* caller fields in one fact */
#define JOURNAL_MAX_NAME 32    /* bytes in one field name */
#define JOURNAL_MAX_LINE 4096  /* bytes in one line, newline included */
#define JOURNAL_SESSION_LEN 32 /* hex digits in a session id (128 bits) */

/* The facts a journal can record; a caller cannot invent another.  The
 * fields each one carries are listed in doc/journal.md.  */
enum journal_fact
{
  JOURNAL_SESSION_START,  /* "session_start" */
  JOURNAL_SESSION_END,    /* "session_end" */
  JOURNAL_POLICY,         /* "policy": backend and policy resolved */
  JOURNAL_START,          /* "start": a command's process started */
  JOURNAL_FINISH,         /* "finish": its process ended */
  JOURNAL_ENDING,         /* "ending": its ending was told to the model */
  JOURNAL_BACKGROUND,     /* "background": it was left running */
  JOURNAL_STOP,           /* "stop": it was stopped on request */
  JOURNAL_STOP_FAILED,    /* "stop_failed" */
  JOURNAL_CLEANUP,        /* "cleanup": its process scope is confirmed empty */
  JOURNAL_CLEANUP_FAILED, /* "cleanup_failed": cleanup stays uncertain */
  JOURNAL_REFUSAL,        /* "refusal": a call was refused before starting */
  JOURNAL_APPROVAL,       /* "approval": the person answered the panel */
  JOURNAL_VIOLATION,      /* "violation": a limit or boundary was hit */
  JOURNAL_USAGE,          /* "usage": resources a command used */
  JOURNAL_PUBLICATION,    /* "publication": its writes were published or not */
  JOURNAL_CAPABILITIES,   /* "capabilities": the policy met the backend's claims
                           */
  JOURNAL_PEER,           /* "peer": a peer was ended, or its answer ignored */
  JOURNAL_NETWORK, /* "network": the proxy refused one of its connections */
  JOURNAL_FACT_COUNT
};

enum journal_kind
{
  JOURNAL_STRING,
  JOURNAL_INT,
  JOURNAL_BOOL
};

/* One caller field.  name is [a-z][a-z0-9_]*, at most JOURNAL_MAX_NAME
 * bytes, not one of the names every line has (ts, session, seq, fact,
 * command, call) nor one that would name forbidden content (argv, args,
 * arguments, cmdline, command_line, description, env, environment,
 * password, secret, token, credential, credentials); each name once per
 * fact.  Only the member kind selects is read; s must not be NULL for
 * JOURNAL_STRING.  Build fields with the initialisers below.  Nothing is
 * kept after journal_fact() returns.  */
struct journal_field
{
  const char *name;
  const char *s;
  int64_t i;
  enum journal_kind kind;
  bool b;
};

/* clang-format off */
#define JOURNAL_STR(n, v)  { .name = (n), .kind = JOURNAL_STRING, .s = (v) }
#define JOURNAL_INT64(n, v) { .name = (n), .kind = JOURNAL_INT, .i = (v) }
#define JOURNAL_BOOLEAN(n, v) { .name = (n), .kind = JOURNAL_BOOL, .b = (v) }
/* clang-format on */

/* What a command used, written as a "usage" fact.  */
struct journal_usage
{
  int64_t cpu_user_ms;
  int64_t cpu_system_ms;
  int64_t max_rss_kib;
  int64_t bytes; /* output bytes that arrived */
  int64_t lines; /* output lines that arrived */
};

struct journal;

/* Open a new journal with a fresh random session id, in dir, or when dir is
 * NULL in $XDG_STATE_HOME/crucible (when that is set and absolute), else in
 * $HOME/.local/state/crucible (HOME must be absolute).  Missing directories
 * are created mode 0700; the last one is refused when it is a symbolic link,
 * not a directory, not owned by the effective user, or writable by group or
 * others.  The file is <session>.jsonl, created exclusively, mode 0600.  The
 * caller owns *out and closes it with journal_close().  */
int journal_open (struct journal **out, const char *dir, struct cr_error **err);

/* journal_open() with a session id chosen by the caller (exactly
 * JOURNAL_SESSION_LEN lowercase hex digits), or a random one when session is
 * NULL.  An existing file for that session is an error, never reused.  */
int journal_open_session (struct journal **out, const char *dir,
                          const char *session, struct cr_error **err);

/* A journal writing to fd, which it takes over: fd is closed by
 * journal_close(), or at once when this fails.  session as for
 * journal_open_session().  For tests and for a caller that already holds
 * the file.  */
int journal_open_fd (struct journal **out, int fd, const char *session,
                     struct cr_error **err);

/* The journal's retention (journal.keepDays): remove, from j's directory,
 * the files of ended sessions last written more than keep_days days ago
 * (0: keep every file).  A live session's file is never touched: each
 * session holds its own file locked (flock) while it is open, and a file
 * is removed only under that lock.  Only this user's regular files named
 * like a session's are looked at; j's own never.  *removed gets how many
 * went.  The first file that could not be looked at or removed is named
 * in *err, after every other was tried.  */
int journal_retain (const struct journal *j, uint64_t keep_days,
                    uint64_t *removed, struct cr_error **err);

/* The session id (JOURNAL_SESSION_LEN hex digits), owned by j.  */
const char *journal_session (const struct journal *j);

/* The file's path, owned by j; NULL for a journal opened on a descriptor.  */
const char *journal_path (const struct journal *j);

/* Facts whose line could not be written (each still took its seq, so a
 * reader sees the gap).  */
uint64_t journal_lost (const struct journal *j);

/* The name a fact is written with; NULL when fact is not one.  */
const char *journal_fact_name (enum journal_fact fact);

/* Record one fact as one line written with one write(2) (the remainder is
 * retried if the kernel takes only part of it).  command is the command's
 * number (0: none), call the tool call id (NULL: none).  Strings are cut to
 * JOURNAL_MAX_STRING encoded bytes at a character boundary, ending "…"; when
 * the line would still pass JOURNAL_MAX_LINE, every string is cut to the
 * largest common bound that fits.  Invalid UTF-8 becomes U+FFFD.
 *
 * Refuses, writing nothing: an unknown fact, more than JOURNAL_MAX_FIELDS
 * fields, a bad field name or kind.  A failed write returns -1 and counts
 * in journal_lost().
 *
 * A caller recording a failure keeps its own error: err may be NULL (the
 * journal's failure shows only in the return value), point to NULL (filled
 * on failure), or point to an error the caller already holds, which is then
 * never replaced nor changed.  The rule is to journal into a separate
 * error, report the original first and the journal's after it.  */
int journal_fact (struct journal *j, enum journal_fact fact, uint64_t command,
                  const char *call, const struct journal_field *fields,
                  size_t n, struct cr_error **err);

/* Append to fields (n of them used, max in all) one string field per line
 * "NAME VALUE" of lines, NAME in [a-z_]; other lines are skipped.  lines
 * is split in place and must outlive the fields.  Returns the new n.  */
size_t journal_fields_from_lines (char *lines, struct journal_field *fields,
                                  size_t n, size_t max);

/* Record a "usage" fact with the fields cpu_user_ms, cpu_system_ms,
 * max_rss_kib, bytes and lines; err as for journal_fact().  */
int journal_usage (struct journal *j, uint64_t command, const char *call,
                   const struct journal_usage *usage, struct cr_error **err);

/* Close the file and free j; NULL is allowed.  Lines are not fsynced: a
 * host crash may lose the last ones.  */
void journal_close (struct journal *j);

#endif
