/* The command supervisor: admission against the concurrency ceiling, one
 * backend session per command, its output through capture, its deadline,
 * and its ending, told to a listener as the result text the model gets.
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
#include "core/loop.h"
#include "core/result.h"
#include "lib/error.h"
#include "sandbox/backend.h"

/* How long after the command's own exit its result waits for the pipe to
 * close before saying that something it left running holds it open.  */
#define SUPERVISOR_GRACE_MS 500

struct supervisor;
struct command;

/* How a command came to its result.  */
struct command_outcome
{
  enum result_ending ending;
  int exit_status;     /* RESULT_EXITED */
  int signal;          /* RESULT_SIGNALED */
  bool still_arriving; /* its pipe was still held when it was reported */
  uint64_t bytes;      /* raw bytes that arrived */
  uint64_t lines;
  const char *text; /* the model's result, owned by the command */
  size_t text_len;
};

struct supervisor_listener
{
  /* The command has its result.  Its scope may still be being cleaned.  */
  void (*ended) (void *data, struct command *cmd,
                 const struct command_outcome *out);
  /* The command could not be started after all (its shell would not run);
   * err->msg is the refusal the model is given.  No ended follows.  */
  void (*failed) (void *data, struct command *cmd, const struct cr_error *err);
  /* Nothing of the command's scope is left and its slot is free; cmd is
   * freed right after this returns.  */
  void (*cleaned) (void *data, struct command *cmd);
  void *data;
};

struct command_request
{
  const char *line;          /* the command line, run as sh -c LINE */
  const char *description;   /* how the call described itself, or NULL */
  double timeout_seconds;    /* 0: the configured per-command ceiling */
  const struct env_var *env; /* variables the call names */
  size_t n_env;
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
 * the backend cannot hold) returns -1 with *err holding the text the model
 * is given; nothing was started and nothing is left running.  */
int supervisor_start (struct supervisor *sup, const struct command_request *req,
                      const struct supervisor_listener *listener,
                      struct command **out, struct cr_error **err);

/* Stop every command (crucible is going away or was interrupted); each still
 * gets its ended and cleaned.  */
void supervisor_stop_all (struct supervisor *sup);

/* Commands holding a slot: running, or ended with cleanup unconfirmed.  */
size_t supervisor_slots_held (const struct supervisor *sup);

/* The shell commands run through, or NULL when this machine has none.  */
const char *supervisor_find_shell (void);

/* The effective deadline for a request, in milliseconds.  */
uint64_t supervisor_deadline_ms (const struct config *config,
                                 double timeout_seconds);

#endif
