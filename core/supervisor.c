/* Supervising commands: admission, capture, deadlines, commands left
 * running, endings.  */
#include <config.h>

#include "core/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/status.h"
#include "core/capture.h"
#include "core/credentials.h"
#include "core/notes.h"
#include "core/portfwd.h"
#include "core/proxy.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "sandbox/policy.h"
#include "core/pubjob.h"
#include "sandbox/publish.h"
#include "sandbox/netchan.h"
#include "sandbox/registry.h"

/* Bytes read from one command's pipe per loop turn, so that a flood from one
 * command cannot starve keys or other commands.  */
#define SUPERVISOR_READ_CHUNK (128 * 1024)
#define SUPERVISOR_READS_PER_TURN 4
/* The same where someone watches the output live (the full-screen
 * session): a key typed during a flood waits for one read, not four.  */
#define SUPERVISOR_READS_PER_TURN_WATCHED 1
/* How long the spool of a command that is gone is kept for the next
 * command to write over (capture_spool_release) before it is closed.  */
#define SUPERVISOR_SPARE_SPOOL_MS 15000

/* The output pipe's capacity asked for.  */
#define SUPERVISOR_PIPE_BYTES (1024 * 1024)

/* How often a command waiting for another's publication asks again.  */
#define SUPERVISOR_PUBLISH_RETRY_MS 20

/* The longest command line accepted: sh -c LINE passes LINE as one
 * argument, and the kernel's bound on one (MAX_ARG_STRLEN, 131072) counts
 * its NUL.  */
#define SUPERVISOR_MAX_LINE 131071

/* Why crucible stopped a command, if it did.  */
enum command_stop
{
  COMMAND_NOT_STOPPED,
  COMMAND_STOPPED_DEADLINE,
  COMMAND_STOPPED_CEILING,
  COMMAND_STOPPED_LIST, /* x in the list */
  COMMAND_STOPPED_HOST  /* crucible is exiting or was interrupted */
};

struct command
{
  struct supervisor *sup;
  struct command *next;
  struct supervisor_listener listener;
  struct sandbox_session *session;
  /* What the backend verified of the scope (the EXITED event's message),
   * for the finish fact; owned, or NULL.  */
  char *verified;
  struct capture *capture;
  uint64_t number;
  uint64_t serial;                     /* the journal's number for it, from 1 */
  char sandbox_id[SANDBOX_ID_LEN + 1]; /* its session's, for every fact */
  char *call_id;
  char *label;
  int out_fd;    /* read end of the output pipe, or -1 once closed */
  int status_fd; /* the scope's status channel, while watched */
  uint64_t deadline_timer;
  uint64_t grace_timer;
  uint64_t early_timer; /* background: answer after SUPERVISOR_EARLY_MS */
  uint64_t stop_timer;  /* a stop from the list that has not finished */
  uint64_t deadline_ms; /* what the deadline timer was set to, or 0 */
  uint64_t deadline_at; /* clock_now_ms () of the deadline, or 0 */
  uint64_t publish_timer;
  uint64_t publish_until;     /* clock_now_ms () past which the wait ends */
  uint64_t publish_ceiling;   /* the ceiling that applies, in ms */
  bool publishing;            /* ended cleanly; its writes wait to publish */
  bool published;             /* publication has settled */
  struct pubjob *publish_job; /* the publication running beside the loop */
  char *publication;          /* the result's note on its writes, or NULL */
  /* The backend's words for a cleanup it could not confirm (its status
   * channel failed: the keeper, or the container, is not confirmed gone),
   * or NULL.  The slot stays held and the scope is never published.  */
  char *cleanup_failed;

  enum command_stop stopped;
  bool exited; /* the workload's wait status is known */
  int wait_status;
  bool output_eof;
  bool read_failed;
  bool grace_over;
  bool answered;   /* the call has its answer */
  bool ended;      /* the command's end has been composed */
  bool scope_done; /* the scope is confirmed empty */
  bool start_failed;
  bool left_running; /* answered early: background or ctrl+b */
  struct cr_error *start_error;
  /* A command with domains: its registration with the host's proxy (its
   * own credential) and the net channel watched for its connections
   * (-1 when not, or no more).  */
  struct proxy_client *proxy_client;
  int net_fd;
  /* sandbox.network.ports (core/portfwd.h): the command's listed ports,
   * its membership of the session's forwarder while its net channel is
   * watched, and the note for its result when a host port was taken.  */
  uint16_t ports[16];
  size_t n_ports;
  struct portfwd_member *ports_member;
  char *ports_note;
  /* sandbox.credentials: the note naming those withheld, or NULL.  */
  char *credentials_note;
  uint64_t refusal_facts; /* `network` refused facts written so far */

  char *text; /* the answer, then (left running) the ending note */
  size_t text_len;
};

struct supervisor
{
  struct loop *loop;
  struct sandbox_backend *backend;
  bool process_isolation; /* CRUCIBLE_ALLOW_PROCESS_ISOLATION applies */
  bool exits_after;       /* supervisor_set_exits_after */
  const struct config *config;
  char *workspace;
  char *const *host_env;
  struct command *commands;
  size_t slots_held;
  /* The first command cleanup that could not be confirmed, in the
   * backend's words: every later command is refused (the spec: unconfirmed
   * cleanup is a disposal failure that blocks another preparation).  */
  char *blocked_why;
  uint64_t next_number;
  uint64_t next_serial;
  uint64_t stop_ms;
  uint64_t publish_overdue_ms; /* PUBLISH_WAIT_OVERDUE_MS outside tests */
  uint64_t publish_short_ms;   /* PUBLISH_WAIT_SHORT_MS outside tests */
  struct journal *journal;
  struct supervisor_observer observer;
  /* The spool of a command that is gone, kept a while for the next one to
   * write over, or -1; the timer that closes it.  */
  int spare_spool;
  uint64_t spare_spool_timer;
  /* Ending notes not told yet, in the order they happened, and the
   * journal's numbers of their commands.  */
  struct buf endings;
  uint64_t *untold;
  size_t n_untold;
  /* The host's proxy, made when the first command with domains starts;
   * one for all of this process's commands, each with its own client.  */
  struct proxy *proxy;
  /* Made when the first command with ports starts.  */
  struct portfwd *portfwd;
  proxy_asker_fn asker; /* given to the proxy when it is made */
  void *asker_data;
  /* The sandbox prepared ahead of its command, or none (session NULL):
   * for the call named (approval), or kept for any (for_call NULL).  What
   * it was made from: the policy's digest, the backend, the
   * configuration files as they were (supervisor_config_mark).  */
  struct
  {
    struct sandbox_session *session;
    char *for_call;
    char digest[POLICY_DIGEST_SIZE];
    const struct sandbox_backend *backend;
    char *config_mark;
  } ahead;
  bool keep_ahead;      /* keep one prepared for the next command */
  uint64_t ahead_timer; /* the kept one's making, scheduled */
  /* The call whose sandbox is to be made at the next turn of the loop
   * (after the panel asking about it is drawn), or NULL.  */
  char *pending_call;
  uint64_t pending_timer;
};

struct supervisor *
supervisor_new (struct loop *loop, struct sandbox_backend *backend,
                const struct config *config, const char *workspace,
                char *const *host_env)
{
  struct supervisor *sup = xcalloc (1, sizeof *sup);
  sup->loop = loop;
  sup->backend = backend;
  sup->config = config;
  sup->workspace = xstrdup (workspace);
  sup->host_env = host_env;
  sup->next_number = 1;
  sup->spare_spool = -1;
  sup->stop_ms = SUPERVISOR_STOP_MS;
  sup->publish_overdue_ms = PUBLISH_WAIT_OVERDUE_MS;
  sup->publish_short_ms = PUBLISH_WAIT_SHORT_MS;
  return sup;
}

size_t
supervisor_slots_held (const struct supervisor *sup)
{
  return sup->slots_held;
}

void
supervisor_set_journal (struct supervisor *sup, struct journal *j)
{
  sup->journal = j;
}

struct journal *
supervisor_journal (const struct supervisor *sup)
{
  return sup->journal;
}

/* Record a fact about cmd (NULL: about no command).  A fact that cannot be
 * written is counted by the journal and does not stop anything.  */
static void
supervisor_fact (struct supervisor *sup, enum journal_fact fact,
                 const struct command *cmd, const struct journal_field *fields,
                 size_t n)
{
  struct cr_error *err = NULL;
  struct journal_field all[JOURNAL_MAX_FIELDS];
  size_t k = 0;
  if (sup->journal == NULL)
    return;
  /* The sandbox ID first, on every fact about a command that has one.  */
  if (cmd != NULL && cmd->sandbox_id[0] != '\0')
    all[k++] = (struct journal_field) JOURNAL_STR ("sandbox", cmd->sandbox_id);
  for (size_t i = 0; i < n && k < JOURNAL_MAX_FIELDS; i++)
    all[k++] = fields[i];
  journal_fact (sup->journal, fact, cmd ? cmd->serial : 0,
                cmd ? cmd->call_id : NULL, all, k, &err);
  cr_error_free (err);
}

void
supervisor_note_approval (struct supervisor *sup, const char *call_id,
                          bool allowed)
{
  struct journal_field f[] = { JOURNAL_BOOLEAN ("allowed", allowed) };
  struct cr_error *err = NULL;
  if (sup->journal != NULL)
    journal_fact (sup->journal, JOURNAL_APPROVAL, 0, call_id, f, 1, &err);
  cr_error_free (err);
}

void
supervisor_set_stop_ms (struct supervisor *sup, uint64_t ms)
{
  sup->stop_ms = ms;
}

void
supervisor_set_publish_ms (struct supervisor *sup, uint64_t overdue_ms,
                           uint64_t short_ms)
{
  sup->publish_overdue_ms = overdue_ms;
  sup->publish_short_ms = short_ms;
}

