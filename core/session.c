/* The turn runner: prompts, the agent's calls, questions, results, endings
 * told once, cancellation, an agent that dies.  */
#include <config.h>

#include "core/session.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/agent.h"
#include "core/jsonrpc.h"
#include "core/notes.h"
#include "core/permit.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"

/* Model-facing answers to calls that did not run (doc/strings.md,
 * "Sessions and the agent protocol").  Never translated.  */
#define SESSION_DECLINED                                                       \
  "[refused: the developer declined to run it; nothing was run]"
#define SESSION_CANCELLED                                                      \
  "[refused: the developer pressed esc to stop this turn; nothing was run]"
#define SESSION_OUTSIDE                                                        \
  "[refused: the call arrived outside a turn; nothing was run]"

enum session_call_state
{
  CALL_WAIT_ASK, /* waiting for its question to be asked */
  CALL_ASKING,   /* the front end is asking */
  CALL_RUNNING,  /* its command runs and the call waits for its answer */
  CALL_DONE      /* answered */
};

struct session_call
{
  struct session *s;
  struct session_call *next;
  uint64_t turn; /* the turn the call belongs to */
  char *id;      /* the agent's id; NULL for the built-in agent */
  bool is_output;
  int64_t number;
  char *line;
  char *description;
  double timeout;
  bool background;
  struct env_var *env; /* owned names and values */
  size_t n_env;
  bool typed;
  char *label;
  char *tool;              /* an MCP tool call: mcp__<server>__<tool> */
  char *args;              /* its arguments, JSON object text */
  struct mcphost_call *hc; /* while its server holds it */
  struct command *cmd;     /* while the supervisor holds it */
  bool cmd_live;           /* started and not cleaned yet */
  enum session_call_state state;
};

struct session
{
  struct loop *loop;
  struct supervisor *sup;
  char *agent_command; /* NULL: the built-in shell agent */
  char *workspace;
  char *const *agent_env;
  const struct rules *rules;
  struct session_frontend fe;
  struct agent *agent;
  struct agent *gone;         /* an agent that exited, freed from the loop */
  bool agent_failed;          /* the last start failed: no turn for endings */
  struct session_call *calls; /* every call not freed, oldest first */
  struct session_call *asking;
  uint64_t turn_no;
  bool turn;
  bool cancelling;
  bool end_turn_seen;
  char **queue; /* prompts waiting for the running turn */
  size_t n_queue;
  struct buf untold; /* endings taken from the supervisor, not told yet */
  uint64_t kick_timer;
  uint64_t cancel_timer;
  bool closing;
  bool stopping;
  struct mcphost *servers; /* the configured MCP servers, or NULL */
  const struct config *servers_config;
  bool servers_waiting; /* the turn's first message waits for them */
  char *held_prompt;    /* that message's prompt (NULL: endings) */
};

static void session_kick_soon (struct session *s);
static void session_sweep_calls (struct session *s);
static void session_start_turn (struct session *s, char *prompt);
static void session_send_tools (struct session *s);
static void session_agent_first (struct session *s, const char *prompt);
static void session_servers_stop_turn (struct session *s,
                                       const struct cr_error *err);
static void session_servers_make (struct session *s,
                                  const struct mcphost_config *cfg);

/* With the built-in shell agent, each line the person types is a command
 * that runs at once, without a question: keep one sandbox prepared for it
 * (supervisor_keep_ahead), so that it starts in a sandbox made while the
 * person typed.  Its baseline, environment and credentials are still
 * taken when the command starts, and one made from another policy,
 * backend, configuration or workspace is disposed of as stale when the
 * next command comes (and another kept).  An external agent's calls keep
 * the approval panel's one sandbox prepared for the call asked about.  */
static void
session_keep_for_typed (struct session *s, bool on)
{
  if (s->agent_command == NULL)
    supervisor_keep_ahead (s->sup, on);
}

struct session *
session_new (struct loop *loop, struct supervisor *sup,
             const struct session_options *opts,
             const struct session_frontend *fe)
{
  struct session *s = xcalloc (1, sizeof *s);
  s->loop = loop;
  s->sup = sup;
  s->agent_command
      = opts->agent_command != NULL ? xstrdup (opts->agent_command) : NULL;
  s->workspace = xstrdup (opts->workspace);
  s->agent_env = opts->agent_env;
  s->rules = opts->rules;
  s->fe = *fe;
  session_keep_for_typed (s, true);
  if (opts->servers != NULL && s->agent_command != NULL
      && mcphost_wanted (opts->servers->config))
    session_servers_make (s, opts->servers);
  return s;
}

/* Free one call.  */
static void
session_call_free (struct session_call *c)
{
  free (c->id);
  free (c->line);
  free (c->description);
  for (size_t i = 0; i < c->n_env; i++)
    {
      free ((char *) c->env[i].name);
      free ((char *) c->env[i].value);
    }
  free (c->env);
  free (c->label);
  if (c->hc != NULL)
    mcphost_cancel (c->s->servers, c->hc);
  free (c->tool);
  free (c->args);
  free (c);
}

