/* Tests for sandbox/container/: where the engine is (engine_endpoint_parse,
 * engine_discover), the API version settled on, what /info is read as, the
 * tar writer, and the client against a fake engine on a Unix socket (the
 * version negotiated, an answer past its bound refused, an engine's error
 * carried with the engine and the request named).  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "sandbox/container/engine.h"
#include "sandbox/container/facts.h"
#include "sandbox/container/tar.h"

/* An environment naming nothing.  */
static void
env_empty (struct engine_env *env)
{
  memset (env, 0, sizeof *env);
  env->docker_socket = "/nonexistent/docker.sock";
  env->podman_socket = "/nonexistent/podman.sock";
}

/* Parse address with env; the error text, or NULL on success.  */
static char *
parse (const char *address, const struct engine_env *env,
       struct engine_endpoint *e)
{
  struct cr_error *err = NULL;
  if (engine_endpoint_parse (address, "DOCKER_HOST", env, e, &err) == 0)
    return NULL;
  char *msg = xstrdup (err->msg);
  cr_error_free (err);
  return msg;
}

static void
test_parse_unix (void **state)
{
  (void) state;
  struct engine_env env;
  struct engine_endpoint e;
  env_empty (&env);
  assert_null (parse ("unix:///run/docker.sock", &env, &e));
  assert_int_equal (e.transport, ENGINE_UNIX);
  assert_string_equal (e.socket_path, "/run/docker.sock");
  assert_string_equal (e.base_url, "http://engine");
  assert_false (e.tls);
  engine_endpoint_clear (&e);
  char *m = parse ("unix://relative", &env, &e);
  assert_string_equal (m, "the engine unix://relative (DOCKER_HOST): "
                          "expected unix:///PATH or tcp://HOST:PORT");
  free (m);
  m = parse ("ssh://host", &env, &e);
  assert_non_null (strstr (m, "expected unix:///PATH or tcp://HOST:PORT"));
  free (m);
}

static void
test_parse_tcp_plain (void **state)
{
  (void) state;
  struct engine_env env;
  struct engine_endpoint e;
  env_empty (&env);
  assert_null (parse ("tcp://127.0.0.1:2375", &env, &e));
  assert_string_equal (e.base_url, "http://127.0.0.1:2375");
  engine_endpoint_clear (&e);
  assert_null (parse ("tcp://127.9.8.7", &env, &e));
  assert_string_equal (e.base_url, "http://127.9.8.7:2375");
  engine_endpoint_clear (&e);
  assert_null (parse ("tcp://[::1]:1234", &env, &e));
  assert_string_equal (e.base_url, "http://[::1]:1234");
  engine_endpoint_clear (&e);
  /* Not loopback, or a name: refused without TLS.  */
  const char *refused[] = { "tcp://10.0.0.5:2375", "tcp://localhost:2375",
                            "tcp://[::2]:2375", "tcp://128.0.0.1:1" };
  for (size_t i = 0; i < 4; i++)
    {
      char *m = parse (refused[i], &env, &e);
      assert_non_null (m);
      assert_non_null (strstr (m, "plain tcp:// without TLS is refused unless "
                                  "the address is a numeric loopback "
                                  "address; set DOCKER_TLS_VERIFY=1 and "
                                  "DOCKER_CERT_PATH"));
      free (m);
    }
  const char *bad[]
      = { "tcp://",      "tcp://h:",   "tcp://h:0",  "tcp://h:65536",
          "tcp://h:12x", "tcp://[::1", "tcp://a b:1" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      char *m = parse (bad[i], &env, &e);
      assert_non_null (m);
      assert_non_null (strstr (m, "expected tcp://HOST[:PORT]"));
      free (m);
    }
}

static void
test_parse_tcp_tls (void **state)
{
  (void) state;
  struct engine_env env;
  struct engine_endpoint e;
  char dir[] = "/tmp/test_engine.XXXXXX";
  assert_non_null (mkdtemp (dir));
  env_empty (&env);
  env.tls_verify = "1";
  env.cert_path = dir;
  char *m = parse ("tcp://10.0.0.5", &env, &e);
  assert_non_null (m);
  assert_non_null (strstr (m, "TLS (DOCKER_TLS_VERIFY): "));
  assert_non_null (strstr (m, "/ca.pem: No such file or directory"));
  free (m);
  const char *files[] = { "ca.pem", "cert.pem", "key.pem" };
  for (size_t i = 0; i < 3; i++)
    {
      char *p = xasprintf ("%s/%s", dir, files[i]);
      int fd = open (p, O_CREAT | O_WRONLY, 0600);
      assert_true (fd >= 0);
      close (fd);
      free (p);
    }
  assert_null (parse ("tcp://10.0.0.5", &env, &e));
  assert_true (e.tls);
  assert_string_equal (e.base_url, "https://10.0.0.5:2376");
  char *ca = xasprintf ("%s/ca.pem", dir);
  assert_string_equal (e.ca, ca);
  free (ca);
  engine_endpoint_clear (&e);
  /* An empty DOCKER_TLS_VERIFY is not set, as the docker client reads it.  */
  env.tls_verify = "";
  m = parse ("tcp://10.0.0.5", &env, &e);
  assert_non_null (strstr (m, "plain tcp:// without TLS is refused"));
  free (m);
  for (size_t i = 0; i < 3; i++)
    {
      char *p = xasprintf ("%s/%s", dir, files[i]);
      unlink (p);
      free (p);
    }
  rmdir (dir);
}

