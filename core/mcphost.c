/* The MCP servers of one run: their lifecycle through the selected
 * backend (see mcphost.h).  */
#include <config.h>

#include "core/mcphost.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/status.h"
#include "core/credentials.h"
#include "core/env.h"
#include "core/mask.h"
#include "core/mcpservers.h"
#include "core/proxy.h"
#include "core/pubjob.h"
#include "core/rules.h"
#include "core/supervisor.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/netchan.h"
#include "sandbox/policy.h"
#include "sandbox/registry.h"
#include "sandbox/sha256.h"
#include "sandbox/statedir.h"

/* How often a publication that found the lock held asks again.  */
#define MCPHOST_PUBLISH_RETRY_MS 50

/* The handshake's bound: MCPHOST_HANDSHAKE_MS, or what crucible's own
 * CRUCIBLE_MCP_HANDSHAKE_MS says (the tests' hanging server), which a
 * project cannot set.  */
static uint64_t
mcphost_handshake_ms (void)
{
  const char *v = getenv ("CRUCIBLE_MCP_HANDSHAKE_MS");
  char *end;
  unsigned long long ms = v != NULL ? strtoull (v, &end, 10) : 0;
  if (v == NULL || end == v || *end != '\0' || ms == 0
      || ms > MCPHOST_HANDSHAKE_MS)
    return MCPHOST_HANDSHAKE_MS;
  return ms;
}

/* The pause before a server that ended is started again.  */
#define MCPHOST_RESTART_MS 100

/* Where a server is in its life.  */
enum mserver_state
{
  MS_IDLE,     /* nothing of it exists (not started, or disposed of) */
  MS_STARTING, /* started; the handshake and first listing run */
  MS_READY,    /* its tools are offered */
  MS_SETTLING, /* ended or ending: its scope, writes and session settle */
  MS_SKIPPED,  /* optional, its start failed, its cleanup confirmed */
  MS_FAILED,   /* not offered for the rest of the run */
  MS_BLOCKED   /* its cleanup is unconfirmed: it holds its session */
};

/* What follows once a settling server is disposed of.  */
enum mserver_then
{
  THEN_RESTART,   /* it exited or failed while the run went on */
  THEN_HANDSHAKE, /* its start failed before it was ready */
  THEN_END        /* the run ends */
};

struct mcphost;

/* One configured server in the run.  */
struct mserver
{
  struct mcphost *h;
  const struct mcp_server_config *cfg;
  char identity[MCPSERVERS_NAME_MAX + 8]; /* "mcp:<name>" */
  enum mserver_state state;
  enum mserver_then then;
  struct sandbox_session *session;
  char sandbox_id[SANDBOX_ID_LEN + 1];
  int status_fd, in_fd, out_fd, err_fd;
  struct mcpclient *client;
  struct mask *mask;
  struct buf err_line; /* masked stderr not yet ended by a newline */
  size_t err_bytes;    /* stderr read this start */
  char **secrets;      /* its credentials' values, for the hide hook */
  size_t *secret_len;
  size_t n_secrets;
  bool exited, scope_done, discard, publishing;
  int wait_status;
  uint64_t timer;         /* the exit, cleanup or publication bound */
  uint64_t publish_until; /* when the wait for the lock gives up */
  struct pubjob *job;
  unsigned restarts;
  bool listed;        /* the first listing of the run is recorded */
  bool peer_recorded; /* this start's broken connection is in the journal */
  bool allow_private; /* its policy's domains may resolve to private hosts */
  char **initial;     /* what mcp__<server> allows (see record_initial) */
  size_t n_initial;
  char *pub_failure; /* why its writes could not be published, or NULL */
  char *blocked_why; /* why its cleanup is unconfirmed, or NULL */
  char *start_why;   /* why this start failed before it was ready, or NULL */
  /* A policy with domains (sandbox.network.domains): the names, its
   * client of the host's proxy (its own credential, for this start) and
   * the net channel watched for its connections (-1 when not).  */
  char **domains;
  size_t n_domains;
  struct proxy_client *proxy_client;
  int net_fd;
  uint64_t refusal_facts;
  uint64_t client_gen; /* one more with each client: whose questions */
};

/* A server's question waiting for the person: answered only while the
 * client that asked it is the server's (client_gen), since a client
 * frees its questions with itself.  */
struct mcphost_elicitation
{
  struct mcphost_elicitation *next;
  struct mserver *s;
  uint64_t gen;
  struct mcpclient_elicitation *e;
};

/* A call in flight, so that a server lost under it answers it.  */
struct mcphost_call
{
  struct mcphost *h;
  struct mcphost_call *next;
  struct mserver *s;
  struct mcpclient_call *call;
  mcpclient_done_fn done;
  void *data;
};

struct mcphost
{
  struct mcphost_config cfg;
  struct mserver *servers;
  size_t n_servers;
  struct mcphost_tool *tools;
  size_t n_tools;
  struct mcphost_call *calls;
  char *run_id;
  bool run_on, ending, settled_told, ended_told, blocked;
  struct cr_error *prepare_err; /* why the run's preparation stopped */
  struct cr_error *end_err;     /* the first disposal failure */
  struct cr_error *audit_err;   /* the first fact the journal refused */
  bool audit_told;
  uint64_t tell_timer;
  bool no_elicit; /* mcphost_offer_elicitation (h, false) */
  struct mcphost_elicitation *questions;
};

static void mserver_start (struct mserver *s);
static void mserver_settle (struct mserver *s, enum mserver_then then,
                            bool stop);
static void mcphost_check (struct mcphost *h);

/* --- facts ------------------------------------------------------------- */

/* Remember why s's start failed, the first reason only (what follows,
 * its exit after a broken handshake, is its consequence).  */
static void __attribute__ ((format (printf, 2, 3)))
mserver_start_failed (struct mserver *s, const char *fmt, ...)
{
  va_list ap;
  if (s->start_why != NULL)
    return;
  va_start (ap, fmt);
  if (vasprintf (&s->start_why, fmt, ap) < 0)
    s->start_why = NULL;
  va_end (ap);
}

/* Record a fact about s: its sandbox ID and identity first, the run's ID
 * last.  A fact the journal refuses ends the run (audit_err), once what
 * else failed has been reported.  */
static void
mserver_fact (struct mserver *s, enum journal_fact fact,
              const struct journal_field *fields, size_t n)
{
  struct mcphost *h = s->h;
  struct journal_field all[JOURNAL_MAX_FIELDS];
  struct cr_error *err = NULL;
  size_t k = 0;

  if (h->cfg.journal == NULL)
    return;
  if (s->sandbox_id[0] != '\0')
    all[k++] = (struct journal_field) JOURNAL_STR ("sandbox", s->sandbox_id);
  all[k++] = (struct journal_field) JOURNAL_STR ("identity", s->identity);
  for (size_t i = 0; i < n && k < JOURNAL_MAX_FIELDS - 1; i++)
    all[k++] = fields[i];
  if (h->run_id != NULL)
    all[k++] = (struct journal_field) JOURNAL_STR ("run", h->run_id);
  if (journal_fact (h->cfg.journal, fact, 0, NULL, all, k, &err) < 0)
    {
      if (h->audit_err == NULL)
        {
          h->audit_err = err;
          err = NULL;
          if (h->audit_err == NULL)
            cr_error_set (&h->audit_err, 0, "the journal refused a fact");
          cr_error_prefix (&h->audit_err,
                           "recording the lifecycle of MCP server `%s`",
                           s->cfg->name);
        }
      mcphost_check (h);
    }
  cr_error_free (err);
}

/* Record a fact with one string field.  */
static void
mserver_fact1 (struct mserver *s, enum journal_fact fact, const char *name,
               const char *value)
{
  struct journal_field f[] = { JOURNAL_STR (name, value) };
  mserver_fact (s, fact, f, 1);
}

