/* The container engine client (sandbox/container/engine.h).  */
#include <config.h>

#include "sandbox/container/engine.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <poll.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "sandbox/container/curl.h"

/* The ports an engine listens on by convention, without and with TLS.  */
#define ENGINE_PORT_PLAIN "2375"
#define ENGINE_PORT_TLS "2376"

struct engine_client
{
  struct engine_endpoint ep;
  struct engine_curl curl;
  char *name;
  char *kind;
  char *version;
  char api[16];
};

void
engine_env_from_process (struct engine_env *env, char *buf, size_t len)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  memset (env, 0, sizeof *env);
  env->docker_host = getenv ("DOCKER_HOST");
  env->tls_verify = getenv ("DOCKER_TLS_VERIFY");
  env->cert_path = getenv ("DOCKER_CERT_PATH");
  env->home = getenv ("HOME");
  env->docker_socket = "/var/run/docker.sock";
  env->podman_socket = "/run/podman/podman.sock";
  if (xdg != NULL && xdg[0] == '/')
    snprintf (buf, len, "%s/podman/podman.sock", xdg);
  else
    snprintf (buf, len, "/run/user/%lu/podman/podman.sock",
              (unsigned long) getuid ());
  env->podman_rootless = getuid () != 0 ? buf : NULL;
}

void
engine_endpoint_clear (struct engine_endpoint *e)
{
  free (e->address);
  free (e->socket_path);
  free (e->base_url);
  free (e->ca);
  free (e->cert);
  free (e->key);
  memset (e, 0, sizeof *e);
}

/* Whether host (a bracketed IPv6 literal or a dotted IPv4 one) is a
 * loopback address.  A name never is: what it resolves to can change
 * between this check and the connection.  */
static bool
engine_host_loopback (const char *host)
{
  struct in_addr v4;
  struct in6_addr v6;
  size_t n = strlen (host);
  if (inet_pton (AF_INET, host, &v4) == 1)
    return (ntohl (v4.s_addr) >> 24) == 127;
  if (n < 3 || host[0] != '[' || host[n - 1] != ']')
    return false;
  cleanup_free char *bare = xstrndup (host + 1, n - 2);
  return inet_pton (AF_INET6, bare, &v6) == 1
         && memcmp (&v6, &in6addr_loopback, sizeof v6) == 0;
}

/* Split "HOST[:PORT]" (HOST possibly "[v6]") into its parts; the port
 * defaults to dflt.  */
static int
engine_split_host (const char *hostport, const char *dflt, char **host,
                   char **port)
{
  const char *colon = NULL;
  if (hostport[0] == '[')
    {
      const char *close = strchr (hostport, ']');
      if (close == NULL || (close[1] != '\0' && close[1] != ':'))
        return -1;
      colon = close[1] == ':' ? close + 1 : NULL;
    }
  else
    colon = strrchr (hostport, ':');
  size_t hlen = colon != NULL ? (size_t) (colon - hostport) : strlen (hostport);
  const char *p = colon != NULL ? colon + 1 : dflt;
  long number = strspn (p, "0123456789") == strlen (p) && strlen (p) <= 5
                    ? strtol (p, NULL, 10)
                    : -1;
  if (hlen == 0 || *p == '\0' || number < 1 || number > 65535)
    return -1;
  for (size_t i = 0; i < hlen; i++)
    if (!isalnum ((unsigned char) hostport[i])
        && strchr ("-._[]:", hostport[i]) == NULL)
      return -1;
  *host = xstrndup (hostport, hlen);
  *port = xstrdup (p);
  return 0;
}

/* Whether DOCKER_TLS_VERIFY asks for TLS: set and not empty, as the docker
 * client reads it.  */
static bool
engine_env_tls (const struct engine_env *env)
{
  return env->tls_verify != NULL && env->tls_verify[0] != '\0';
}

/* The three TLS files of DOCKER_CERT_PATH (default ~/.docker), each of
 * which must be there.  */
