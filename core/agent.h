/* The agent protocol: JSON lines between crucible and an agent process
 * started from a command line (--agent CMD or home agent.command) through
 * sh -c, with pipes on its standard input and output.  doc/agent-protocol.md
 * is the reference; this module reads the agent's messages (bounded,
 * validated, each either a message or a protocol error, never a crash) and
 * writes crucible's.  It knows nothing of turns: core/session does.
 *
 * Also here: the built-in shell agent's one rule, turning a prompt line
 * into one bash call.  */
#ifndef CRUCIBLE_CORE_AGENT_H
#define CRUCIBLE_CORE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/env.h"
#include "core/loop.h"
#include "lib/error.h"

/* The protocol version crucible speaks (the hello messages carry it).  */
#define AGENT_PROTOCOL_VERSION 1

/* The longest message accepted from an agent, newline excluded.  */
#define AGENT_MAX_LINE ((size_t) 1 << 20)

/* How long an agent whose output closed, or that was asked to leave, has
 * before its process group is killed.  */
#define AGENT_EXIT_MS 2000

struct agent;

enum agent_msg_type
{
  AGENT_MSG_HELLO,
  AGENT_MSG_TEXT,
  AGENT_MSG_BASH,
  AGENT_MSG_BASH_OUTPUT,
  AGENT_MSG_END_TURN,
  AGENT_MSG_TOOL /* a call of an MCP server's tool, mcp__<server>__<tool> */
};

/* One message from the agent; every string is owned by the message.  */
struct agent_msg
{
  enum agent_msg_type type;
  int64_t protocol;    /* hello */
  char *name;          /* hello: the agent's name, or NULL */
  char *text;          /* text */
  char *id;            /* bash, bash_output: the call's id */
  char *command;       /* bash */
  char *description;   /* bash, or NULL */
  double timeout;      /* bash: seconds, 0 when not sent */
  bool background;     /* bash */
  struct env_var *env; /* bash: names and values owned by the message */
  size_t n_env;
  int64_t number;  /* bash_output */
  char *tool;      /* tool: mcp__<server>__<tool> */
  char *arguments; /* tool: its arguments, JSON object text ("{}") */
};

struct agent_listener
{
  /* A valid message (hello is handled here and never passed on).  */
  void (*message) (void *data, struct agent *agent,
                   const struct agent_msg *msg);
  /* A message crucible could not use; the agent was already told with an
   * error message.  call_id is the id of a malformed call when one could
   * be read (the call should be answered with an error), else NULL.  */
  void (*protocol_error) (void *data, struct agent *agent, const char *what,
                          const char *call_id);
  /* The agent process has ended (wait_status as from waitpid).  Called
   * once; the agent may be freed from here on, but not inside this call.  */
  void (*exited) (void *data, struct agent *agent, int wait_status);
  /* The agent did not read: more than JSONRPC_OUT_MAX bytes (queued) waited
   * for it.  It is killed right after this call; exited follows.  */
  void (*unread) (void *data, struct agent *agent, size_t queued);
  void *data;
};

/* Start `sh -c COMMAND` in workspace with envp (the agent is trusted: it is
 * configured in the home file or on the command line, and needs its own
 * credentials), in a process group of its own, and send it hello.  */
struct agent *agent_start (struct loop *loop, const char *command,
                           const char *workspace, char *const *envp,
                           const struct agent_listener *listener,
                           struct cr_error **err);

/* Whether the process has been reaped (exited was called).  */
bool agent_exited (const struct agent *agent);

/* The agent's process id (its process group too).  */
pid_t agent_pid (const struct agent *agent);

/* Messages from crucible (doc/agent-protocol.md).  texts need not be valid
 * UTF-8: invalid bytes are sent as U+FFFD.  endings may be NULL.  */
void agent_send_prompt (struct agent *agent, const char *text,
                        const char *endings);
void agent_send_endings (struct agent *agent, const char *text,
                         bool starts_turn);
void agent_send_tool_result (struct agent *agent, const char *id,
                             const char *text, size_t len, bool is_error);
void agent_send_cancel (struct agent *agent);
/* The MCP servers' tools offered for the turn about to start: tools is a
 * JSON array of {"name","description","inputSchema"} objects.  */
void agent_send_tools (struct agent *agent, const char *tools, size_t len);
void agent_send_error (struct agent *agent, const char *what);

/* Ask the agent to leave: close its input; its process group is killed
 * AGENT_EXIT_MS later if it has not exited.  */
void agent_close (struct agent *agent);

/* Kill the agent's process group now; exited follows from the loop.  */
void agent_kill (struct agent *agent);

/* Free the agent; a process still running is killed with its group and
 * reaped first.  */
void agent_free (struct agent *agent);

/* Parse one line (no newline) into msg.  Returns -1 with *err naming what
 * was wrong; msg->id is then set when the line was a call whose id could
 * be read.  Clear msg with agent_msg_clear either way.  */
int agent_parse_line (const char *line, size_t len, struct agent_msg *msg,
                      struct cr_error **err);
void agent_msg_clear (struct agent_msg *msg);

/* Append a JSON string (quotes included) for s, which need not be valid
 * UTF-8.  */
struct buf;
void agent_json_string (struct buf *out, const char *s, size_t len);

/* The built-in shell agent: the bash call a prompt line becomes.  A
 * trailing " &" (blanks after it allowed) is removed and asks for
 * background: true.  Returns the line to run, owned by the caller.  */
char *agent_shell_line (const char *prompt, bool *background);

#endif
