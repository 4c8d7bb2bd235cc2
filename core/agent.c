/* The agent protocol: an agent process, its messages read and validated,
 * crucible's messages written.  */
#include <config.h>

#include "core/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "core/jsonrpc.h"
#include "core/result.h"
#include "core/supervisor.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* Bytes read from the agent per loop turn.  */
#define AGENT_READ_CHUNK (64 * 1024)

/* How often an agent whose output closed is checked for its exit.  */
#define AGENT_REAP_POLL_MS 20

/* How often a running agent is checked for its exit.  */
#define AGENT_ALIVE_POLL_MS 250

struct agent
{
  struct loop *loop;
  struct agent_listener listener;
  pid_t pid;
  int in_fd;               /* the agent's standard input (we write), or -1 */
  int out_fd;              /* the agent's standard output (we read), or -1 */
  struct jsonrpc_out *out; /* what waits to be written to in_fd */
  struct jsonrpc_lines in; /* the message being read */
  bool hello_seen;
  bool reaped;
  bool killed;
  bool told_exit;
  int wait_status;
  uint64_t reap_timer;
  uint64_t kill_timer;
};

/* The message names an agent may send, in enum agent_msg_type order.  */
static const char *const agent_msg_names[]
    = { "hello", "text", "bash", "bash_output", "end_turn", "tool" };

/* The fields each message may carry, "type" included.  */
static const char *const agent_fields[][8] = {
  { "type", "protocol", "name", NULL },
  { "type", "text", NULL },
  { "type", "id", "command", "description", "timeout", "background", "env",
    NULL },
  { "type", "id", "number", NULL },
  { "type", NULL },
  { "type", "id", "name", "arguments", NULL },
};

void
agent_json_string (struct buf *out, const char *s, size_t len)
{
  json_text_append (out, s, len);
}

/* A message of this type being written: the caller adds its fields and
 * sends it with agent_send.  */
static struct jsonw *
agent_msg_begin (const char *type)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  jsonw_key (w, "type");
  jsonw_cstr (w, type);
  return w;
}

/* Add "KEY": and a JSON string.  */
static void
agent_put_field (struct jsonw *w, const char *key, const char *s, size_t len)
{
  jsonw_key (w, key);
  jsonw_text (w, s, len);
}

/* Close one message (a complete JSON object, no newline), queue it and
 * write what the pipe takes now.  An agent that closed its input is
 * leaving, and its output closing says so next; one that does not read is
 * ended from the queue's overflow.  */
static void
agent_send (struct agent *a, struct jsonw *w)
{
  size_t len;
  jsonw_object_close (w);
  const char *msg = jsonw_get (w, &len);
  if (a->out != NULL)
    jsonrpc_out_send (a->out, msg, len);
  jsonw_free (w);
}

/* The agent let more than JSONRPC_OUT_MAX bytes wait unread: it is told to
 * the listener and ended.  */
static void
agent_on_overflow (void *data, size_t queued)
{
  struct agent *a = data;
  if (a->listener.unread != NULL)
    a->listener.unread (a->listener.data, a, queued);
  agent_kill (a);
}

/* Send hello.  */
static void
agent_send_hello (struct agent *a)
{
  static const char *const tools[] = { "bash", "bash_output" };
  struct jsonw *w = agent_msg_begin ("hello");
  jsonw_key (w, "protocol");
  jsonw_int (w, AGENT_PROTOCOL_VERSION);
  jsonw_key (w, "crucible");
  jsonw_cstr (w, PACKAGE_VERSION);
  jsonw_key (w, "tools");
  jsonw_array_open (w);
  for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
    jsonw_cstr (w, tools[i]);
  jsonw_array_close (w);
  agent_send (a, w);
}

void
agent_send_prompt (struct agent *a, const char *text, const char *endings)
{
  struct jsonw *w = agent_msg_begin ("prompt");
  agent_put_field (w, "text", text, strlen (text));
  if (endings != NULL)
    agent_put_field (w, "endings", endings, strlen (endings));
  agent_send (a, w);
}

void
agent_send_endings (struct agent *a, const char *text, bool starts_turn)
{
  struct jsonw *w = agent_msg_begin ("endings");
  agent_put_field (w, "text", text, strlen (text));
  jsonw_key (w, "starts_turn");
  jsonw_bool (w, starts_turn);
  agent_send (a, w);
}