/* Make a listening Unix socket at path; its descriptor.  */
static int
listen_at (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (fd >= 0);
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", path);
  assert_int_equal (bind (fd, (struct sockaddr *) &sa, sizeof sa), 0);
  assert_int_equal (listen (fd, 8), 0);
  return fd;
}

static void
test_discover_order (void **state)
{
  (void) state;
  struct engine_env env;
  struct engine_endpoint e;
  struct cr_error *err = NULL;
  char dir[] = "/tmp/test_engine.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *docker = xasprintf ("%s/docker.sock", dir);
  char *podman = xasprintf ("%s/podman.sock", dir);
  env_empty (&env);
  env.podman_rootless = "/nonexistent/rootless.sock";
  assert_int_equal (engine_discover (NULL, &env, &e, &err), -1);
  assert_string_equal (err->msg,
                       "no container engine was found: "
                       "sandbox.container.engine and DOCKER_HOST are not "
                       "set, and no socket is at /nonexistent/docker.sock, "
                       "/nonexistent/podman.sock, /nonexistent/rootless.sock");
  cr_error_clear (&err);
  /* Podman's socket when there is no Docker one ...  */
  env.docker_socket = docker;
  env.podman_socket = podman;
  int p = listen_at (podman);
  assert_int_equal (engine_discover (NULL, &env, &e, &err), 0);
  assert_string_equal (e.socket_path, podman);
  assert_string_equal (e.source, "Podman's socket");
  engine_endpoint_clear (&e);
  /* ... the Docker one first when both are there ...  */
  int d = listen_at (docker);
  assert_int_equal (engine_discover (NULL, &env, &e, &err), 0);
  assert_string_equal (e.socket_path, docker);
  assert_string_equal (e.source, "the default Docker socket");
  engine_endpoint_clear (&e);
  /* ... DOCKER_HOST before either, the configuration before that.  */
  env.docker_host = "unix:///elsewhere.sock";
  assert_int_equal (engine_discover (NULL, &env, &e, &err), 0);
  assert_string_equal (e.socket_path, "/elsewhere.sock");
  assert_string_equal (e.source, "DOCKER_HOST");
  engine_endpoint_clear (&e);
  assert_int_equal (engine_discover ("unix:///configured.sock", &env, &e, &err),
                    0);
  assert_string_equal (e.socket_path, "/configured.sock");
  assert_string_equal (e.source, "sandbox.container.engine");
  engine_endpoint_clear (&e);
  close (p);
  close (d);
  unlink (docker);
  unlink (podman);
  rmdir (dir);
  free (docker);
  free (podman);
}

static void
test_negotiate (void **state)
{
  (void) state;
  char out[16], why[200];
  assert_int_equal (
      engine_negotiate ("1.41", "1.12", out, sizeof out, why, sizeof why), 0);
  assert_string_equal (out, "1.41");
  assert_int_equal (
      engine_negotiate ("1.43", "1.24", out, sizeof out, why, sizeof why), 0);
  assert_string_equal (out, "1.41");
  assert_int_equal (
      engine_negotiate ("1.40", NULL, out, sizeof out, why, sizeof why), 0);
  assert_string_equal (out, "1.40");
  assert_int_equal (
      engine_negotiate ("1.39", "1.12", out, sizeof out, why, sizeof why), -1);
  assert_string_equal (why,
                       "it speaks API 1.39, and crucible needs 1.40 or later");
  assert_int_equal (
      engine_negotiate ("1.45", "1.42", out, sizeof out, why, sizeof why), -1);
  assert_int_equal (
      engine_negotiate ("2.0", NULL, out, sizeof out, why, sizeof why), -1);
  assert_int_equal (
      engine_negotiate (NULL, NULL, out, sizeof out, why, sizeof why), -1);
  assert_string_equal (why, "it gave no API version crucible can read (none)");
}