void
session_free (struct session *s)
{
  if (s == NULL)
    return;
  loop_cancel_timer (s->loop, s->kick_timer);
  loop_cancel_timer (s->loop, s->cancel_timer);
  agent_free (s->agent);
  agent_free (s->gone);
  while (s->calls != NULL)
    {
      struct session_call *c = s->calls;
      s->calls = c->next;
      session_call_free (c);
    }
  mcphost_free (s->servers);
  free (s->held_prompt);
  for (size_t i = 0; i < s->n_queue; i++)
    free (s->queue[i]);
  free (s->queue);
  buf_free (&s->untold);
  free (s->agent_command);
  free (s->workspace);
  free (s);
}

/* Give the person a notice.  */
static void
session_notice (struct session *s, const char *text)
{
  if (s->fe.notice != NULL)
    s->fe.notice (s->fe.data, text);
}

/* Move endings the supervisor holds into the session's untold text.  */
static void
session_gather_endings (struct session *s)
{
  size_t len;
  char *text = supervisor_take_endings (s->sup, &len);
  if (text == NULL)
    return;
  if (s->untold.len > 0)
    buf_puts (&s->untold, "\n\n");
  buf_append (&s->untold, text, len);
  free (text);
}

/* The endings not told yet, now told; NULL when there is none.  */
static char *
session_take_untold (struct session *s)
{
  session_gather_endings (s);
  if (s->untold.len == 0)
    return NULL;
  return buf_steal (&s->untold, NULL);
}

/* Calls of the running turn that have no answer yet.  */
static size_t
session_outstanding (const struct session *s)
{
  size_t n = 0;
  for (const struct session_call *c = s->calls; c != NULL; c = c->next)
    n += c->turn == s->turn_no && c->state != CALL_DONE;
  return n;
}

/* The turn is over.  */
static void
session_end_turn (struct session *s)
{
  if (!s->turn)
    return;
  s->turn = false;
  s->cancelling = false;
  s->end_turn_seen = false;
  s->servers_waiting = false;
  if (s->servers != NULL)
    mcphost_end (s->servers);
  loop_cancel_timer (s->loop, s->cancel_timer);
  s->cancel_timer = 0;
  if (s->fe.turn_ended != NULL)
    s->fe.turn_ended (s->fe.data);
  session_kick_soon (s);
}

/* End the turn when nothing in it is left to wait for.  */
static void
session_maybe_end_turn (struct session *s)
{
  if (!s->turn || session_outstanding (s) > 0)
    return;
  if (s->agent_command == NULL || s->end_turn_seen)
    session_end_turn (s);
}

/* Whether a call's answer goes to the agent.  */
static bool
session_sends (const struct session *s, const struct session_call *c)
{
  return c->id != NULL && s->agent != NULL && s->turn && c->turn == s->turn_no
         && !s->end_turn_seen;
}

/* A call has its answer: show it, send it (endings first, between this
 * step and the next), and see whether the turn is over.  */
static void
session_deliver (struct session *s, struct session_call *c, const char *text,
                 size_t len, bool is_error)
{
  c->state = CALL_DONE;
  if (s->fe.result != NULL)
    s->fe.result (s->fe.data, c, text, len, is_error);
  if (session_sends (s, c))
    {
      cleanup_free char *endings = session_take_untold (s);
      if (endings != NULL)
        agent_send_endings (s->agent, endings, false);
      agent_send_tool_result (s->agent, c->id, text, len, is_error);
    }
  session_maybe_end_turn (s);
}

/* Answer a call that will not run.  */
static void
session_refuse (struct session *s, struct session_call *c, const char *text)
{
  if (s->fe.call != NULL)
    s->fe.call (s->fe.data, c);
  session_deliver (s, c, text, strlen (text), true);
}

/* The supervisor answered a call.  */
static void
session_on_answered (void *data, struct command *cmd,
                     const struct command_answer *answer)
{
  struct session_call *c = data;
  const struct command_outcome *o = answer->outcome;
  c->cmd = cmd;
  if (c->state != CALL_RUNNING)
    return;
  bool is_error
      = answer->refused
        || (o != NULL && !(o->ending == RESULT_EXITED && o->exit_status == 0));
  session_deliver (c->s, c, answer->text, answer->text_len, is_error);
}

/* A command left running ended: the person is told now.  */
static void
session_on_ended (void *data, struct command *cmd, const char *line)
{
  struct session_call *c = data;
  struct session *s = c->s;
  if (!s->stopping && s->fe.ending != NULL)
    s->fe.ending (s->fe.data, line);
  session_kick_soon (s);
}

/* A stop did not finish cleaning up in time.  */
static void
session_on_stop_failed (void *data, struct command *cmd)
{
  struct session_call *c = data;
  cleanup_free char *text
      = xasprintf (_ ("stopping #%" PRIu64 " %s did not finish; it is still "
                      "running"),
                   command_number (cmd), command_label (cmd));
  session_notice (c->s, text);
}