uint64_t
command_number (const struct command *cmd)
{
  return cmd->number;
}

const char *
command_label (const struct command *cmd)
{
  return cmd->label;
}

const struct capture *
command_capture (const struct command *cmd)
{
  return cmd->capture;
}

struct capture *
command_take_capture (struct command *cmd)
{
  struct capture *cap = cmd->capture;
  cmd->capture = NULL;
  return cap;
}

const char *
command_sandbox_id (const struct command *cmd)
{
  return cmd->sandbox_id;
}

bool
command_left_running (const struct command *cmd)
{
  return cmd->left_running && !cmd->ended;
}

const char *
supervisor_find_shell (void)
{
  /* POSIX puts sh at /bin/sh on every system crucible supports; looking it
   * up on the command's PATH would let the workspace choose the shell.  */
  static const char *const candidates[] = { "/bin/sh", "/usr/bin/sh", NULL };
  for (const char *const *c = candidates; *c != NULL; c++)
    if (access (*c, X_OK) == 0)
      return *c;
  return NULL;
}

uint64_t
supervisor_deadline_ms (const struct config *config, double timeout_seconds)
{
  double seconds = config->command_seconds;
  if (timeout_seconds > 0 && timeout_seconds < seconds)
    seconds = timeout_seconds;
  double ms = ceil (seconds * 1000.0);
  return ms < 1 ? 1 : (uint64_t) ms;
}

/* The spare spool was not wanted in time: its pages go back.  */
static void
supervisor_spare_spool_close (struct loop *loop, void *data)
{
  struct supervisor *sup = data;
  sup->spare_spool_timer = 0;
  if (sup->spare_spool >= 0)
    close (sup->spare_spool);
  sup->spare_spool = -1;
}

/* Keep a gone command's spool for the next command to write over: a flood
 * after a flood then writes into pages it has, instead of a fresh page of
 * page cache every 4 KiB (most of the full view's cost).  One is kept, for
 * SUPERVISOR_SPARE_SPOOL_MS after the last command that had it.  */
static void
supervisor_spare_spool_keep (struct supervisor *sup, struct capture *cap)
{
  if (cap == NULL || sup->spare_spool >= 0)
    return;
  sup->spare_spool = capture_spool_release (cap);
  if (sup->spare_spool >= 0)
    sup->spare_spool_timer
        = loop_add_timer (sup->loop, SUPERVISOR_SPARE_SPOOL_MS,
                          supervisor_spare_spool_close, sup);
}

/* Take a command off the list and free it.  */
static void
command_free (struct command *cmd)
{
  struct command **p = &cmd->sup->commands;
  while (*p != NULL && *p != cmd)
    p = &(*p)->next;
  if (*p == cmd)
    *p = cmd->next;
  free (cmd->verified);
  supervisor_spare_spool_keep (cmd->sup, cmd->capture);
  capture_free (cmd->capture);
  loop_cancel_timer (cmd->sup->loop, cmd->publish_timer);
  if (cmd->publish_job != NULL)
    {
      /* crucible is leaving: a publication that began is seen through.  */
      struct sandbox_publication pub;
      struct cr_error *err = NULL;
      if (pubjob_finish (cmd->publish_job, &pub, &err) == 0)
        sandbox_publication_clear (&pub);
      cr_error_free (err);
    }
  if (cmd->net_fd >= 0)
    loop_remove_fd (cmd->sup->loop, cmd->net_fd);
  if (cmd->ports_member != NULL)
    portfwd_leave (cmd->ports_member);
  free (cmd->ports_note);
  free (cmd->credentials_note);
  proxy_client_free (cmd->proxy_client);
  free (cmd->publication);
  free (cmd->cleanup_failed);
  cr_error_free (cmd->start_error);
  free (cmd->call_id);
  free (cmd->label);
  free (cmd->text);
  free (cmd);
}

/* Cancel one of a command's timers.  */
static void
command_cancel (struct command *cmd, uint64_t *timer)
{
  loop_cancel_timer (cmd->sup->loop, *timer);
  *timer = 0;
}

/* How the command ended, from its wait status and why crucible stopped it.  */
static void
command_outcome_fill (const struct command *cmd, struct command_outcome *out)
{
  memset (out, 0, sizeof *out);
  out->bytes = capture_total_bytes (cmd->capture);
  out->lines = capture_lines (cmd->capture);
  out->still_arriving = cmd->grace_over && !cmd->output_eof
                        && cmd->stopped == COMMAND_NOT_STOPPED;
  if (cmd->stopped == COMMAND_STOPPED_DEADLINE)
    out->ending = RESULT_TIMED_OUT;
  else if (cmd->stopped == COMMAND_STOPPED_CEILING)
    out->ending = RESULT_CEILING;
  else if (WIFSIGNALED (cmd->wait_status))
    {
      out->ending = RESULT_SIGNALED;
      out->signal = WTERMSIG (cmd->wait_status);
    }
  else
    {
      out->ending = RESULT_EXITED;
      out->exit_status = WEXITSTATUS (cmd->wait_status);
    }
}

static bool supervisor_process_isolation (const struct supervisor *sup);

/* Fill a result input from the capture and an outcome.  */
static void
command_result_input (const struct command *cmd,
                      const struct command_outcome *out,
                      struct result_input *in)
{
  memset (in, 0, sizeof *in);
  capture_retained (cmd->capture, &in->head, &in->head_len, &in->tail,
                    &in->tail_len, &in->omitted_bytes);
  in->total_bytes = capture_total_bytes (cmd->capture);
  in->ceiling_bytes = cmd->sup->config->output_bytes;
  if (out == NULL)
    {
      in->ending = RESULT_RUNNING;
      return;
    }
  in->ending = out->ending;
  in->publication = cmd->publication;
  in->ports = cmd->ports_note;
  in->credentials = cmd->credentials_note;
  in->process_isolation = supervisor_process_isolation (cmd->sup);
  in->exit_status = out->exit_status;
  in->signal = out->signal;
  in->still_arriving = out->still_arriving;
}

/* Give the call its answer.  */
static void
command_answer (struct command *cmd, const struct command_answer *answer)
{
  cmd->answered = true;
  command_cancel (cmd, &cmd->early_timer);
  if (cmd->listener.answered != NULL)
    cmd->listener.answered (cmd->listener.data, cmd, answer);
}

/* A command whose call was still waiting ended: its result is the answer.  */
static void
command_answer_result (struct command *cmd)
{
  struct command_outcome out;
  struct result_input in;

  command_outcome_fill (cmd, &out);
  command_result_input (cmd, &out, &in);
  cmd->text = result_compose (&in, &cmd->text_len);
  struct command_answer answer
      = { .text = cmd->text, .text_len = cmd->text_len, .outcome = &out };
  command_answer (cmd, &answer);
}

/* A command left running ended: say so to the person now, and keep the
 * note for the model until there is somewhere to put it.  */
static void
command_tell_ending (struct command *cmd)
{
  struct command_outcome out;
  struct result_input in;
  size_t printed_len, note_len;

  command_outcome_fill (cmd, &out);
  command_result_input (cmd, &out, &in);
  in.still_arriving = false;
  if (cmd->read_failed)
    in.incomplete = RESULT_INCOMPLETE_READ_FAILED;
  else if (!cmd->output_eof)
    in.incomplete = RESULT_INCOMPLETE_UNREAD;
  /* Four endings in one note cost what one result does.  */
  in.max_encoded = RESULT_MAX_ENCODED / 4;
  char *printed = result_compose (&in, &printed_len);
  struct notes_end end = { .number = cmd->number,
                           .label = cmd->label,
                           .stopped = cmd->stopped == COMMAND_STOPPED_LIST,
                           .exiting = cmd->stopped == COMMAND_STOPPED_HOST,
                           .ending = out.ending,
                           .exit_status = out.exit_status,
                           .signal = out.signal,
                           .lines = out.lines };
  char *note = notes_ending_note (&end, printed, printed_len, &note_len);
  free (printed);
  if (cmd->sup->endings.len > 0)
    buf_puts (&cmd->sup->endings, "\n\n");
  buf_append (&cmd->sup->endings, note, note_len);
  free (note);
  cmd->sup->untold = xrealloc (
      cmd->sup->untold, (cmd->sup->n_untold + 1) * sizeof *cmd->sup->untold);
  cmd->sup->untold[cmd->sup->n_untold++] = cmd->serial;
  char *line = notes_ending_line (&end);
  if (!end.stopped && cmd->listener.ended_on_its_own != NULL)
    cmd->listener.ended_on_its_own (cmd->listener.data, cmd, line);
  free (line);
}

/* The command has ended (or could not start): answer or tell.  */
/* The journal's word for an ending.  */
static const char *
command_ending_word (enum result_ending ending)
{
  static const char *const words[] = { [RESULT_EXITED] = "exited",
                                       [RESULT_SIGNALED] = "signaled",
                                       [RESULT_TIMED_OUT] = "timed_out",
                                       [RESULT_CEILING] = "output_ceiling",
                                       [RESULT_RUNNING] = "running" };
  return words[ending];
}

/* Record how the command's process ended.  */
static void
command_fact_finish (struct command *cmd)
{
  struct command_outcome out;
  command_outcome_fill (cmd, &out);
  struct journal_field f[] = {
    JOURNAL_STR ("ending", cmd->start_failed
                               ? "start_failed"
                               : command_ending_word (out.ending)),
    JOURNAL_INT64 ("exit_status", out.exit_status),
    JOURNAL_INT64 ("signal", out.signal),
    JOURNAL_BOOLEAN ("still_arriving", out.still_arriving),
    JOURNAL_INT64 ("bytes", (int64_t) out.bytes),
    JOURNAL_INT64 ("lines", (int64_t) out.lines),
    { 0 },
    { 0 },
    { 0 },
    { 0 },
  };
  size_t n = 6;
  /* What the backend verified of the scope (a container's hardening),
   * one field a line of it; none when it says nothing.  */
  cleanup_free char *verified
      = cmd->verified != NULL ? xstrdup (cmd->verified) : NULL;
  n = journal_fields_from_lines (verified, f, n, sizeof f / sizeof *f);
  supervisor_fact (cmd->sup, JOURNAL_FINISH, cmd, f, n);
}

