/* The turn runner: a person's prompt goes to the agent (an external one
 * speaking core/agent's protocol, or the built-in shell agent), its tool
 * calls `bash` and `bash_output` go to the supervisor, after the question
 * where one is asked, and their results go back, until the turn ends.
 *
 * Endings of commands left running are told to the agent exactly once, by
 * the spec's routes: between steps of a running turn (an `endings` message
 * right before the next tool result), with the next prompt the person
 * typed or queued, or by starting a turn when nothing is running and no
 * prompt waits.  Cancelling a turn (Esc) stops the turn's own foreground
 * commands, never commands left running; so does an agent that dies, which
 * is started again for the next prompt.
 *
 * A front end (the line front end `crucible session`, the full-screen UI)
 * implements struct session_frontend and answers the questions.  */
#ifndef CRUCIBLE_CORE_SESSION_H
#define CRUCIBLE_CORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "core/rules.h"
#include "core/mcphost.h"
#include "core/supervisor.h"

/* How long an agent has to end a cancelled turn before it is stopped.  */
#define SESSION_CANCEL_MS 5000

struct session;
struct session_call;

/* What the session decides about a call before it runs.  */
enum session_verdict
{
  SESSION_ALLOW, /* runs without a question */
  SESSION_ASK,   /* the front end asks the person */
  SESSION_DENY   /* refused; the refusal is the model's answer */
};

/* What started a turn.  */
enum session_turn_reason
{
  SESSION_TURN_PROMPT, /* a prompt the person typed or queued */
  SESSION_TURN_ENDINGS /* a command left running ended while idle */
};

/* The front end's question hook: ask the person about call, then answer
 * with session_answer_approval (or session_cannot_ask), now or later.  One
 * question is out at a time.  */
typedef void (*session_ask_fn) (void *data, struct session_call *call);

struct session_frontend
{
  /* A turn starts; prompt is NULL for SESSION_TURN_ENDINGS.  */
  void (*turn_started) (void *data, enum session_turn_reason reason,
                        const char *prompt);
  /* The agent's text.  */
  void (*text) (void *data, const char *text);
  /* A call runs now (allowed, or never asked about).  */
  void (*call) (void *data, const struct session_call *call);
  /* A call has its answer (also a refusal, a denial, a cancelled call).  */
  void (*result) (void *data, const struct session_call *call, const char *text,
                  size_t len, bool is_error);
  session_ask_fn ask;
  /* A question asked is no longer wanted (the turn was cancelled or the
   * agent died); do not answer it.  */
  void (*withdrawn) (void *data, const struct session_call *call);
  /* The person's "✗ … ended on its own" line, the moment it happens.  */
  void (*ending) (void *data, const char *line);
  /* A person-facing notice (translated): the agent exited, sent a message
   * crucible could not use, could not be started.  */
  void (*notice) (void *data, const char *text);
  /* The turn is over.  */
  void (*turn_ended) (void *data);
  void *data;
  /* An MCP server's own elicitation/create, for the person: message
   * (shown safe) and the schema its answer must fit (JSON text); answered
   * with session_elicit_answer.  NULL: servers are not offered
   * elicitation, and refused when they ask.  */
  void (*elicit) (void *data, const char *server, struct mcphost_elicitation *q,
                  const char *message, const char *schema);
};

struct session_options
{
  const char *agent_command; /* NULL: the built-in shell agent */
  const char *workspace;     /* where the agent starts */
  char *const *agent_env;    /* the agent's environment (it is trusted) */
  const struct rules *rules; /* the permission rules (borrowed) */
  /* The configured MCP servers' host (core/mcphost.h), its listener left
   * for the session to fill, or NULL: with an external agent each turn is
   * a run of the servers, their tools offered to it (a "tools" message
   * before the turn's first) and called as mcp__<server>__<tool>.
   * Appended, so that a caller built before it lines up.  */
  const struct mcphost_config *servers;
};

/* Make a session.  It borrows loop and sup (and the strings of opts until
 * session_free); the external agent is started with the first turn.  */
struct session *session_new (struct loop *loop, struct supervisor *sup,
                             const struct session_options *opts,
                             const struct session_frontend *fe);

/* Free the session and stop its agent.  Free the supervisor first, or run
 * no loop between the two: its commands point back at the session.  */
void session_free (struct session *s);

/* The person submits a prompt: it starts a turn now, or is queued behind
 * the running turn (and then takes any ending with it).  Returns false
 * after session_close.  */
bool session_prompt (struct session *s, const char *text);

/* Esc: stop the running turn and its own foreground commands; commands
 * left running go on.  Returns false when no turn is running.  */
bool session_cancel (struct session *s);

/* Ctrl+B: leave the turn's running foreground commands running and answer
 * their calls now.  Returns false when there was none.  */
bool session_detach (struct session *s);

/* No more prompts: after the running turn and the queued prompts, stop
 * every command and let the agent go.  */
void session_close (struct session *s);

/* Leave now (quit, SIGTERM, SIGHUP): the queued prompts are dropped, the
 * running turn is cancelled, and then everything stops as after
 * session_close.  */
void session_end_now (struct session *s);

/* Whether the session has closed, every command is cleaned and the agent
 * is gone.  */
bool session_done (const struct session *s);

/* Whether the session has begun stopping every command (after
 * session_close, once the last turn ended).  */
bool session_stopping (const struct session *s);

/* Whether a turn is running.  */
bool session_busy (const struct session *s);

/* The single place a call's verdict is decided.  When it returns
 * SESSION_DENY, *refusal (owned by the caller) is the model's answer.  */
enum session_verdict session_verdict (struct session *s,
                                      const struct session_call *call,
                                      char **refusal);

/* The person's answer to a question.  */
void session_answer_approval (struct session *s, struct session_call *call,
                              bool allow);

/* The front end has no way to ask: refuse the call, saying so.  */
void session_cannot_ask (struct session *s, struct session_call *call,
                         const char *why);

/* The person's answer to a server's question (session_frontend.elicit):
 * content is the accepted answer's JSON object text (NULL unless
 * accepted).  */
void session_elicit_answer (struct session *s, struct mcphost_elicitation *q,
                            enum mcpclient_elicit_action action,
                            const char *content);

/* The configured name of the session's MCP server whose client of the
 * proxy has sandbox_id (the one asking a network question), or NULL.  */
const char *session_net_server (const struct session *s,
                                const char *sandbox_id);

/* What a call is.  Strings are owned by the call.  */
bool session_call_is_output (const struct session_call *call); /* bash_output */
const char *session_call_line (const struct session_call *call);
const char *session_call_description (const struct session_call *call);
bool session_call_background (const struct session_call *call);
bool session_call_typed (const struct session_call *call); /* by the person */
int64_t session_call_number (const struct session_call *call);
/* Bash(<line>) or BashOutput(#N), for the transcript.  */
const char *session_call_label (const struct session_call *call);
/* The MCP tool a call names (mcp__<server>__<tool>), or NULL for bash and
 * bash_output.  */
const char *session_call_tool (const struct session_call *call);

#endif