/* A command's slot is free; the supervisor frees cmd next.  */
static void
session_on_cleaned (void *data, struct command *cmd)
{
  struct session_call *c = data;
  c->cmd = NULL;
  c->cmd_live = false;
  session_kick_soon (c->s);
}

/* An MCP tool call's answer, from its server.  */
static void
session_on_tool_done (void *data, const struct mcpclient_result *r)
{
  struct session_call *c = data;
  c->hc = NULL;
  if (c->state != CALL_RUNNING)
    return;
  if (r->error != NULL)
    session_deliver (c->s, c, r->error->msg, strlen (r->error->msg), true);
  else
    session_deliver (c->s, c, r->text, r->text_len, r->is_error);
}

/* Hand an MCP tool call to its server.  */
static void
session_run_tool (struct session *s, struct session_call *c)
{
  struct cr_error *err = NULL;
  c->state = CALL_RUNNING;
  c->hc = mcphost_call (s->servers, c->tool, c->args,
                        supervisor_deadline_ms (s->servers_config, c->timeout),
                        session_on_tool_done, c, &err);
  if (c->hc == NULL)
    {
      session_deliver (s, c, err->msg, strlen (err->msg), true);
      cr_error_free (err);
    }
}

/* Start a call's command (or answer bash_output).  */
static void
session_run (struct session *s, struct session_call *c)
{
  struct cr_error *err = NULL;
  if (s->fe.call != NULL)
    s->fe.call (s->fe.data, c);
  if (c->is_output)
    {
      size_t len;
      cleanup_free char *text = supervisor_output (s->sup, c->number, &len);
      session_deliver (s, c, text, len, false);
      return;
    }
  if (c->tool != NULL)
    {
      session_run_tool (s, c);
      return;
    }
  struct command_request req = { .line = c->line,
                                 .description = c->description,
                                 .timeout_seconds = c->timeout,
                                 .background = c->background,
                                 .env = c->env,
                                 .n_env = c->n_env,
                                 .ahead_call = c->id };
  struct supervisor_listener listener = { .answered = session_on_answered,
                                          .ended_on_its_own = session_on_ended,
                                          .stop_failed = session_on_stop_failed,
                                          .cleaned = session_on_cleaned,
                                          .data = c };
  c->state = CALL_RUNNING;
  c->cmd_live = true;
  if (supervisor_start (s->sup, &req, &listener, &c->cmd, &err) < 0)
    {
      c->cmd_live = false;
      session_deliver (s, c, err->msg, strlen (err->msg), true);
      cr_error_free (err);
    }
}

/* Put the next waiting question to the front end.  */
static void
session_next_ask (struct session *s)
{
  if (s->asking != NULL)
    return;
  for (struct session_call *c = s->calls; c != NULL; c = c->next)
    if (c->state == CALL_WAIT_ASK)
      {
        c->state = CALL_ASKING;
        s->asking = c;
        if (s->fe.ask != NULL)
          {
            /* While the person reads the question, its sandbox is made,
             * so that it starts the moment it is allowed.  */
            if (c->tool == NULL)
              supervisor_prepare_for (s->sup, c->id);
            s->fe.ask (s->fe.data, c);
          }
        else
          session_cannot_ask (s, c, "this front end cannot ask");
        return;
      }
}

/* A tool call's verdict: by the rules for tools (core/rules.h); a tool no
 * ready server offers is refused.  */
static enum session_verdict
session_tool_verdict (struct session *s, const struct session_call *call,
                      char **refusal)
{
  const struct mcphost_tool *t
      = s->servers != NULL ? mcphost_find (s->servers, call->tool) : NULL;
  const char *rule = NULL;
  if (t == NULL)
    {
      cleanup_free char *why
          = xasprintf ("no MCP server offers the tool `%s` now", call->tool);
      *refusal = notes_refusal (why);
      return SESSION_DENY;
    }
  switch (
      rules_decide_tool (s->rules, t->server, t->tool->name, t->initial, &rule))
    {
    case RULES_ALLOW:
      return SESSION_ALLOW;
    case RULES_DENY:
      {
        cleanup_free char *why
            = xasprintf ("a deny rule in your configuration forbids it (%s)",
                         rule != NULL ? rule : call->tool);
        *refusal = notes_refusal (why);
        return SESSION_DENY;
      }
    case RULES_ASK:
      break;
    }
  return SESSION_ASK;
}

enum session_verdict
session_verdict (struct session *s, const struct session_call *call,
                 char **refusal)
{
  struct permit p;
  static const enum session_verdict verdicts[]
      = { [PERMIT_RUN] = SESSION_ALLOW,
          [PERMIT_ASK] = SESSION_ASK,
          [PERMIT_REFUSE] = SESSION_DENY };

  /* bash_output never asks: it reaches no file and starts no process.  */
  *refusal = NULL;
  if (call->is_output)
    return SESSION_ALLOW;
  if (call->tool != NULL)
    return session_tool_verdict (s, call, refusal);
  permit_decide (s->rules, call->line, call->typed, call->background, &p);
  *refusal = p.refusal;
  return verdicts[p.verdict];
}

