/* sandbox.network.ports: a confined command's server on a listed port,
 * reachable at that port on the host's 127.0.0.1 and at localhost:PORT
 * inside the session's other confined commands.
 *
 * Each confined command with ports joins with its net channel (the
 * broker's records, sandbox/netchan.h and broker/status.h).  Its broker
 * says when something inside listens on a listed port; the first command
 * of the session to serve a port becomes its server: crucible listens on
 * 127.0.0.1:PORT as the invoking user (when the port is free there) and
 * asks every other member's broker to listen on the port inside and send
 * up what it accepts.  Each connection, from the host or from another
 * command, is made inside the server's namespace by its broker (the host
 * asks; the broker answers with the connected descriptor) and relayed
 * here, in the loop, through bounded buffers.  The workloads never hold
 * any of these descriptors.
 *
 * Nothing a broker sends is trusted: a port outside its own list, a
 * connection nobody asked for, an accepted one on a port it was not
 * asked to forward or that no other member serves, is closed.  So a
 * lying broker can make the host listen only on 127.0.0.1 at one of its
 * listed ports, and connect only through another broker of the same
 * session.  */
#ifndef CRUCIBLE_CORE_PORTFWD_H
#define CRUCIBLE_CORE_PORTFWD_H

#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "sandbox/netchan.h"

struct portfwd;
struct portfwd_member;

/* The session's forwarder (one per supervisor).  */
struct portfwd *portfwd_new (struct loop *loop);
/* Every member must have left.  */
void portfwd_free (struct portfwd *pf);

/* A command's broker joins with its net channel chan (the caller keeps
 * reading it and owns it) and its listed ports (at most
 * BROKER_NET_MAX_PORTS, each 1024 or above; others are dropped).  Its
 * broker is asked at once to forward the ports others serve.  */
struct portfwd_member *portfwd_join (struct portfwd *pf, int chan,
                                     const uint16_t *ports, size_t n_ports);

/* One record the member's broker sent (any kind but
 * NETCHAN_CONNECTION); rec->fd is taken.  */
void portfwd_record (struct portfwd_member *m, struct netchan_record *rec);

/* Where the member's servers are reachable, for the answers and the
 * list ("listening on 127.0.0.1:5173", or that the host's port was
 * taken; doc/strings.md), NULL when it serves nothing.  Owned by the
 * caller.  */
char *portfwd_where (const struct portfwd_member *m);

/* Whether the host's port was ever found taken while the member served
 * it: the words for the command's result, or NULL.  */
char *portfwd_taken_note (const struct portfwd_member *m);

/* The command ends: its host listeners, its relays and pending
 * connections (both ends) close now, the others stop forwarding its
 * ports (or forward another member's server), and m is freed.  */
void portfwd_leave (struct portfwd_member *m);

#endif
