/* The container engine client: where the engine is (discovery), and one
 * HTTP request at a time to its Docker Engine API, over a Unix socket or
 * TCP (TLS per DOCKER_TLS_VERIFY / DOCKER_CERT_PATH), through libcurl
 * loaded at run time (sandbox/container/curl.h).  The API version is
 * negotiated with /_ping and /version when the client connects; every
 * answer is bounded; every error names the engine and the request.  The
 * same client speaks to dockerd and to Podman's compatible service.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_ENGINE_H
#define CRUCIBLE_SANDBOX_CONTAINER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/error.h"

/* The API versions crucible speaks: 1.40 is the first whose /info says the
 * cgroup version; dockerd 20.10 and Podman 4 speak 1.41.  */
#define ENGINE_API_MIN_MINOR 40
#define ENGINE_API_MAX_MINOR 41

/* The default bound of one answer, and of a request's time.  */
#define ENGINE_ANSWER_MAX (4u << 20)
#define ENGINE_TIMEOUT_MS 30000L
#define ENGINE_CONNECT_TIMEOUT_MS 5000L

/* What discovery reads from the process: the environment and the places
 * engines put their sockets.  engine_env_from_process fills it; tests make
 * their own.  Everything is borrowed.  */
struct engine_env
{
  const char *docker_host;     /* DOCKER_HOST, or NULL */
  const char *tls_verify;      /* DOCKER_TLS_VERIFY, or NULL */
  const char *cert_path;       /* DOCKER_CERT_PATH, or NULL */
  const char *home;            /* HOME: ~/.docker is the default cert path */
  const char *docker_socket;   /* the default Docker socket */
  const char *podman_socket;   /* Podman's as root */
  const char *podman_rootless; /* Podman's for this user, or NULL */
};

/* The process's own (the rootless socket's path is kept in buf).  */
void engine_env_from_process (struct engine_env *env, char *buf, size_t len);

enum engine_transport
{
  ENGINE_UNIX,
  ENGINE_TCP
};

/* Where the engine is, and how it is reached.  */
struct engine_endpoint
{
  enum engine_transport transport;
  char *address;      /* as written: "unix:///run/docker.sock", "tcp://..." */
  const char *source; /* static: who named it ("DOCKER_HOST", ...) */
  char *socket_path;  /* ENGINE_UNIX */
  char *base_url;     /* "http://engine" or "https://host:port" */
  bool tls;
  char *ca, *cert, *key; /* TLS: the three files of DOCKER_CERT_PATH */
};

void engine_endpoint_clear (struct engine_endpoint *e);

/* Read address (named by source) into e: unix:///PATH, or tcp://HOST[:PORT]
 * with TLS when env's DOCKER_TLS_VERIFY is set.  Plain tcp:// is refused
 * unless HOST is a numeric loopback address: anyone on the path could
 * otherwise run containers as the engine's user.  */
int engine_endpoint_parse (const char *address, const char *source,
                           const struct engine_env *env,
                           struct engine_endpoint *e, struct cr_error **err);

/* Find the engine: configured (sandbox.container.engine) when set, else
 * DOCKER_HOST, else the default Docker socket, else Podman's (root, then
 * rootless) -- the first of those sockets that exists.  With none, the
 * error names each place looked.  */
int engine_discover (const char *configured, const struct engine_env *env,
                     struct engine_endpoint *e, struct cr_error **err);

struct engine_client;

/* Connect: load libcurl, ask /_ping and /version, and settle the API
 * version.  Takes e's contents (e is cleared).  */
int engine_connect (struct engine_endpoint *e, struct engine_client **out,
                    struct cr_error **err);
void engine_client_free (struct engine_client *c);

/* The engine as the messages name it: "unix:///run/docker.sock (docker
 * 20.10.24)".  Owned by the client.  */
const char *engine_client_name (const struct engine_client *c);

/* What /version said: "docker" or "podman", its version, the API version
 * settled on ("1.41").  Owned by the client.  */