/* Decide about a new call: run it, ask about it, or refuse it.  */
static void
session_consider (struct session *s, struct session_call *c)
{
  cleanup_free char *refusal = NULL;
  switch (session_verdict (s, c, &refusal))
    {
    case SESSION_ALLOW:
      session_run (s, c);
      break;
    case SESSION_DENY:
      session_refuse (s, c, refusal);
      break;
    case SESSION_ASK:
      c->state = CALL_WAIT_ASK;
      session_next_ask (s);
      break;
    }
}

void
session_answer_approval (struct session *s, struct session_call *c, bool allow)
{
  if (c->state != CALL_ASKING)
    return;
  s->asking = NULL;
  supervisor_note_approval (s->sup, c->id, allow);
  if (allow)
    session_run (s, c);
  else
    {
      supervisor_prepared_refused (s->sup, c->id);
      session_refuse (s, c, SESSION_DECLINED);
    }
  session_next_ask (s);
}

void
session_cannot_ask (struct session *s, struct session_call *c, const char *why)
{
  if (c->state != CALL_ASKING)
    return;
  s->asking = NULL;
  supervisor_prepared_refused (s->sup, c->id);
  cleanup_free char *text = xasprintf (
      "[refused: the developer could not be asked: %s; nothing was run]", why);
  session_refuse (s, c, text);
  session_next_ask (s);
}

/* A new call of the running turn, appended to the list.  */
static struct session_call *
session_call_new (struct session *s, const char *id)
{
  struct session_call *c = xcalloc (1, sizeof *c);
  c->s = s;
  c->turn = s->turn_no;
  c->id = id != NULL ? xstrdup (id) : NULL;
  struct session_call **p = &s->calls;
  while (*p != NULL)
    p = &(*p)->next;
  *p = c;
  return c;
}

/* Copy a bash call's env from the agent's message.  */
static void
session_call_env (struct session_call *c, const struct agent_msg *m)
{
  c->env = xcalloc (m->n_env + 1, sizeof *c->env);
  for (size_t i = 0; i < m->n_env; i++)
    {
      c->env[i].name = xstrdup (m->env[i].name);
      c->env[i].value = xmemdup (m->env[i].value, m->env[i].value_len + 1);
      c->env[i].value_len = m->env[i].value_len;
    }
  c->n_env = m->n_env;
}

/* A call from the agent's message.  */
static struct session_call *
session_call_from_msg (struct session *s, const struct agent_msg *m)
{
  struct session_call *c = session_call_new (s, m->id);
  if (m->type == AGENT_MSG_TOOL)
    {
      c->tool = xstrdup (m->tool);
      c->args = xstrdup (m->arguments);
      /* What the approval panel reads as the call's line.  */
      c->line = xstrdup (m->tool);
      c->label = xasprintf ("%s(%s)", c->tool, c->args);
      return c;
    }
  if (m->type == AGENT_MSG_BASH_OUTPUT)
    {
      c->is_output = true;
      c->number = m->number;
      c->label = xasprintf ("BashOutput(#%" PRId64 ")", m->number);
      return c;
    }
  c->line = xstrdup (m->command);
  c->description = m->description != NULL ? xstrdup (m->description) : NULL;
  c->timeout = m->timeout;
  c->background = m->background;
  session_call_env (c, m);
  c->label = xasprintf ("Bash(%s)", c->line);
  return c;
}

/* A protocol error of the session's own (a message valid in itself, sent
 * at the wrong moment): tell the agent and the person.  */
static void
session_protocol_error (struct session *s, const char *what)
{
  agent_send_error (s->agent, what);
  cleanup_free char *text = xasprintf (
      _ ("the agent sent a message crucible could not use: %s"), what);
  session_notice (s, text);
}

/* Whether a call with this id is unanswered in the running turn.  */
static bool
session_id_taken (const struct session *s, const char *id)
{
  for (const struct session_call *c = s->calls; c != NULL; c = c->next)
    if (c->turn == s->turn_no && c->state != CALL_DONE && c->id != NULL
        && strcmp (c->id, id) == 0)
      return true;
  return false;
}

/* Stop what the running turn still waits for: questions are withdrawn,
 * foreground commands stopped (their answers still come, and are shown).  */