/* /info as dockerd 20.10 and Podman 4.3 answered it here (cut down).  */
static const char info_docker[]
    = "{\"MemoryLimit\":true,\"SwapLimit\":true,\"PidsLimit\":true,"
      "\"CpuCfsQuota\":true,\"CgroupDriver\":\"cgroupfs\","
      "\"CgroupVersion\":\"1\",\"KernelVersion\":\"6.1\","
      "\"OperatingSystem\":\"Debian GNU/Linux 12 (bookworm)\","
      "\"DefaultRuntime\":\"runc\","
      "\"SecurityOptions\":[\"name=seccomp,profile=default\"]}";
static const char info_rootless[]
    = "{\"MemoryLimit\":false,\"SwapLimit\":false,\"PidsLimit\":true,"
      "\"CgroupVersion\":\"2\",\"CgroupDriver\":\"systemd\","
      "\"DefaultRuntime\":\"crun\",\"Rootless\":true,"
      "\"SecurityOptions\":[\"name=seccomp,profile=/x.json\","
      "\"name=rootless\",\"name=userns\",7]}";

static void
test_facts_from_info (void **state)
{
  (void) state;
  char why[128];
  struct engine_facts f = { 0 };
  yajl_val v = json_tree (info_docker, sizeof info_docker - 1, why, sizeof why);
  assert_non_null (v);
  engine_facts_from_info (v, &f);
  yajl_tree_free (v);
  assert_string_equal (f.runtime, "runc");
  assert_string_equal (f.cgroup_version, "1");
  assert_string_equal (f.cgroup_driver, "cgroupfs");
  assert_true (f.memory_limit && f.swap_limit && f.pids_limit);
  assert_true (f.seccomp);
  assert_string_equal (f.seccomp_profile, "default");
  assert_false (f.rootless || f.userns);
  engine_facts_clear (&f);
  v = json_tree (info_rootless, sizeof info_rootless - 1, why, sizeof why);
  engine_facts_from_info (v, &f);
  yajl_tree_free (v);
  assert_false (f.memory_limit || f.swap_limit);
  assert_true (f.pids_limit && f.rootless && f.userns && f.seccomp);
  assert_string_equal (f.seccomp_profile, "/x.json");
  assert_string_equal (f.runtime, "crun");
  engine_facts_clear (&f);
  /* Not an object, or missing everything: nothing is claimed.  */
  v = json_tree ("[1]", 3, why, sizeof why);
  engine_facts_from_info (v, &f);
  yajl_tree_free (v);
  assert_null (f.runtime);
  assert_false (f.memory_limit || f.seccomp || f.pids_limit);
  engine_facts_clear (&f);
}

static void
test_json_tree (void **state)
{
  (void) state;
  char why[128];
  assert_null (json_tree ("{\"a\":\"x\\u0000\"", 14, why, sizeof why));
  const char nul[] = "{\"a\":1}\0{}";
  assert_null (json_tree (nul, sizeof nul - 1, why, sizeof why));
  assert_string_equal (why, "a NUL byte inside the JSON text");
  yajl_val v
      = json_tree ("{\"s\":\"t\",\"b\":true,\"i\":-3}", 24, why, sizeof why);
  assert_string_equal (json_member_str (v, "s"), "t");
  assert_null (json_member_str (v, "b"));
  assert_true (json_member_bool (v, "b", false));
  assert_true (json_member_bool (v, "s", true));
  assert_int_equal (json_member_int (v, "i", 0), -3);
  assert_int_equal (json_member_int (v, "x", 9), 9);
  yajl_tree_free (v);
}