const char *engine_client_kind (const struct engine_client *c);
const char *engine_client_version (const struct engine_client *c);
const char *engine_client_api (const struct engine_client *c);
const struct engine_endpoint *
engine_client_endpoint (const struct engine_client *c);

/* One request's options.  */
struct engine_request
{
  const char *method; /* "GET", "POST", "DELETE" */
  const char *path;   /* "/info": the version prefix is added */
  bool unversioned;   /* "/_ping" is asked without one */
  const char *content_type;
  const void *body; /* or NULL */
  size_t body_len;
  size_t answer_max; /* 0: ENGINE_ANSWER_MAX */
  long timeout_ms;   /* 0: ENGINE_TIMEOUT_MS */
};

/* One answer: the status and the body (NUL-terminated), and the API
 * version header when the engine sent one.  */
struct engine_answer
{
  long status;
  struct buf body;
  char api_version[16];
};

void engine_answer_clear (struct engine_answer *a);

/* Send one request and read the whole answer; a status of 400 or more is
 * an error carrying the engine's own message.  */
int engine_call (struct engine_client *c, const struct engine_request *req,
                 struct engine_answer *a, struct cr_error **err);

/* engine_call for a JSON answer, parsed (the caller frees *out with
 * yajl_tree_free).  */
int engine_call_json (struct engine_client *c, const struct engine_request *req,
                      yajl_val *out, struct cr_error **err);

/* The error for req against c: "engine NAME: METHOD PATH: what".  */
int engine_fail (const struct engine_client *c,
                 const struct engine_request *req, struct cr_error **err,
                 const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

/* Settle the API version from what /_ping's header and /version said:
 * the engine's own, capped at what crucible speaks; -1 with why when the
 * engine is older than crucible's oldest.  Writes "1.41" to out.  */
int engine_negotiate (const char *engine_api, const char *min_api, char *out,
                      size_t len, char *why, size_t why_len);

/* An attached container's stream (POST /containers/ID/attach), reached
 * with libcurl's connect-only mode: libcurl makes the connection (the
 * socket, TCP or TLS) and crucible writes the request and reads the
 * upgrade's answer itself, the only HTTP it writes by hand.  Afterwards
 * the connection carries the container's stdin raw, one way, and its
 * stdout and stderr the other, each piece behind an 8-byte header (the
 * stream, three zero bytes, the length big-endian).  */
struct engine_stream;

/* Attach to the container id (stdin, stdout, stderr, stream): connect, ask
 * for the upgrade and read its answer.  Bytes of the stream that came with
 * the answer are kept for engine_stream_recv.  */
int engine_attach (struct engine_client *c, const char *id,
                   struct engine_stream **out, struct cr_error **err);

/* The connection's socket, to poll.  */
int engine_stream_fd (const struct engine_stream *s);

/* Send up to len bytes without waiting: the number sent, 0 when the
 * connection takes none now, -1 on error.  */
ssize_t engine_stream_send (struct engine_stream *s, const void *data,
                            size_t len, struct cr_error **err);

/* Receive up to len bytes without waiting: the number received, 0 at the
 * end of the stream, -2 when nothing is there now, -1 on error.  */
ssize_t engine_stream_recv (struct engine_stream *s, void *data, size_t len,
                            struct cr_error **err);

/* Close the connection: the container's stdin ends with it.  */
void engine_stream_close (struct engine_stream *s);

/* A reader of the multiplexed stream: what each piece's header says.  */
struct engine_demux
{
  unsigned char header[8];
  size_t have; /* bytes of the header read */
  size_t left; /* bytes of the current piece still to come */
  int stream;  /* the current piece's stream: 1 stdout, 2 stderr */
};

/* Split len bytes of the stream into its pieces: each run of payload goes
 * to fn with its stream number.  A header naming a stream other than 0, 1
 * or 2 is an error.  */
int engine_demux_feed (struct engine_demux *d, const unsigned char *data,
                       size_t len,
                       int (*fn) (void *arg, int stream, const unsigned char *p,
                                  size_t n),
                       void *arg, struct cr_error **err);

#endif