void
agent_send_tool_result (struct agent *a, const char *id, const char *text,
                        size_t len, bool is_error)
{
  struct jsonw *w = agent_msg_begin ("tool_result");
  agent_put_field (w, "id", id, strlen (id));
  agent_put_field (w, "text", text, len);
  jsonw_key (w, "is_error");
  jsonw_bool (w, is_error);
  agent_send (a, w);
}

void
agent_send_tools (struct agent *a, const char *tools, size_t len)
{
  struct jsonw *w = agent_msg_begin ("tools");
  jsonw_key (w, "tools");
  jsonw_raw (w, tools, len);
  agent_send (a, w);
}

void
agent_send_cancel (struct agent *a)
{
  agent_send (a, agent_msg_begin ("cancel"));
}

void
agent_send_error (struct agent *a, const char *what)
{
  struct jsonw *w = agent_msg_begin ("error");
  agent_put_field (w, "text", what, strlen (what));
  agent_send (a, w);
}

/* Free what a message owns and reset it.  */
void
agent_msg_clear (struct agent_msg *msg)
{
  free (msg->name);
  free (msg->text);
  free (msg->id);
  free (msg->command);
  free (msg->description);
  free (msg->tool);
  free (msg->arguments);
  for (size_t i = 0; i < msg->n_env; i++)
    {
      free ((char *) msg->env[i].name);
      free ((char *) msg->env[i].value);
    }
  free (msg->env);
  memset (msg, 0, sizeof *msg);
}

/* The value of key in object v, or NULL.  */
static yajl_val
agent_get (yajl_val v, const char *key)
{
  for (size_t i = 0; i < v->u.object.len; i++)
    if (strcmp (v->u.object.keys[i], key) == 0)
      return v->u.object.values[i];
  return NULL;
}

/* "an" before end_turn, "a" before the others.  */
static const char *
agent_article (enum agent_msg_type type)
{
  return type == AGENT_MSG_END_TURN ? "an" : "a";
}

/* Refuse a field the message type does not have.  */
static int
agent_check_fields (yajl_val v, enum agent_msg_type type, struct cr_error **err)
{
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *key = v->u.object.keys[i];
      bool known = false;
      for (size_t j = 0; agent_fields[type][j] != NULL; j++)
        known = known || strcmp (agent_fields[type][j], key) == 0;
      if (!known)
        return cr_error_set (err, 0, "unknown field \"%s\" in %s %s message",
                             key, agent_article (type), agent_msg_names[type]);
    }
  return 0;
}

/* Copy string field key into *out; a missing field is an error when
 * required.  An empty string is refused for required fields.  */
static int
agent_get_string (yajl_val v, const char *key, bool required, char **out,
                  enum agent_msg_type type, struct cr_error **err)
{
  yajl_val f = agent_get (v, key);
  if (f == NULL && !required)
    return 0;
  if (f == NULL || !YAJL_IS_STRING (f) || (required && *f->u.string == '\0'))
    return cr_error_set (err, 0, "%s %s message needs \"%s\" as a%s string",
                         agent_article (type), agent_msg_names[type], key,
                         required ? " non-empty" : "");
  *out = xstrdup (f->u.string);
  return 0;
}

/* Read a bash call's env object into msg.  */
static int
agent_get_env (yajl_val v, struct agent_msg *msg, struct cr_error **err)
{
  yajl_val f = agent_get (v, "env");
  if (f == NULL)
    return 0;
  if (!YAJL_IS_OBJECT (f))
    return cr_error_set (err, 0, "\"env\" must be an object of strings");
  msg->env = xcalloc (f->u.object.len + 1, sizeof *msg->env);
  for (size_t i = 0; i < f->u.object.len; i++)
    {
      yajl_val val = f->u.object.values[i];
      if (!YAJL_IS_STRING (val))
        return cr_error_set (err, 0, "\"env\": \"%s\" must be a string",
                             f->u.object.keys[i]);
      msg->env[i].name = xstrdup (f->u.object.keys[i]);
      msg->env[i].value = xstrdup (val->u.string);
      msg->env[i].value_len = strlen (val->u.string);
      msg->n_env++;
    }
  return 0;
}