static int
engine_tls_files (const struct engine_env *env, struct engine_endpoint *e,
                  struct cr_error **err)
{
  cleanup_free char *dir = NULL;
  if (env->cert_path != NULL && env->cert_path[0] != '\0')
    dir = xstrdup (env->cert_path);
  else if (env->home != NULL)
    dir = xasprintf ("%s/.docker", env->home);
  else
    return cr_error_set (err, 0,
                         "DOCKER_TLS_VERIFY is set, but neither "
                         "DOCKER_CERT_PATH nor HOME says where ca.pem, "
                         "cert.pem and key.pem are");
  e->ca = xasprintf ("%s/ca.pem", dir);
  e->cert = xasprintf ("%s/cert.pem", dir);
  e->key = xasprintf ("%s/key.pem", dir);
  const char *files[] = { e->ca, e->cert, e->key };
  for (size_t i = 0; i < 3; i++)
    if (access (files[i], R_OK) < 0)
      return cr_error_set (err, errno, "TLS (DOCKER_TLS_VERIFY): %s", files[i]);
  return 0;
}

/* Read tcp://HOST[:PORT] into e.  */
static int
engine_parse_tcp (const char *rest, const struct engine_env *env,
                  struct engine_endpoint *e, struct cr_error **err)
{
  cleanup_free char *host = NULL;
  cleanup_free char *port = NULL;
  e->transport = ENGINE_TCP;
  e->tls = engine_env_tls (env);
  if (engine_split_host (rest, e->tls ? ENGINE_PORT_TLS : ENGINE_PORT_PLAIN,
                         &host, &port)
      < 0)
    return cr_error_set (err, 0, "expected tcp://HOST[:PORT]");
  if (!e->tls && !engine_host_loopback (host))
    return cr_error_set (err, 0,
                         "plain tcp:// without TLS is refused unless the "
                         "address is a numeric loopback address; set "
                         "DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH");
  if (e->tls && engine_tls_files (env, e, err) < 0)
    return -1;
  e->base_url = xasprintf ("%s://%s:%s", e->tls ? "https" : "http", host, port);
  return 0;
}

int
engine_endpoint_parse (const char *address, const char *source,
                       const struct engine_env *env, struct engine_endpoint *e,
                       struct cr_error **err)
{
  int ret = -1;
  memset (e, 0, sizeof *e);
  e->address = xstrdup (address);
  e->source = source;
  if (strncmp (address, "unix://", 7) == 0 && address[7] == '/')
    {
      e->transport = ENGINE_UNIX;
      e->socket_path = xstrdup (address + 7);
      /* The host part of the URL is never sent anywhere: the connection
       * is the socket.  */
      e->base_url = xstrdup ("http://engine");
      ret = 0;
    }
  else if (strncmp (address, "tcp://", 6) == 0)
    ret = engine_parse_tcp (address + 6, env, e, err);
  else
    ret = cr_error_set (err, 0, "expected unix:///PATH or tcp://HOST:PORT");
  if (ret < 0)
    {
      cr_error_prefix (err, "the engine %s (%s)", address, source);
      engine_endpoint_clear (e);
    }
  return ret;
}

/* Whether path is a socket.  */
static bool
engine_is_socket (const char *path)
{
  struct stat st;
  return path != NULL && stat (path, &st) == 0 && S_ISSOCK (st.st_mode);
}

