/* The host-owned HTTP/1.1 proxy a confined command reaches the network
 * through (issue 13).  It runs in crucible's event loop: CONNECT tunnels
 * (any port, TLS never terminated) and absolute-form plain HTTP requests,
 * each request checked against its command's credential and allowed names
 * (sandbox/netpolicy), every resolved address classified before it is
 * tried.  Name resolution runs in one resolver thread whose answers come
 * back to the loop through a socket, so the loop never blocks on it.
 *
 * Ownership: the proxy owns its clients' connections; a client belongs to
 * the caller (proxy_client_free), and must be freed before the proxy.
 * Every callback is called from the loop.  The process must ignore SIGPIPE
 * (crucible does, tui/main.c): splice(2) to a socket whose peer is gone
 * raises it.
 *
 * Bounds: a request head is limited by sandbox/httpreq (64 KiB) and must
 * arrive within 30 s of the connection (or of the previous answer); the
 * resolver has 10 s, each connect attempt 10 s; a connection on which
 * nothing moves for 5 minutes is closed.  Each direction holds at most one
 * read (16 KiB, or a 64 KiB pipe in a tunnel) before it stops reading.
 * Requests are served one at a time per connection (no pipelining: the
 * next head is read once the answer is through).  */
#ifndef CRUCIBLE_CORE_PROXY_H
#define CRUCIBLE_CORE_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "lib/error.h"

struct proxy;
struct proxy_client;

/* One per process (crucible run, the session, crucible mcp): made lazily
 * when the first command with domains starts.  env: crucible's own
 * environment, read once for the upstream settings (copied).  */
struct proxy *proxy_new (struct loop *loop, char *const *env,
                         struct cr_error **err);
/* Close every connection and free the proxy.  Clients still registered are
 * a caller bug; their connections are closed too.  */
void proxy_free (struct proxy *p);

struct proxy_grant
{
  const char *sandbox_id; /* attribution in facts (copied) */
  char *const *domains;   /* as configured (netpolicy normalises) */
  size_t n_domains;
  bool allow_private; /* sandbox.network.allowPrivateAddresses */
};

/* A command's registration: its own random credential (128 bits from
 * getrandom, as 32 hex digits).  */
struct proxy_client *proxy_client_new (struct proxy *p,
                                       const struct proxy_grant *g,
                                       struct cr_error **err);
/* The user and password the command's proxy URLs carry; the password is the
 * secret the masker hides.  Valid until proxy_client_free.  */
const char *proxy_client_user (const struct proxy_client *c); /* "crucible" */
const char *proxy_client_password (const struct proxy_client *c);
/* Take one connection accepted inside the command's namespace (owned from
 * now on, also on failure).  */
int proxy_client_take (struct proxy_client *c, int fd, struct cr_error **err);

struct proxy_counts
{
  uint64_t allowed;   /* requests (CONNECT or absolute-form) let through */
  uint64_t refused;   /* requests answered 403/407/400/502 or cut short */
  uint64_t bytes_out; /* from the command towards the network */
  uint64_t bytes_in;  /* from the network towards the command */
};
void proxy_client_counts (const struct proxy_client *c,
                          struct proxy_counts *out);

/* Refusals as they happen, for the journal's `network` facts: the class
 * word only, never a host name ("credential", "name", "malformed",
 * "upstream", "unresolved", "unreachable", "limit" (once per run of
 * connections refused over the command's limit), or an address class word from
 * netpolicy_addr_class_name such as "loopback"; doc/strings.md).  */
typedef void (*proxy_refusal_fn) (void *data, const char *reason_class);
void proxy_client_on_refusal (struct proxy_client *c, proxy_refusal_fn fn,
                              void *data);

/* Close every connection of the command at once; returns true when none is
 * left (always, since closing is synchronous) -- the supervisor holds the
 * slot until then.  */
bool proxy_client_close (struct proxy_client *c);
/* Close the command's connections and forget its credential.  */
void proxy_client_free (struct proxy_client *c);

/* Phase 2 -- asking the person about a name not allowed.
 *
 * With an asker set, a request whose name is not allowed does not get its
 * 403 at once: the proxy calls the asker with a question id, the client and
 * the normalised name, and the connection waits (no bytes read from it) for
 * proxy_answer (question id, verdict), at most PROXY_ASK_WAIT_MS from when
 * its question is asked (not from when it was queued); no answer by then is
 * a refusal.  One question is outstanding at a time, across the
 * whole proxy: later names queue behind it, and a name already asked or
 * queued for the same client joins that question (coalesced), so every
 * waiting connection gets the one answer.  PROXY_ANSWER_COMMAND lets the
 * name for the rest of that client's life; PROXY_ANSWER_ALWAYS does the same
 * here, the caller writing the home configuration (`workspaces.<path>`)
 * itself; PROXY_ANSWER_REFUSE gives the 403.  An answer for a question that
 * is gone (timed out, client freed) is ignored.  Without an asker (crucible
 * run, clients that cannot be asked) the 403 is immediate.  */
#define PROXY_ASK_WAIT_MS 60000u

enum proxy_answer
{
  PROXY_ANSWER_REFUSE,
  PROXY_ANSWER_COMMAND,
  PROXY_ANSWER_ALWAYS,
};

typedef void (*proxy_asker_fn) (void *data, uint64_t question,
                                struct proxy_client *c, const char *name);
/* Set (or with fn NULL, clear) the asker; clearing refuses what waits.  */
void proxy_set_asker (struct proxy *p, proxy_asker_fn fn, void *data);
/* Answer a question the asker was given.  */
void proxy_answer (struct proxy *p, uint64_t question, enum proxy_answer a);
/* The sandbox id a client was granted with, for the asker's question.  */
const char *proxy_client_sandbox_id (const struct proxy_client *c);

#endif