/* Read the fields of a bash call.  */
static int
agent_parse_bash (yajl_val v, struct agent_msg *msg, struct cr_error **err)
{
  if (agent_get_string (v, "command", true, &msg->command, AGENT_MSG_BASH, err)
          < 0
      || agent_get_string (v, "description", false, &msg->description,
                           AGENT_MSG_BASH, err)
             < 0)
    return -1;
  yajl_val t = agent_get (v, "timeout");
  if (t != NULL
      && (!YAJL_IS_NUMBER (t) || !(YAJL_GET_DOUBLE (t) > 0)
          || !isfinite (YAJL_GET_DOUBLE (t))))
    return cr_error_set (err, 0,
                         "\"timeout\" must be a number of seconds above 0");
  msg->timeout = t != NULL ? YAJL_GET_DOUBLE (t) : 0;
  yajl_val bg = agent_get (v, "background");
  if (bg != NULL && !YAJL_IS_TRUE (bg) && !YAJL_IS_FALSE (bg))
    return cr_error_set (err, 0, "\"background\" must be true or false");
  msg->background = bg != NULL && YAJL_IS_TRUE (bg);
  return agent_get_env (v, msg, err);
}

/* Read the fields of a tool call: its name and its arguments, kept as
 * JSON text for the server.  */
static int
agent_parse_tool (yajl_val v, struct agent_msg *msg, struct cr_error **err)
{
  if (agent_get_string (v, "name", true, &msg->tool, AGENT_MSG_TOOL, err) < 0)
    return -1;
  yajl_val a = agent_get (v, "arguments");
  if (a != NULL && !YAJL_IS_OBJECT (a))
    return cr_error_set (err, 0, "\"arguments\" must be an object");
  struct jsonw *w = jsonw_new ();
  if (a != NULL)
    jsonw_value (w, a);
  else
    jsonw_raw (w, "{}", 2);
  msg->arguments = jsonw_steal (w, NULL);
  return 0;
}

/* Read an integer field.  */
static int
agent_get_integer (yajl_val v, const char *key, int64_t *out,
                   enum agent_msg_type type, struct cr_error **err)
{
  yajl_val f = agent_get (v, key);
  if (f == NULL || !YAJL_IS_INTEGER (f))
    return cr_error_set (err, 0, "%s %s message needs \"%s\" as an integer",
                         agent_article (type), agent_msg_names[type], key);
  *out = YAJL_GET_INTEGER (f);
  return 0;
}

/* Read the fields of one message whose type is known.  */
static int
agent_parse_fields (yajl_val v, struct agent_msg *msg, struct cr_error **err)
{
  if (agent_check_fields (v, msg->type, err) < 0)
    return -1;
  switch (msg->type)
    {
    case AGENT_MSG_HELLO:
      if (agent_get_integer (v, "protocol", &msg->protocol, msg->type, err) < 0)
        return -1;
      return agent_get_string (v, "name", false, &msg->name, msg->type, err);
    case AGENT_MSG_TEXT:
      return agent_get_string (v, "text", true, &msg->text, msg->type, err);
    case AGENT_MSG_BASH:
      return agent_parse_bash (v, msg, err);
    case AGENT_MSG_BASH_OUTPUT:
      return agent_get_integer (v, "number", &msg->number, msg->type, err);
    case AGENT_MSG_END_TURN:
      return 0;
    case AGENT_MSG_TOOL:
      return agent_parse_tool (v, msg, err);
    }
  return 0;
}

/* The message type named by "type", or -1 with *err set.  */
static int
agent_parse_type (yajl_val v, enum agent_msg_type *type, struct cr_error **err)
{
  yajl_val t = agent_get (v, "type");
  if (t == NULL || !YAJL_IS_STRING (t))
    return cr_error_set (err, 0, "a message needs \"type\" as a string");
  for (size_t i = 0; i < sizeof agent_msg_names / sizeof *agent_msg_names; i++)
    if (strcmp (t->u.string, agent_msg_names[i]) == 0)
      {
        *type = (enum agent_msg_type) i;
        return 0;
      }
  return cr_error_set (err, 0, "unknown message type \"%.64s\"", t->u.string);
}