int
engine_discover (const char *configured, const struct engine_env *env,
                 struct engine_endpoint *e, struct cr_error **err)
{
  if (configured != NULL)
    return engine_endpoint_parse (configured, "sandbox.container.engine", env,
                                  e, err);
  if (env->docker_host != NULL && env->docker_host[0] != '\0')
    return engine_endpoint_parse (env->docker_host, "DOCKER_HOST", env, e, err);
  const char *places[]
      = { env->docker_socket, env->podman_socket, env->podman_rootless };
  const char *sources[] = { "the default Docker socket", "Podman's socket",
                            "Podman's rootless socket" };
  struct buf looked = BUF_INIT;
  for (size_t i = 0; i < 3; i++)
    {
      if (places[i] == NULL)
        continue;
      if (engine_is_socket (places[i]))
        {
          buf_free (&looked);
          cleanup_free char *a = xasprintf ("unix://%s", places[i]);
          return engine_endpoint_parse (a, sources[i], env, e, err);
        }
      buf_printf (&looked, "%s%s", looked.len > 0 ? ", " : "", places[i]);
    }
  cr_error_set (err, 0,
                "no container engine was found: sandbox.container.engine and "
                "DOCKER_HOST are not set, and no socket is at %s",
                looked.data != NULL ? looked.data : "any default place");
  buf_free (&looked);
  return -1;
}

int
engine_fail (const struct engine_client *c, const struct engine_request *req,
             struct cr_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *what = NULL;
  if (vasprintf (&what, fmt, ap) < 0)
    abort ();
  va_end (ap);
  if (req == NULL)
    return cr_error_set (err, 0, "engine %s: %s", c->name, what);
  return cr_error_set (err, 0, "engine %s: %s %s%s%s: %s", c->name, req->method,
                       req->unversioned ? "" : "/v",
                       req->unversioned ? "" : c->api, req->path, what);
}

void
engine_answer_clear (struct engine_answer *a)
{
  buf_free (&a->body);
  memset (a, 0, sizeof *a);
}

/* Where one answer is being read, with its bound.  */
struct engine_sink
{
  struct engine_answer *a;
  size_t max;
  bool over;
};

/* libcurl's write callback: keep the body up to the bound; past it, stop
 * the transfer (returning less than given does).  */
static size_t
engine_on_body (char *data, size_t size, size_t n, void *userdata)
{
  struct engine_sink *s = userdata;
  size_t len = size * n;
  if (s->a->body.len + len > s->max)
    {
      s->over = true;
      return 0;
    }
  buf_append (&s->a->body, data, len);
  return len;
}

/* libcurl's header callback: keep Api-Version.  */
static size_t
engine_on_header (char *data, size_t size, size_t n, void *userdata)
{
  struct engine_answer *a = userdata;
  size_t len = size * n;
  static const char name[] = "api-version:";
  if (len > sizeof name - 1 && strncasecmp (data, name, sizeof name - 1) == 0)
    {
      const char *v = data + sizeof name - 1;
      size_t vlen = len - (sizeof name - 1);
      while (vlen > 0 && (*v == ' ' || *v == '\t'))
        v++, vlen--;
      while (vlen > 0 && isspace ((unsigned char) v[vlen - 1]))
        vlen--;
      if (vlen < sizeof a->api_version)
        {
          memcpy (a->api_version, v, vlen);
          a->api_version[vlen] = '\0';
        }
    }
  return len;
}

/* Set the options every request has: where, how, how long, and nothing
 * the environment could redirect (no proxy, no redirects, HTTP only).  */
static void
engine_setopts (struct engine_client *c, CURL *h, const char *url,
                const struct engine_request *req)
{
  struct engine_curl *k = &c->curl;
  k->easy_setopt (h, CURLOPT_URL, url);
  k->easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
  k->easy_setopt (h, CURLOPT_PROTOCOLS_STR, "http,https");
  k->easy_setopt (h, CURLOPT_FOLLOWLOCATION, 0L);
  /* http_proxy in crucible's environment must not see the engine's API,
   * which carries the job and its credentials.  */
  k->easy_setopt (h, CURLOPT_PROXY, "");
  k->easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, ENGINE_CONNECT_TIMEOUT_MS);
  k->easy_setopt (h, CURLOPT_TIMEOUT_MS,
                  req->timeout_ms > 0 ? req->timeout_ms : ENGINE_TIMEOUT_MS);
  if (c->ep.transport == ENGINE_UNIX)
    k->easy_setopt (h, CURLOPT_UNIX_SOCKET_PATH, c->ep.socket_path);
  if (c->ep.tls)
    {
      k->easy_setopt (h, CURLOPT_CAINFO, c->ep.ca);
      k->easy_setopt (h, CURLOPT_SSLCERT, c->ep.cert);
      k->easy_setopt (h, CURLOPT_SSLKEY, c->ep.key);
      k->easy_setopt (h, CURLOPT_SSL_VERIFYPEER, 1L);
      k->easy_setopt (h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
  k->easy_setopt (h, CURLOPT_CUSTOMREQUEST, req->method);
  if (req->body != NULL)
    {
      k->easy_setopt (h, CURLOPT_POSTFIELDS, req->body);
      k->easy_setopt (h, CURLOPT_POSTFIELDSIZE_LARGE,
                      (curl_off_t) req->body_len);
    }
  else if (strcmp (req->method, "POST") == 0)
    k->easy_setopt (h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) 0);
}