static void
test_tar (void **state)
{
  (void) state;
  struct buf t = BUF_INIT;
  struct cr_error *err = NULL;
  assert_int_equal (tar_dir (&t, "bin", 0755, &err), 0);
  assert_int_equal (tar_file (&t, "bin/f", 0644, "hello", 5, &err), 0);
  assert_int_equal (tar_symlink (&t, "bin/sh", "busybox", &err), 0);
  tar_end (&t);
  assert_int_equal (t.len, 512 * 6);
  assert_string_equal (t.data, "bin/");
  assert_memory_equal (t.data + 257, "ustar", 6);
  /* The checksum: the header's bytes with the field as spaces.  */
  unsigned sum = 0;
  for (size_t i = 0; i < 512; i++)
    sum += (i >= 148 && i < 156) ? ' ' : (unsigned char) t.data[i];
  assert_int_equal (strtoul (t.data + 148, NULL, 8), sum);
  assert_memory_equal (t.data + 1024, "hello", 5);
  assert_int_equal (t.data[1536 + 156], '2');
  assert_string_equal (t.data + 1536 + 157, "busybox");
  char longname[120];
  memset (longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  assert_int_equal (tar_file (&t, longname, 0644, "", 0, &err), -1);
  cr_error_free (err);
  buf_free (&t);
}

/* A fake engine: answers each connection to path with the answer for its
 * request line's path from table (triples of path, status line's rest
 * with any extra header, body), then closes; exits after n connections,
 * and dies with the test.  */
static pid_t
fake_engine (const char *path, const char *const *table, int n)
{
  int fd = listen_at (path);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid > 0)
    {
      close (fd);
      return pid;
    }
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  alarm (30);
  for (int i = 0; i < n; i++)
    {
      int c = accept (fd, NULL, NULL);
      char req[4096];
      ssize_t got = 0, r;
      while (got < (ssize_t) sizeof req - 1
             && (r = read (c, req + got, sizeof req - 1 - (size_t) got)) > 0)
        {
          got += r;
          req[got] = '\0';
          if (strstr (req, "\r\n\r\n") != NULL)
            break;
        }
      req[got] = '\0';
      const char *status = "404 Not Found";
      const char *body = "{\"message\":\"no route\"}";
      for (size_t k = 0; table[k] != NULL; k += 3)
        {
          char *line = xasprintf (" %s HTTP/1.1\r\n", table[k]);
          if (strstr (req, line) != NULL)
            status = table[k + 1], body = table[k + 2];
          free (line);
        }
      char *answer = xasprintf ("HTTP/1.1 %s\r\nContent-Length: %zu\r\n\r\n%s",
                                status, strlen (body), body);
      size_t len = strlen (answer);
      if (write (c, answer, len) != (ssize_t) len)
        _exit (2);
      free (answer);
      close (c);
    }
  _exit (0);
}

/* Connect to the fake engine at path; the error text, or NULL.  */
static char *
connect_fake (const char *path, struct engine_client **c)
{
  struct engine_env env;
  struct engine_endpoint e;
  struct cr_error *err = NULL;
  env_empty (&env);
  char *address = xasprintf ("unix://%s", path);
  assert_int_equal (
      engine_endpoint_parse (address, "DOCKER_HOST", &env, &e, &err), 0);
  free (address);
  if (engine_connect (&e, c, &err) == 0)
    return NULL;
  char *m = xstrdup (err->msg);
  cr_error_free (err);
  return m;
}

#define PING_OK "200 OK\r\nApi-Version: 1.41", "OK"
/* /version as Podman 4.3 answers it (cut down).  */
static const char version_podman[]
    = "{\"Version\":\"4.3.1\",\"ApiVersion\":\"1.41\",\"MinAPIVersion\":"
      "\"1.24\",\"Components\":[{\"Name\":\"Podman Engine\"}]}";

static void
test_client_fake (void **state)
{
  (void) state;
  char dir[] = "/tmp/test_engine.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *path = xasprintf ("%s/sock", dir);
  static char big[6001];
  memset (big, 'x', sizeof big - 1);
  const char *table[] = {
    "/_ping",
    PING_OK,
    "/version",
    "200 OK",
    version_podman,
    "/v1.41/info",
    "200 OK",
    "{}",
    "/v1.41/big",
    "200 OK",
    big,
    "/v1.41/broken",
    "500 Oops",
    "{\"message\":\"it broke\"}",
    NULL,
  };
  pid_t pid = fake_engine (path, table, 5);
  struct engine_client *c = NULL;
  char *m = connect_fake (path, &c);
  assert_null (m);
  assert_string_equal (engine_client_kind (c), "podman");
  assert_string_equal (engine_client_version (c), "4.3.1");
  assert_string_equal (engine_client_api (c), "1.41");
  char *name = xasprintf ("unix://%s (podman 4.3.1)", path);
  assert_string_equal (engine_client_name (c), name);
  struct cr_error *err = NULL;
  yajl_val v = NULL;
  struct engine_request info = { .method = "GET", .path = "/info" };
  assert_int_equal (engine_call_json (c, &info, &v, &err), 0);
  yajl_tree_free (v);
  /* Past its bound, an answer is refused, not read.  */
  struct engine_request bigreq
      = { .method = "GET", .path = "/big", .answer_max = 4096 };
  struct engine_answer a;
  assert_int_equal (engine_call (c, &bigreq, &a, &err), -1);
  engine_answer_clear (&a);
  char *want = xasprintf ("engine %s: GET /v1.41/big: the answer is longer "
                          "than 4096 bytes",
                          name);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_clear (&err);
  /* The engine's own message, with the engine and the request.  */
  struct engine_request broken = { .method = "POST", .path = "/broken" };
  assert_int_equal (engine_call (c, &broken, &a, &err), -1);
  engine_answer_clear (&a);
  want = xasprintf ("engine %s: POST /v1.41/broken: 500: it broke", name);
  assert_string_equal (err->msg, want);
  free (want);
  cr_error_clear (&err);
  engine_client_free (c);
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  unlink (path);
  free (name);

  /* An engine too old is refused at connection, named.  */
  const char *old[] = {
    "/_ping", "200 OK\r\nApi-Version: 1.39",
    "OK",     "/version",
    "200 OK", "{\"Version\":\"18.09\",\"ApiVersion\":\"1.39\"}",
    NULL,
  };
  pid = fake_engine (path, old, 2);
  m = connect_fake (path, &c);
  want = xasprintf ("engine unix://%s (docker 18.09): it speaks API 1.39, and "
                    "crucible needs 1.40 or later",
                    path);
  assert_string_equal (m, want);
  free (want);
  free (m);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  unlink (path);

  /* Nothing listening: named.  */
  m = connect_fake (path, &c);
  want = xasprintf ("engine unix://%s: GET /_ping: cannot connect to its "
                    "socket: Couldn't connect to server",
                    path);
  assert_string_equal (m, want);
  free (want);
  free (m);
  free (path);
  rmdir (dir);
}