/* A NUL is refused wherever it is: in a command, an env name or value, an
 * id.  */
#define AGENT_HOLDS_NUL                                                        \
  "a string in the message holds a NUL character (\\u0000)"

/* Read a call's id before anything else can fail, so that a malformed call
 * can still be answered.  */
static int agent_parse_id (yajl_val v, struct agent_msg *msg,
                           struct cr_error **err);

/* The id, refused when it holds a NUL (it could not be answered by it),
 * then the rest of a message holding one, which is answered by its id.  */
static int
agent_parse_id_whole (yajl_val v, const struct json_scan *scan,
                      struct agent_msg *msg, struct cr_error **err)
{
  if (scan->id_nul)
    return cr_error_set (err, 0, AGENT_HOLDS_NUL);
  if (agent_parse_id (v, msg, err) < 0)
    return -1;
  if (scan->nul)
    return cr_error_set (err, 0, AGENT_HOLDS_NUL);
  return 0;
}

/* Read a call's id before anything else can fail, so that a malformed call
 * can still be answered.  */
static int
agent_parse_id (yajl_val v, struct agent_msg *msg, struct cr_error **err)
{
  if (msg->type != AGENT_MSG_BASH && msg->type != AGENT_MSG_BASH_OUTPUT
      && msg->type != AGENT_MSG_TOOL)
    return 0;
  return agent_get_string (v, "id", true, &msg->id, msg->type, err);
}

/* Make yajl's parse error one line.  */
static int
agent_not_json (char *errbuf, struct cr_error **err)
{
  errbuf[strcspn (errbuf, "\n")] = '\0';
  return cr_error_set (err, 0, "not JSON (%s)",
                       *errbuf != '\0' ? errbuf : "parse error");
}

int
agent_parse_line (const char *line, size_t len, struct agent_msg *msg,
                  struct cr_error **err)
{
  char errbuf[256] = "";
  memset (msg, 0, sizeof *msg);
  if (memchr (line, '\0', len) != NULL)
    return cr_error_set (err, 0, "a message contains a NUL byte");
  cleanup_free char *text = xstrndup (line, len);
  bool too_deep = false;
  struct json_scan scan;
  yajl_val v
      = jsonrpc_parse_line (text, len, &scan, errbuf, sizeof errbuf, &too_deep);
  if (v == NULL && too_deep)
    return cr_error_set (err, 0, "a message is nested deeper than %d levels",
                         JSONRPC_MAX_DEPTH);
  if (v == NULL)
    return agent_not_json (errbuf, err);
  int ret = -1;
  if (!YAJL_IS_OBJECT (v))
    cr_error_set (err, 0, "a message must be a JSON object");
  else if (agent_parse_type (v, &msg->type, err) < 0
           || agent_parse_id_whole (v, &scan, msg, err) < 0)
    ;
  else
    ret = agent_parse_fields (v, msg, err);
  yajl_tree_free (v);
  return ret;
}

/* Tell the agent and the listener that a message could not be used.  */
static void
agent_report (struct agent *a, const char *what, const char *call_id)
{
  agent_send_error (a, what);
  if (a->listener.protocol_error != NULL)
    a->listener.protocol_error (a->listener.data, a, what, call_id);
}

/* Check the agent's hello: the version it speaks.  */
static void
agent_on_hello (struct agent *a, const struct agent_msg *msg)
{
  if (a->hello_seen)
    {
      agent_report (a, "hello was already received", NULL);
      return;
    }
  a->hello_seen = true;
  if (msg->protocol != AGENT_PROTOCOL_VERSION)
    {
      cleanup_free char *what = xasprintf (
          "protocol version %" PRId64 " is not supported; crucible speaks %d",
          msg->protocol, AGENT_PROTOCOL_VERSION);
      agent_report (a, what, NULL);
      agent_kill (a);
    }
}

/* One complete line from the agent.  */
static void
agent_on_line (struct agent *a, const char *line, size_t len)
{
  struct agent_msg msg;
  struct cr_error *err = NULL;

  if (len == 0)
    return;
  if (agent_parse_line (line, len, &msg, &err) < 0)
    agent_report (a, err->msg, msg.id);
  else if (msg.type == AGENT_MSG_HELLO)
    agent_on_hello (a, &msg);
  else if (!a->hello_seen)
    agent_report (a, "the first message must be hello", msg.id);
  else if (a->listener.message != NULL)
    a->listener.message (a->listener.data, a, &msg);
  cr_error_free (err);
  agent_msg_clear (&msg);
}