/* The engine's own message from an error answer ({"message": ...}), or the
 * body's start when it is not that.  Owned.  */
static char *
engine_error_message (const struct engine_answer *a)
{
  char why[128];
  const char *body = a->body.data != NULL ? a->body.data : "";
  yajl_val v = json_tree (body, a->body.len, why, sizeof why);
  const char *m = json_member_str (v, "message");
  char *out = m != NULL ? xstrdup (m) : xstrndup (body, 200);
  yajl_tree_free (v);
  size_t n = strlen (out);
  while (n > 0 && isspace ((unsigned char) out[n - 1]))
    out[--n] = '\0';
  return out;
}

int
engine_call (struct engine_client *c, const struct engine_request *req,
             struct engine_answer *a, struct cr_error **err)
{
  struct engine_curl *k = &c->curl;
  memset (a, 0, sizeof *a);
  /* The body is a string even when nothing arrives.  */
  buf_puts (&a->body, "");
  struct engine_sink sink
      = { a, req->answer_max > 0 ? req->answer_max : ENGINE_ANSWER_MAX, false };
  struct curl_slist *headers = NULL;
  char curl_why[CURL_ERROR_SIZE] = "";
  CURL *h = k->easy_init ();
  if (h == NULL)
    return engine_fail (c, req, err, "libcurl could not make a handle");
  cleanup_free char *url
      = xasprintf ("%s%s%s%s", c->ep.base_url, req->unversioned ? "" : "/v",
                   req->unversioned ? "" : c->api, req->path);
  engine_setopts (c, h, url, req);
  if (req->content_type != NULL)
    {
      cleanup_free char *ct = xasprintf ("Content-Type: %s", req->content_type);
      headers = k->slist_append (headers, ct);
    }
  /* No "Expect: 100-continue" pause before a body.  */
  headers = k->slist_append (headers, "Expect:");
  k->easy_setopt (h, CURLOPT_HTTPHEADER, headers);
  k->easy_setopt (h, CURLOPT_ERRORBUFFER, curl_why);
  k->easy_setopt (h, CURLOPT_WRITEFUNCTION, engine_on_body);
  k->easy_setopt (h, CURLOPT_WRITEDATA, &sink);
  k->easy_setopt (h, CURLOPT_HEADERFUNCTION, engine_on_header);
  k->easy_setopt (h, CURLOPT_HEADERDATA, a);
  CURLcode rc = k->easy_perform (h);
  k->easy_getinfo (h, CURLINFO_RESPONSE_CODE, &a->status);
  k->easy_cleanup (h);
  k->slist_free_all (headers);
  if (sink.over)
    return engine_fail (c, req, err, "the answer is longer than %zu bytes",
                        sink.max);
  /* libcurl words a socket that refuses as a port 80 of host "engine":
   * say what it is instead.  */
  if (rc == CURLE_COULDNT_CONNECT && c->ep.transport == ENGINE_UNIX)
    return engine_fail (c, req, err, "cannot connect to its socket: %s",
                        k->easy_strerror (rc));
  if (rc != CURLE_OK)
    return engine_fail (c, req, err, "%s",
                        curl_why[0] != '\0' ? curl_why : k->easy_strerror (rc));
  if (a->status >= 400)
    {
      cleanup_free char *m = engine_error_message (a);
      return engine_fail (c, req, err, "%ld: %s", a->status, m);
    }
  return 0;
}