static void
session_abandon_calls (struct session *s, const char *answer)
{
  for (struct session_call *c = s->calls; c != NULL; c = c->next)
    {
      if (c->turn != s->turn_no || c->state == CALL_DONE)
        continue;
      if (c->state == CALL_ASKING)
        {
          s->asking = NULL;
          supervisor_prepared_refused (s->sup, c->id);
          if (s->fe.withdrawn != NULL)
            s->fe.withdrawn (s->fe.data, c);
        }
      if (c->state == CALL_RUNNING && c->hc != NULL)
        {
          /* Given up at its server; the answer is the turn's.  */
          mcphost_cancel (s->servers, c->hc);
          c->hc = NULL;
          if (answer != NULL)
            session_deliver (s, c, answer, strlen (answer), true);
          else
            c->state = CALL_DONE;
        }
      else if (c->state == CALL_RUNNING && c->cmd != NULL)
        supervisor_interrupt (s->sup, c->cmd);
      else if (answer != NULL)
        session_refuse (s, c, answer);
      else
        c->state = CALL_DONE;
    }
}

/* A tool call from the agent.  */
static void
session_on_call (struct session *s, const struct agent_msg *m)
{
  const char *kind = m->type == AGENT_MSG_BASH          ? "bash"
                     : m->type == AGENT_MSG_BASH_OUTPUT ? "bash_output"
                                                        : "tool";
  if (!s->turn || s->end_turn_seen)
    {
      cleanup_free char *what = xasprintf ("%s arrived outside a turn", kind);
      session_protocol_error (s, what);
      agent_send_tool_result (s->agent, m->id, SESSION_OUTSIDE,
                              strlen (SESSION_OUTSIDE), true);
      return;
    }
  if (session_id_taken (s, m->id))
    {
      cleanup_free char *what
          = xasprintf ("a call with id \"%.64s\" is already unanswered", m->id);
      session_protocol_error (s, what);
      return;
    }
  struct session_call *c = session_call_from_msg (s, m);
  if (s->cancelling)
    session_refuse (s, c, SESSION_CANCELLED);
  else
    session_consider (s, c);
}

/* The first unanswered call of the running turn, or NULL.  */
static const struct session_call *
session_first_outstanding (const struct session *s)
{
  for (const struct session_call *c = s->calls; c != NULL; c = c->next)
    if (c->turn == s->turn_no && c->state != CALL_DONE)
      return c;
  return NULL;
}

/* The agent ended its turn.  Ending it with calls unanswered (other than
 * while cancelling, when their commands are being stopped) is an error:
 * they are stopped, and their results are not sent.  */
static void
session_on_end_turn (struct session *s)
{
  if (!s->turn || s->end_turn_seen)
    {
      session_protocol_error (s, "end_turn arrived outside a turn");
      return;
    }
  s->end_turn_seen = true;
  const struct session_call *c = session_first_outstanding (s);
  if (c != NULL && !s->cancelling)
    {
      cleanup_free char *what
          = xasprintf ("end_turn arrived while call \"%.64s\" was unanswered; "
                       "what it started was stopped and its result is not "
                       "sent",
                       c->id);
      session_protocol_error (s, what);
      session_abandon_calls (s, NULL);
    }
  session_maybe_end_turn (s);
}

/* A message from the agent.  */
static void
session_on_message (void *data, struct agent *agent, const struct agent_msg *m)
{
  struct session *s = data;
  /* Calls answered are let go as the turn goes, so that what each message
   * looks through is what is outstanding, not every call of the turn.  */
  session_sweep_calls (s);
  switch (m->type)
    {
    case AGENT_MSG_TEXT:
      if (!s->turn || s->end_turn_seen)
        session_protocol_error (s, "text arrived outside a turn");
      else if (s->fe.text != NULL)
        s->fe.text (s->fe.data, m->text);
      break;
    case AGENT_MSG_BASH:
    case AGENT_MSG_BASH_OUTPUT:
    case AGENT_MSG_TOOL:
      session_on_call (s, m);
      break;
    case AGENT_MSG_END_TURN:
      session_on_end_turn (s);
      break;
    case AGENT_MSG_HELLO:
      break;
    }
}

/* The agent sent something crucible could not use (it was told).  */
static void
session_on_protocol_error (void *data, struct agent *agent, const char *what,
                           const char *call_id)
{
  struct session *s = data;
  cleanup_free char *text = xasprintf (
      _ ("the agent sent a message crucible could not use: %s"), what);
  session_notice (s, text);
  if (call_id == NULL || !s->turn || s->end_turn_seen
      || session_id_taken (s, call_id))
    return;
  cleanup_free char *answer = xasprintf (
      "[refused: the call was malformed: %s; nothing was run]", what);
  agent_send_tool_result (agent, call_id, answer, strlen (answer), true);
}

/* The agent did not read what crucible wrote to it: the person is told and
 * the journal says why; the agent is killed next, and its exit ends the
 * turn as any exit does.  */
static void
session_on_unread (void *data, struct agent *agent, size_t queued)
{
  struct session *s = data;
  jsonrpc_journal (supervisor_journal (s->sup), "agent", "ended",
                   "unread_output", queued);
  cleanup_free char *text
      = xasprintf (_ ("the agent did not read what crucible sent it (more "
                      "than %zu bytes waited); it was stopped"),
                   (size_t) JSONRPC_OUT_MAX);
  session_notice (s, text);
}

