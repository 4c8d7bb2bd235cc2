/* The status channel between the host and whatever keeps a command's process
 * scope: crucible-sandbox-broker as PID 1 of a Linux sandbox, or the scope
 * keeper the compatibility backend forks.  The only code the broker shares
 * with the host.
 *
 * Messages are fixed-size records on a SOCK_SEQPACKET socket pair, one record
 * per message, so neither side has to parse a stream.  The keeper sends
 * STARTED once the workload runs, EXITED with the workload's own wait status
 * when it ends, and DONE once nothing of the scope is left (on its own when
 * the workload has ended and nothing else of it remains, or after a STOP).
 * After DONE the keeper stays until the host closes its end, so that a STOP
 * crossing the DONE cannot reset the channel and lose it.  The host sends
 * STOP (value: the signal) to end the whole scope.  When the host's end
 * closes before DONE, the keeper ends the scope as if told to stop with
 * SIGKILL.
 *
 * Only the backends whose keepers speak it (sandbox/bwrap.c,
 * sandbox/compat.c, sandbox/channel.c) and the broker include this
 * header; the engine (core/) and the installed interface see a failure
 * only as enum sandbox_failure (include/crucible/sandbox.h), which
 * sandbox/channel.c translates the stage into.  */
#ifndef CRUCIBLE_BROKER_STATUS_H
#define CRUCIBLE_BROKER_STATUS_H

#include <stdint.h>

#define BROKER_STATUS_MAGIC 0x43525342u /* "CRSB" */

enum broker_msg_type
{
  BROKER_MSG_STARTED = 1, /* value: the workload's pid as the keeper sees it */
  BROKER_MSG_EXITED = 2,  /* value: the workload's wait status */
  BROKER_MSG_DONE = 3,    /* the scope is empty; the keeper exits next */
  BROKER_MSG_FAILED = 4,  /* value: errno; stage: what was being done */
  BROKER_MSG_STOP = 16,   /* host to keeper; value: the signal to send */
  /* Host to a keeper started with --await, once: the command may run.
   * It carries three descriptors (SCM_RIGHTS): the workload's output, a
   * memfd of its environment (as --env-fd), and a memfd of the arguments
   * after PROGRAM [ARG...] (NUL-terminated strings: the command line).
   * Or five, for a workload with standard streams of its own
   * (sandbox_command.stdio): then the first is its stdout alone, and its
   * stdin and its stderr follow the three.  */
  BROKER_MSG_GO = 17
};

/* What the keeper was doing when it sent BROKER_MSG_FAILED.  */
enum broker_stage
{
  BROKER_STAGE_NONE = 0,
  BROKER_STAGE_SETUP = 1, /* mounts, limits, capabilities */
  BROKER_STAGE_FORK = 2,
  BROKER_STAGE_EXEC = 3 /* sent by the workload itself before it exits 127 */
};

/* The net channel (--net-fd): a second SOCK_SEQPACKET pair, given only
 * to a command whose policy names domains.  The broker listens on this
 * port at 127.0.0.1 and ::1 inside the command's network namespace and
 * sends each connection it accepts as one record: one byte,
 * BROKER_NET_CONNECTION, and the descriptor (SCM_RIGHTS).  The port is
 * sandbox/netpolicy.h's NETWORK_INSIDE_PORT; the namespace is the
 * command's own, so it is always free.  */
#define BROKER_NET_PORT 3128
#define BROKER_NET_CONNECTION 'c'

/* sandbox.network.ports (--port, at most BROKER_NET_MAX_PORTS): further
 * records on the same channel, each one struct broker_net_msg (eight
 * bytes), the port in host order.  The broker to the host:
 *   LISTENING / GONE  something inside (not the broker) listens on the
 *                     port at 127.0.0.1, ::1 or a wildcard, or no more;
 *   CONNECTED + fd    the connection it made to the port for request id;
 *   FAILED            that connection could not be made;
 *   ACCEPTED + fd     a connection the workload made to a port the host
 *                     asked it to forward (another command serves it).
 * The host to the broker:
 *   CONNECT           connect to the port inside, answering with id;
 *   FORWARD / UNFORWARD  listen on 127.0.0.1 and ::1 at the port inside
 *                     and send what is accepted, or stop;
 *   READY             (port 0) every FORWARD the command starts with has
 *                     been sent: a broker given --port waits for it (at
 *                     most BROKER_NET_READY_MS) before it starts the
 *                     workload, so that a port another command serves is
 *                     forwarded from the workload's first instruction.
 * The broker acts only on its own --port ports; the host trusts no record
 * and checks each against what it asked (sandbox/netchan.c, core/portfwd.c). */
#define BROKER_NET_MAX_PORTS 16
#define BROKER_NET_LISTENING 'L'
#define BROKER_NET_GONE 'G'
#define BROKER_NET_CONNECTED 'K'
#define BROKER_NET_FAILED 'E'
#define BROKER_NET_ACCEPTED 'A'
#define BROKER_NET_CONNECT 'C'
#define BROKER_NET_FORWARD 'F'
#define BROKER_NET_UNFORWARD 'U'
#define BROKER_NET_READY 'R'
#define BROKER_NET_READY_MS 5000

struct broker_net_msg
{
  uint8_t kind;  /* BROKER_NET_* */
  uint8_t zero;  /* 0 */
  uint16_t port; /* one of the --port ports */
  uint32_t id;   /* CONNECT's, echoed by CONNECTED and FAILED; else 0 */
};

struct broker_msg
{
  uint32_t magic; /* BROKER_STATUS_MAGIC */
  uint32_t type;  /* enum broker_msg_type */
  int32_t value;
  uint32_t stage; /* enum broker_stage, for BROKER_MSG_FAILED */
};

#endif