int
engine_call_json (struct engine_client *c, const struct engine_request *req,
                  yajl_val *out, struct cr_error **err)
{
  struct engine_answer a;
  char why[128] = "";
  *out = NULL;
  if (engine_call (c, req, &a, err) < 0)
    {
      engine_answer_clear (&a);
      return -1;
    }
  *out = json_tree (a.body.data, a.body.len, why, sizeof why);
  engine_answer_clear (&a);
  if (*out == NULL)
    return engine_fail (c, req, err, "the answer is not JSON: %s", why);
  return 0;
}

/* Read "1.N" into N; -1 when it is not that.  */
static int
engine_api_minor (const char *v)
{
  char *end = NULL;
  if (v == NULL || strncmp (v, "1.", 2) != 0 || !isdigit ((unsigned char) v[2]))
    return -1;
  long n = strtol (v + 2, &end, 10);
  return *end == '\0' && n < 1000 ? (int) n : -1;
}

int
engine_negotiate (const char *engine_api, const char *min_api, char *out,
                  size_t len, char *why, size_t why_len)
{
  int have = engine_api_minor (engine_api);
  int min = engine_api_minor (min_api);
  if (have < 0)
    {
      snprintf (why, why_len, "it gave no API version crucible can read (%s)",
                engine_api != NULL ? engine_api : "none");
      return -1;
    }
  if (have < ENGINE_API_MIN_MINOR)
    {
      snprintf (why, why_len,
                "it speaks API %s, and crucible needs 1.%d or later",
                engine_api, ENGINE_API_MIN_MINOR);
      return -1;
    }
  int use = have < ENGINE_API_MAX_MINOR ? have : ENGINE_API_MAX_MINOR;
  if (min > use)
    {
      snprintf (why, why_len,
                "it speaks API %s to 1.%d at the oldest, and crucible speaks "
                "1.%d to 1.%d",
                min_api, have, ENGINE_API_MIN_MINOR, ENGINE_API_MAX_MINOR);
      return -1;
    }
  snprintf (out, len, "1.%d", use);
  return 0;
}

/* Ask /_ping: the engine is there and answers "OK".  */
static int
engine_ping (struct engine_client *c, char *api, size_t len,
             struct cr_error **err)
{
  struct engine_request req = { .method = "GET",
                                .path = "/_ping",
                                .unversioned = true,
                                .answer_max = 4096,
                                .timeout_ms = 10000 };
  struct engine_answer a;
  int ret = engine_call (c, &req, &a, err);
  if (ret == 0 && strcmp (a.body.data, "OK") != 0)
    ret = engine_fail (c, &req, err, "expected OK, the engine said \"%.40s\"",
                       a.body.data);
  snprintf (api, len, "%s", a.api_version);
  engine_answer_clear (&a);
  return ret;
}

/* Which engine /version describes: Podman names itself among its
 * components; dockerd does not.  */
static const char *
engine_kind_of (yajl_val version)
{
  yajl_val comps = json_member (version, "Components");
  for (size_t i = 0;
       comps != NULL && YAJL_IS_ARRAY (comps) && i < comps->u.array.len; i++)
    {
      const char *n = json_member_str (comps->u.array.values[i], "Name");
      if (n != NULL && strncmp (n, "Podman", 6) == 0)
        return "podman";
    }
  return "docker";
}

/* Ask /version (unversioned: it says which versions are spoken) and
 * settle the API version.  */