/* Tell the listener something about a server.  */
static void __attribute__ ((format (printf, 2, 3)))
mcphost_notice (struct mcphost *h, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  if (h->cfg.listener.notice == NULL)
    return;
  va_start (ap, fmt);
  int n = vasprintf (&msg, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  h->cfg.listener.notice (h->cfg.listener.data, msg);
  free (msg);
}

/* --- the tools offered ------------------------------------------------- */

/* Free the list of tools offered.  */
static void
mcphost_tools_clear (struct mcphost *h)
{
  for (size_t i = 0; i < h->n_tools; i++)
    free ((char *) h->tools[i].qualified);
  free (h->tools);
  h->tools = NULL;
  h->n_tools = 0;
}

/* Whether name was in s's first listing of the run.  */
static bool
mserver_initial (const struct mserver *s, const char *name)
{
  for (size_t i = 0; i < s->n_initial; i++)
    if (strcmp (s->initial[i], name) == 0)
      return true;
  return false;
}

/* Rebuild the list from every ready server's listing.  */
static void
mcphost_tools_build (struct mcphost *h)
{
  mcphost_tools_clear (h);
  for (size_t i = 0; i < h->n_servers; i++)
    {
      struct mserver *s = &h->servers[i];
      size_t n = 0;
      if (s->state != MS_READY)
        continue;
      const struct mcpclient_tool *t = mcpclient_tools (s->client, &n);
      h->tools = xrealloc (h->tools, (h->n_tools + n) * sizeof *h->tools);
      for (size_t j = 0; j < n; j++)
        h->tools[h->n_tools++] = (struct mcphost_tool){
          .qualified = mcpservers_qualified (s->cfg->name, t[j].name),
          .server = s->cfg->name,
          .tool = &t[j],
          .initial = mserver_initial (s, t[j].name),
        };
    }
}

/* The tools changed: rebuilt, and the listener told.  */
static void
mcphost_tools_changed (struct mcphost *h, struct mserver *s)
{
  mcphost_tools_build (h);
  if (h->cfg.listener.tools_changed != NULL)
    h->cfg.listener.tools_changed (h->cfg.listener.data, s->cfg->name);
}

/* Whether the home configuration allows s's tools by the rule mcp__<server>
 * (permissions.allow, or workspaces.<this workspace>.allow).  A project
 * file cannot allow, so no other rule grants anything.  */
static bool
mserver_has_server_rule (const struct mserver *s, const char *rule)
{
  const struct config *c = s->h->cfg.config;
  if (c->home_file == NULL)
    return false;
  for (size_t i = 0; i < c->allow.count; i++)
    if (strcmp (c->allow.items[i], rule) == 0)
      return true;
  for (size_t i = 0; i < c->workspace_allow.count; i++)
    if (strcmp (c->workspace_allow.items[i], rule) == 0)
      return true;
  return false;
}

/* The tool names of a listing (n of them), NULL-terminated.  */
static char **
mserver_listing_names (const struct mcpclient_tool *t, size_t n)
{
  char **names = xcalloc (n + 1, sizeof *names);
  for (size_t i = 0; i < n; i++)
    names[i] = xstrdup (t[i].name);
  return names;
}

/* Take the tools the rule mcp__<server> covers from its record in this
 * user's state directory, recording this listing (t, n) when there is
 * none yet: the tools the server had when crucible first saw the rule,
 * across runs.  A record that cannot be read or written covers nothing,
 * with a warning naming it; never every tool.  */
static void
mserver_grant_load (struct mserver *s, const char *rule,
                    const struct mcpclient_tool *t, size_t n)
{
  const char *name = s->cfg->name;
  char key[SHA256_HEX_LEN + 1];
  struct cr_error *err = NULL;
  uid_t uid = getuid ();
  gid_t gid = getgid ();

  statedir_grant_key (s->h->cfg.config->home_file, name, rule, key);
  int got = statedir_grant_recall (STATEDIR_PARENT, uid, gid, key, name, rule,
                                   &s->initial, &s->n_initial, &err);
  if (got == 0)
    {
      char **names = mserver_listing_names (t, n);
      int rc = statedir_grant_remember (STATEDIR_PARENT, uid, gid, key, name,
                                        rule, names, n, &err);
      if (rc == 0)
        {
          s->initial = names;
          s->n_initial = n;
          return;
        }
      for (size_t i = 0; i < n; i++)
        free (names[i]);
      free (names);
      if (rc < 0)
        {
          cleanup_free char *path
              = statedir_grant_path (STATEDIR_PARENT, uid, key);
          mcphost_notice (s->h,
                          "MCP server `%s`: the record of the tools your "
                          "allow rule %s covers, %s, could not be written "
                          "(%s); every tool of the server is asked about",
                          name, rule, path, err->msg);
          cr_error_free (err);
          return;
        }
      /* Another crucible recorded it first: its record holds.  */
      got = statedir_grant_recall (STATEDIR_PARENT, uid, gid, key, name, rule,
                                   &s->initial, &s->n_initial, &err);
    }
  if (got < 0)
    {
      cleanup_free char *path = statedir_grant_path (STATEDIR_PARENT, uid, key);
      mcphost_notice (s->h,
                      "MCP server `%s`: the record of the tools your allow "
                      "rule %s covers, %s, cannot be used (%s); every tool of "
                      "the server is asked about until it is removed",
                      name, rule, path, err != NULL ? err->msg : "");
      cr_error_free (err);
    }
}

/* Remember, at the first listing of the run, the tools an mcp__<server>
 * rule allows: those of its record when the home configuration has the
 * rule, or else this listing (which no rule grants by; it tells a tool
 * added later apart for the question).  */
static void
mserver_record_initial (struct mserver *s)
{
  size_t n = 0;
  const struct mcpclient_tool *t = mcpclient_tools (s->client, &n);
  if (s->listed)
    return;
  s->listed = true;
  cleanup_free char *rule = xasprintf (RULES_TOOL_PREFIX "%s", s->cfg->name);
  if (mserver_has_server_rule (s, rule))
    {
      mserver_grant_load (s, rule, t, n);
      return;
    }
  s->initial = mserver_listing_names (t, n);
  s->n_initial = n;
}

/* --- calls ------------------------------------------------------------- */

/* Take a call off the host's list and free it.  */
static void
mcphost_call_free (struct mcphost_call *c)
{
  struct mcphost_call **p = &c->h->calls;
  while (*p != NULL && *p != c)
    p = &(*p)->next;
  if (*p == c)
    *p = c->next;
  free (c);
}

static void mserver_fact_peer (struct mserver *s);

/* The client answered a call: handed on, then forgotten.  A call failed
 * because the connection broke (the client fails its calls before it
 * says so) has that end recorded first, so that the journal holds it
 * before the result it causes.  */
static void
mcphost_call_done (void *data, const struct mcpclient_result *r)
{
  struct mcphost_call *c = data;
  if (r->error != NULL && c->s->client != NULL
      && !mcpclient_ready (c->s->client))
    mserver_fact_peer (c->s);
  mcpclient_done_fn done = c->done;
  void *done_data = c->data;
  mcphost_call_free (c);
  done (done_data, r);
}

/* Answer every call in flight to s with err: its server is gone.  */
static void
mserver_fail_calls (struct mserver *s, const struct cr_error *err)
{
  struct mcphost_call **p = &s->h->calls;
  while (*p != NULL)
    {
      struct mcphost_call *c = *p;
      if (c->s != s)
        {
          p = &c->next;
          continue;
        }
      *p = c->next;
      struct mcpclient_result r = { .error = err };
      c->done (c->data, &r);
      free (c);
    }
}

struct mcphost_call *
mcphost_call (struct mcphost *h, const char *qualified, const char *arguments,
              uint64_t timeout_ms, mcpclient_done_fn done, void *data,
              struct cr_error **err)
{
  const struct mcphost_tool *t = mcphost_find (h, qualified);
  if (t == NULL)
    {
      cr_error_set (err, 0, "no MCP server offers the tool `%s` now",
                    qualified);
      return NULL;
    }
  struct mserver *s = NULL;
  for (size_t i = 0; i < h->n_servers && s == NULL; i++)
    if (strcmp (h->servers[i].cfg->name, t->server) == 0)
      s = &h->servers[i];
  if (s == NULL || s->client == NULL)
    {
      cr_error_set (err, 0, "no MCP server offers the tool `%s` now",
                    qualified);
      return NULL;
    }
  struct mcphost_call *c = xcalloc (1, sizeof *c);
  *c = (struct mcphost_call){ .h = h, .s = s, .done = done, .data = data };
  c->call = mcpclient_call (s->client, t->tool->name, arguments, timeout_ms,
                            mcphost_call_done, c, err);
  if (c->call == NULL)
    {
      free (c);
      return NULL;
    }
  c->next = h->calls;
  h->calls = c;
  return c;
}

void
mcphost_cancel (struct mcphost *h, struct mcphost_call *c)
{
  if (c->s->client != NULL)
    mcpclient_cancel (c->s->client, c->call, "the call was cancelled");
  mcphost_call_free (c);
}

/* --- credentials and stderr -------------------------------------------- */

/* Hide every value of s's credentials in a decoded string, one '*' a
 * byte (the client's hide hook).  */
static void
mserver_hide (void *data, char *str, size_t len)
{
  struct mserver *s = data;
  for (size_t i = 0; i < s->n_secrets; i++)
    {
      size_t n = s->secret_len[i];
      char *q = str;
      while (n > 0 && (size_t) (q - str) < len
             && (q = memmem (q, len - (size_t) (q - str), s->secrets[i], n))
                    != NULL)
        {
          memset (q, '*', n);
          q += n;
        }
    }
}

/* Forget s's credential values, wiped.  */
static void
mserver_secrets_clear (struct mserver *s)
{
  for (size_t i = 0; i < s->n_secrets; i++)
    {
      explicit_bzero (s->secrets[i], s->secret_len[i]);
      free (s->secrets[i]);
    }
  free (s->secrets);
  free (s->secret_len);
  s->secrets = NULL;
  s->secret_len = NULL;
  s->n_secrets = 0;
  mask_free (s->mask);
  s->mask = NULL;
}

/* Whether the server's entry names the credential called name.  */
static bool
mserver_gets_credential (const struct mserver *s, const char *name)
{
  for (size_t i = 0; i < s->cfg->credentials.count; i++)
    if (strcmp (s->cfg->credentials.items[i], name) == 0)
      return true;
  return false;
}

/* Hand every complete line of masked stderr to the listener; at the end
 * of the stream (last) what is left too.  */
static void
mserver_err_lines (struct mserver *s, bool last)
{
  struct mcphost *h = s->h;
  size_t from = 0;
  for (size_t i = 0; i < s->err_line.len; i++)
    if (s->err_line.data[i] == '\n')
      {
        if (h->cfg.listener.stderr_line != NULL)
          h->cfg.listener.stderr_line (h->cfg.listener.data, s->cfg->name,
                                       s->err_line.data + from, i - from);
        from = i + 1;
      }
  if (last && from < s->err_line.len && h->cfg.listener.stderr_line != NULL)
    {
      h->cfg.listener.stderr_line (h->cfg.listener.data, s->cfg->name,
                                   s->err_line.data + from,
                                   s->err_line.len - from);
      from = s->err_line.len;
    }
  /* An empty line buffer has no data yet (NULL), which memmove may not
   * be given even for no bytes.  */
  if (from > 0)
    memmove (s->err_line.data, s->err_line.data + from, s->err_line.len - from);
  s->err_line.len -= from;
}

/* Stop reading s's stderr: what the masker holds is released as '*'.  */
static void
mserver_err_close (struct mserver *s)
{
  if (s->err_fd < 0)
    return;
  loop_remove_fd (s->h->cfg.loop, s->err_fd);
  close (s->err_fd);
  s->err_fd = -1;
  if (s->mask != NULL)
    mask_flush (s->mask, &s->err_line);
  mserver_err_lines (s, true);
}

/* s's stderr is readable: masked with its credentials, bounded.  */
static void
mserver_on_stderr (struct loop *loop, int fd, short revents, void *data)
{
  struct mserver *s = data;
  char chunk[4096];
  (void) loop;
  (void) revents;
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      mserver_err_close (s);
      return;
    }
  size_t room = s->err_bytes < MCPHOST_STDERR_MAX
                    ? MCPHOST_STDERR_MAX - s->err_bytes
                    : 0;
  size_t take = (size_t) n < room ? (size_t) n : room;
  bool crossed = take < (size_t) n && room > 0;
  s->err_bytes += (size_t) n;
  if (take > 0)
    mask_feed (s->mask, chunk, take, &s->err_line);
  if (crossed)
    {
      /* The bound is a cut: what the masker holds is released as '*'.  */
      mask_flush (s->mask, &s->err_line);
      buf_printf (&s->err_line, "\n[stderr past %zu bytes is not kept]\n",
                  (size_t) MCPHOST_STDERR_MAX);
    }
  mserver_err_lines (s, false);
}