/* One complete line, framed by jsonrpc_lines_take; reading stops once the
 * agent is killed.  */
static bool
agent_take_line (void *data, const char *line, size_t len)
{
  struct agent *a = data;
  agent_on_line (a, line, len);
  return !a->killed;
}

/* A line passed AGENT_MAX_LINE.  */
static bool
agent_take_overlong (void *data)
{
  struct agent *a = data;
  agent_report (a, "a message is longer than 1048576 bytes", NULL);
  return !a->killed;
}

/* Split what arrived into lines, bounding each.  */
static void
agent_take_bytes (struct agent *a, const char *data, size_t n)
{
  if (!a->killed)
    jsonrpc_lines_take (&a->in, data, n, agent_take_line, agent_take_overlong,
                        a);
}

static void agent_close_input (struct agent *a);

/* Tell the listener the agent is gone, once it is reaped and its output
 * is closed (so that its last messages are read first).  */
static void
agent_maybe_exited (struct agent *a)
{
  if (!a->reaped || a->out_fd >= 0 || a->told_exit)
    return;
  a->told_exit = true;
  loop_cancel_timer (a->loop, a->kill_timer);
  loop_cancel_timer (a->loop, a->reap_timer);
  a->kill_timer = a->reap_timer = 0;
  if (a->listener.exited != NULL)
    a->listener.exited (a->listener.data, a, a->wait_status);
}

/* Close the agent's output pipe.  */
static void
agent_close_output (struct agent *a)
{
  if (a->out_fd < 0)
    return;
  loop_remove_fd (a->loop, a->out_fd);
  close (a->out_fd);
  a->out_fd = -1;
}

/* Reap the agent if it has exited; true once it has.  */
static bool
agent_try_reap (struct agent *a)
{
  int status = 0;
  if (a->reaped)
    return true;
  pid_t r = waitpid (a->pid, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR))
    return false;
  a->reaped = true;
  a->wait_status = r == a->pid ? status : 0;
  /* What the agent started goes with it.  */
  kill (-a->pid, SIGKILL);
  return true;
}

/* The agent was given its time to leave: kill what is left, and stop
 * waiting for an output something outside its group still holds.  */
static void
agent_on_kill_timer (struct loop *loop, void *data)
{
  struct agent *a = data;
  a->kill_timer = 0;
  if (!a->reaped)
    {
      agent_kill (a);
      return;
    }
  agent_close_output (a);
  agent_maybe_exited (a);
}

/* Arm the kill timer unless it is armed.  */
static void
agent_arm_kill (struct agent *a)
{
  if (a->kill_timer == 0)
    a->kill_timer
        = loop_add_timer (a->loop, AGENT_EXIT_MS, agent_on_kill_timer, a);
}

/* Check for the agent's exit: often once its output closed or it was
 * killed, now and then otherwise (a process it started may hold its
 * output open after it died).  */
static void
agent_on_reap_timer (struct loop *loop, void *data)
{
  struct agent *a = data;
  a->reap_timer = 0;
  if (agent_try_reap (a))
    {
      agent_close_input (a);
      agent_arm_kill (a);
      agent_maybe_exited (a);
      return;
    }
  bool leaving = a->out_fd < 0 || a->killed;
  a->reap_timer = loop_add_timer (
      loop, leaving ? AGENT_REAP_POLL_MS : AGENT_ALIVE_POLL_MS,
      agent_on_reap_timer, a);
}

/* Check for the agent's exit soon.  */
static void
agent_reap_soon (struct agent *a)
{
  loop_cancel_timer (a->loop, a->reap_timer);
  a->reap_timer = loop_add_timer (a->loop, 0, agent_on_reap_timer, a);
}

/* Close the pipe to the agent's input.  */
static void
agent_close_input (struct agent *a)
{
  if (a->in_fd < 0)
    return;
  jsonrpc_out_free (a->out);
  a->out = NULL;
  close (a->in_fd);
  a->in_fd = -1;
}