static int
engine_version (struct engine_client *c, const char *ping_api,
                struct cr_error **err)
{
  struct engine_request req = { .method = "GET",
                                .path = "/version",
                                .unversioned = true,
                                .answer_max = 65536,
                                .timeout_ms = 10000 };
  yajl_val v = NULL;
  char why[200];
  if (engine_call_json (c, &req, &v, err) < 0)
    return -1;
  const char *api = json_member_str (v, "ApiVersion");
  const char *ver = json_member_str (v, "Version");
  c->kind = xstrdup (engine_kind_of (v));
  c->version = xstrdup (ver != NULL ? ver : "unknown");
  int ret = engine_negotiate (api != NULL ? api : ping_api,
                              json_member_str (v, "MinAPIVersion"), c->api,
                              sizeof c->api, why, sizeof why);
  yajl_tree_free (v);
  free (c->name);
  c->name = xasprintf ("%s (%s %s)", c->ep.address, c->kind, c->version);
  if (ret < 0)
    return engine_fail (c, NULL, err, "%s", why);
  return 0;
}

int
engine_connect (struct engine_endpoint *e, struct engine_client **out,
                struct cr_error **err)
{
  struct engine_client *c = xcalloc (1, sizeof *c);
  char ping_api[16] = "";
  c->ep = *e;
  memset (e, 0, sizeof *e);
  c->name = xstrdup (c->ep.address);
  *out = NULL;
  if (engine_curl_load (&c->curl, err) < 0)
    {
      cr_error_prefix (err, "engine %s", c->name);
      engine_client_free (c);
      return -1;
    }
  if (engine_ping (c, ping_api, sizeof ping_api, err) < 0
      || engine_version (c, ping_api, err) < 0)
    {
      engine_client_free (c);
      return -1;
    }
  *out = c;
  return 0;
}

void
engine_client_free (struct engine_client *c)
{
  if (c == NULL)
    return;
  engine_curl_unload (&c->curl);
  engine_endpoint_clear (&c->ep);
  free (c->name);
  free (c->kind);
  free (c->version);
  free (c);
}

const char *
engine_client_name (const struct engine_client *c)
{
  return c->name;
}

const char *
engine_client_kind (const struct engine_client *c)
{
  return c->kind;
}

const char *
engine_client_version (const struct engine_client *c)
{
  return c->version;
}

const char *
engine_client_api (const struct engine_client *c)
{
  return c->api;
}

const struct engine_endpoint *
engine_client_endpoint (const struct engine_client *c)
{
  return &c->ep;
}

/* --- the attached stream ----------------------------------------------------
 */

/* The longest answer to the upgrade crucible reads, headers included.  */
#define ENGINE_UPGRADE_MAX 16384

struct engine_stream
{
  struct engine_client *c;
  CURL *h;
  curl_socket_t fd;
  struct buf early; /* stream bytes that came with the upgrade's answer */
  size_t early_off;
};

/* Wait until the stream's socket is ready for events, at most ms.  */
static int
engine_stream_wait (struct engine_stream *s, short events, int ms)
{
  struct pollfd p = { .fd = s->fd, .events = events };
  int r;
  while ((r = poll (&p, 1, ms)) < 0 && errno == EINTR)
    ;
  return r;
}

/* Send all of data, waiting as needed (the request, while attaching).  */
static int
engine_stream_send_all (struct engine_stream *s, const char *data, size_t len,
                        const char *what, struct cr_error **err)
{
  while (len > 0)
    {
      ssize_t n = engine_stream_send (s, data, len, err);
      if (n < 0)
        return -1;
      if (n == 0
          && engine_stream_wait (s, POLLOUT, ENGINE_CONNECT_TIMEOUT_MS) <= 0)
        return engine_fail (s->c, NULL, err,
                            "%s: the connection took nothing "
                            "for %ld ms",
                            what, ENGINE_CONNECT_TIMEOUT_MS);
      data += n;
      len -= (size_t) n;
    }
  return 0;
}

/* The Host header's value: the endpoint's host and port, or "engine" over
 * a Unix socket.  */
