/* The command supervisor: admission against the concurrency ceiling, one
 * backend session per command, its output through capture, its deadline,
 * commands left running (background: true, or ctrl+b), what they have
 * printed (bash_output), their endings, told exactly once, and stopping
 * one from the list.
 *
 * The front ends (crucible run, the MCP server, the full-screen UI) each
 * implement the listener; the supervisor knows nothing of them.  */
#ifndef CRUCIBLE_CORE_SUPERVISOR_H
#define CRUCIBLE_CORE_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/env.h"
#include "core/journal.h"
#include "core/loop.h"
#include "core/proxy.h"
#include "core/result.h"
#include "lib/error.h"
#include "sandbox/backend.h"

/* How long after the command's own exit its result waits for the pipe to
 * close before saying that something it left running holds it open.  */
#define SUPERVISOR_GRACE_MS 500

/* How long a call that asked to be left running waits before it is
 * answered: long enough for "command not found" to come back as a result.  */
#define SUPERVISOR_EARLY_MS 200

/* How long a stop from the list may take before it is reported failed.  */
#define SUPERVISOR_STOP_MS 5000

struct supervisor;
struct command;
struct capture;

/* How a command came to its result.  */
struct command_outcome
{
  enum result_ending ending;
  int exit_status;     /* RESULT_EXITED */
  int signal;          /* RESULT_SIGNALED */
  bool still_arriving; /* its pipe was still held when it was reported */
  uint64_t bytes;      /* raw bytes that arrived */
  uint64_t lines;
};

/* The answer to the call that started a command.  */
struct command_answer
{
  const char *text; /* what the model is given, owned by the command */
  size_t text_len;
  bool left_running; /* the command goes on; outcome is NULL */
  bool refused;      /* it could not be started after all (its shell would
                        not run); outcome is NULL */
  const struct command_outcome *outcome; /* how it ended, when it did */
};

struct supervisor_listener
{
  /* The call is answered: with its result, with a refusal, or because the
   * command was left running.  Exactly once per command.  */
  void (*answered) (void *data, struct command *cmd,
                    const struct command_answer *answer);
  /* A command left running ended (line is the person's "✗ … ended on its
   * own" line).  Its note for the model waits in supervisor_take_endings.  */
  void (*ended_on_its_own) (void *data, struct command *cmd, const char *line);
  /* A stop from the list did not finish cleaning up in time; the command
   * keeps its slot and may be stopped again.  */
  void (*stop_failed) (void *data, struct command *cmd);
  /* Nothing of the command's scope is left and its slot is free; cmd is
   * freed right after this returns.  */
  void (*cleaned) (void *data, struct command *cmd);
  void *data;
  /* Where each command's capture spools every byte that arrives, for a
   * full view (capture_read_all), or NULL: no spool (crucible run).  */
  const char *spool_dir;
};

/* Someone who watches every command of a supervisor rather than one call
 * (the full-screen UI: the live sample, the list, the full view).  Each
 * hook may be NULL.  */
struct supervisor_observer
{
  /* A command has started; output for it follows.  */
  void (*started) (void *data, struct command *cmd);
  /* Its output as the capture released it (core/capture.h): masked when
   * the command has secrets, so this is what every view may show; in
   * order, and over the stream the same count as arrived.  */
  void (*output) (void *data, struct command *cmd, const char *bytes,
                  size_t len);
  /* A stop from the list did not finish in time.  */
  void (*stop_failed) (void *data, struct command *cmd);
  /* Its slot is free; cmd is freed right after this returns.  */
  void (*cleaned) (void *data, struct command *cmd);
  void *data;
  /* Where each command's capture spools every byte that arrives, for a
   * full view (capture_read_all), or NULL: no spool (crucible run).  */
  const char *spool_dir;
};

struct command_request
{
  const char *line;          /* the command line, run as sh -c LINE */
  const char *description;   /* how the call described itself, or NULL */
  double timeout_seconds;    /* 0: the configured per-command ceiling */
  bool background;           /* the call asked to be left running */
  const char *call_id;       /* the tool call's id, for the journal, or NULL */
  const struct env_var *env; /* variables the call names */
  size_t n_env;
  /* The call a sandbox may have been prepared ahead for while it waited
   * for approval (supervisor_prepare_for), or NULL.  */
  const char *ahead_call;
};