/* The agent's output closed: it is leaving.  */
static void
agent_output_closed (struct agent *a)
{
  agent_close_output (a);
  agent_close_input (a);
  if (a->reaped)
    {
      agent_maybe_exited (a);
      return;
    }
  agent_arm_kill (a);
  agent_reap_soon (a);
}

/* The agent wrote something, or closed its output.  */
static void
agent_on_readable (struct loop *loop, int fd, short revents, void *data)
{
  struct agent *a = data;
  char chunk[AGENT_READ_CHUNK];
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0 || a->killed)
    {
      agent_output_closed (a);
      return;
    }
  agent_take_bytes (a, chunk, (size_t) n);
}

/* In the shell's process: leave crucible's signal setup, exec.  */
static void __attribute__ ((noreturn))
agent_exec (const char *shell, const char *command, char *const *envp)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    signal (sig, SIG_DFL);
  char *const argv[] = { (char *) "sh", (char *) "-c", (char *) command, NULL };
  execve (shell, argv, envp);
  _exit (127);
}

/* End the keeper the way the shell ended, so crucible sees the agent's own
 * exit status or signal.  */
static void __attribute__ ((noreturn)) agent_keeper_exit (int status)
{
  if (WIFSIGNALED (status))
    {
      sigset_t none;
      sigemptyset (&none);
      signal (WTERMSIG (status), SIG_DFL);
      sigprocmask (SIG_SETMASK, &none, NULL);
      raise (WTERMSIG (status));
    }
  _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 127);
}

/* In the child: the agent's keeper, the leader of its process group.  It
 * starts `sh -c COMMAND` and waits for it; when crucible dies, even by
 * SIGKILL, the kernel's parent-death signal reaches the keeper, which kills
 * the whole group.  A parent-death signal on the shell alone would not do:
 * it is not inherited by what the shell starts, which is the agent.  */
static void __attribute__ ((noreturn))
agent_keeper (pid_t parent, const char *shell, const char *command,
              const char *workspace, char *const *envp, int in_fd, int out_fd)
{
  sigset_t wait_set;
  sigemptyset (&wait_set);
  sigaddset (&wait_set, SIGCHLD);
  sigaddset (&wait_set, SIGUSR1);
  sigprocmask (SIG_SETMASK, &wait_set, NULL);
  /* crucible's handlers write to its loop's pipe: not from here.  */
  for (int sig = 1; sig < NSIG; sig++)
    signal (sig, SIG_DFL);
  setpgid (0, 0);
  /* Set before the check, so that a crucible dying in between is seen one
   * way or the other.  */
  if (prctl (PR_SET_PDEATHSIG, SIGUSR1) < 0 || getppid () != parent)
    _exit (127);
  if (dup2 (in_fd, STDIN_FILENO) < 0 || dup2 (out_fd, STDOUT_FILENO) < 0
      || chdir (workspace) < 0)
    _exit (127);
  pid_t sh = fork ();
  if (sh < 0)
    _exit (127);
  if (sh == 0)
    agent_exec (shell, command, envp);
  /* The keeper holds no end of the pipes (it never execs, so close-on-exec
   * does not close them), or neither side would see the other close.  */
  close_range (3, ~0U, 0);
  int devnull = open ("/dev/null", O_RDWR);
  if (devnull < 0 || dup2 (devnull, STDIN_FILENO) < 0
      || dup2 (devnull, STDOUT_FILENO) < 0)
    {
      kill (-getpid (), SIGKILL);
      _exit (127);
    }
  for (;;)
    {
      int status = 0;
      if (sigwaitinfo (&wait_set, NULL) == SIGUSR1)
        kill (-getpid (), SIGKILL);
      pid_t r = waitpid (sh, &status, WNOHANG);
      if (r == sh)
        agent_keeper_exit (status);
    }
}

/* Make a close-on-exec pipe.  */
static int
agent_pipe (int fds[2], struct cr_error **err)
{
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making a pipe for the agent");
  return 0;
}