/* Say how the agent ended, for the person.  */
static char *
session_exit_text (int wait_status)
{
  if (WIFSIGNALED (wait_status))
    return xasprintf (_ ("the agent was killed by signal %d; it will be "
                         "started again for the next prompt"),
                      WTERMSIG (wait_status));
  return xasprintf (_ ("the agent exited with status %d; it will be started "
                       "again for the next prompt"),
                    WEXITSTATUS (wait_status));
}

/* The agent process ended.  Its turn ends; commands it left running go
 * on; the next turn starts it again.  */
static void
session_on_exited (void *data, struct agent *agent, int wait_status)
{
  struct session *s = data;
  if (!s->stopping)
    {
      cleanup_free char *text = session_exit_text (wait_status);
      session_notice (s, text);
    }
  s->gone = s->agent;
  s->agent = NULL;
  if (s->turn)
    {
      session_abandon_calls (s, NULL);
      session_end_turn (s);
    }
  session_kick_soon (s);
}

/* Start the external agent if it is not running.  */
static bool
session_ensure_agent (struct session *s)
{
  struct cr_error *err = NULL;
  if (s->agent != NULL)
    return true;
  struct agent_listener listener
      = { .message = session_on_message,
          .protocol_error = session_on_protocol_error,
          .exited = session_on_exited,
          .unread = session_on_unread,
          .data = s };
  s->agent = agent_start (s->loop, s->agent_command, s->workspace, s->agent_env,
                          &listener, &err);
  s->agent_failed = s->agent == NULL;
  if (s->agent != NULL)
    return true;
  cleanup_free char *text
      = xasprintf (_ ("could not start the agent: %s"), err->msg);
  session_notice (s, text);
  cr_error_free (err);
  return false;
}

/* The built-in shell agent's turn: the prompt line is one bash call, and
 * the person who typed it is not asked about it.  */
static void
session_builtin_turn (struct session *s, const char *prompt)
{
  bool background;
  char *line = agent_shell_line (prompt, &background);
  if (*line == '\0')
    {
      free (line);
      return;
    }
  struct session_call *c = session_call_new (s, NULL);
  c->line = line;
  c->background = background;
  c->typed = true;
  c->label = xasprintf ("Bash(%s)", line);
  session_consider (s, c);
}

/* The turn's first message, after the servers' tools when there are
 * servers.  */
static void
session_agent_first (struct session *s, const char *prompt)
{
  cleanup_free char *endings = session_take_untold (s);
  if (s->servers != NULL)
    session_send_tools (s);
  if (prompt != NULL)
    agent_send_prompt (s->agent, prompt, endings);
  else if (endings != NULL)
    agent_send_endings (s->agent, endings, true);
}

/* Begin the turn's run of the servers; false while the first message
 * waits for them to settle (it is held, and sent then).  */
static bool
session_servers_begin (struct session *s, const char *prompt)
{
  struct cr_error *err = NULL;
  cleanup_free char *run = xasprintf ("turn-%" PRIu64, s->turn_no);
  if (mcphost_begin (s->servers, run, &err) < 0)
    {
      /* No server is prepared (an earlier scope's cleanup is not
       * confirmed): the turn's run stops there, its prompt unsent.  */
      session_servers_stop_turn (s, err);
      cr_error_free (err);
      return false;
    }
  if (mcphost_settled (s->servers))
    return true;
  s->servers_waiting = true;
  free (s->held_prompt);
  s->held_prompt = prompt != NULL ? xstrdup (prompt) : NULL;
  return false;
}

/* Send the tools the servers offer for this turn.  */
static void
session_send_tools (struct session *s)
{
  struct jsonw *w = jsonw_new ();
  jsonw_array_open (w);
  mcphost_tools_write (s->servers, w);
  jsonw_array_close (w);
  size_t len;
  const char *text = jsonw_get (w, &len);
  agent_send_tools (s->agent, text, len);
  jsonw_free (w);
}

/* Send the turn's first message to the external agent.  */
static void
session_agent_turn (struct session *s, const char *prompt)
{
  if (!session_ensure_agent (s))
    {
      s->end_turn_seen = true;
      return;
    }
  if (s->servers != NULL && !session_servers_begin (s, prompt))
    return;
  session_agent_first (s, prompt);
}

/* Start a turn, for a prompt (taken over) or, with NULL, for endings.  */
static void
session_start_turn (struct session *s, char *prompt)
{
  s->turn_no++;
  s->turn = true;
  s->cancelling = false;
  s->end_turn_seen = false;
  if (s->fe.turn_started != NULL)
    s->fe.turn_started (
        s->fe.data, prompt != NULL ? SESSION_TURN_PROMPT : SESSION_TURN_ENDINGS,
        prompt);
  if (s->agent_command == NULL)
    {
      /* The built-in agent has no model to tell; the person saw the
       * line when it happened.  */
      session_gather_endings (s);
      buf_free (&s->untold);
      session_builtin_turn (s, prompt);
    }
  else
    session_agent_turn (s, prompt);
  free (prompt);
  session_maybe_end_turn (s);
}