static void command_observe_output (struct command *cmd);

static void
command_end (struct command *cmd)
{
  cmd->ended = true;
  /* Its result is composed now, so this is a cut: what is held back as
   * perhaps the start of a secret is released as '*' (what arrives later
   * is still masked as the same stream).  */
  capture_cut (cmd->capture);
  command_observe_output (cmd);
  command_fact_finish (cmd);
  command_cancel (cmd, &cmd->deadline_timer);
  command_cancel (cmd, &cmd->grace_timer);
  if (cmd->start_failed)
    {
      struct command_answer answer
          = { .text = cmd->start_error->msg,
              .text_len = strlen (cmd->start_error->msg),
              .refused = true };
      command_answer (cmd, &answer);
    }
  else if (!cmd->answered)
    command_answer_result (cmd);
  else
    command_tell_ending (cmd);
}

/* Close the output pipe's read end.  */
static void
command_close_output (struct command *cmd)
{
  if (cmd->out_fd < 0)
    return;
  loop_remove_fd (cmd->sup->loop, cmd->out_fd);
  close (cmd->out_fd);
  cmd->out_fd = -1;
}

/* Ask the scope to end; what is left is reported when it has.  */
static void
command_stop_scope (struct command *cmd)
{
  struct cr_error *err = NULL;
  if (!cmd->scope_done && sandbox_stop (cmd->session, SIGKILL, &err) < 0)
    {
      /* The keeper is unreachable; the status channel says so next, and
       * a stop from the list reports the failure when its budget ends.  */
      cr_error_free (err);
    }
}

/* Refusal facts one command writes; past them its refusals are counted
 * in its ended fact only.  Every refusal is a connection the command
 * chose to make, so without a bound a command looping on a refused
 * request wrote the host's journal without end (a disk filled from
 * inside).  */
#define SUPERVISOR_MAX_REFUSAL_FACTS 64

/* The proxy refused one of the command's connections: a fact with the
 * reason's class only, never the name or address asked for; once the
 * command has had its share, one fact saying so and then none.  */
static void
command_on_refusal (void *data, const char *reason_class)
{
  struct command *cmd = data;
  if (cmd->refusal_facts > SUPERVISOR_MAX_REFUSAL_FACTS)
    return;
  if (cmd->refusal_facts++ == SUPERVISOR_MAX_REFUSAL_FACTS)
    {
      struct journal_field f[]
          = { JOURNAL_STR ("event", "refusals_capped"),
              JOURNAL_INT64 ("after", SUPERVISOR_MAX_REFUSAL_FACTS) };
      supervisor_fact (cmd->sup, JOURNAL_NETWORK, cmd, f, 2);
      return;
    }
  struct journal_field f[] = { JOURNAL_STR ("event", "refused"),
                               JOURNAL_STR ("class", reason_class) };
  supervisor_fact (cmd->sup, JOURNAL_NETWORK, cmd, f, 2);
}

/* The command's servers stop being reachable: its host listeners, its
 * forwarded connections and relays (either end) close now.  */
static void
command_ports_leave (struct command *cmd)
{
  if (cmd->ports_member == NULL)
    return;
  portfwd_leave (cmd->ports_member);
  cmd->ports_member = NULL;
}

/* One record from the net channel: a connection to the proxy's inside
 * port goes to the command's client, which alone checks its credential
 * (closed when the command has none: it names no domains); a record of
 * sandbox.network.ports goes to the session's forwarder, which checks it
 * against what it asked (closed when the command has no ports).  */
static void
command_net_record (struct command *cmd, struct netchan_record *rec)
{
  struct cr_error *err = NULL;

  if (rec->kind == NETCHAN_CONNECTION && cmd->proxy_client != NULL)
    {
      /* From here the connection is the proxy's, refused or not.  */
      if (proxy_client_take (cmd->proxy_client, rec->fd, &err) < 0)
        cr_error_clear (&err);
      return;
    }
  if (rec->kind == NETCHAN_CONNECTION || cmd->ports_member == NULL)
    {
      if (rec->fd >= 0)
        close (rec->fd);
      return;
    }
  portfwd_record (cmd->ports_member, rec);
  char *note = portfwd_taken_note (cmd->ports_member);
  if (note != NULL)
    {
      free (cmd->ports_note);
      cmd->ports_note = note;
    }
}

/* Take what the net channel holds, record by record; a record the
 * channel refuses was closed there.  The channel's end means nothing
 * more comes.  */
static void
command_on_net (struct loop *loop, int fd, short revents, void *data)
{
  struct command *cmd = data;
  struct cr_error *err = NULL;
  struct netchan_record rec;
  int r;

  (void) fd;
  (void) revents;
  while ((r = netchan_read (cmd->net_fd, &rec, &err)) != NETCHAN_NONE)
    {
      if (r < 0)
        {
          cr_error_clear (&err);
          continue;
        }
      if (r == NETCHAN_ENDED)
        {
          command_ports_leave (cmd);
          loop_remove_fd (loop, cmd->net_fd);
          cmd->net_fd = -1;
          return;
        }
      command_net_record (cmd, &rec);
    }
}

/* Close the command's proxy connections and record its counts, before
 * its slot goes; true when none is left (closing is synchronous).  */
static bool
command_net_close (struct command *cmd)
{
  struct proxy_counts c;

  command_ports_leave (cmd);
  if (cmd->net_fd >= 0)
    loop_remove_fd (cmd->sup->loop, cmd->net_fd);
  cmd->net_fd = -1;
  if (cmd->proxy_client == NULL)
    return true;
  if (!proxy_client_close (cmd->proxy_client))
    return false;
  proxy_client_counts (cmd->proxy_client, &c);
  struct journal_field f[] = {
    JOURNAL_STR ("event", "ended"),
    JOURNAL_INT64 ("allowed", (int64_t) c.allowed),
    JOURNAL_INT64 ("refused", (int64_t) c.refused),
    JOURNAL_INT64 ("bytes_out", (int64_t) c.bytes_out),
    JOURNAL_INT64 ("bytes_in", (int64_t) c.bytes_in),
  };
  supervisor_fact (cmd->sup, JOURNAL_NETWORK, cmd, f, sizeof f / sizeof *f);
  proxy_client_free (cmd->proxy_client);
  cmd->proxy_client = NULL;
  return true;
}

static void supervisor_ahead_schedule (struct supervisor *sup);

/* Release the slot once the scope is empty and the command ended.  */
static void
command_release (struct command *cmd)
{
  struct cr_error *err = NULL;

  if (cmd->status_fd >= 0)
    loop_remove_fd (cmd->sup->loop, cmd->status_fd);
  cmd->status_fd = -1;
  command_close_output (cmd);
  command_cancel (cmd, &cmd->stop_timer);
  /* The relays are the command's too: none may outlive its slot.  */
  if (!command_net_close (cmd))
    return;
  struct sandbox_usage usage = { 0 };
  if ((cmd->sup->exits_after
           ? sandbox_dispose_leaving (cmd->session, &usage, &err)
           : sandbox_dispose (cmd->session, &usage, &err))
      < 0)
    {
      /* The scope was confirmed empty before we got here, so dispose only
       * fails on a bug; keep the slot rather than pretend.  */
      cr_error_free (err);
      return;
    }
  cmd->sup->slots_held--;
  supervisor_fact (cmd->sup, JOURNAL_CLEANUP, cmd, NULL, 0);
  supervisor_ahead_schedule (cmd->sup);
  if (usage.known)
    {
      struct journal_field u[] = {
        JOURNAL_INT64 ("cpu_user_ms", usage.cpu_user_ms),
        JOURNAL_INT64 ("cpu_system_ms", usage.cpu_system_ms),
        JOURNAL_INT64 ("max_rss_kib", usage.max_rss_kib),
        JOURNAL_INT64 ("bytes", (int64_t) capture_total_bytes (cmd->capture)),
        JOURNAL_INT64 ("lines", (int64_t) capture_lines (cmd->capture)),
      };
      supervisor_fact (cmd->sup, JOURNAL_USAGE, cmd, u, sizeof u / sizeof *u);
    }
  if (cmd->listener.cleaned != NULL)
    cmd->listener.cleaned (cmd->listener.data, cmd);
  if (cmd->sup->observer.cleaned != NULL)
    cmd->sup->observer.cleaned (cmd->sup->observer.data, cmd);
  command_free (cmd);
}

/* Record what became of the command's writes.  */
static void
command_fact_publication (struct command *cmd, const char *outcome,
                          uint64_t paths, uint64_t bytes)
{
  struct journal_field f[] = {
    JOURNAL_STR ("outcome", outcome),
    JOURNAL_INT64 ("paths", (int64_t) paths),
    JOURNAL_INT64 ("bytes", (int64_t) bytes),
  };
  supervisor_fact (cmd->sup, JOURNAL_PUBLICATION, cmd, f, sizeof f / sizeof *f);
}

static void command_advance (struct command *cmd);

/* Ask for the publication lock again.  */
static void
command_publish_retry (struct loop *loop, void *data)
{
  struct command *cmd = data;
  cmd->publish_timer = 0;
  command_advance (cmd);
}

/* The wait for the lock passed its ceiling: the command publishes
 * nothing; past its own deadline it ran too long.  */