/* Make a supervisor for one workspace.  It borrows loop, backend, config
 * and host_env (crucible's own environment, for the base variables).  */
struct supervisor *supervisor_new (struct loop *loop,
                                   struct sandbox_backend *backend,
                                   const struct config *config,
                                   const char *workspace,
                                   char *const *host_env);

/* Free the supervisor.  A command whose scope never confirmed it was empty
 * is abandoned: its keeper is left to end the scope on its own.  */
void supervisor_free (struct supervisor *sup);

/* Admit and start a command.  A refusal (a bound passed, no shell, a policy
 * the backend cannot hold, timeout with background, a line that sleeps to
 * wait for a later command) returns -1 with *err holding the text the
 * model is given; nothing was started and nothing is left running.  */
int supervisor_start (struct supervisor *sup, const struct command_request *req,
                      const struct supervisor_listener *listener,
                      struct command **out, struct cr_error **err);

/* Leave a running command running and answer its call now, saying the
 * developer pressed ctrl+b.  Returns false when there is nothing to leave:
 * it was already answered or has ended.  */
bool supervisor_detach (struct supervisor *sup, struct command *cmd);

/* Stop a command from the list: returns at once; cleaned follows, or
 * stop_failed when cleanup does not finish in time (then it may be called
 * again).  A command the model was not told of yet is told it was
 * stopped.  */
void supervisor_stop (struct supervisor *sup, struct command *cmd);

/* Stop a command because its turn or call was interrupted (Esc, a cancelled
 * MCP request).  As supervisor_stop, except for a command that has ended and
 * waits for another command's publication: the list leaves that one to be
 * reported, an interruption cuts its wait to seconds.  */
void supervisor_interrupt (struct supervisor *sup, struct command *cmd);

/* Stop every command (crucible is going away or was interrupted); each still
 * gets its answer and cleaned.  */
void supervisor_stop_all (struct supervisor *sup);

/* bash_output: what command number has printed so far, bounded like a
 * result.  The caller owns the text.  */
char *supervisor_output (struct supervisor *sup, int64_t number, size_t *len);

/* The notes of every ending not told yet, joined by blank lines, marked
 * told; NULL when there is none.  The caller owns the text.  */
char *supervisor_take_endings (struct supervisor *sup, size_t *len);

/* Whether an ending waits to be told.  */
bool supervisor_has_endings (const struct supervisor *sup);

/* Commands holding a slot: running, or ended with cleanup unconfirmed.  */
size_t supervisor_slots_held (const struct supervisor *sup);

/* A command's number (#N, given when it is left running; 0 before) and
 * label (its description or Bash(line)).  */
uint64_t command_number (const struct command *cmd);
const char *command_label (const struct command *cmd);

/* A command's sandbox ID (its session's), which the proxy's questions
 * name it by.  */
const char *command_sandbox_id (const struct command *cmd);

/* A command's capture, which the views read on demand (capture_read);
 * valid until the command is cleaned.  */
const struct capture *command_capture (const struct command *cmd);

/* A command's capture, taken over by the caller (observer.cleaned only:
 * a view that goes on reading it), who frees it with capture_free.  */
struct capture *command_take_capture (struct command *cmd);

/* Whether a command was left running and has not ended yet.  */
bool command_left_running (const struct command *cmd);
/* Where the command's servers are reachable (sandbox.network.ports:
 * "listening on 127.0.0.1:5173"), or NULL; owned by the caller.  */
char *command_where (const struct command *cmd);

/* The shell commands run through, or NULL when this machine has none.  */
const char *supervisor_find_shell (void);

/* The effective deadline for a request, in milliseconds.  */
uint64_t supervisor_deadline_ms (const struct config *config,
                                 double timeout_seconds);