/* --- the network -------------------------------------------------------- */

/* Refusal facts one start of a server writes; past them its refusals are
 * counted in its ended fact only (as a command's: a server looping on a
 * refused request would otherwise write the journal without end).  */
#define MCPHOST_MAX_REFUSAL_FACTS 64

/* Forget the names s's policy allows.  */
static void
mserver_net_domains_clear (struct mserver *s)
{
  for (size_t i = 0; i < s->n_domains; i++)
    free (s->domains[i]);
  free (s->domains);
  s->domains = NULL;
  s->n_domains = 0;
}

/* Keep the names the policy s is prepared with allows, for its client of
 * the proxy at its launch (the policy is gone by then).  */
static void
mserver_net_keep (struct mserver *s, const struct sandbox_policy *policy)
{
  mserver_net_domains_clear (s);
  s->allow_private = policy->allow_private_addresses;
  if (policy->n_domains == 0 || s->h->cfg.supervisor == NULL)
    return;
  s->domains = xcalloc (policy->n_domains + 1, sizeof *s->domains);
  for (size_t i = 0; i < policy->n_domains; i++)
    s->domains[s->n_domains++] = xstrdup (policy->domains[i]);
}

/* The proxy refused one of s's connections: a fact with the reason's
 * class only, never the name asked for; past the cap, one saying so.  */
static void
mserver_on_refusal (void *data, const char *reason_class)
{
  struct mserver *s = data;
  if (s->refusal_facts > MCPHOST_MAX_REFUSAL_FACTS)
    return;
  if (s->refusal_facts++ == MCPHOST_MAX_REFUSAL_FACTS)
    {
      struct journal_field f[]
          = { JOURNAL_STR ("event", "refusals_capped"),
              JOURNAL_INT64 ("after", MCPHOST_MAX_REFUSAL_FACTS) };
      mserver_fact (s, JOURNAL_NETWORK, f, 2);
      return;
    }
  struct journal_field f[] = { JOURNAL_STR ("event", "refused"),
                               JOURNAL_STR ("class", reason_class) };
  mserver_fact (s, JOURNAL_NETWORK, f, 2);
}

/* For a server whose policy names domains: its client of the host's
 * proxy (the supervisor's, which its commands share), with its own
 * credential and its sandbox ID, and the proxy URL its environment gets
 * (*url NULL when it has no domains).  */
static int
mserver_net_begin (struct mserver *s, char **url, struct cr_error **err)
{
  *url = NULL;
  if (s->n_domains == 0)
    return 0;
  struct proxy *p = supervisor_proxy (s->h->cfg.supervisor, err);
  if (p == NULL)
    return -1;
  struct proxy_grant g = { .sandbox_id = s->sandbox_id,
                           .domains = s->domains,
                           .n_domains = s->n_domains,
                           .allow_private = s->allow_private };
  s->proxy_client = proxy_client_new (p, &g, err);
  if (s->proxy_client == NULL)
    return -1;
  s->refusal_facts = 0;
  proxy_client_on_refusal (s->proxy_client, mserver_on_refusal, s);
  /* Its own credential in the URL, never in argv; env_build_with sets
   * the proxy variables over any its env names.  */
  *url = xasprintf ("http://%s:%s@127.0.0.1:%d",
                    proxy_client_user (s->proxy_client),
                    proxy_client_password (s->proxy_client), BROKER_NET_PORT);
  return 0;
}

/* Records from s's net channel: a connection to the proxy's inside port
 * goes to its client, which alone checks its credential; anything else
 * (a listed port: servers are not reached through sandbox.network.ports)
 * is closed.  The channel's end means nothing more comes.  */
static void
mserver_on_net (struct loop *loop, int fd, short revents, void *data)
{
  struct mserver *s = data;
  struct cr_error *err = NULL;
  struct netchan_record rec;
  int r;

  (void) fd;
  (void) revents;
  while ((r = netchan_read (s->net_fd, &rec, &err)) != NETCHAN_NONE)
    {
      if (r < 0)
        {
          cr_error_clear (&err);
          continue;
        }
      if (r == NETCHAN_ENDED)
        {
          loop_remove_fd (loop, s->net_fd);
          s->net_fd = -1;
          return;
        }
      if (rec.kind == NETCHAN_CONNECTION && s->proxy_client != NULL)
        {
          /* From here the connection is the proxy's, refused or not.  */
          if (proxy_client_take (s->proxy_client, rec.fd, &err) < 0)
            cr_error_clear (&err);
        }
      else if (rec.fd >= 0)
        close (rec.fd);
    }
}

/* Watch s's net channel once it runs, when it has a client.  */
static int
mserver_net_watch (struct mserver *s, struct cr_error **err)
{
  int net = s->proxy_client != NULL ? sandbox_network_fd (s->session) : -1;
  if (net < 0)
    return 0;
  if (loop_add_fd (s->h->cfg.loop, net, POLLIN, mserver_on_net, s, err) < 0)
    return -1;
  s->net_fd = net;
  return 0;
}

/* s's network ends with its start: the channel unwatched (it goes with
 * the session), every proxy connection closed, its counts recorded, its
 * credential forgotten.  */