static const char *
engine_host_header (const struct engine_client *c)
{
  const char *u = c->ep.base_url;
  const char *sep = strstr (u, "://");
  return sep != NULL ? sep + 3 : u;
}

/* The status of an answer's first line, "HTTP/1.0 NNN" or "HTTP/1.1
 * NNN" (three digits, then a space or the line's end); 0 when it is not
 * one.  */
static int
engine_upgrade_status (const char *head)
{
  if (strncmp (head, "HTTP/1.", 7) != 0 || (head[7] != '0' && head[7] != '1')
      || head[8] != ' ')
    return 0;
  const char *d = head + 9;
  for (int i = 0; i < 3; i++)
    if (d[i] < '0' || d[i] > '9')
      return 0;
  if (d[3] != ' ' && d[3] != '\r' && d[3] != '\0')
    return 0;
  return (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
}

/* Read the upgrade's answer: a status line of 101 (dockerd, Podman) or 200
 * (older engines hijack without saying), the headers up to the empty line.
 * What follows is the stream.  */
static int
engine_read_upgrade (struct engine_stream *s, const char *what,
                     struct cr_error **err)
{
  struct buf head = BUF_INIT;
  char chunk[4096];
  const char *end = NULL;
  int ret = -1;
  while (end == NULL)
    {
      ssize_t n = engine_stream_recv (s, chunk, sizeof chunk, err);
      if (n == -1)
        goto out;
      if (n == 0)
        {
          engine_fail (s->c, NULL, err,
                       "%s: the engine closed the "
                       "connection before answering",
                       what);
          goto out;
        }
      if (n == -2)
        {
          if (engine_stream_wait (s, POLLIN, ENGINE_TIMEOUT_MS) <= 0)
            {
              engine_fail (s->c, NULL, err, "%s: no answer within %ld ms", what,
                           ENGINE_TIMEOUT_MS);
              goto out;
            }
          continue;
        }
      buf_append (&head, chunk, (size_t) n);
      buf_puts (&head, "");
      end = strstr (head.data, "\r\n\r\n");
      if (end == NULL && head.len > ENGINE_UPGRADE_MAX)
        {
          engine_fail (s->c, NULL, err,
                       "%s: the answer's headers are longer "
                       "than %d bytes",
                       what, ENGINE_UPGRADE_MAX);
          goto out;
        }
    }
  int status = engine_upgrade_status (head.data);
  if (status != 101 && status != 200)
    {
      /* The engine's own words, from the body after the headers.  */
      engine_fail (s->c, NULL, err, "%s: %.*s: %.200s", what,
                   (int) strcspn (head.data, "\r\n"), head.data, end + 4);
      goto out;
    }
  size_t off = (size_t) (end + 4 - head.data);
  buf_append (&s->early, head.data + off, head.len - off);
  ret = 0;
out:
  buf_free (&head);
  return ret;
}

int
engine_attach (struct engine_client *c, const char *id,
               struct engine_stream **out, struct cr_error **err)
{
  struct engine_curl *k = &c->curl;
  struct engine_request req = { .method = "POST", .path = "/" };
  cleanup_free char *what
      = xasprintf ("POST /v%s/containers/%.12s/attach", c->api, id);
  struct engine_stream *s = xcalloc (1, sizeof *s);
  char curl_why[CURL_ERROR_SIZE] = "";
  s->c = c;
  s->fd = CURL_SOCKET_BAD;
  *out = NULL;
  s->h = k->easy_init ();
  if (s->h == NULL)
    {
      free (s);
      return engine_fail (c, NULL, err, "%s: libcurl could not make a handle",
                          what);
    }
  engine_setopts (c, s->h, c->ep.base_url, &req);
  /* Connect only: libcurl makes the connection (TLS included) and hands
   * it over; the request is written below.  */
  k->easy_setopt (s->h, CURLOPT_CONNECT_ONLY, 1L);
  k->easy_setopt (s->h, CURLOPT_ERRORBUFFER, curl_why);
  CURLcode rc = k->easy_perform (s->h);
  if (rc == CURLE_OK)
    rc = k->easy_getinfo (s->h, CURLINFO_ACTIVESOCKET, &s->fd);
  k->easy_setopt (s->h, CURLOPT_ERRORBUFFER, NULL);
  if (rc != CURLE_OK || s->fd == CURL_SOCKET_BAD)
    {
      engine_fail (c, NULL, err, "%s: %s", what,
                   curl_why[0] != '\0' ? curl_why : k->easy_strerror (rc));
      engine_stream_close (s);
      return -1;
    }
  cleanup_free char *request = xasprintf (
      "POST /v%s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 "
      "HTTP/1.1\r\nHost: %s\r\nUser-Agent: crucible\r\n"
      "Content-Type: text/plain\r\nContent-Length: 0\r\n"
      "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
      c->api, id, engine_host_header (c));
  if (engine_stream_send_all (s, request, strlen (request), what, err) < 0
      || engine_read_upgrade (s, what, err) < 0)
    {
      engine_stream_close (s);
      return -1;
    }
  *out = s;
  return 0;
}

int
engine_stream_fd (const struct engine_stream *s)
{
  return (int) s->fd;
}

ssize_t
engine_stream_send (struct engine_stream *s, const void *data, size_t len,
                    struct cr_error **err)
{
  size_t n = 0;
  CURLcode rc = s->c->curl.easy_send (s->h, data, len, &n);
  if (rc == CURLE_AGAIN)
    return 0;
  if (rc != CURLE_OK)
    return engine_fail (s->c, NULL, err,
                        "sending to the attached container: "
                        "%s",
                        s->c->curl.easy_strerror (rc));
  return (ssize_t) n;
}

ssize_t
engine_stream_recv (struct engine_stream *s, void *data, size_t len,
                    struct cr_error **err)
{
  if (s->early_off < s->early.len)
    {
      size_t n = s->early.len - s->early_off;
      n = n < len ? n : len;
      memcpy (data, s->early.data + s->early_off, n);
      s->early_off += n;
      return (ssize_t) n;
    }
  size_t n = 0;
  CURLcode rc = s->c->curl.easy_recv (s->h, data, len, &n);
  if (rc == CURLE_AGAIN)
    return -2;
  if (rc != CURLE_OK)
    return engine_fail (s->c, NULL, err, "reading the attached container: %s",
                        s->c->curl.easy_strerror (rc));
  return (ssize_t) n;
}

void
engine_stream_close (struct engine_stream *s)
{
  if (s == NULL)
    return;
  if (s->h != NULL)
    s->c->curl.easy_cleanup (s->h);
  buf_free (&s->early);
  free (s);
}

int
engine_demux_feed (struct engine_demux *d, const unsigned char *data,
                   size_t len,
                   int (*fn) (void *arg, int stream, const unsigned char *p,
                              size_t n),
                   void *arg, struct cr_error **err)
{
  while (len > 0)
    {
      if (d->left == 0)
        {
          size_t take = sizeof d->header - d->have;
          take = take < len ? take : len;
          memcpy (d->header + d->have, data, take);
          d->have += take;
          data += take;
          len -= take;
          if (d->have < sizeof d->header)
            return 0;
          d->have = 0;
          /* The header: stream, three zero bytes, the length.  */
          if (d->header[0] > 2 || d->header[1] != 0 || d->header[2] != 0
              || d->header[3] != 0)
            return cr_error_set (err, 0,
                                 "the attached container's stream has a "
                                 "malformed header (stream %u)",
                                 d->header[0]);
          d->stream = d->header[0];
          d->left = (size_t) d->header[4] << 24 | (size_t) d->header[5] << 16
                    | (size_t) d->header[6] << 8 | d->header[7];
          continue;
        }
      size_t n = d->left < len ? d->left : len;
      int r = fn (arg, d->stream, data, n);
      if (r != 0)
        return r;
      d->left -= n;
      data += n;
      len -= n;
    }
  return 0;
}