/* Stop every command and let the agent go (the session is closing).  */
static void
session_stop_everything (struct session *s)
{
  if (s->stopping)
    return;
  s->stopping = true;
  /* No command comes after this: the kept sandbox is disposed of.  */
  session_keep_for_typed (s, false);
  supervisor_stop_all (s->sup);
  if (s->servers != NULL)
    mcphost_stop (s->servers);
  if (s->agent != NULL)
    agent_close (s->agent);
}

/* Free calls that are answered and whose command is cleaned.  */
static void
session_sweep_calls (struct session *s)
{
  struct session_call **p = &s->calls;
  while (*p != NULL)
    {
      struct session_call *c = *p;
      if (c->state == CALL_DONE && !c->cmd_live && c != s->asking)
        {
          *p = c->next;
          session_call_free (c);
        }
      else
        p = &c->next;
    }
}

/* What to do next when no turn runs: the next queued prompt, closing, or
 * a turn for endings nobody was told of.  */
static void
session_kick (struct loop *loop, void *data)
{
  struct session *s = data;
  s->kick_timer = 0;
  agent_free (s->gone);
  s->gone = NULL;
  session_sweep_calls (s);
  if (s->turn || s->stopping)
    return;
  /* The previous turn's servers are disposed of before the next run
   * (session_servers_on_ended kicks again); closing with nothing queued,
   * they are stopped instead.  */
  if (s->servers != NULL && mcphost_busy (s->servers)
      && (s->n_queue > 0 || !s->closing))
    return;
  if (s->n_queue > 0)
    {
      char *prompt = s->queue[0];
      memmove (s->queue, s->queue + 1, --s->n_queue * sizeof *s->queue);
      session_start_turn (s, prompt);
      return;
    }
  if (s->closing)
    {
      session_stop_everything (s);
      return;
    }
  session_gather_endings (s);
  if (s->agent_command == NULL)
    buf_free (&s->untold);
  else if (s->untold.len > 0 && !s->agent_failed)
    session_start_turn (s, NULL);
}

/* Look at what to do next from the loop, outside any callback.  */
static void
session_kick_soon (struct session *s)
{
  if (s->kick_timer == 0)
    s->kick_timer = loop_add_timer (s->loop, 0, session_kick, s);
}

bool
session_prompt (struct session *s, const char *text)
{
  if (s->closing)
    return false;
  s->agent_failed = false;
  /* Behind the running turn, or behind the last turn's servers while
   * they are disposed of: session_kick starts it once they are.  */
  if (s->turn || s->n_queue > 0
      || (s->servers != NULL && mcphost_busy (s->servers)))
    {
      s->queue = xrealloc (s->queue, (s->n_queue + 1) * sizeof *s->queue);
      s->queue[s->n_queue++] = xstrdup (text);
      return true;
    }
  session_start_turn (s, xstrdup (text));
  return true;
}

/* The agent did not end a cancelled turn in time.  */
static void
session_on_cancel_overdue (struct loop *loop, void *data)
{
  struct session *s = data;
  s->cancel_timer = 0;
  if (s->agent == NULL)
    return;
  session_notice (s, _ ("the agent did not end its turn within 5 seconds of "
                        "being cancelled; it was stopped"));
  agent_kill (s->agent);
}

bool
session_cancel (struct session *s)
{
  if (!s->turn || s->cancelling)
    return false;
  s->cancelling = true;
  if (s->agent != NULL && !s->end_turn_seen)
    {
      agent_send_cancel (s->agent);
      s->cancel_timer = loop_add_timer (s->loop, SESSION_CANCEL_MS,
                                        session_on_cancel_overdue, s);
    }
  session_abandon_calls (s, SESSION_CANCELLED);
  session_maybe_end_turn (s);
  return true;
}

bool
session_detach (struct session *s)
{
  bool any = false;
  for (struct session_call *c = s->calls; c != NULL; c = c->next)
    if (s->turn && c->turn == s->turn_no && c->state == CALL_RUNNING
        && c->cmd != NULL)
      any = supervisor_detach (s->sup, c->cmd) || any;
  return any;
}

void
session_close (struct session *s)
{
  s->closing = true;
  session_kick_soon (s);
}

void
session_end_now (struct session *s)
{
  /* A prompt queued behind the running turn would start a turn after
   * the cancel, one nobody is there to end.  */
  for (size_t i = 0; i < s->n_queue; i++)
    free (s->queue[i]);
  s->n_queue = 0;
  session_cancel (s);
  session_close (s);
}

bool
session_done (const struct session *s)
{
  return s->stopping && s->agent == NULL && s->gone == NULL
         && supervisor_slots_held (s->sup) == 0
         && (s->servers == NULL || !mcphost_busy (s->servers));
}

bool
session_stopping (const struct session *s)
{
  return s->stopping;
}