static void
mserver_net_close (struct mserver *s)
{
  struct proxy_counts c;

  if (s->net_fd >= 0)
    loop_remove_fd (s->h->cfg.loop, s->net_fd);
  s->net_fd = -1;
  mserver_net_domains_clear (s);
  if (s->proxy_client == NULL)
    return;
  proxy_client_close (s->proxy_client);
  proxy_client_counts (s->proxy_client, &c);
  struct journal_field f[] = {
    JOURNAL_STR ("event", "ended"),
    JOURNAL_INT64 ("allowed", (int64_t) c.allowed),
    JOURNAL_INT64 ("refused", (int64_t) c.refused),
    JOURNAL_INT64 ("bytes_out", (int64_t) c.bytes_out),
    JOURNAL_INT64 ("bytes_in", (int64_t) c.bytes_in),
  };
  mserver_fact (s, JOURNAL_NETWORK, f, sizeof f / sizeof *f);
  proxy_client_free (s->proxy_client);
  s->proxy_client = NULL;
}

/* --- settling: scope, writes, session ---------------------------------- */

/* Close what crucible holds of s's streams and its client.  */
static void
mserver_close_streams (struct mserver *s)
{
  mcpclient_free (s->client);
  s->client = NULL;
  if (s->in_fd >= 0)
    close (s->in_fd);
  if (s->out_fd >= 0)
    {
      loop_remove_fd (s->h->cfg.loop, s->out_fd);
      close (s->out_fd);
    }
  s->in_fd = s->out_fd = -1;
}

/* What a server that is exiting still writes on its standard output is
 * read and dropped, so that it ends as it would (not on EPIPE).  */
static void
mserver_on_drain (struct loop *loop, int fd, short revents, void *data)
{
  struct mserver *s = data;
  char chunk[4096];
  (void) revents;
  ssize_t n = read (fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      loop_remove_fd (loop, fd);
      close (fd);
      s->out_fd = -1;
    }
}

/* Close the client and the server's input; its output is drained until
 * it closes (or the session is disposed of).  */
static void
mserver_close_input (struct mserver *s)
{
  struct cr_error *err = NULL;
  mcpclient_free (s->client);
  s->client = NULL;
  if (s->in_fd >= 0)
    close (s->in_fd);
  s->in_fd = -1;
  if (s->out_fd >= 0
      && loop_add_fd (s->h->cfg.loop, s->out_fd, POLLIN, mserver_on_drain, s,
                      &err)
             < 0)
    {
      cr_error_free (err);
      close (s->out_fd);
      s->out_fd = -1;
    }
}

/* Cancel s's timer.  */
static void
mserver_timer_cancel (struct mserver *s)
{
  if (s->timer != 0)
    loop_cancel_timer (s->h->cfg.loop, s->timer);
  s->timer = 0;
}

/* The scope did not confirm it is empty within the bound: the session is
 * kept (abandoned when crucible leaves), and no later preparation runs.  */
static void
mserver_block (struct mserver *s, const char *why)
{
  struct mcphost *h = s->h;
  mserver_timer_cancel (s);
  if (s->status_fd >= 0)
    loop_remove_fd (h->cfg.loop, s->status_fd);
  s->status_fd = -1;
  mserver_err_close (s);
  mserver_net_close (s);
  mserver_fact1 (s, JOURNAL_CLEANUP_FAILED, "reason", why);
  s->state = MS_BLOCKED;
  free (s->blocked_why);
  s->blocked_why = xstrdup (why);
  h->blocked = true;
  struct cr_error *e = NULL;
  cr_error_set (&e, 0,
                "MCP server `%s`: its process scope has not been confirmed "
                "empty (%s); no MCP server is prepared again until crucible "
                "restarts",
                s->cfg->name, why);
  if (s->then == THEN_END && h->end_err == NULL)
    h->end_err = e;
  else if (s->then == THEN_HANDSHAKE && h->prepare_err == NULL)
    h->prepare_err = e;
  else
    {
      mcphost_notice (h, "%s", e->msg);
      cr_error_free (e);
    }
  mcphost_check (h);
}

/* The cleanup bound passed after a stop.  */
static void
mserver_on_cleanup_over (struct loop *loop, void *data)
{
  struct mserver *s = data;
  (void) loop;
  s->timer = 0;
  mserver_block (s, "no confirmation within 5 s of the stop");
}

/* Stop s's scope: whatever it wrote is discarded.  */
static void
mserver_stop_scope (struct mserver *s, const char *reason)
{
  struct cr_error *err = NULL;
  mserver_timer_cancel (s);
  s->discard = true;
  mserver_fact1 (s, JOURNAL_STOP, "reason", reason);
  if (sandbox_stop (s->session, SIGKILL, &err) < 0)
    {
      cleanup_free char *why = xstrdup (err->msg);
      cr_error_free (err);
      mserver_block (s, why);
      return;
    }
  s->timer = loop_add_timer (s->h->cfg.loop, MCPHOST_WAIT_MS,
                             mserver_on_cleanup_over, s);
}

/* s did not exit within the bound once its input closed: stopped.  */
static void
mserver_on_exit_over (struct loop *loop, void *data)
{
  struct mserver *s = data;
  (void) loop;
  s->timer = 0;
  mserver_stop_scope (s, "no_exit");
}

/* s's main process exited but what it left running did not end within
 * the bound: stopped like a server that does not exit, its writes
 * discarded.  Waiting on for a confirmation that nothing asked for would
 * let a server hold the scope (and block every later preparation) by
 * leaving a process behind.  */
static void
mserver_on_scope_over (struct loop *loop, void *data)
{
  struct mserver *s = data;
  (void) loop;
  s->timer = 0;
  mserver_stop_scope (s, "left_running");
}

/* The pause before a restart is over.  */
static void
mserver_on_restart (struct loop *loop, void *data)
{
  struct mserver *s = data;
  (void) loop;
  s->timer = 0;
  if (s->h->ending)
    {
      s->state = MS_IDLE;
      mcphost_check (s->h);
      return;
    }
  mserver_start (s);
  mcphost_check (s->h);
}

/* A required server's first start of the run failed (why): the run's
 * preparation stops with that reason.  */
static void
mserver_required_failed (struct mserver *s, const char *why)
{
  struct mcphost *h = s->h;
  if (s->restarts > 0 || h->prepare_err != NULL)
    return;
  cr_error_set (&h->prepare_err, 0,
                "MCP server `%s` did not start (%s); it is not optional, so "
                "the run stops",
                s->cfg->name, why);
}

/* What follows a settled server, by why it settled.  */
static void
mserver_after (struct mserver *s)
{
  struct mcphost *h = s->h;
  char *pub_failure = s->pub_failure;
  cleanup_free char *start_why = s->start_why;
  s->pub_failure = NULL;
  s->start_why = NULL;
  s->state = MS_IDLE;
  s->sandbox_id[0] = '\0';
  if (s->then == THEN_END)
    {
      /* A required server whose start failed as the run ended (its end
       * forced by an audit failure, say) still says why.  */
      if (start_why != NULL && !s->cfg->optional && !h->settled_told)
        mserver_required_failed (s, start_why);
      if (pub_failure != NULL && h->end_err == NULL)
        cr_error_set (&h->end_err, 0,
                      "MCP server `%s`: disposing of it failed: %s",
                      s->cfg->name, pub_failure);
    }
  else if (s->then == THEN_HANDSHAKE)
    {
      if (s->cfg->optional)
        {
          s->state = MS_SKIPPED;
          mcphost_notice (h,
                          "MCP server `%s` is skipped: its start failed "
                          "(it is optional)",
                          s->cfg->name);
        }
      else
        {
          s->state = MS_FAILED;
          /* A required server that did not start stops the run's
           * preparation, with its reason, once its cleanup is confirmed
           * (here, after its disposal).  */
          mserver_required_failed (
              s, start_why != NULL ? start_why : "its handshake failed");
        }
    }
  else if (pub_failure != NULL)
    {
      s->state = MS_FAILED;
      mcphost_notice (h,
                      "MCP server `%s`: restarting it failed: %s; the next "
                      "run starts it as usual",
                      s->cfg->name, pub_failure);
    }
  else if (h->blocked)
    s->state = MS_FAILED;
  else if (s->restarts >= MCPHOST_RESTARTS_MAX)
    {
      s->state = MS_FAILED;
      mcphost_notice (h,
                      "MCP server `%s` ended again and is not restarted "
                      "before the next run",
                      s->cfg->name);
    }
  else
    {
      s->restarts++;
      mcphost_notice (h, "MCP server `%s` ended and is restarted",
                      s->cfg->name);
      /* From the loop, never inside the callback that settled it.  */
      s->state = MS_SETTLING;
      s->timer = loop_add_timer (h->cfg.loop, MCPHOST_RESTART_MS,
                                 mserver_on_restart, s);
    }
  free (pub_failure);
  mcphost_check (h);
}