/* Record lifecycle facts in j (borrowed; NULL: none).  A fact that cannot
 * be written never replaces what was being recorded.  */
void supervisor_set_journal (struct supervisor *sup, struct journal *j);

/* Commands run under process isolation (CRUCIBLE_ALLOW_PROCESS_ISOLATION,
 * tui/front.c): the backend confines nothing where confinement was asked
 * for, so each policy asks it for nothing and every result carries
 * RESULT_PROCESS_ISOLATION_NOTE.  */
void supervisor_set_process_isolation (struct supervisor *sup, bool on);

/* The host exits once its commands are released (crucible run): each is
 * released with sandbox_dispose_leaving, so that what the next start
 * recovers anyway is not removed on the way out.  Off by default.  */
void supervisor_set_exits_after (struct supervisor *sup, bool on);

/* The journal set, or NULL.  */
struct journal *supervisor_journal (const struct supervisor *sup);

/* Record the person's answer about a call (call_id: the tool call's id,
 * or NULL), for the journal.  */
void supervisor_note_approval (struct supervisor *sup, const char *call_id,
                               bool allowed);

/* The person's say on a name the host's proxy does not allow (the
 * approval panel, an MCP elicitation): fn is handed to the proxy
 * (proxy_set_asker) when the first command with domains makes it, or at
 * once when it exists; NULL clears it, and a connection then waiting is
 * refused.  Without an asker every such name gets the 403.  */
void supervisor_set_net_asker (struct supervisor *sup, proxy_asker_fn fn,
                               void *data);
/* Answer a question the asker was given (proxy_answer); nothing when no
 * proxy was made.  */
void supervisor_net_answer (struct supervisor *sup, uint64_t question,
                            enum proxy_answer a);

/* Watch every command started from now on (obs is copied; NULL: none).  */
void supervisor_set_observer (struct supervisor *sup,
                              const struct supervisor_observer *obs);

/* Prepared ahead.  At most one sandbox of a supervisor is prepared ahead
 * of its command (sandbox_prepare_ahead): for the call waiting on the
 * approval panel, or kept for whatever command comes next.  Its baseline,
 * environment and credentials are taken only when the command starts;
 * it is used only when the policy, the backend, the configuration files
 * and what the backend read from the workspace are still those it was
 * made from, and is disposed of otherwise (stale), when its call is
 * refused, and when the supervisor is freed.  Each is journaled by its
 * own sandbox ID: `policy` with `ahead` when prepared, `cleanup` with
 * `unused` when disposed of unused (doc/journal.md).  A backend that
 * makes nothing ahead (compat) is left to start as ever.  */

/* Keep one sandbox prepared for the next command from now on (on), made
 * when no command is starting and none is prepared; or stop keeping one
 * (the one kept is disposed of).  */
void supervisor_keep_ahead (struct supervisor *sup, bool on);

/* The approval panel asks about call_id: prepare a sandbox for it now
 * (the kept one, when there is one, becomes its), so that it starts the
 * moment it is allowed.  A failure only means it will start as ever.  */
void supervisor_prepare_for (struct supervisor *sup, const char *call_id);

/* call_id was refused (or its question withdrawn): dispose of what was
 * prepared for it.  */
void supervisor_prepared_refused (struct supervisor *sup, const char *call_id);

/* The sandbox ID of the sandbox prepared ahead, or NULL (tests).  */
const char *supervisor_ahead_id (const struct supervisor *sup);

/* Change the stop budget (tests).  */
void supervisor_set_stop_ms (struct supervisor *sup, uint64_t ms);

/* Change the ceilings of a wait to publish (tests): past the deadline,
 * and after a stop.  */
void supervisor_set_publish_ms (struct supervisor *sup, uint64_t overdue_ms,
                                uint64_t short_ms);

/* The host's proxy for what is not a command but gets the network a
 * policy allows (an MCP server of this process, core/mcphost): made now
 * when no command has made it, with the asker set; owned by sup, so every
 * client of it is freed before supervisor_free.  */
struct proxy *supervisor_proxy (struct supervisor *sup, struct cr_error **err);

#endif