/* Fork the agent with its two pipes; fills a->pid and the parent's ends.  */
static int
agent_spawn (struct agent *a, const char *command, const char *workspace,
             char *const *envp, struct cr_error **err)
{
  int to[2], from[2];
  const char *shell = supervisor_find_shell ();
  if (shell == NULL)
    return cr_error_set (err, 0, "this machine has no POSIX shell (sh)");
  if (agent_pipe (to, err) < 0)
    return -1;
  if (agent_pipe (from, err) < 0)
    {
      close (to[0]);
      close (to[1]);
      return -1;
    }
  pid_t parent = getpid ();
  a->pid = fork ();
  if (a->pid == 0)
    agent_keeper (parent, shell, command, workspace, envp, to[0], from[1]);
  int saved = errno;
  close (to[0]);
  close (from[1]);
  a->in_fd = to[1];
  a->out_fd = from[0];
  if (a->pid < 0)
    return cr_error_set (err, saved, "starting the agent");
  /* Both sides set the group, so no signal can reach the wrong one.  */
  setpgid (a->pid, a->pid);
  return 0;
}

/* Watch the agent's pipes in the loop.  */
static int
agent_watch (struct agent *a, struct cr_error **err)
{
  fcntl (a->out_fd, F_SETFL, fcntl (a->out_fd, F_GETFL) | O_NONBLOCK);
  if (loop_add_fd (a->loop, a->out_fd, POLLIN, agent_on_readable, a, err) < 0)
    return -1;
  a->out = jsonrpc_out_new (a->loop, a->in_fd, JSONRPC_OUT_MAX,
                            agent_on_overflow, a, err);
  if (a->out == NULL)
    {
      loop_remove_fd (a->loop, a->out_fd);
      return -1;
    }
  return 0;
}

struct agent *
agent_start (struct loop *loop, const char *command, const char *workspace,
             char *const *envp, const struct agent_listener *listener,
             struct cr_error **err)
{
  struct agent *a = xcalloc (1, sizeof *a);
  a->in.max = AGENT_MAX_LINE;
  a->loop = loop;
  a->listener = *listener;
  a->in_fd = a->out_fd = -1;
  a->pid = -1;
  if (agent_spawn (a, command, workspace, envp, err) < 0
      || agent_watch (a, err) < 0)
    {
      cr_error_prefix (err, "starting the agent `%s`", command);
      a->listener = (struct agent_listener){ 0 };
      agent_free (a);
      return NULL;
    }
  a->reap_timer
      = loop_add_timer (loop, AGENT_ALIVE_POLL_MS, agent_on_reap_timer, a);
  agent_send_hello (a);
  return a;
}

bool
agent_exited (const struct agent *a)
{
  return a->reaped;
}

pid_t
agent_pid (const struct agent *a)
{
  return a->pid;
}

void
agent_close (struct agent *a)
{
  agent_close_input (a);
  if (!a->reaped && !a->killed)
    agent_arm_kill (a);
}

void
agent_kill (struct agent *a)
{
  if (a->reaped || a->pid <= 0)
    return;
  a->killed = true;
  kill (-a->pid, SIGKILL);
  kill (a->pid, SIGKILL);
  agent_close_input (a);
  agent_reap_soon (a);
}

void
agent_free (struct agent *a)
{
  if (a == NULL)
    return;
  if (a->pid > 0 && !a->reaped)
    {
      kill (-a->pid, SIGKILL);
      kill (a->pid, SIGKILL);
      while (waitpid (a->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  loop_cancel_timer (a->loop, a->reap_timer);
  loop_cancel_timer (a->loop, a->kill_timer);
  agent_close_input (a);
  agent_close_output (a);
  jsonrpc_lines_free (&a->in);
  free (a);
}

/* Whether c is a blank (space or tab).  */
static bool
agent_blank (char c)
{
  return c == ' ' || c == '\t';
}

char *
agent_shell_line (const char *prompt, bool *background)
{
  size_t len = strlen (prompt);
  while (len > 0 && agent_blank (prompt[len - 1]))
    len--;
  /* "a &" asks for background; "a && b" and "a&" are the shell's own.  */
  *background = len >= 2 && prompt[len - 1] == '&'
                && agent_blank (prompt[len - 2])
                && !(len >= 3 && prompt[len - 3] == '&');
  if (*background)
    {
      len -= 2;
      while (len > 0 && agent_blank (prompt[len - 1]))
        len--;
    }
  return xstrndup (prompt, len);
}