/* Dispose of s's session once its writes are settled.  */
static void
mserver_dispose (struct mserver *s)
{
  struct sandbox_usage usage = { 0 };
  struct cr_error *err = NULL;

  mserver_timer_cancel (s);
  if (s->status_fd >= 0)
    loop_remove_fd (s->h->cfg.loop, s->status_fd);
  s->status_fd = -1;
  mserver_err_close (s);
  mserver_close_streams (s);
  mserver_net_close (s);
  if (sandbox_dispose (s->session, &usage, &err) < 0)
    {
      cleanup_free char *why = xstrdup (err->msg);
      cr_error_free (err);
      mserver_block (s, why);
      return;
    }
  s->session = NULL;
  mserver_fact (s, JOURNAL_CLEANUP, NULL, 0);
  if (usage.known)
    {
      struct journal_field u[] = {
        JOURNAL_INT64 ("cpu_user_ms", usage.cpu_user_ms),
        JOURNAL_INT64 ("cpu_system_ms", usage.cpu_system_ms),
        JOURNAL_INT64 ("max_rss_kib", usage.max_rss_kib),
        JOURNAL_INT64 ("bytes", (int64_t) s->err_bytes),
        JOURNAL_INT64 ("lines", 0),
      };
      mserver_fact (s, JOURNAL_USAGE, u, sizeof u / sizeof *u);
    }
  mserver_secrets_clear (s);
  buf_free (&s->err_line);
  s->err_line = (struct buf) BUF_INIT;
  mserver_after (s);
}

/* Record what became of s's writes.  */
static void
mserver_fact_publication (struct mserver *s, const char *outcome,
                          uint64_t paths, uint64_t bytes)
{
  struct journal_field f[] = {
    JOURNAL_STR ("outcome", outcome),
    JOURNAL_INT64 ("paths", (int64_t) paths),
    JOURNAL_INT64 ("bytes", (int64_t) bytes),
  };
  mserver_fact (s, JOURNAL_PUBLICATION, f, sizeof f / sizeof *f);
}

static void mserver_publish (struct mserver *s);

/* Ask for the publication lock again.  */
static void
mserver_on_publish_retry (struct loop *loop, void *data)
{
  struct mserver *s = data;
  (void) loop;
  s->timer = 0;
  mserver_publish (s);
}

/* The publication answered: settled, or asked again while another holds
 * the lock, within the bound.  */
static void
mserver_on_published (void *data)
{
  struct mserver *s = data;
  struct sandbox_publication pub;
  struct cr_error *err = NULL;
  struct pubjob *job = s->job;

  s->job = NULL;
  if (pubjob_finish (job, &pub, &err) < 0)
    {
      s->pub_failure
          = xasprintf ("its writes could not be published (%s)", err->msg);
      cr_error_free (err);
      mserver_fact_publication (s, "failed", 0, 0);
      mserver_dispose (s);
      return;
    }
  if (pub.busy && clock_now_ms () < s->publish_until)
    {
      sandbox_publication_clear (&pub);
      s->timer = loop_add_timer (s->h->cfg.loop, MCPHOST_PUBLISH_RETRY_MS,
                                 mserver_on_publish_retry, s);
      return;
    }
  if (pub.busy)
    {
      s->pub_failure = xstrdup ("its writes were not published: the "
                                "publication lock did not come free within "
                                "5 s");
      mserver_fact_publication (s, "wait_over", 0, 0);
    }
  else
    {
      if (pub.published_nothing)
        s->pub_failure = pub.note != NULL
                             ? xstrdup (pub.note)
                             : xstrdup ("its writes were not published");
      mserver_fact_publication (s, pub.outcome, pub.paths, pub.bytes);
    }
  sandbox_publication_clear (&pub);
  mserver_dispose (s);
}

/* Publish what s wrote (it exited on its own, its scope is empty).  */
static void
mserver_publish (struct mserver *s)
{
  struct cr_error *err = NULL;
  if (pubjob_start (s->h->cfg.loop, s->session, s->h->run_id,
                    mserver_on_published, s, &s->job, &err)
      < 0)
    {
      s->pub_failure
          = xasprintf ("its writes could not be published (%s)", err->msg);
      cr_error_free (err);
      mserver_fact_publication (s, "failed", 0, 0);
      mserver_dispose (s);
    }
}

/* The scope is confirmed empty: publish or discard, then dispose.  */
static void
mserver_scope_done (struct mserver *s)
{
  mserver_timer_cancel (s);
  bool ordinary = s->exited && WIFEXITED (s->wait_status) && !s->discard;
  if (!sandbox_keeps_writes (s->session))
    mserver_dispose (s);
  else if (!ordinary)
    {
      mserver_fact_publication (s, "discarded", 0, 0);
      mserver_dispose (s);
    }
  else
    {
      s->publishing = true;
      s->publish_until = clock_now_ms () + MCPHOST_WAIT_MS;
      mserver_publish (s);
    }
}

/* Record how s's workload ended, with what the backend verified of its
 * scope (verified: the EXITED event's "NAME TEXT" lines, a container's
 * hardening read back; NULL when it says nothing), one field a line, as
 * a command's finish fact carries them.  */
static void
mserver_fact_finish (struct mserver *s, const char *verified)
{
  bool sig = WIFSIGNALED (s->wait_status);
  struct journal_field f[6] = {
    JOURNAL_STR ("outcome", sig ? "signaled" : "exited"),
    JOURNAL_INT64 ("status", sig ? WTERMSIG (s->wait_status)
                                 : WEXITSTATUS (s->wait_status)),
  };
  size_t n = 2;
  cleanup_free char *lines = verified != NULL ? xstrdup (verified) : NULL;
  n = journal_fields_from_lines (lines, f, n, sizeof f / sizeof *f);
  mserver_fact (s, JOURNAL_FINISH, f, n);
}

/* The scope's status channel is readable.  */
static void
mserver_on_status (struct loop *loop, int fd, short revents, void *data)
{
  struct mserver *s = data;
  struct sandbox_event ev;
  struct cr_error *err = NULL;
  (void) loop;
  (void) fd;
  (void) revents;
  for (;;)
    {
      if (sandbox_next_event (s->session, &ev, &err) < 0)
        {
          cleanup_free char *why = xstrdup (err->msg);
          cr_error_free (err);
          if (s->state != MS_SETTLING)
            s->then = s->state == MS_STARTING ? THEN_HANDSHAKE : THEN_RESTART;
          mserver_block (s, why);
          return;
        }
      if (ev.kind == SANDBOX_EVENT_NONE)
        return;
      if (ev.kind == SANDBOX_EVENT_EXITED || ev.kind == SANDBOX_EVENT_FAILED)
        {
          s->exited = ev.kind == SANDBOX_EVENT_EXITED;
          s->wait_status = ev.wait_status;
          if (ev.kind == SANDBOX_EVENT_FAILED)
            {
              s->discard = true;
              mserver_fact1 (s, JOURNAL_FINISH, "outcome", "start_failed");
            }
          else
            mserver_fact_finish (s, ev.message);
          if (s->state == MS_STARTING)
            {
              if (ev.kind == SANDBOX_EVENT_FAILED)
                mserver_start_failed (s, "it could not be started");
              else if (WIFSIGNALED (s->wait_status))
                mserver_start_failed (s,
                                      "it was killed by signal %d before "
                                      "its handshake ended",
                                      WTERMSIG (s->wait_status));
              else
                mserver_start_failed (s,
                                      "it exited with status %d before "
                                      "its handshake ended",
                                      WEXITSTATUS (s->wait_status));
              mserver_settle (s, THEN_HANDSHAKE, false);
            }
          else if (s->state == MS_READY)
            mserver_settle (s, THEN_RESTART, false);
        }
      else if (ev.kind == SANDBOX_EVENT_DONE)
        {
          s->scope_done = true;
          if (s->state == MS_SETTLING)
            {
              mserver_scope_done (s);
              return;
            }
          /* Nothing of it is left while crucible still speaks to it:
           * settle it as lost.  */
          mserver_settle (
              s, s->state == MS_STARTING ? THEN_HANDSHAKE : THEN_RESTART,
              false);
          return;
        }
    }
}

/* Settle s: its client and input closed, then (stop) its scope stopped
 * and its writes discarded, or its exit awaited within the bound; the
 * scope's confirmation, publication and disposal follow.  */