static void
command_publish_give_up (struct command *cmd)
{
  cmd->published = true;
  if (cmd->deadline_at != 0 && clock_now_ms () >= cmd->deadline_at)
    cmd->stopped = COMMAND_STOPPED_DEADLINE;
  cmd->publication = publish_note_wait_over ((int64_t) cmd->publish_ceiling);
  command_fact_publication (cmd, "wait_over", 0, 0);
}

/* Whether the command's writes are to be published: an ordinary exit,
 * zero or not, of a session that kept them private.  */
static bool
command_wants_publication (const struct command *cmd)
{
  return !cmd->start_failed && cmd->stopped == COMMAND_NOT_STOPPED
         && WIFEXITED (cmd->wait_status) && sandbox_keeps_writes (cmd->session);
}

/* Start waiting to publish: its deadline no longer stops it but bounds the
 * wait, and what it left running is ended so nothing writes meanwhile.  */
static void
command_publish_begin (struct command *cmd)
{
  uint64_t now = clock_now_ms ();
  uint64_t from = cmd->deadline_at > now ? cmd->deadline_at : now;
  cmd->publishing = true;
  cmd->publish_until = from + cmd->sup->publish_overdue_ms;
  cmd->publish_ceiling = cmd->sup->publish_overdue_ms;
  command_cancel (cmd, &cmd->deadline_timer);
  command_stop_scope (cmd);
}

/* The publication could not be run, or failed before it decided
 * anything.  */
static void
command_publish_failed (struct command *cmd, struct cr_error *err)
{
  cmd->publication = xasprintf (
      "[published nothing: publication could not be attempted (%s)]", err->msg);
  cr_error_free (err);
  cmd->published = true;
  command_fact_publication (cmd, "failed", 0, 0);
}

/* The publication answered: settle, or ask again while another holds the
 * lock, up to the wait's ceiling.  */
static void
command_publish_answered (void *data)
{
  struct command *cmd = data;
  struct pubjob *job = cmd->publish_job;
  struct sandbox_publication pub;
  struct cr_error *err = NULL;

  cmd->publish_job = NULL;
  if (pubjob_finish (job, &pub, &err) < 0)
    command_publish_failed (cmd, err);
  else if (pub.busy && clock_now_ms () < cmd->publish_until)
    {
      cmd->publish_timer
          = loop_add_timer (cmd->sup->loop, SUPERVISOR_PUBLISH_RETRY_MS,
                            command_publish_retry, cmd);
      return;
    }
  else if (pub.busy)
    command_publish_give_up (cmd);
  else
    {
      cmd->published = true;
      cmd->publication = pub.note;
      pub.note = NULL;
      command_fact_publication (cmd, pub.outcome, pub.paths, pub.bytes);
    }
  sandbox_publication_clear (&pub);
  command_advance (cmd);
}

/* The scope's cleanup was not confirmed: nothing it wrote is published
 * (something of it may still write), and the result says why.  */
static void
command_publish_unconfirmed (struct command *cmd)
{
  bool kept = sandbox_keeps_writes (cmd->session);
  cmd->published = true;
  cmd->publication = xasprintf ("[cleanup failed: %s%s]", cmd->cleanup_failed,
                                kept ? "; nothing the command wrote was "
                                       "published"
                                     : "");
  if (kept)
    command_fact_publication (cmd, "discarded", 0, 0);
}

/* Publish before the result is composed.  False while that waits: for
 * the scope to be confirmed empty, for another publication, or for its own
 * to answer (it runs beside the loop: see core/pubjob.h).  */
static bool
command_publish_settled (struct command *cmd)
{
  struct cr_error *err = NULL;

  if (cmd->published)
    return true;
  if (cmd->cleanup_failed != NULL)
    {
      command_publish_unconfirmed (cmd);
      return true;
    }
  if (!command_wants_publication (cmd))
    {
      if (sandbox_keeps_writes (cmd->session))
        command_fact_publication (cmd, "discarded", 0, 0);
      cmd->published = true;
      return true;
    }
  if (!cmd->publishing)
    command_publish_begin (cmd);
  if (!cmd->scope_done || cmd->publish_timer != 0 || cmd->publish_job != NULL)
    return false;
  if (pubjob_start (cmd->sup->loop, cmd->session, cmd->call_id,
                    command_publish_answered, cmd, &cmd->publish_job, &err)
      < 0)
    {
      command_publish_failed (cmd, err);
      return true;
    }
  return false;
}

/* Whether the command has ended and waits to publish.  */
static bool
command_waits_to_publish (const struct command *cmd)
{
  return cmd->publishing && !cmd->published;
}

/* An interruption (Esc, a cancelled call, crucible ending) while the
 * command waits to publish: it is not stopped, but its wait is cut to the
 * short ceiling.  */
static bool
command_publish_cut (struct command *cmd)
{
  if (!command_waits_to_publish (cmd))
    return false;
  uint64_t short_until = clock_now_ms () + cmd->sup->publish_short_ms;
  if (short_until < cmd->publish_until)
    {
      cmd->publish_until = short_until;
      cmd->publish_ceiling = cmd->sup->publish_short_ms;
    }
  return true;
}

/* Move a command on after anything happened to it.  */
static void
command_advance (struct command *cmd)
{
  if (!cmd->ended && cmd->exited
      && (cmd->output_eof || cmd->grace_over || cmd->start_failed))
    {
      if (!command_publish_settled (cmd))
        return;
      command_end (cmd);
      /* Whatever the command left running is ended now that crucible is
       * done with the call.  */
      command_stop_scope (cmd);
    }
  if (cmd->ended && cmd->scope_done)
    command_release (cmd);
}

/* The pipe was held past the grace period after the command's exit.  */
static void
command_grace_over (struct loop *loop, void *data)
{
  struct command *cmd = data;
  cmd->grace_timer = 0;
  cmd->grace_over = true;
  command_advance (cmd);
}

/* A limit the command hit, as a fact: which, and the ceiling it had.  */
static void
command_violation (struct command *cmd, const char *limit, int64_t value)
{
  struct journal_field f[]
      = { JOURNAL_STR ("limit", limit), JOURNAL_INT64 ("value", value) };
  supervisor_fact (cmd->sup, JOURNAL_VIOLATION, cmd, f, sizeof f / sizeof *f);
}

/* The command ran past its deadline.  */
static void
command_deadline (struct loop *loop, void *data)
{
  struct command *cmd = data;
  cmd->deadline_timer = 0;
  if (cmd->exited || cmd->stopped != COMMAND_NOT_STOPPED)
    return;
  cmd->stopped = COMMAND_STOPPED_DEADLINE;
  command_violation (cmd, "time", (int64_t) cmd->deadline_ms);
  command_stop_scope (cmd);
}

/* Answer a call that is to be left running, with the output so far.  */
static void
command_leave_running (struct command *cmd, enum notes_detach who)
{
  struct result_input in;
  size_t so_far_len = 0;
  char *so_far = NULL;

  /* A command left running has no deadline.  */
  command_cancel (cmd, &cmd->deadline_timer);
  cmd->deadline_at = 0;
  cmd->left_running = true;
  /* Numbers are for commands left running: #1 is the first of them.  */
  cmd->number = cmd->sup->next_number++;
  struct journal_field f[]
      = { JOURNAL_INT64 ("number", (int64_t) cmd->number),
          JOURNAL_STR ("by",
                       who == NOTES_DETACH_KEY ? "ctrl_b" : "background") };
  supervisor_fact (cmd->sup, JOURNAL_BACKGROUND, cmd, f, sizeof f / sizeof *f);
  if (capture_total_bytes (cmd->capture) > 0)
    {
      command_result_input (cmd, NULL, &in);
      so_far = result_compose (&in, &so_far_len);
    }
  char *where = command_where (cmd);
  cmd->text = notes_left_running (cmd->number, who, where, so_far, so_far_len,
                                  &cmd->text_len);
  free (where);
  free (so_far);
  struct command_answer answer
      = { .text = cmd->text, .text_len = cmd->text_len, .left_running = true };
  command_answer (cmd, &answer);
  /* The answer is told; what follows is the ending's.  */
  free (cmd->text);
  cmd->text = NULL;
  cmd->text_len = 0;
}

/* A call that asked for background has had its moment to fail.  */
static void
command_early_over (struct loop *loop, void *data)
{
  struct command *cmd = data;
  cmd->early_timer = 0;
  if (!cmd->answered && !cmd->ended)
    command_leave_running (cmd, NOTES_DETACH_BACKGROUND);
}

bool
supervisor_detach (struct supervisor *sup, struct command *cmd)
{
  if (cmd->answered || cmd->ended || cmd->stopped != COMMAND_NOT_STOPPED)
    return false;
  command_leave_running (cmd, NOTES_DETACH_KEY);
  return true;
}

/* Show the observer what the capture released last: masked bytes only,
 * so the live sample and the full view see what the result does.  */
static void
command_observe_output (struct command *cmd)
{
  const char *bytes;
  size_t len;
  capture_released (cmd->capture, &bytes, &len);
  if (len > 0 && cmd->sup->observer.output != NULL)
    cmd->sup->observer.output (cmd->sup->observer.data, cmd, bytes, len);
}

/* Read what the command printed, a bounded amount per turn.  A short read
 * means the pipe is drained: back to poll rather than a read that can only
 * say EAGAIN, which would cost a third system call per write of a fast
 * writer.  */