bool
session_busy (const struct session *s)
{
  return s->turn;
}

bool
session_call_is_output (const struct session_call *call)
{
  return call->is_output;
}

const char *
session_call_line (const struct session_call *call)
{
  return call->line;
}

const char *
session_call_description (const struct session_call *call)
{
  return call->description;
}

bool
session_call_background (const struct session_call *call)
{
  return call->background;
}

bool
session_call_typed (const struct session_call *call)
{
  return call->typed;
}

int64_t
session_call_number (const struct session_call *call)
{
  return call->number;
}

const char *
session_call_label (const struct session_call *call)
{
  return call->label;
}

const char *
session_call_tool (const struct session_call *call)
{
  return call->tool;
}

/* --- the MCP servers of a turn ---------------------------------------- */

/* The turn's run of the servers stopped before the agent heard of it (a
 * required server did not start, or none could be prepared; err says
 * which and why): said, the held prompt dropped, the turn ended, as
 * crucible mcp ends the connection.  */
static void
session_servers_stop_turn (struct session *s, const struct cr_error *err)
{
  session_notice (s, err->msg);
  s->servers_waiting = false;
  free (s->held_prompt);
  s->held_prompt = NULL;
  s->end_turn_seen = true;
}

/* The servers settled: the turn's first message goes out, tools first;
 * with err (a required server did not start) the turn ends instead.  */
static void
session_servers_on_settled (void *data, const struct cr_error *err)
{
  struct session *s = data;
  if (err != NULL && s->servers_waiting && s->turn)
    {
      session_servers_stop_turn (s, err);
      session_maybe_end_turn (s);
      return;
    }
  if (err != NULL)
    session_notice (s, err->msg);
  if (!s->servers_waiting || !s->turn)
    return;
  s->servers_waiting = false;
  char *prompt = s->held_prompt;
  s->held_prompt = NULL;
  if (s->agent != NULL)
    session_agent_first (s, prompt);
  free (prompt);
}

/* A server's tools changed within the turn: the agent is told anew.  */
static void
session_servers_on_tools_changed (void *data, const char *server)
{
  struct session *s = data;
  (void) server;
  if (s->turn && !s->servers_waiting && !s->end_turn_seen && s->agent != NULL)
    session_send_tools (s);
}

/* A line of a server's stderr, masked: a notice for the person.  */
static void
session_servers_on_stderr (void *data, const char *server, const char *line,
                           size_t len)
{
  struct session *s = data;
  cleanup_free char *text = xasprintf ("mcp:%s: %.*s", server, (int) len, line);
  session_notice (s, text);
}

/* Something about a server the person should hear of.  */
static void
session_servers_on_notice (void *data, const char *msg)
{
  session_notice (data, msg);
}

/* The turn's servers are disposed of: the next turn may begin.  */
static void
session_servers_on_ended (void *data, const struct cr_error *err)
{
  struct session *s = data;
  if (err != NULL)
    session_notice (s, err->msg);
  session_kick_soon (s);
}

/* A lifecycle fact could not be recorded: the turn ends.  */
static void
session_servers_on_audit_failed (void *data, const struct cr_error *err)
{
  struct session *s = data;
  session_notice (s, err->msg);
  if (s->turn)
    {
      session_abandon_calls (s, SESSION_CANCELLED);
      if (s->agent != NULL)
        agent_send_cancel (s->agent);
      s->cancelling = true;
    }
}

/* A server's own question, for the front end's person.  */
static void
session_servers_on_elicit (void *data, const char *server,
                           struct mcphost_elicitation *q, const char *message,
                           const char *schema)
{
  struct session *s = data;
  s->fe.elicit (s->fe.data, server, q, message, schema);
}

void
session_elicit_answer (struct session *s, struct mcphost_elicitation *q,
                       enum mcpclient_elicit_action action, const char *content)
{
  if (s->servers != NULL)
    mcphost_elicit_answer (s->servers, q, action, content);
}

const char *
session_net_server (const struct session *s, const char *sandbox_id)
{
  return s->servers != NULL ? mcphost_net_owner (s->servers, sandbox_id) : NULL;
}

/* Make the session's MCP servers' host, the session listening to it.  */
static void
session_servers_make (struct session *s, const struct mcphost_config *cfg)
{
  struct mcphost_config c = *cfg;
  c.listener = (struct mcphost_listener){
    .settled = session_servers_on_settled,
    .tools_changed = session_servers_on_tools_changed,
    .stderr_line = session_servers_on_stderr,
    .notice = session_servers_on_notice,
    .ended = session_servers_on_ended,
    .audit_failed = session_servers_on_audit_failed,
    .elicit = s->fe.elicit != NULL ? session_servers_on_elicit : NULL,
    .data = s,
  };
  /* The session's commands' proxy is its servers' too.  */
  c.supervisor = s->sup;
  s->servers_config = cfg->config;
  s->servers = mcphost_new (&c);
}