static void
mserver_settle (struct mserver *s, enum mserver_then then, bool stop)
{
  struct mcphost *h = s->h;
  bool was_ready = s->state == MS_READY;
  struct cr_error *gone = NULL;

  if (s->state == MS_SETTLING)
    {
      /* Already on its way: only what follows may change (a restart
       * becomes the end), and a stop still stops.  */
      if (then == THEN_END)
        s->then = THEN_END;
      /* One whose scope has ended is not stopped while its writes wait;
       * one whose main process exited but left processes running is
       * (what they write is discarded with the rest).  */
      if (stop && !s->scope_done && !s->discard)
        mserver_stop_scope (s, "stop");
      return;
    }
  s->state = MS_SETTLING;
  s->then = then;
  cr_error_set (&gone, 0, "MCP server `%s` %s", s->cfg->name,
                then == THEN_END ? "was ended with the run"
                                 : "ended while the call ran");
  mserver_fail_calls (s, gone);
  cr_error_free (gone);
  if (stop)
    mserver_close_streams (s);
  else
    mserver_close_input (s);
  if (was_ready)
    mcphost_tools_changed (h, s);
  if (s->scope_done)
    {
      mserver_scope_done (s);
      return;
    }
  if (stop)
    mserver_stop_scope (s, then == THEN_END ? "stop" : "failed");
  else if (s->exited)
    s->timer = loop_add_timer (h->cfg.loop, MCPHOST_WAIT_MS,
                               mserver_on_scope_over, s);
  else
    s->timer = loop_add_timer (h->cfg.loop, MCPHOST_WAIT_MS,
                               mserver_on_exit_over, s);
}

/* --- the client's news ------------------------------------------------- */

/* The handshake and first listing succeeded.  */
static void
mserver_on_ready (void *data, struct mcpclient *c)
{
  struct mserver *s = data;
  (void) c;
  mserver_record_initial (s);
  s->state = MS_READY;
  struct journal_field f[] = { JOURNAL_STR ("event", "ready") };
  mserver_fact (s, JOURNAL_START, f, 1);
  mcphost_tools_changed (s->h, s);
  mcphost_check (s->h);
}

/* A re-listing after list_changed finished.  */
static void
mserver_on_tools_changed (void *data, struct mcpclient *c,
                          const char *const *added, size_t n_added)
{
  struct mserver *s = data;
  (void) c;
  (void) added;
  (void) n_added;
  mcphost_tools_changed (s->h, s);
}

/* Whether the server closed its standard output: what a server that is
 * exiting does, unlike one that broke the protocol while it runs on.  */
static bool
mserver_output_closed (const struct mserver *s)
{
  char byte;
  return s->out_fd >= 0 && read (s->out_fd, &byte, 1) == 0;
}

/* Record that s's connection broke, once a start.  */
static void
mserver_fact_peer (struct mserver *s)
{
  if (s->peer_recorded)
    return;
  s->peer_recorded = true;
  struct journal_field f[] = {
    JOURNAL_STR ("event", s->state == MS_STARTING ? "handshake_failed"
                                                  : "connection_failed"),
  };
  mserver_fact (s, JOURNAL_PEER, f, 1);
}

/* The connection failed: a server that closed its output is awaited (it
 * is exiting, on its own); one that broke the protocol is stopped.  */
static void
mserver_on_failed (void *data, struct mcpclient *c, const struct cr_error *err)
{
  struct mserver *s = data;
  (void) c;
  bool closed = mserver_output_closed (s);
  mserver_fact_peer (s);
  if (s->state == MS_STARTING)
    mserver_start_failed (s, "%s", err->msg);
  if (s->state == MS_STARTING && s->h->cfg.listener.notice != NULL)
    mcphost_notice (s->h, "%s", err->msg);
  mserver_settle (s, s->state == MS_STARTING ? THEN_HANDSHAKE : THEN_RESTART,
                  !closed);
}

/* Whether a call of s is in flight.  */
static bool
mserver_calling (const struct mserver *s)
{
  for (const struct mcphost_call *c = s->h->calls; c != NULL; c = c->next)
    if (c->s == s)
      return true;
  return false;
}

/* The server's own elicitation/create: kept with the client that asked
 * it, and put to the person through the listener.  One asked while no
 * call of the server runs is cancelled unseen: a question nobody's call
 * caused would open a panel out of nowhere, where a key meant for the
 * prompt or for another question answers it.  */
static void
mserver_on_elicit (void *data, struct mcpclient *c,
                   struct mcpclient_elicitation *e, const char *message,
                   const char *schema)
{
  struct mserver *s = data;
  struct mcphost *h = s->h;
  if (!mserver_calling (s))
    {
      mcpclient_elicit_answer (c, e, MCPCLIENT_ELICIT_CANCEL, NULL);
      return;
    }
  struct mcphost_elicitation *q = xcalloc (1, sizeof *q);
  *q = (struct mcphost_elicitation){
    .next = h->questions, .s = s, .gen = s->client_gen, .e = e
  };
  h->questions = q;
  h->cfg.listener.elicit (h->cfg.listener.data, s->cfg->name, q, message,
                          schema);
}

/* --- starting ---------------------------------------------------------- */

/* Append arg to b quoted for sh.  */
static void
mcphost_quote (struct buf *b, const char *arg)
{
  buf_putc (b, '\'');
  for (const char *p = arg; *p != '\0'; p++)
    if (*p == '\'')
      buf_puts (b, "'\\''");
    else
      buf_putc (b, *p);
  buf_putc (b, '\'');
}

/* The line the server runs as: exec COMMAND ARGS..., each quoted.  */
static char *
mserver_line (const struct mserver *s)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "exec ");
  mcphost_quote (&b, s->cfg->command);
  for (size_t i = 0; i < s->cfg->args.count; i++)
    {
      buf_putc (&b, ' ');
      mcphost_quote (&b, s->cfg->args.items[i]);
    }
  return buf_steal (&b, NULL);
}

/* The server's environment: the base variables, its configured env,
 * the credentials its entry names and (proxy_url not NULL) the proxy
 * variables, whose secret values go to its stderr masker and its hide
 * hook first.  */
static int
mserver_env (struct mserver *s, const char *line, const char *proxy_url,
             struct env **env, struct cr_error **err)
{
  const struct config *cfg = s->h->cfg.config;
  struct credentials *creds = NULL;
  struct env_var vars[CONFIG_CREDENTIALS_MAX];
  size_t n_env = s->cfg->env.count, k = 0;
  cleanup_free struct env_var *named = xcalloc (n_env + 1, sizeof *named);
  int rc = 0;

  for (size_t i = 0; i < n_env && rc == 0; i++)
    rc = env_parse_assignment (s->cfg->env.items[i], &named[i], err);
  if (rc < 0)
    goto out;
  s->mask = mask_new ();
  credentials_guard (cfg);
  if (s->cfg->credentials.count > 0)
    {
      rc = credentials_resolve (cfg, s->h->cfg.host_env, line, &creds, err);
      if (rc < 0)
        goto out;
      for (size_t i = 0; i < credentials_count (creds); i++)
        {
          const struct credential *c = credentials_get (creds, i);
          if (!mserver_gets_credential (s, c->name) || c->value_len == 0)
            continue;
          vars[k++] = (struct env_var){ .name = c->name,
                                        .value = c->value,
                                        .value_len = c->value_len };
        }
    }
  /* The proxy credential is crucible's own: hidden in its stderr and in
   * the words of every reply, like the credentials it names.  */
  const char *password = s->proxy_client != NULL
                             ? proxy_client_password (s->proxy_client)
                             : NULL;
  size_t n_secrets = k + (password != NULL);
  s->secrets = xcalloc (n_secrets + 1, sizeof *s->secrets);
  s->secret_len = xcalloc (n_secrets + 1, sizeof *s->secret_len);
  for (size_t i = 0; i < n_secrets && rc == 0; i++)
    {
      const char *v = i < k ? vars[i].value : password;
      size_t len = i < k ? vars[i].value_len : strlen (password);
      s->secrets[i] = xmalloc (len);
      memcpy (s->secrets[i], v, len);
      s->secret_len[i] = len;
      s->n_secrets++;
      rc = mask_add (s->mask, v, len, err);
    }
  if (rc == 0)
    rc = env_build_with (env, s->h->cfg.host_env, named, n_env, vars, k,
                         proxy_url, err);
  explicit_bzero (vars, sizeof vars);
  credentials_free (creds);
out:
  /* env_parse_assignment copied each name.  */
  for (size_t i = 0; i < n_env; i++)
    free ((char *) named[i].name);
  return rc;
}

/* Three pipes: the server's input, output and error; crucible's ends
 * close on exec and are non-blocking where it reads.  fds: in_r, in_w,
 * out_r, out_w, err_r, err_w.  */
static int
mserver_pipes (int fds[6], struct cr_error **err)
{
  for (int i = 0; i < 6; i++)
    fds[i] = -1;
  for (int i = 0; i < 3; i++)
    if (pipe2 (&fds[(size_t) 2 * i], O_CLOEXEC) < 0)
      {
        int saved = errno;
        for (int j = 0; j < 2 * i; j++)
          close (fds[j]);
        return cr_error_set (err, saved, "making the MCP server's pipes");
      }
  (void) fcntl (fds[4], F_SETFL, O_NONBLOCK);
  return 0;
}