static void
command_read_output (struct command *cmd)
{
  char chunk[SUPERVISOR_READ_CHUNK];
  ssize_t n = (ssize_t) sizeof chunk;
  int reads = cmd->sup->observer.output != NULL
                  ? SUPERVISOR_READS_PER_TURN_WATCHED
                  : SUPERVISOR_READS_PER_TURN;

  for (int i = 0; i < reads && cmd->out_fd >= 0 && n == (ssize_t) sizeof chunk;
       i++)
    {
      n = read (cmd->out_fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        {
          n = (ssize_t) sizeof chunk;
          continue;
        }
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        {
          /* An error other than EAGAIN ends the reading as EOF does, but
           * what was read is then said to be a prefix.  */
          cmd->read_failed = n < 0;
          cmd->output_eof = true;
          command_close_output (cmd);
          return;
        }
      enum capture_status st = capture_feed (cmd->capture, chunk, (size_t) n);
      command_observe_output (cmd);
      if (st == CAPTURE_CEILING && cmd->stopped == COMMAND_NOT_STOPPED
          && !cmd->exited)
        {
          cmd->stopped = COMMAND_STOPPED_CEILING;
          command_violation (cmd, "output",
                             (int64_t) cmd->sup->config->output_bytes);
          command_stop_scope (cmd);
        }
    }
}

/* The output pipe is readable.  */
static void
command_on_output (struct loop *loop, int fd, short revents, void *data)
{
  struct command *cmd = data;
  command_read_output (cmd);
  command_advance (cmd);
}

/* The workload ended: give its pipe a moment to close.  */
static void
command_on_exit (struct command *cmd, int wait_status)
{
  cmd->exited = true;
  cmd->wait_status = wait_status;
  /* SIGXCPU is the kernel's word for the CPU ceiling (RLIMIT_CPU).  */
  if (WIFSIGNALED (wait_status) && WTERMSIG (wait_status) == SIGXCPU)
    command_violation (cmd, "cpu", (int64_t) cmd->sup->config->cpu_seconds);
  if (!cmd->output_eof)
    cmd->grace_timer = loop_add_timer (cmd->sup->loop, SUPERVISOR_GRACE_MS,
                                       command_grace_over, cmd);
}

/* Put a refusal in the words the model is given.  Returns -1.  */
static int
supervisor_refusal (struct cr_error **err)
{
  char *text = notes_refusal ((*err)->msg);
  /* The errno text is already inside the message.  */
  cr_error_set (err, 0, "%s", text);
  free (text);
  return -1;
}

/* Record that the shell itself could not be started.  */
static void
command_on_start_failure (struct command *cmd, const struct sandbox_event *ev)
{
  const char *what = ev->failure == SANDBOX_FAILED_EXEC
                         ? "starting the shell"
                         : "setting up the command";
  cmd->start_failed = true;
  /* The launcher's own words, quoted, say more than an errno: they hold
   * it already.  */
  if (ev->message != NULL)
    cr_error_set (&cmd->start_error, 0, "%s: \"%s\"", what, ev->message);
  else
    cr_error_set (&cmd->start_error, ev->error, "%s", what);
  supervisor_refusal (&cmd->start_error);
}

/* The status channel failed: the keeper (bwrap's broker, the container
 * backend's thread) is gone without confirming the scope empty.  The
 * slot stays held, the channel is not watched any more, the journal and
 * the result say so, and no later command is prepared; the command still
 * gets its result, its ending read as a kill when none was heard.  */
static void
command_on_unconfirmed (struct command *cmd, const struct cr_error *err)
{
  struct supervisor *sup = cmd->sup;
  loop_remove_fd (sup->loop, cmd->status_fd);
  cmd->status_fd = -1;
  if (cmd->cleanup_failed != NULL)
    return;
  cmd->cleanup_failed = xstrdup (err->msg);
  if (sup->blocked_why == NULL)
    sup->blocked_why = xstrdup (err->msg);
  struct journal_field f[] = { JOURNAL_STR ("reason", err->msg),
                               JOURNAL_INT64 ("errno", err->code) };
  supervisor_fact (sup, JOURNAL_CLEANUP_FAILED, cmd, f, sizeof f / sizeof *f);
  command_cancel (cmd, &cmd->stop_timer);
  if (!cmd->exited)
    command_on_exit (cmd, SIGKILL);
}

/* Read the scope's status channel.  */
static void
command_on_status (struct loop *loop, int fd, short revents, void *data)
{
  struct command *cmd = data;
  struct sandbox_event ev;
  struct cr_error *err = NULL;

  for (;;)
    {
      if (sandbox_next_event (cmd->session, &ev, &err) < 0)
        {
          command_on_unconfirmed (cmd, err);
          cr_error_free (err);
          break;
        }
      if (ev.kind == SANDBOX_EVENT_NONE)
        break;
      if (ev.kind == SANDBOX_EVENT_EXITED)
        {
          if (ev.message != NULL && cmd->verified == NULL)
            cmd->verified = xstrdup (ev.message);
          command_on_exit (cmd, ev.wait_status);
        }
      else if (ev.kind == SANDBOX_EVENT_FAILED)
        command_on_start_failure (cmd, &ev);
      else if (ev.kind == SANDBOX_EVENT_DONE)
        {
          cmd->scope_done = true;
          /* Every writer is gone, so what is still in the pipe is the last
           * of it: read it before reporting.  */
          if (!cmd->ended)
            command_read_output (cmd);
          /* Nothing follows DONE, and a channel shut down after it stays
           * readable: watched on, it would spin the loop for as long as
           * publication runs beside it, taking a core from publication.  */
          loop_remove_fd (loop, fd);
          cmd->status_fd = -1;
          break;
        }
    }
  command_advance (cmd);
}

/* Whether commands run under process isolation (the front end said so:
 * supervisor_set_process_isolation).  */
static bool
supervisor_process_isolation (const struct supervisor *sup)
{
  return sup->process_isolation;
}

void
supervisor_set_process_isolation (struct supervisor *sup, bool on)
{
  sup->process_isolation = on;
}

void
supervisor_set_exits_after (struct supervisor *sup, bool on)
{
  sup->exits_after = on;
}

/* The policy a command of this supervisor runs under, resolved from the
 * configuration the way inspection reports it.  *resolved holds what
 * policy points at (its configured roots) and outlives the prepare.  */
static int
supervisor_policy (const struct supervisor *sup, struct sandbox_policy *policy,
                   char digest[POLICY_DIGEST_SIZE], struct policy **resolved,
                   struct cr_error **err)
{
  struct policy_input in;

  config_policy_input (sup->config, sup->workspace, &in);
  if (policy_resolve (&in, resolved, err) < 0)
    return -1;
  *policy = (*resolved)->sandbox;
  memcpy (digest, (*resolved)->effective_digest, POLICY_DIGEST_SIZE);
  /* Under CRUCIBLE_ALLOW_PROCESS_ISOLATION the command runs unconfined,
   * as the person opted in to: nothing of the policy's confinement is
   * asked of the compatibility backend, and every result says so.  */
  if (supervisor_process_isolation (sup))
    {
      policy->enabled = false;
      memset (policy->requires, 0, sizeof policy->requires);
    }
  return 0;
}

/* Free a resolved policy on the way out.  */
static void
supervisor_policy_freep (struct policy **p)
{
  policy_free (*p);
}

/* The capability negotiation, as a fact: how many features the policy
 * requires of the backend, and whether its claims hold them all (else the
 * first one they do not, by name).  cmd is NULL when the negotiation
 * refused the command, which then has no sandbox.  */
static void
supervisor_negotiation_fact (struct supervisor *sup, struct command *cmd,
                             const struct sandbox_policy *policy)
{
  struct sandbox_claims claims;
  int64_t required = 0;
  const char *unmet = NULL;

  sandbox_claims (sup->backend, &claims);
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (policy->requires[f])
      {
        required++;
        if (unmet == NULL && claims.support[f] != SANDBOX_ENFORCED)
          unmet = sandbox_feature_name ((enum sandbox_feature) f);
      }
  struct journal_field f[] = {
    JOURNAL_STR ("backend", sup->backend->ops->id),
    JOURNAL_INT64 ("required", required),
    JOURNAL_STR ("outcome", unmet == NULL ? "accepted" : "refused"),
    JOURNAL_STR ("unmet", unmet != NULL ? unmet : ""),
  };
  supervisor_fact (sup, JOURNAL_CAPABILITIES, cmd, f, unmet != NULL ? 4 : 3);
}

/* Append " #N LABEL" for c and the commands after it, oldest first (the
 * list is newest first; its length is bounded by the concurrency).  */
static void
supervisor_put_oldest_first (struct buf *b, const struct command *c)
{
  if (c == NULL)
    return;
  supervisor_put_oldest_first (b, c->next);
  buf_puts (b, c->next == NULL ? " " : ", ");
  if (c->number != 0)
    buf_printf (b, "#%" PRIu64 " ", c->number);
  buf_puts (b, c->label);
}

/* The refusal of a command over the concurrency ceiling, naming the
 * commands in the way.  */
static int
supervisor_refuse_full (struct supervisor *sup, struct cr_error **err)
{
  struct buf b = BUF_INIT;
  buf_printf (&b, "%zu commands are already running:", sup->slots_held);
  supervisor_put_oldest_first (&b, sup->commands);
  buf_puts (&b, "; that is the most allowed at once "
                "(sandbox.limits.concurrency)");
  cr_error_set (err, 0, "%s", b.data);
  buf_free (&b);
  return -1;
}

/* Refuse a command that cannot be admitted; the text is the model's.  */
static int
supervisor_admit (struct supervisor *sup, const struct command_request *req,
                  struct cr_error **err)
{
  if (req->line == NULL || req->line[0] == '\0')
    return cr_error_set (err, 0, "the command is empty");
  if (strlen (req->line) > SUPERVISOR_MAX_LINE)
    return cr_error_set (err, 0, "the command is longer than %d bytes",
                         SUPERVISOR_MAX_LINE);
  if (req->background && req->timeout_seconds > 0)
    return cr_error_set (err, 0,
                         "timeout and background were both sent, and a "
                         "command left running has no deadline; send one "
                         "or the other");
  if (sup->blocked_why != NULL)
    return cr_error_set (err, 0,
                         "an earlier command's cleanup was not confirmed "
                         "(%s); no command is prepared again until crucible "
                         "restarts",
                         sup->blocked_why);
  if (sup->slots_held >= sup->config->concurrency)
    return supervisor_refuse_full (sup, err);
  return 0;
}

/* Hand the running command to the loop.  */
static int
command_watch (struct command *cmd, struct cr_error **err)
{
  struct supervisor *sup = cmd->sup;
  cmd->status_fd = sandbox_status_fd (cmd->session);
  if (loop_add_fd (sup->loop, cmd->out_fd, POLLIN, command_on_output, cmd, err)
          < 0
      || loop_add_fd (sup->loop, cmd->status_fd, POLLIN, command_on_status, cmd,
                      err)
             < 0)
    return -1;
  int net = cmd->proxy_client != NULL || cmd->n_ports > 0
                ? sandbox_network_fd (cmd->session)
                : -1;
  if (net >= 0)
    {
      if (loop_add_fd (sup->loop, net, POLLIN, command_on_net, cmd, err) < 0)
        return -1;
      cmd->net_fd = net;
      if (cmd->n_ports > 0)
        {
          if (sup->portfwd == NULL)
            sup->portfwd = portfwd_new (sup->loop);
          cmd->ports_member
              = portfwd_join (sup->portfwd, net, cmd->ports, cmd->n_ports);
        }
    }
  return 0;
}

/* Make the command's output pipe; the read end is non-blocking.  */
static int
supervisor_pipe (int fds[2], struct cr_error **err)
{
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the command's output pipe");
  if (fcntl (fds[0], F_SETFL, O_NONBLOCK) < 0)
    {
      int saved = errno;
      close (fds[0]);
      close (fds[1]);
      return cr_error_set (err, saved, "setting up the command's output pipe");
    }
  /* A larger pipe lets a fast writer run longer between our reads; it is
   * only a hint (an unprivileged user past /proc/sys/fs/pipe-max-size, or
   * past its pipe quota, keeps the default).  */
  (void) fcntl (fds[1], F_SETPIPE_SZ, SUPERVISOR_PIPE_BYTES);
  return 0;
}

/* Resolve the line's credentials (sandbox.credentials), hand every value
 * to the masker before the first byte of output, and build the
 * environment with them; the note on those withheld goes to the result.
 * The set is freed (its values wiped) once the environment holds them.  */
static int
supervisor_env (struct supervisor *sup, struct command *cmd,
                const struct command_request *req, const char *proxy_url,
                struct env **env, struct cr_error **err)
{
  struct credentials *creds = NULL;
  struct env_var vars[CONFIG_CREDENTIALS_MAX];

  if (credentials_check_named (sup->config, req->env, req->n_env, err) < 0
      || credentials_resolve_named (sup->config, sup->host_env, req->line,
                                    sup->workspace, req->n_env, &creds, err)
             < 0)
    return -1;
  size_t n = credentials_count (creds);
  credentials_env (creds, vars);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = capture_add_secret (cmd->capture, vars[i].value, vars[i].value_len,
                             err);
  if (rc == 0)
    rc = env_build_with (env, sup->host_env, req->env, req->n_env, vars, n,
                         proxy_url, err);
  if (rc == 0)
    cmd->credentials_note = credentials_withheld_note (creds);
  explicit_bzero (vars, sizeof vars);
  credentials_free (creds);
  return rc == 0 ? 0 : -1;
}

/* Start the prepared session with the built environment.  */
static int
supervisor_launch (struct supervisor *sup, struct command *cmd,
                   const struct command_request *req, const char *shell,
                   struct cr_error **err)
{
  struct env *env = NULL;
  int fds[2];
  cleanup_free char *proxy_url = NULL;

  /* The command's own credential in its proxy URL, never in argv; the
   * variables replace any the call might name (env_build_proxied).  */
  if (cmd->proxy_client != NULL)
    proxy_url = xasprintf (
        "http://%s:%s@127.0.0.1:%d", proxy_client_user (cmd->proxy_client),
        proxy_client_password (cmd->proxy_client), BROKER_NET_PORT);
  if (supervisor_env (sup, cmd, req, proxy_url, &env, err) < 0)
    return -1;
  if (supervisor_pipe (fds, err) < 0)
    {
      env_free (env);
      return -1;
    }
  struct sandbox_command sc = { .shell = shell,
                                .line = req->line,
                                .cwd = sup->workspace,
                                .envp = env->vars,
                                .output_fd = fds[1] };
  int rc = sandbox_start (cmd->session, &sc, err);
  close (fds[1]);
  env_free (env);
  if (rc < 0)
    {
      close (fds[0]);
      return -1;
    }
  cmd->out_fd = fds[0];
  return 0;
}

/* The spool the observer's full view reads a command's every byte from,
 * or -1: none asked for, or none could be made (the view then says what
 * it lacks, with its row for the middle not kept).  */
static int
command_spool_open (struct supervisor *sup)
{
  if (sup->observer.spool_dir == NULL)
    return -1;
  if (sup->spare_spool >= 0)
    {
      int fd = sup->spare_spool;
      sup->spare_spool = -1;
      loop_cancel_timer (sup->loop, sup->spare_spool_timer);
      sup->spare_spool_timer = 0;
      return fd;
    }
  struct cr_error *err = NULL;
  int fd = capture_spool_open (sup->observer.spool_dir, &err);
  cr_error_free (err);
  return fd;
}

/* A new command, not started yet.  */
static struct command *
command_new (struct supervisor *sup, const struct command_request *req,
             const struct supervisor_listener *listener,
             struct sandbox_session *session)
{
  struct command *cmd = xcalloc (1, sizeof *cmd);
  cmd->sup = sup;
  cmd->listener = *listener;
  cmd->session = session;
  memcpy (cmd->sandbox_id, session->id, sizeof cmd->sandbox_id);
  cmd->out_fd = cmd->status_fd = cmd->net_fd = -1;
  cmd->label = notes_label (req->description, req->line);
  cmd->serial = ++sup->next_serial;
  cmd->call_id = req->call_id != NULL ? xstrdup (req->call_id) : NULL;
  struct capture_limits limits
      = capture_limits_for_result (sup->config->output_bytes);
  cmd->capture = capture_new (&limits, command_spool_open (sup));
  return cmd;
}

/* For a command whose policy names domains: the host's proxy (made now
 * if this is the first), the command's client with its own credential,
 * attributed to its sandbox ID, and the credential handed to the masker
 * before the first byte of output, so no view shows it.  */
static int
command_net_begin (struct command *cmd, const struct sandbox_policy *policy,
                   struct cr_error **err)
{
  struct supervisor *sup = cmd->sup;

  /* The listed ports, for the forwarder once the command runs.  */
  for (size_t i = 0; i < policy->n_ports && i < 16; i++)
    cmd->ports[cmd->n_ports++] = policy->ports[i];
  if (policy->n_domains == 0)
    return 0;
  if (supervisor_proxy (sup, err) == NULL)
    return -1;
  struct proxy_grant g = { .sandbox_id = cmd->sandbox_id,
                           .domains = (char *const *) policy->domains,
                           .n_domains = policy->n_domains,
                           .allow_private = policy->allow_private_addresses };
  cmd->proxy_client = proxy_client_new (sup->proxy, &g, err);
  if (cmd->proxy_client == NULL)
    return -1;
  proxy_client_on_refusal (cmd->proxy_client, command_on_refusal, cmd);
  const char *password = proxy_client_password (cmd->proxy_client);
  return capture_add_secret (cmd->capture, password, strlen (password), err);
}

/* Admit, prepare and start one command.  */
static struct sandbox_session *supervisor_ahead_take (
    struct supervisor *sup, const struct command_request *req,
    const char digest[POLICY_DIGEST_SIZE], const char *shell);

static int
supervisor_start_command (struct supervisor *sup,
                          const struct command_request *req,
                          const struct supervisor_listener *listener,
                          struct command **out, const char **why,
                          struct cr_error **err)
{
  struct sandbox_policy policy;
  __attribute__ ((cleanup (supervisor_policy_freep))) struct policy *resolved
      = NULL;
  struct sandbox_session *session = NULL;
  char digest[POLICY_DIGEST_SIZE];
  const char *shell = supervisor_find_shell ();

  *why = "admission";
  if (supervisor_admit (sup, req, err) < 0)
    return -1;
  *why = "no_shell";
  if (shell == NULL)
    return cr_error_set (err, 0,
                         "this machine has no POSIX shell (looked "
                         "for /bin/sh and /usr/bin/sh)");
  *why = "policy";
  if (supervisor_policy (sup, &policy, digest, &resolved, err) < 0)
    return -1;
  session = supervisor_ahead_take (sup, req, digest, shell);
  if (session == NULL
      && sandbox_prepare (sup->backend, &policy, &session, err) < 0)
    {
      supervisor_negotiation_fact (sup, NULL, &policy);
      return -1;
    }

  *why = "launch";
  struct command *cmd = command_new (sup, req, listener, session);
  struct journal_field pf[] = {
    JOURNAL_STR ("backend", sup->backend->ops->id),
    JOURNAL_STR ("mode", policy.enabled ? "confined" : "unconfined"),
    JOURNAL_STR ("policy", digest),
    JOURNAL_BOOLEAN ("degraded", false),
  };
  supervisor_fact (sup, JOURNAL_POLICY, cmd, pf, sizeof pf / sizeof *pf);
  supervisor_negotiation_fact (sup, cmd, &policy);
  if (command_net_begin (cmd, &policy, err) < 0
      || supervisor_launch (sup, cmd, req, shell, err) < 0)
    {
      struct cr_error *ignored = NULL;
      sandbox_dispose (session, NULL, &ignored);
      cr_error_free (ignored);
      command_free (cmd);
      return -1;
    }
  struct journal_field f[]
      = { JOURNAL_STR ("backend", sup->backend->ops->id),
          JOURNAL_BOOLEAN ("background", req->background),
          JOURNAL_STR ("isolation",
                       sandbox_registry_isolation (sup->backend->ops->id)) };
  supervisor_fact (sup, JOURNAL_START, cmd, f, sizeof f / sizeof *f);
  cmd->next = sup->commands;
  sup->commands = cmd;
  sup->slots_held++;
  /* Two fresh descriptors cannot already be watched: a failure here is a
   * bug, and carrying on would leave a scope nobody reads.  */
  if (command_watch (cmd, err) < 0)
    abort ();
  if (sup->observer.started != NULL)
    sup->observer.started (sup->observer.data, cmd);
  if (req->background)
    cmd->early_timer = loop_add_timer (sup->loop, SUPERVISOR_EARLY_MS,
                                       command_early_over, cmd);
  else
    {
      uint64_t ms = supervisor_deadline_ms (sup->config, req->timeout_seconds);
      cmd->deadline_ms = ms;
      cmd->deadline_at = clock_now_ms () + ms;
      cmd->deadline_timer
          = loop_add_timer (sup->loop, ms, command_deadline, cmd);
    }
  *out = cmd;
  return 0;
}

int
supervisor_start (struct supervisor *sup, const struct command_request *req,
                  const struct supervisor_listener *listener,
                  struct command **out, struct cr_error **err)
{
  const char *why = NULL;
  if (supervisor_start_command (sup, req, listener, out, &why, err) < 0)
    {
      /* The reason's words may carry names from the call: the journal
       * keeps only where it was refused.  */
      struct journal_field f[] = { JOURNAL_STR ("stage", why) };
      supervisor_fact (sup, JOURNAL_REFUSAL, NULL, f, 1);
      return supervisor_refusal (err);
    }
  return 0;
}

/* A stop from the list ran out of time.  */
static void
command_stop_overdue (struct loop *loop, void *data)
{
  struct command *cmd = data;
  cmd->stop_timer = 0;
  supervisor_fact (cmd->sup, JOURNAL_STOP_FAILED, cmd, NULL, 0);
  if (cmd->listener.stop_failed != NULL)
    cmd->listener.stop_failed (cmd->listener.data, cmd);
  if (cmd->sup->observer.stop_failed != NULL)
    cmd->sup->observer.stop_failed (cmd->sup->observer.data, cmd);
}

/* Stop a command, or, when it has ended and waits to publish, what the
 * spec asks of the one who stopped it: the list leaves it to be reported
 * (its wait keeps the ceiling it had), an interruption cuts the wait to the
 * short ceiling.  */
static void
command_stop_from (struct supervisor *sup, struct command *cmd, bool listed)
{
  if (listed ? command_waits_to_publish (cmd) : command_publish_cut (cmd))
    return;
  if (cmd->scope_done)
    return;
  if (!cmd->exited && cmd->stopped == COMMAND_NOT_STOPPED)
    cmd->stopped = COMMAND_STOPPED_LIST;
  command_cancel (cmd, &cmd->stop_timer);
  supervisor_fact (sup, JOURNAL_STOP, cmd, NULL, 0);
  cmd->stop_timer
      = loop_add_timer (sup->loop, sup->stop_ms, command_stop_overdue, cmd);
  command_stop_scope (cmd);
}

void
supervisor_stop (struct supervisor *sup, struct command *cmd)
{
  command_stop_from (sup, cmd, true);
}

void
supervisor_interrupt (struct supervisor *sup, struct command *cmd)
{
  command_stop_from (sup, cmd, false);
}

void
supervisor_stop_all (struct supervisor *sup)
{
  for (struct command *cmd = sup->commands; cmd != NULL; cmd = cmd->next)
    if (command_publish_cut (cmd))
      continue;
    else if (!cmd->exited && cmd->stopped == COMMAND_NOT_STOPPED)
      {
        cmd->stopped = COMMAND_STOPPED_HOST;
        command_stop_scope (cmd);
      }
}

/* The running commands left running, as "#N LABEL", newest last.  */
static char **
supervisor_running_labels (struct supervisor *sup, size_t *n)
{
  size_t count = 0;
  for (struct command *c = sup->commands; c != NULL; c = c->next)
    count += command_left_running (c);
  char **labels = xcalloc (count + 1, sizeof *labels);
  size_t i = count;
  for (struct command *c = sup->commands; c != NULL; c = c->next)
    if (command_left_running (c))
      labels[--i] = xasprintf ("#%" PRIu64 " %s", c->number, c->label);
  *n = count;
  return labels;
}

char *
supervisor_output (struct supervisor *sup, int64_t number, size_t *len)
{
  for (struct command *c = sup->commands; c != NULL; c = c->next)
    if ((int64_t) c->number == number && command_left_running (c))
      {
        struct result_input in;
        size_t so_far_len;
        command_result_input (c, NULL, &in);
        /* Room for the note after it, so that the whole answer keeps
         * within the cap.  */
        char *note = xasprintf ("\n[#%" PRIu64 " is still running]", c->number);
        in.max_encoded
            = RESULT_MAX_ENCODED - result_json_size (note, strlen (note));
        free (note);
        char *so_far = result_compose (&in, &so_far_len);
        char *where = command_where (c);
        char *text
            = notes_output_running (c->number, where, so_far, so_far_len,
                                    capture_total_bytes (c->capture), len);
        free (where);
        free (so_far);
        return text;
      }
  size_t n;
  char **labels = supervisor_running_labels (sup, &n);
  char *text = notes_output_unknown (number, labels, n);
  for (size_t i = 0; i < n; i++)
    free (labels[i]);
  free (labels);
  *len = strlen (text);
  return text;
}

bool
supervisor_has_endings (const struct supervisor *sup)
{
  return sup->endings.len > 0;
}

char *
supervisor_take_endings (struct supervisor *sup, size_t *len)
{
  if (sup->endings.len == 0)
    return NULL;
  for (size_t i = 0; i < sup->n_untold; i++)
    {
      struct cr_error *err = NULL;
      if (sup->journal != NULL)
        journal_fact (sup->journal, JOURNAL_ENDING, sup->untold[i], NULL, NULL,
                      0, &err);
      cr_error_free (err);
    }
  sup->n_untold = 0;
  return buf_steal (&sup->endings, len);
}

static void supervisor_ahead_drop (struct supervisor *sup, const char *why);
static void supervisor_pending_cancel (struct supervisor *sup,
                                       const char *call_id);

void
supervisor_free (struct supervisor *sup)
{
  if (sup == NULL)
    return;
  supervisor_ahead_drop (sup, "exit");
  supervisor_pending_cancel (sup, NULL);
  if (sup->ahead_timer != 0)
    loop_cancel_timer (sup->loop, sup->ahead_timer);
  while (sup->commands != NULL)
    {
      struct command *cmd = sup->commands;
      sup->commands = cmd->next;
      command_close_output (cmd);
      /* The net channel goes with the session: unwatched first.  */
      if (cmd->net_fd >= 0)
        loop_remove_fd (sup->loop, cmd->net_fd);
      cmd->net_fd = -1;
      command_ports_leave (cmd);
      sandbox_abandon (cmd->session);
      command_free (cmd);
    }
  loop_cancel_timer (sup->loop, sup->spare_spool_timer);
  if (sup->spare_spool >= 0)
    close (sup->spare_spool);
  /* After every client: the proxy closes whatever is left.  */
  proxy_free (sup->proxy);
  portfwd_free (sup->portfwd);
  pubjob_wait_tidied ();
  buf_free (&sup->endings);
  free (sup->untold);
  free (sup->blocked_why);
  free (sup->workspace);
  free (sup);
}

void
supervisor_set_net_asker (struct supervisor *sup, proxy_asker_fn fn, void *data)
{
  sup->asker = fn;
  sup->asker_data = data;
  if (sup->proxy != NULL)
    proxy_set_asker (sup->proxy, fn, data);
}

void
supervisor_net_answer (struct supervisor *sup, uint64_t question,
                       enum proxy_answer a)
{
  if (sup->proxy != NULL)
    proxy_answer (sup->proxy, question, a);
}

void
supervisor_set_observer (struct supervisor *sup,
                         const struct supervisor_observer *obs)
{
  if (obs != NULL)
    sup->observer = *obs;
  else
    memset (&sup->observer, 0, sizeof sup->observer);
}

char *
command_where (const struct command *cmd)
{
  if (cmd->ports_member == NULL)
    return NULL;
  return portfwd_where (cmd->ports_member);
}

/* --- prepared ahead ------------------------------------------------------
 */

/* A fact about the sandbox prepared ahead, which no command has yet: its
 * sandbox ID first, as on every fact of a sandbox.  */
static void
supervisor_ahead_fact (struct supervisor *sup, enum journal_fact fact,
                       const char *id, const struct journal_field *fields,
                       size_t n)
{
  struct cr_error *err = NULL;
  struct journal_field all[JOURNAL_MAX_FIELDS];
  size_t k = 0;

  if (sup->journal == NULL)
    return;
  all[k++] = (struct journal_field) JOURNAL_STR ("sandbox", id);
  for (size_t i = 0; i < n && k < JOURNAL_MAX_FIELDS; i++)
    all[k++] = fields[i];
  journal_fact (sup->journal, fact, 0, sup->ahead.for_call, all, k, &err);
  cr_error_free (err);
}

/* One file's identity for the mark: device, inode, size, both times.  */
static void
supervisor_mark_file (struct buf *b, const char *path)
{
  struct stat st;

  if (path == NULL || stat (path, &st) < 0)
    {
      buf_puts (b, "-;");
      return;
    }
  buf_printf (b, "%llu:%llu:%lld:%lld.%ld:%lld.%ld;",
              (unsigned long long) st.st_dev, (unsigned long long) st.st_ino,
              (long long) st.st_size, (long long) st.st_mtim.tv_sec,
              st.st_mtim.tv_nsec, (long long) st.st_ctim.tv_sec,
              st.st_ctim.tv_nsec);
}

/* The configuration files (home, project) as they are now, as one
 * string: a sandbox made ahead is not used once either has changed,
 * whatever the session itself goes on with.  */
static char *
supervisor_config_mark (const struct supervisor *sup)
{
  struct cr_error *err = NULL;
  cleanup_free char *home = config_home_path (&err);
  cleanup_free char *project = config_project_path (sup->workspace);
  struct buf b = BUF_INIT;

  cr_error_free (err);
  supervisor_mark_file (&b, home);
  supervisor_mark_file (&b, project);
  return buf_steal (&b, NULL);
}

/* Dispose of the sandbox prepared ahead, unused, saying why ("refused",
 * "stale", "replaced", "exit", "failed").  */
static void
supervisor_ahead_drop (struct supervisor *sup, const char *why)
{
  struct cr_error *err = NULL;

  if (sup->ahead.session == NULL)
    return;
  struct journal_field f[] = { JOURNAL_STR ("unused", why) };
  char id[SANDBOX_ID_LEN + 1];
  memcpy (id, sup->ahead.session->id, sizeof id);
  /* Its command never started, so disposing of it cannot leave a scope;
   * a dispose that fails all the same abandons it (the keeper ends on
   * the closed channel) and says nothing of confirmation.  */
  if (sandbox_dispose (sup->ahead.session, NULL, &err) < 0)
    {
      cr_error_free (err);
      sandbox_abandon (sup->ahead.session);
    }
  else
    supervisor_ahead_fact (sup, JOURNAL_CLEANUP, id, f, 1);
  sup->ahead.session = NULL;
  free (sup->ahead.for_call);
  sup->ahead.for_call = NULL;
  free (sup->ahead.config_mark);
  sup->ahead.config_mark = NULL;
}

/* Prepare a sandbox ahead for call_id (NULL: kept for any command).  Only
 * confined policies are prepared ahead; the rest start as ever.  One with
 * domains or ports is prepared too: its net channel and the broker's relay
 * and listeners are made with the sandbox, from the policy it was made
 * from (the digest the take compares), while the command's proxy client,
 * with its own credential, is made when the command starts
 * (command_net_begin), and its environment, which carries it, goes with
 * GO: a sandbox waiting holds no credential.  */
static int
supervisor_ahead_make (struct supervisor *sup, const char *call_id,
                       struct cr_error **err)
{
  struct sandbox_policy policy;
  __attribute__ ((cleanup (supervisor_policy_freep))) struct policy *resolved
      = NULL;
  struct sandbox_session *session = NULL;
  const char *shell = supervisor_find_shell ();

  /* After a cleanup that was not confirmed nothing is prepared again, not
   * even ahead: every command is refused (supervisor_admit).  */
  if (sup->backend == NULL || shell == NULL || sup->blocked_why != NULL)
    return 0;
  char digest[POLICY_DIGEST_SIZE];

  if (supervisor_policy (sup, &policy, digest, &resolved, err) < 0)
    return -1;
  if (!policy.enabled)
    return 0;
  if (sandbox_prepare (sup->backend, &policy, &session, err) < 0)
    return -1;
  int r = sandbox_prepare_ahead (session, sup->workspace, shell, err);
  if (r <= 0)
    {
      struct cr_error *ignored = NULL;
      if (sandbox_dispose (session, NULL, &ignored) < 0)
        sandbox_abandon (session);
      cr_error_free (ignored);
      return r;
    }
  sup->ahead.session = session;
  memcpy (sup->ahead.digest, digest, POLICY_DIGEST_SIZE);
  sup->ahead.for_call = call_id != NULL ? xstrdup (call_id) : NULL;
  sup->ahead.backend = sup->backend;
  sup->ahead.config_mark = supervisor_config_mark (sup);
  struct journal_field f[] = {
    JOURNAL_STR ("backend", sup->backend->ops->id),
    JOURNAL_STR ("mode", "confined"),
    JOURNAL_STR ("policy", sup->ahead.digest),
    JOURNAL_BOOLEAN ("degraded", false),
    JOURNAL_STR ("ahead", call_id != NULL ? "approval" : "kept"),
  };
  supervisor_ahead_fact (sup, JOURNAL_POLICY, session->id, f,
                         sizeof f / sizeof *f);
  return 1;
}

/* The kept sandbox's turn has come: make one unless one is there.  */
static void
supervisor_ahead_due (struct loop *loop, void *data)
{
  struct supervisor *sup = data;
  struct cr_error *err = NULL;

  (void) loop;
  sup->ahead_timer = 0;
  if (!sup->keep_ahead || sup->ahead.session != NULL
      || sup->pending_call != NULL)
    return;
  if (supervisor_ahead_make (sup, NULL, &err) < 0)
    cr_error_free (err); /* the next command starts as ever */
}

/* Make the kept sandbox from the loop, once what is under way settled.  */
static void
supervisor_ahead_schedule (struct supervisor *sup)
{
  if (!sup->keep_ahead || sup->ahead.session != NULL || sup->ahead_timer != 0)
    return;
  sup->ahead_timer = loop_add_timer (sup->loop, 0, supervisor_ahead_due, sup);
}

/* The sandbox prepared ahead, for req, when it may run it; NULL when
 * there is none for it.  One made from another policy, backend or
 * configuration, or whose workspace no longer matches what it read (or
 * whose keeper ended), is disposed of as stale.  */
static struct sandbox_session *
supervisor_ahead_take (struct supervisor *sup,
                       const struct command_request *req,
                       const char digest[POLICY_DIGEST_SIZE], const char *shell)
{
  struct sandbox_session *session = sup->ahead.session;

  /* Allowed before its sandbox was made: it starts as ever.  */
  supervisor_pending_cancel (sup, req->ahead_call);
  if (session == NULL
      || (sup->ahead.for_call != NULL
          && (req->ahead_call == NULL
              || strcmp (req->ahead_call, sup->ahead.for_call) != 0)))
    return NULL;
  cleanup_free char *mark = supervisor_config_mark (sup);
  if (memcmp (digest, sup->ahead.digest, POLICY_DIGEST_SIZE) != 0
      || sup->ahead.backend != sup->backend
      || strcmp (mark, sup->ahead.config_mark) != 0
      || !sandbox_ahead_current (session, sup->workspace, shell))
    {
      supervisor_ahead_drop (sup, "stale");
      return NULL;
    }
  sup->ahead.session = NULL;
  free (sup->ahead.for_call);
  sup->ahead.for_call = NULL;
  free (sup->ahead.config_mark);
  sup->ahead.config_mark = NULL;
  return session;
}

void
supervisor_keep_ahead (struct supervisor *sup, bool on)
{
  sup->keep_ahead = on;
  if (on)
    supervisor_ahead_schedule (sup);
  else if (sup->ahead.session != NULL && sup->ahead.for_call == NULL)
    supervisor_ahead_drop (sup, "exit");
}

/* Forget the pending call (only call_id's when not NULL).  */
static void
supervisor_pending_cancel (struct supervisor *sup, const char *call_id)
{
  if (sup->pending_call == NULL
      || (call_id != NULL && strcmp (call_id, sup->pending_call) != 0))
    return;
  loop_cancel_timer (sup->loop, sup->pending_timer);
  sup->pending_timer = 0;
  free (sup->pending_call);
  sup->pending_call = NULL;
}

/* The panel is drawn: make the pending call's sandbox.  */
static void
supervisor_pending_due (struct loop *loop, void *data)
{
  struct supervisor *sup = data;
  struct cr_error *err = NULL;
  cleanup_free char *call_id = sup->pending_call;

  (void) loop;
  sup->pending_timer = 0;
  sup->pending_call = NULL;
  if (sup->ahead.session == NULL
      && supervisor_ahead_make (sup, call_id, &err) < 0)
    cr_error_free (err); /* it starts as ever once allowed */
}

void
supervisor_prepare_for (struct supervisor *sup, const char *call_id)
{
  if (call_id == NULL)
    return;
  if (sup->ahead.session != NULL && sup->ahead.for_call == NULL)
    {
      /* The kept one becomes this call's.  */
      sup->ahead.for_call = xstrdup (call_id);
      return;
    }
  if (sup->ahead.session != NULL)
    {
      if (strcmp (sup->ahead.for_call, call_id) == 0)
        return;
      supervisor_ahead_drop (sup, "replaced");
    }
  supervisor_pending_cancel (sup, NULL);
  sup->pending_call = xstrdup (call_id);
  sup->pending_timer
      = loop_add_timer (sup->loop, 0, supervisor_pending_due, sup);
}

void
supervisor_prepared_refused (struct supervisor *sup, const char *call_id)
{
  supervisor_pending_cancel (sup, call_id);
  if (call_id != NULL && sup->ahead.session != NULL
      && sup->ahead.for_call != NULL
      && strcmp (sup->ahead.for_call, call_id) == 0)
    supervisor_ahead_drop (sup, "refused");
  supervisor_ahead_schedule (sup);
}

const char *
supervisor_ahead_id (const struct supervisor *sup)
{
  return sup->ahead.session != NULL ? sup->ahead.session->id : NULL;
}

struct proxy *
supervisor_proxy (struct supervisor *sup, struct cr_error **err)
{
  if (sup->proxy == NULL)
    {
      sup->proxy = proxy_new (sup->loop, sup->host_env, err);
      if (sup->proxy != NULL && sup->asker != NULL)
        proxy_set_asker (sup->proxy, sup->asker, sup->asker_data);
    }
  return sup->proxy;
}