/* What the demultiplexer gave: each run with its stream, as "N:bytes|".  */
static int
demux_collect (void *arg, int stream, const unsigned char *p, size_t n)
{
  struct buf *b = arg;
  buf_printf (b, "%d:", stream);
  buf_append (b, p, n);
  buf_putc (b, '|');
  return 0;
}

/* The attached stream's 8-byte headers (sandbox/container/engine.h): the
 * same pieces come out whether the bytes arrive whole or one by one, an
 * empty piece gives nothing, and a header naming stream 3 or with a
 * nonzero padding byte is refused.  */
static void
test_demux (void **state)
{
  (void) state;
  static const unsigned char stream[] = {
    1, 0, 0, 0, 0, 0, 0, 3, 'o', 'u', 't', 2, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 2, 'e', 'r', 1,   0, 0, 0, 0, 0, 0, 1, '!',
  };
  struct engine_demux d = { 0 };
  struct buf whole = BUF_INIT, bytes = BUF_INIT;
  struct cr_error *err = NULL;
  assert_int_equal (engine_demux_feed (&d, stream, sizeof stream, demux_collect,
                                       &whole, &err),
                    0);
  buf_puts (&whole, "");
  assert_string_equal (whole.data, "1:out|2:er|1:!|");
  memset (&d, 0, sizeof d);
  for (size_t i = 0; i < sizeof stream; i++)
    assert_int_equal (
        engine_demux_feed (&d, stream + i, 1, demux_collect, &bytes, &err), 0);
  buf_puts (&bytes, "");
  /* One byte at a time, each byte of a piece comes as a run of its own.  */
  assert_string_equal (bytes.data, "1:o|1:u|1:t|2:e|2:r|1:!|");
  static const unsigned char bad_stream[] = { 3, 0, 0, 0, 0, 0, 0, 1, 'x' };
  static const unsigned char bad_pad[] = { 1, 0, 1, 0, 0, 0, 0, 1, 'x' };
  memset (&d, 0, sizeof d);
  assert_int_equal (engine_demux_feed (&d, bad_stream, sizeof bad_stream,
                                       demux_collect, &bytes, &err),
                    -1);
  assert_non_null (strstr (err->msg, "malformed header (stream 3)"));
  cr_error_clear (&err);
  memset (&d, 0, sizeof d);
  assert_int_equal (engine_demux_feed (&d, bad_pad, sizeof bad_pad,
                                       demux_collect, &bytes, &err),
                    -1);
  cr_error_clear (&err);
  buf_free (&whole);
  buf_free (&bytes);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse_unix),
    cmocka_unit_test (test_parse_tcp_plain),
    cmocka_unit_test (test_parse_tcp_tls),
    cmocka_unit_test (test_discover_order),
    cmocka_unit_test (test_negotiate),
    cmocka_unit_test (test_facts_from_info),
    cmocka_unit_test (test_json_tree),
    cmocka_unit_test (test_tar),
    cmocka_unit_test (test_client_fake),
    cmocka_unit_test (test_demux),
  };
  signal (SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests (tests, NULL, NULL);
}