/* Close the descriptors of fds that are still open.  */
static void
mserver_pipes_close (int fds[6])
{
  for (int i = 0; i < 6; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* Prepare s's sandbox with the run's policy, recording the policy fact
 * under its new sandbox ID.  */
static int
mserver_prepare (struct mserver *s, struct cr_error **err)
{
  struct mcphost *h = s->h;
  struct policy_input in;
  struct policy *resolved = NULL;
  struct sandbox_policy policy;

  config_policy_input (h->cfg.config, h->cfg.workspace, &in);
  if (policy_resolve (&in, &resolved, err) < 0)
    return -1;
  policy = resolved->sandbox;
  int rc = sandbox_prepare (h->cfg.backend, &policy, &s->session, err);
  if (rc == 0)
    {
      memcpy (s->sandbox_id, s->session->id, sizeof s->sandbox_id);
      mserver_net_keep (s, &policy);
      struct journal_field f[] = {
        JOURNAL_STR ("backend", sandbox_backend_id (h->cfg.backend)),
        JOURNAL_STR ("mode", policy.enabled ? "confined" : "unconfined"),
        JOURNAL_STR ("policy", resolved->effective_digest),
        JOURNAL_BOOLEAN ("degraded", false),
      };
      mserver_fact (s, JOURNAL_POLICY, f, sizeof f / sizeof *f);
    }
  policy_free (resolved);
  return rc;
}

/* Launch s in its prepared session and hand its streams to a client.  */
static int
mserver_launch (struct mserver *s, struct cr_error **err)
{
  struct mcphost *h = s->h;
  const char *shell = supervisor_find_shell ();
  cleanup_free char *line = mserver_line (s);
  cleanup_free char *proxy_url = NULL;
  struct env *env = NULL;
  int fds[6];

  if (shell == NULL)
    return cr_error_set (err, 0,
                         "this machine has no POSIX shell (looked for /bin/sh "
                         "and /usr/bin/sh)");
  if (mserver_net_begin (s, &proxy_url, err) < 0
      || mserver_env (s, line, proxy_url, &env, err) < 0)
    return -1;
  if (env == NULL)
    return cr_error_set (err, 0, "building the MCP server's environment");
  if (mserver_pipes (fds, err) < 0)
    {
      env_free (env);
      return -1;
    }
  struct sandbox_command sc = { .shell = shell,
                                .line = line,
                                .cwd = h->cfg.workspace,
                                .envp = env->vars,
                                .output_fd = fds[3],
                                .stdio = true,
                                .input_fd = fds[0],
                                .error_fd = fds[5] };
  int rc = sandbox_start (s->session, &sc, err);
  env_free (env);
  close (fds[0]);
  close (fds[3]);
  close (fds[5]);
  fds[0] = fds[3] = fds[5] = -1;
  if (rc < 0)
    {
      mserver_pipes_close (fds);
      return -1;
    }
  s->in_fd = fds[1];
  s->out_fd = fds[2];
  s->err_fd = fds[4];
  s->status_fd = sandbox_status_fd (s->session);
  if (loop_add_fd (h->cfg.loop, s->status_fd, POLLIN, mserver_on_status, s, err)
          < 0
      || loop_add_fd (h->cfg.loop, s->err_fd, POLLIN, mserver_on_stderr, s, err)
             < 0
      || mserver_net_watch (s, err) < 0)
    return -1;
  struct journal_field f[] = {
    JOURNAL_STR ("backend", sandbox_backend_id (h->cfg.backend)),
    JOURNAL_INT64 ("restart", s->restarts),
    JOURNAL_STR ("isolation", sandbox_registry_isolation (
                                  sandbox_backend_id (h->cfg.backend))),
  };
  mserver_fact (s, JOURNAL_START, f, sizeof f / sizeof *f);
  struct mcpclient_config cc = {
    .server = s->cfg->name,
    .loop = h->cfg.loop,
    .from_server = s->out_fd,
    .to_server = s->in_fd,
    .root = h->cfg.workspace,
    .handshake_ms = mcphost_handshake_ms (),
    .hide = mserver_hide,
    .hide_data = s,
    .elicit = h->cfg.listener.elicit != NULL && !h->no_elicit
                  ? mserver_on_elicit
                  : NULL,
    .elicit_data = s,
    .listener = { .ready = mserver_on_ready,
                  .tools_changed = mserver_on_tools_changed,
                  .failed = mserver_on_failed,
                  .data = s },
  };
  s->state = MS_STARTING;
  s->client_gen++;
  s->client = mcpclient_new (&cc, err);
  return s->client != NULL ? 0 : -1;
}

/* Prepare and start s; a failure is settled as a failed start (what was
 * made of it cleaned up explicitly).  */
static void
mserver_start (struct mserver *s)
{
  struct mcphost *h = s->h;
  struct cr_error *err = NULL;

  s->exited = s->scope_done = s->discard = s->publishing = false;
  s->err_bytes = 0;
  free (s->start_why);
  s->start_why = NULL;
  s->peer_recorded = false;
  s->sandbox_id[0] = '\0';
  s->then = THEN_HANDSHAKE;
  if (h->blocked)
    {
      s->state = MS_FAILED;
      return;
    }
  if (mserver_prepare (s, &err) < 0)
    {
      mserver_fact1 (s, JOURNAL_REFUSAL, "reason", "prepare");
      mcphost_notice (h, "MCP server `%s`: preparing it failed: %s",
                      s->cfg->name, err->msg);
      if (h->prepare_err == NULL && !s->cfg->optional && s->restarts == 0)
        {
          cr_error_prefix (&err, "MCP server `%s`: preparing it failed",
                           s->cfg->name);
          h->prepare_err = err;
          err = NULL;
        }
      cr_error_free (err);
      s->state = s->cfg->optional && s->restarts == 0 ? MS_SKIPPED : MS_FAILED;
      mserver_secrets_clear (s);
      return;
    }
  if (mserver_launch (s, &err) < 0)
    {
      mserver_fact1 (s, JOURNAL_REFUSAL, "reason", "launch");
      mcphost_notice (h, "MCP server `%s`: starting it failed: %s",
                      s->cfg->name, err->msg);
      mserver_start_failed (s, "starting it failed: %s", err->msg);
      cr_error_free (err);
      s->state = MS_STARTING;
      /* Nothing may be left behind unconfirmed: what started is stopped
       * and its cleanup awaited like any other.  */
      if (s->status_fd < 0)
        {
          s->status_fd = sandbox_status_fd (s->session);
          if (s->status_fd >= 0)
            loop_add_fd (h->cfg.loop, s->status_fd, POLLIN, mserver_on_status,
                         s, NULL);
        }
      if (s->status_fd < 0)
        {
          /* Never started: there is no scope to wait for.  */
          s->state = MS_SETTLING;
          s->scope_done = true;
          s->discard = true;
          mserver_dispose (s);
          return;
        }
      mserver_settle (s, THEN_HANDSHAKE, true);
    }
}

/* --- the run ----------------------------------------------------------- */

/* Whether s is somewhere the run's preparation no longer waits for.  */
static bool
mserver_settled (const struct mserver *s)
{
  return s->state == MS_READY || s->state == MS_SKIPPED || s->state == MS_FAILED
         || s->state == MS_BLOCKED
         || (s->state == MS_SETTLING && s->then == THEN_RESTART)
         || (s->state == MS_IDLE && s->h->ending);
}

/* Whether s is done with the run's end.  */
static bool
mserver_ended (const struct mserver *s)
{
  return s->state != MS_STARTING && s->state != MS_READY
         && s->state != MS_SETTLING;
}

/* A scope left unconfirmed earlier in the run (at a restart, while the
 * run went on) is still a disposal failure at its end: the first is the
 * end's error where nothing else failed.  */
static void
mcphost_retain_blocked (struct mcphost *h)
{
  for (size_t i = 0; i < h->n_servers && h->end_err == NULL; i++)
    {
      struct mserver *s = &h->servers[i];
      if (s->state == MS_BLOCKED && s->blocked_why != NULL)
        cr_error_set (&h->end_err, 0,
                      "MCP server `%s`: disposing of it failed: its process "
                      "scope has not been confirmed empty (%s)",
                      s->cfg->name, s->blocked_why);
    }
}

/* Tell what is due, from the loop: the run settled, its end done, an
 * audit failure.  */
static void
mcphost_on_tell (struct loop *loop, void *data)
{
  struct mcphost *h = data;
  bool all_settled = true, all_ended = true;
  (void) loop;
  h->tell_timer = 0;
  for (size_t i = 0; i < h->n_servers; i++)
    {
      all_settled &= mserver_settled (&h->servers[i]);
      all_ended &= mserver_ended (&h->servers[i]);
    }
  if (h->run_on && !h->settled_told && (all_settled || h->prepare_err))
    {
      h->settled_told = true;
      if (h->cfg.listener.settled != NULL)
        h->cfg.listener.settled (h->cfg.listener.data, h->prepare_err);
    }
  if (h->audit_err != NULL && !h->audit_told)
    {
      h->audit_told = true;
      if (h->cfg.listener.audit_failed != NULL)
        h->cfg.listener.audit_failed (h->cfg.listener.data, h->audit_err);
    }
  if (h->ending && all_ended && !h->ended_told)
    {
      h->ended_told = true;
      mcphost_retain_blocked (h);
      h->run_on = false;
      h->ending = false;
      if (h->cfg.listener.ended != NULL)
        h->cfg.listener.ended (h->cfg.listener.data, h->end_err);
    }
}

/* Look again at the run, from the loop (never inside a callback).  */
static void
mcphost_check (struct mcphost *h)
{
  if (h->tell_timer == 0)
    h->tell_timer = loop_add_timer (h->cfg.loop, 0, mcphost_on_tell, h);
}

bool
mcphost_wanted (const struct config *cfg)
{
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    if (!mcpservers_disabled (cfg, cfg->mcp_servers[i].name))
      return true;
  return false;
}

struct mcphost *
mcphost_new (const struct mcphost_config *cfg)
{
  struct mcphost *h = xcalloc (1, sizeof *h);
  h->cfg = *cfg;
  const struct config *c = cfg->config;
  h->servers = xcalloc (c->n_mcp_servers + 1, sizeof *h->servers);
  for (size_t i = 0; i < c->n_mcp_servers; i++)
    {
      if (mcpservers_disabled (c, c->mcp_servers[i].name))
        continue;
      struct mserver *s = &h->servers[h->n_servers++];
      s->h = h;
      s->cfg = &c->mcp_servers[i];
      snprintf (s->identity, sizeof s->identity, "mcp:%s", s->cfg->name);
      s->status_fd = s->in_fd = s->out_fd = s->err_fd = s->net_fd = -1;
    }
  return h;
}

/* Forget s's first listing.  */
static void
mserver_initial_clear (struct mserver *s)
{
  for (size_t i = 0; i < s->n_initial; i++)
    free (s->initial[i]);
  free (s->initial);
  s->initial = NULL;
  s->n_initial = 0;
  s->listed = false;
}

int
mcphost_begin (struct mcphost *h, const char *run_id, struct cr_error **err)
{
  if (h->run_on)
    return cr_error_set (err, 0, "the MCP servers' run is already on");
  if (h->blocked)
    return cr_error_set (err, 0,
                         "an MCP server's earlier process scope has not been "
                         "confirmed empty, so no MCP server is prepared");
  free (h->run_id);
  h->run_id = run_id != NULL ? xstrdup (run_id) : NULL;
  h->run_on = true;
  h->settled_told = h->ended_told = false;
  cr_error_free (h->prepare_err);
  cr_error_free (h->end_err);
  h->prepare_err = h->end_err = NULL;
  for (size_t i = 0; i < h->n_servers; i++)
    {
      struct mserver *s = &h->servers[i];
      mserver_initial_clear (s);
      s->restarts = 0;
      s->state = MS_IDLE;
    }
  /* One after the other, stopping at the first required server whose
   * preparation failed; those already started settle as usual.  */
  for (size_t i = 0; i < h->n_servers && h->prepare_err == NULL; i++)
    mserver_start (&h->servers[i]);
  mcphost_check (h);
  return 0;
}

bool
mcphost_settled (const struct mcphost *h)
{
  return h->settled_told;
}

const struct mcphost_tool *
mcphost_tools (struct mcphost *h, size_t *n)
{
  *n = h->n_tools;
  return h->tools;
}

void
mcphost_tools_write (struct mcphost *h, struct jsonw *w)
{
  for (size_t i = 0; i < h->n_tools; i++)
    {
      const struct mcphost_tool *t = &h->tools[i];
      jsonw_object_open (w);
      jsonw_key (w, "name");
      jsonw_cstr (w, t->qualified);
      if (t->tool->description != NULL)
        {
          jsonw_key (w, "description");
          jsonw_text (w, t->tool->description, strlen (t->tool->description));
        }
      jsonw_key (w, "inputSchema");
      jsonw_raw (w, t->tool->input_schema, strlen (t->tool->input_schema));
      jsonw_object_close (w);
    }
}

const struct mcphost_tool *
mcphost_find (struct mcphost *h, const char *qualified)
{
  for (size_t i = 0; i < h->n_tools; i++)
    if (strcmp (h->tools[i].qualified, qualified) == 0)
      return &h->tools[i];
  return NULL;
}

/* End the run, each server stopped (stop) or its exit awaited.  */
static void
mcphost_finish (struct mcphost *h, bool stop)
{
  if (!h->run_on)
    return;
  h->ending = true;
  h->ended_told = false;
  for (size_t i = 0; i < h->n_servers; i++)
    {
      struct mserver *s = &h->servers[i];
      if (s->state == MS_STARTING || s->state == MS_READY
          || s->state == MS_SETTLING)
        mserver_settle (s, THEN_END, stop);
    }
  mcphost_check (h);
}

void
mcphost_end (struct mcphost *h)
{
  mcphost_finish (h, false);
}

void
mcphost_stop (struct mcphost *h)
{
  mcphost_finish (h, true);
}

bool
mcphost_busy (const struct mcphost *h)
{
  return h->run_on;
}

bool
mcphost_blocked (const struct mcphost *h)
{
  return h->blocked;
}

const char *
mcphost_net_owner (const struct mcphost *h, const char *sandbox_id)
{
  for (size_t i = 0; h != NULL && sandbox_id != NULL && i < h->n_servers; i++)
    if (h->servers[i].proxy_client != NULL
        && strcmp (h->servers[i].sandbox_id, sandbox_id) == 0)
      return h->servers[i].cfg->name;
  return NULL;
}

void
mcphost_offer_elicitation (struct mcphost *h, bool on)
{
  h->no_elicit = !on;
}

void
mcphost_elicit_answer (struct mcphost *h, struct mcphost_elicitation *q,
                       enum mcpclient_elicit_action action, const char *content)
{
  struct mcphost_elicitation **p = &h->questions;
  while (*p != NULL && *p != q)
    p = &(*p)->next;
  if (*p == NULL)
    return;
  *p = q->next;
  /* Its client's questions went with it: a server that ended or was
   * restarted since is not answered.  */
  if (q->s->client != NULL && q->s->client_gen == q->gen)
    mcpclient_elicit_answer (q->s->client, q->e, action, content);
  free (q);
}

void
mcphost_free (struct mcphost *h)
{
  if (h == NULL)
    return;
  while (h->questions != NULL)
    {
      struct mcphost_elicitation *q = h->questions;
      h->questions = q->next;
      free (q);
    }
  while (h->calls != NULL)
    {
      struct mcphost_call *c = h->calls;
      h->calls = c->next;
      free (c);
    }
  for (size_t i = 0; i < h->n_servers; i++)
    {
      struct mserver *s = &h->servers[i];
      mserver_timer_cancel (s);
      mcpclient_free (s->client);
      s->client = NULL;
      mserver_close_streams (s);
      if (s->status_fd >= 0)
        loop_remove_fd (h->cfg.loop, s->status_fd);
      /* Its proxy connections close with its client, before the proxy.  */
      if (s->net_fd >= 0)
        loop_remove_fd (h->cfg.loop, s->net_fd);
      proxy_client_free (s->proxy_client);
      mserver_net_domains_clear (s);
      if (s->err_fd >= 0)
        {
          loop_remove_fd (h->cfg.loop, s->err_fd);
          close (s->err_fd);
        }
      if (s->job != NULL)
        {
          struct sandbox_publication pub;
          struct cr_error *err = NULL;
          if (pubjob_finish (s->job, &pub, &err) == 0)
            sandbox_publication_clear (&pub);
          cr_error_free (err);
        }
      /* What was never confirmed empty is left to its keeper, which ends
       * it when the channel closes.  */
      if (s->session != NULL)
        sandbox_abandon (s->session);
      mserver_secrets_clear (s);
      mserver_initial_clear (s);
      buf_free (&s->err_line);
      free (s->pub_failure);
      free (s->blocked_why);
      free (s->start_why);
    }
  if (h->tell_timer != 0)
    loop_cancel_timer (h->cfg.loop, h->tell_timer);
  mcphost_tools_clear (h);
  free (h->servers);
  free (h->run_id);
  cr_error_free (h->prepare_err);
  cr_error_free (h->end_err);
  cr_error_free (h->audit_err);
  free (h);
}
