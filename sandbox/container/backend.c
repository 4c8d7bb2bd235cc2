/* The container backend (sandbox/container/backend.h).  */
#include <config.h>

#include "sandbox/container/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/xalloc.h"
#include "sandbox/container/engine.h"
#include "sandbox/container/facts.h"
#include "sandbox/container/job.h"
#include "sandbox/container/jobproto.h"
#include "sandbox/publish.h"
#include "sandbox/githooks.h"
#include "sandbox/pubguard.h"
#include "sandbox/statedir.h"

/* The runner stops the command this long before the supervisor's outer
 * kill, so that an overrun still reports what it printed.  */
#define CONTAINER_DEADLINE_MARGIN_MS ((uint64_t) 500)
/* The runner's grace between its SIGTERM and its SIGKILL.  */
#define CONTAINER_GRACE_MS 1000
/* After a stop, how long the runner is given to end the command before
 * the engine is told to kill the container, and how long after that the
 * connection is closed regardless.  */
#define CONTAINER_STOP_BUDGET_MS 2000
#define CONTAINER_KILL_BUDGET_MS 3000
/* How long the engine is given to remove a container that ended (it was
 * made with AutoRemove), before crucible removes it itself, and then to
 * confirm that.  */
#define CONTAINER_REMOVE_BUDGET_MS 5000
/* The most of the runner's own stderr kept, to quote when it fails.  */
#define CONTAINER_STDERR_MAX 2048
/* The most content the runner may send back as changes.  */
#define CONTAINER_CHANGES_MAX JOB_CHANGES_MAX_DEFAULT
/* The environment the image needs: only its PATH; the command's built
 * environment travels with the job.  */
#define CONTAINER_PATH_ENV "PATH=/usr/local/bin:/usr/bin:/bin"

/* The backend's words in messages.  */
#define CONTAINER_WHO "the command's container"

struct container_backend
{
  struct sandbox_backend base;
  char *engine;
  char *image;
  unsigned long cpu_seconds;
  unsigned long open_files;
  char **unreadable; /* sandbox.filesystem.unreadable, as configured */
  size_t n_unreadable;
  char *state_parent;   /* where the state directory is */
  pthread_mutex_t lock; /* guards what follows */
  struct engine_client *client;
  struct engine_facts facts;
  bool probed;
  bool swept;
  char *runner_why; /* why the image's runner is not this build's, or NULL */
  unsigned live;    /* session threads still running */
  char *why;        /* why the engine cannot be used, from the last try */
  /* Kept containers disposed of unused whose removal their threads are
   * still confirming (container_dispose does not wait for it, which would
   * hold the supervisor's loop for the engine's removal): counted, and
   * waited for (left) when the backend is freed, as crucible leaves.  */
  unsigned leaving;
  pthread_cond_t left;
  /* The ID of such a container the engine did not confirm gone: every
   * later preparation is refused while the engine still has it.  */
  char *kept_stuck;
};

/* One event for the supervisor, queued by the session's thread.  */
struct container_event
{
  enum sandbox_event_kind kind;
  int wait_status;
  int error;
  enum sandbox_failure failure;
};

#define CONTAINER_EVENTS_MAX 4

struct container_session
{
  struct sandbox_session base;
  struct container_backend *b;
  /* What prepare settled.  */
  struct container_request req;
  double command_seconds;
  uint64_t as_bytes;  /* RLIMIT_AS inside, when the policy states one */
  bool seccomp;       /* the engine filters system calls: require it inside */
  bool allow_binding; /* allowLocalBinding: the runner's filter lets bind */
  char *statedir;
  /* The configured readOnly and protected roots, for publication.  */
  char **roots;
  struct pubguard_root *guard_roots;
  size_t n_roots;
  struct pubguard guard;
  /* What start was given, copied: the thread owns them.  */
  char *line;
  char *root; /* the workspace root, resolved */
  char **envp;
  char **leave_out; /* the unreadable patterns relative to root */
  int out_fd;
  /* A workload with standard streams of its own (sandbox_command.stdio,
   * an MCP server): its stdin is read from in_fd into 'I' frames ('N' at
   * its end), its stderr ('Y') written to err_fd, and out_fd takes its
   * stdout alone.  -1 otherwise.  */
  bool stdio;
  int in_fd;
  int err_fd;
  struct publish_baseline baseline;
  /* Prepared ahead (container_prepare_ahead): the container is made,
   * started and attached by the thread before any command, and waits for
   * start's word on go_pipe ('g'; 'q' or its end: removed unused).  The
   * workspace root it was made for, resolved, and the image ID it runs:
   * a kept container is used only while both are still so.  */
  bool ahead;
  bool joined;  /* the thread was joined (its last word was read) */
  bool leaving; /* disposed of unused: its thread removes it, unwaited */
  char *ahead_root;
  int go_pipe[2];
  char *image_id;
  /* The thread and its two pipes: events to the supervisor (ev_pipe[0]
   * is the status descriptor), stops from it (stop_pipe[1]).  */
  pthread_t thread;
  bool started;
  int ev_pipe[2];
  int stop_pipe[2];
  pthread_mutex_t lock; /* guards what follows */
  struct container_event events[CONTAINER_EVENTS_MAX];
  size_t n_events;
  char *message; /* a FAILED event's words, owned */
  char *fatal;   /* why cleanup could not be confirmed, owned */
  /* What was verified of the container it ran in, for the finish fact
   * (the EXITED event's message): its ID and image, the hardening read
   * back from the engine and the runner's facts from inside.  Written by
   * the thread before it queues EXITED; owned.  */
  char *verified;
  /* A kept container that cannot run a command: its making failed or it
   * ended while it waited.  The words, owned (NULL: none).  */
  char *ahead_broken;
  struct job_changes *changes; /* what came after 'X', checked, staged */
  bool done;                   /* DONE was queued: the container is gone */
  bool abandoned;
  bool thread_ended;
  /* What the thread read of the answer.  */
  char id[80];
  bool ordinary_exit; /* 'X' said an exit, with no deadline or stop */
  bool published;
};

/* --- the engine -------------------------------------------------------------
 */

/* The image the configuration names.  */
static const char *
container_image (const struct container_backend *b)
{
  return b->image != NULL ? b->image : CONTAINER_DEFAULT_IMAGE;
}

/* Why the image's job runner is not the one this crucible speaks with
 * (its CONTAINER_RUNNER_LABEL against the SHA-256 of the runner this
 * build installs), or NULL when it is.  Owned.  */
static char *
container_runner_check (struct container_backend *b)
{
  char hex[80] = "";
  struct cr_error *err = NULL;
  if (container_runner_read (NULL, hex, &err) < 0)
    {
      char *why = xstrdup (err->msg);
      cr_error_free (err);
      return why;
    }
  cleanup_free char *path = xasprintf ("/images/%s/json", b->facts.image_id);
  struct engine_request req = { .method = "GET", .path = path };
  yajl_val v = NULL;
  if (engine_call_json (b->client, &req, &v, &err) < 0)
    {
      char *why = xstrdup (err->msg);
      cr_error_free (err);
      return why;
    }
  const char *label
      = json_member_str (json_member (json_member (v, "Config"), "Labels"),
                         CONTAINER_RUNNER_LABEL);
  char *why = label != NULL && strcmp (label, hex) == 0
                  ? NULL
                  : xasprintf ("the image %s was not made by this build of "
                               "crucible (its job runner %s); rebuild the "
                               "image with `crucible sandbox image build`",
                               container_image (b),
                               label != NULL ? "differs" : "is not labelled");
  yajl_tree_free (v);
  return why;
}

/* Connect to the engine and read what it can hold, once; b->lock held.
 * A failure is kept (b->why) and tried again at the next call.  */
static int
container_ensure_client (struct container_backend *b, struct cr_error **err)
{
  if (b->client != NULL)
    return 0;
  struct engine_env env;
  struct engine_endpoint ep;
  char rootless[256];
  engine_env_from_process (&env, rootless, sizeof rootless);
  struct engine_client *c = NULL;
  if (engine_discover (b->engine, &env, &ep, err) < 0
      || engine_connect (&ep, &c, err) < 0)
    goto fail;
  engine_facts_clear (&b->facts);
  if (engine_facts_read (c, container_image (b), &b->facts, err) < 0)
    {
      engine_client_free (c);
      goto fail;
    }
  b->client = c;
  b->probed = true;
  free (b->runner_why);
  b->runner_why = b->facts.image_id != NULL ? container_runner_check (b) : NULL;
  free (b->why);
  b->why = NULL;
  return 0;
fail:
  free (b->why);
  b->why = xstrdup (err != NULL && *err != NULL ? (*err)->msg : "unknown");
  return -1;
}

/* What the container backend holds.  The engine-dependent rows (memory,
 * processes, the kernel's surface) are enforced only when the engine said
 * it can enforce them; each run checks them again from inside.  */
static void
container_claims (const struct sandbox_backend *base,
                  struct sandbox_claims *out)
{
  const struct container_backend *b = (const struct container_backend *) base;
  memset (out, 0, sizeof *out);
  out->support[SANDBOX_FILESYSTEM] = SANDBOX_ENFORCED;
  out->support[SANDBOX_NETWORK_DENY] = SANDBOX_ENFORCED;
  out->support[SANDBOX_DESCRIPTOR_ISOLATION] = SANDBOX_ENFORCED;
  out->support[SANDBOX_PROCESS_ISOLATION] = SANDBOX_ENFORCED;
  out->support[SANDBOX_PRIVILEGE_ISOLATION] = SANDBOX_ENFORCED;
  out->support[SANDBOX_MATERIALIZATION] = SANDBOX_ENFORCED;
  out->support[SANDBOX_CPU_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_DISK_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_OPEN_FILE_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_COMMAND_TIME_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_OUTPUT_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_CONCURRENCY_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_AUDIT] = SANDBOX_OBSERVED;
  if (b->probed && b->facts.memory_limit && b->facts.swap_limit)
    out->support[SANDBOX_MEMORY_LIMIT] = SANDBOX_ENFORCED;
  if (b->probed && b->facts.pids_limit)
    out->support[SANDBOX_PROCESS_LIMIT] = SANDBOX_ENFORCED;
  /* crucible's own filter, loaded by the runner whatever the engine's
   * profile is (Podman's lets `unshare -r` through), and checked from
   * inside at each run (a new user namespace refused).  */
  out->support[SANDBOX_KERNEL_SURFACE] = SANDBOX_ENFORCED;
}

/* Usable when the engine answers and has the image; always confined.  */
static int
container_probe (struct sandbox_backend *base, struct sandbox_probe *out,
                 struct cr_error **err)
{
  struct container_backend *b = (struct container_backend *) base;
  struct cr_error *why = NULL;
  (void) err;
  memset (out, 0, sizeof *out);
  out->confined = true;
  pthread_mutex_lock (&b->lock);
  if (container_ensure_client (b, &why) < 0)
    out->reason
        = xasprintf ("the container engine cannot be used: %s", why->msg);
  else if (b->facts.image_id == NULL)
    out->reason = xasprintf (
        "the image %s is not on the engine %s (%s); "
        "`crucible sandbox image build` makes it",
        container_image (b), engine_client_name (b->client),
        b->facts.image_why != NULL ? b->facts.image_why : "not found");
  else if (b->runner_why != NULL)
    out->reason = xstrdup (b->runner_why);
  else
    {
      out->usable = true;
      out->version = xstrdup (engine_client_name (b->client));
    }
  pthread_mutex_unlock (&b->lock);
  cr_error_free (why);
  return 0;
}

/* --- labels and lost containers ---------------------------------------------
 */

/* This process as a maker: "BOOT-ID:PID:START" (the start time in clock
 * ticks since boot, /proc/self/stat's 22nd field), which no other process
 * of this boot shares.  Owned.  */
static char *
container_maker_of (pid_t pid)
{
  char boot[64] = "";
  unsigned long long start = 0;
  FILE *bf = fopen ("/proc/sys/kernel/random/boot_id", "re");
  if (bf == NULL)
    return NULL;
  bool got = fgets (boot, sizeof boot, bf) != NULL;
  fclose (bf);
  if (!got || statedir_start_time (pid, &start) < 0)
    return NULL;
  boot[strcspn (boot, "\n")] = '\0';
  return xasprintf ("%s:%ld:%llu", boot, (long) pid, start);
}

/* Read a maker label, "BOOT:PID:START" (BOOT at most len - 1 bytes, PID
 * and START decimal, nothing after): false when it is not one.  */
static bool
container_maker_parse (const char *maker, char *boot, size_t len, long *pid,
                       unsigned long long *start)
{
  const char *c1 = maker != NULL ? strchr (maker, ':') : NULL;
  if (c1 == NULL || c1 == maker || (size_t) (c1 - maker) >= len || c1[1] < '0'
      || c1[1] > '9')
    return false;
  char *end;
  errno = 0;
  *pid = strtol (c1 + 1, &end, 10);
  if (errno != 0 || *end != ':' || end[1] < '0' || end[1] > '9')
    return false;
  *start = strtoull (end + 1, &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  memcpy (boot, maker, (size_t) (c1 - maker));
  boot[c1 - maker] = '\0';
  return true;
}

/* Whether the maker a label names is provably gone: it is of this boot
 * (a label from another machine, or from before a reboot, cannot be told
 * from a live maker elsewhere, so it proves nothing) and no live process
 * has its pid and start time.  */
static bool
container_maker_gone (const char *maker, const char *own_boot)
{
  char boot[64];
  long pid;
  unsigned long long start;
  if (!container_maker_parse (maker, boot, sizeof boot, &pid, &start)
      || strcmp (boot, own_boot) != 0 || pid <= 0)
    return false;
  cleanup_free char *now = container_maker_of ((pid_t) pid);
  cleanup_free char *then = xasprintf ("%s:%ld:%llu", boot, pid, start);
  return now == NULL || strcmp (now, then) != 0;
}

/* Remove the containers crucible made whose makers are provably gone: a
 * crucible killed where the engine never saw its connection close, say.
 * Another live session's container is never touched.  Failures are not
 * the command's: the sweep is tried again at the next backend.  */
static void
container_sweep (struct container_backend *b)
{
  static const char filter[]
      = "/containers/"
        "json?all=1&filters=%7B%22label%22%3A%5B%22" CONTAINER_LABEL_MADE
        "%3Dcrucible%22%5D%7D";
  struct engine_request req = { .method = "GET", .path = filter };
  cleanup_free char *own = container_maker_of (getpid ());
  struct cr_error *err = NULL;
  yajl_val list = NULL;
  if (own == NULL || engine_call_json (b->client, &req, &list, &err) < 0)
    {
      cr_error_free (err);
      return;
    }
  own[strcspn (own, ":")] = '\0';
  for (size_t i = 0; YAJL_IS_ARRAY (list) && i < list->u.array.len; i++)
    {
      yajl_val c = list->u.array.values[i];
      const char *id = json_member_str (c, "Id");
      const char *maker
          = json_member_str (json_member (c, "Labels"), CONTAINER_LABEL_MAKER);
      if (id == NULL || strspn (id, "0123456789abcdef") != strlen (id)
          || !container_maker_gone (maker, own))
        continue;
      cleanup_free char *path = xasprintf ("/containers/%s?force=1&v=1", id);
      struct engine_request del = { .method = "DELETE", .path = path };
      struct engine_answer a;
      if (engine_call (b->client, &del, &a, &err) < 0)
        cr_error_clear (&err);
      engine_answer_clear (&a);
    }
  yajl_tree_free (list);
}

/* --- the container's description --------------------------------------------
 */

/* A tmpfs's options: sized, nosuid and nodev, and exec (the engines
 * default to noexec), writable by the unprivileged user (mode 1777:
 * Podman knows no uid= option for a tmpfs).  Owned.  */
static char *
container_tmpfs_options (uint64_t bytes)
{
  return xasprintf ("rw,nosuid,nodev,exec,size=%" PRIu64 ",mode=1777", bytes);
}

/* One rlimit of HostConfig.Ulimits.  */
static void
container_ulimit (struct jsonw *w, const char *name, uint64_t v)
{
  jsonw_object_open (w);
  jsonw_member_cstr (w, "Name", name);
  jsonw_member_uint (w, "Soft", v);
  jsonw_member_uint (w, "Hard", v);
  jsonw_object_close (w);
}

/* The HostConfig: every hardening item the engine holds from outside.  */
static void
container_host_config (struct jsonw *w, const struct container_session *s)
{
  const struct container_request *r = &s->req;
  jsonw_key (w, "HostConfig");
  jsonw_object_open (w);
  /* No network at all: no interface but lo.  */
  jsonw_member_cstr (w, "NetworkMode", "none");
  /* Nothing of the image can be changed; only the two tmpfs mounts take
   * writes, and they go with the container.  */
  jsonw_member_bool (w, "ReadonlyRootfs", true);
  jsonw_key (w, "Tmpfs");
  jsonw_object_open (w);
  cleanup_free char *ws = container_tmpfs_options (r->workspace_bytes);
  cleanup_free char *tmp = container_tmpfs_options (r->tmp_bytes);
  jsonw_member_cstr (w, "/workspace", ws);
  jsonw_member_cstr (w, "/tmp", tmp);
  jsonw_object_close (w);
  /* No host data: no bind, no volume, no mount beyond the two above.  */
  jsonw_key (w, "Binds");
  jsonw_array_open (w);
  jsonw_array_close (w);
  jsonw_key (w, "Mounts");
  jsonw_array_open (w);
  jsonw_array_close (w);
  /* Every capability dropped; no privilege gained through exec.  */
  jsonw_key (w, "CapDrop");
  jsonw_array_open (w);
  jsonw_cstr (w, "ALL");
  jsonw_array_close (w);
  jsonw_key (w, "SecurityOpt");
  jsonw_array_open (w);
  jsonw_cstr (w, "no-new-privileges");
  jsonw_array_close (w);
  jsonw_member_bool (w, "Privileged", false);
  /* Memory and swap capped together: capping memory alone lets a
   * container swap instead of stopping.  */
  jsonw_member_uint (w, "Memory", r->memory_bytes);
  jsonw_member_uint (w, "MemorySwap", r->memory_bytes);
  jsonw_member_uint (w, "PidsLimit", r->pids);
  /* The rlimits from outside too; the runner sets them again inside.
   * nproc is stated because Podman's default (1048576) is above what an
   * engine host usually allows a process without CAP_SYS_RESOURCE, which
   * fails the container's start.  */
  jsonw_key (w, "Ulimits");
  jsonw_array_open (w);
  container_ulimit (w, "nofile", r->open_files);
  container_ulimit (w, "fsize", r->file_bytes);
  container_ulimit (w, "nproc", r->pids);
  if (r->cpu_seconds > 0)
    container_ulimit (w, "cpu", r->cpu_seconds);
  jsonw_array_close (w);
  jsonw_member_cstr (w, "IpcMode", "private");
  /* The engine keeps no log of what the command printed (credentials
   * among it, maybe): the output goes only to the attached stream.  */
  jsonw_key (w, "LogConfig");
  jsonw_object_open (w);
  jsonw_member_cstr (w, "Type", "none");
  jsonw_object_close (w);
  /* Gone when it ends: nothing stays on the engine.  */
  jsonw_member_bool (w, "AutoRemove", true);
  jsonw_object_close (w);
}

/* The body of POST /containers/create.  Owned.  */
static char *
container_create_body (const struct container_session *s)
{
  struct jsonw *w = jsonw_new ();
  cleanup_free char *maker = container_maker_of (getpid ());
  jsonw_object_open (w);
  jsonw_member_cstr (w, "Image", s->image_id);
  jsonw_key (w, "Entrypoint");
  jsonw_array_open (w);
  jsonw_cstr (w, CONTAINER_RUNNER_PATH);
  jsonw_array_close (w);
  jsonw_key (w, "Cmd");
  jsonw_array_open (w);
  jsonw_array_close (w);
  jsonw_member_cstr (w, "User", s->req.user);
  jsonw_member_cstr (w, "WorkingDir", "/workspace");
  /* Only what the image needs; credentials travel with the job and are
   * never in the container's stored description.  */
  jsonw_key (w, "Env");
  jsonw_array_open (w);
  jsonw_cstr (w, CONTAINER_PATH_ENV);
  jsonw_array_close (w);
  jsonw_member_bool (w, "Tty", false);
  jsonw_member_bool (w, "AttachStdin", true);
  jsonw_member_bool (w, "AttachStdout", true);
  jsonw_member_bool (w, "AttachStderr", true);
  /* Stdin open for the job, and closed by the engine when the attached
   * connection ends: the dead-man switch.  */
  jsonw_member_bool (w, "OpenStdin", true);
  jsonw_member_bool (w, "StdinOnce", true);
  jsonw_member_bool (w, "NetworkDisabled", true);
  jsonw_key (w, "Labels");
  jsonw_object_open (w);
  jsonw_member_cstr (w, CONTAINER_LABEL_MADE, "crucible");
  jsonw_member_cstr (w, CONTAINER_LABEL_SESSION, s->base.id);
  jsonw_member_cstr (w, CONTAINER_LABEL_MAKER, maker != NULL ? maker : "");
  jsonw_object_close (w);
  container_host_config (w, s);
  jsonw_object_close (w);
  size_t len;
  char *body = jsonw_steal (w, &len);
  return body;
}

/* Whether the array v holds a string beginning with prefix.  */
static bool
container_array_has (yajl_val v, const char *prefix)
{
  for (size_t i = 0; v != NULL && YAJL_IS_ARRAY (v) && i < v->u.array.len; i++)
    {
      const char *s = YAJL_GET_STRING (v->u.array.values[i]);
      if (s != NULL && strncasecmp (s, prefix, strlen (prefix)) == 0)
        return true;
    }
  return false;
}

/* Whether v is absent, null or an empty array or object.  */
static bool
container_empty (yajl_val v)
{
  return v == NULL || YAJL_IS_NULL (v)
         || (YAJL_IS_ARRAY (v) && v->u.array.len == 0)
         || (YAJL_IS_OBJECT (v) && v->u.object.len == 0);
}

/* Whether a tmpfs's options as the engine kept them say nosuid, nodev
 * and not noexec.  */
static bool
container_tmpfs_holds (const char *opts)
{
  if (opts == NULL)
    return false;
  cleanup_free char *copy = xasprintf (",%s,", opts);
  return strstr (copy, ",nosuid,") != NULL && strstr (copy, ",nodev,") != NULL
         && strstr (copy, ",noexec,") == NULL;
}

/* Check the engine's own description of the container it made (GET
 * /containers/ID/json) against what was asked: the first item that does
 * not hold, by name, or NULL.  */
static const char *
container_readback_check (const struct container_session *s, yajl_val v)
{
  yajl_val hc = json_member (v, "HostConfig");
  yajl_val cfg = json_member (v, "Config");
  yajl_val tmpfs = json_member (hc, "Tmpfs");
  const char *net = json_member_str (hc, "NetworkMode");
  const char *user = json_member_str (cfg, "User");
  yajl_val env = json_member (cfg, "Env");
  if (net == NULL || strcmp (net, "none") != 0)
    return "NetworkMode none";
  if (!json_member_bool (hc, "ReadonlyRootfs", false))
    return "ReadonlyRootfs";
  if (!container_tmpfs_holds (json_member_str (tmpfs, "/workspace")))
    return "Tmpfs /workspace nosuid,nodev,exec";
  if (!container_tmpfs_holds (json_member_str (tmpfs, "/tmp")))
    return "Tmpfs /tmp nosuid,nodev,exec";
  if (!container_empty (json_member (hc, "Binds")))
    return "no Binds";
  if (!container_empty (json_member (hc, "CapAdd")))
    return "no CapAdd";
  if (container_empty (json_member (hc, "CapDrop")))
    return "CapDrop ALL";
  if (!container_array_has (json_member (hc, "SecurityOpt"),
                            "no-new-privileges"))
    return "SecurityOpt no-new-privileges";
  if (json_member_bool (hc, "Privileged", true))
    return "Privileged false";
  if ((uint64_t) json_member_int (hc, "Memory", 0) != s->req.memory_bytes)
    return "Memory";
  if ((uint64_t) json_member_int (hc, "MemorySwap", 0) != s->req.memory_bytes)
    return "MemorySwap equal to Memory";
  if ((uint64_t) json_member_int (hc, "PidsLimit", 0) != s->req.pids)
    return "PidsLimit";
  if (!json_member_bool (hc, "AutoRemove", false))
    return "AutoRemove";
  if (user == NULL || strcmp (user, s->req.user) != 0)
    return "User 65534:65534";
  /* Podman 4 reports StdinOnce false whatever was asked, and closes the
   * container's stdin when the attached connection ends all the same
   * (its conmon does): tests/container/run-switch.sh shows it for both
   * engines.  */
  if (!json_member_bool (cfg, "OpenStdin", false)
      || (!json_member_bool (cfg, "StdinOnce", false)
          && strcmp (engine_client_kind (s->b->client), "podman") != 0))
    return "OpenStdin and StdinOnce";
  /* The stored environment: the image's PATH and what an engine adds of
   * its own (Podman's container= and HOSTNAME, a HOME), none of the
   * command's.  */
  for (size_t i = 0; env != NULL && YAJL_IS_ARRAY (env) && i < env->u.array.len;
       i++)
    {
      const char *e = YAJL_GET_STRING (env->u.array.values[i]);
      static const char *const allowed[]
          = { "PATH=", "container=", "HOSTNAME=", "HOME=", "TERM=" };
      bool ok = false;
      for (size_t j = 0; e != NULL && j < sizeof allowed / sizeof *allowed; j++)
        ok |= strncmp (e, allowed[j], strlen (allowed[j])) == 0;
      if (!ok)
        return "no Env beyond the image's";
    }
  /* Mounts: the two tmpfs at most (Podman lists them), never a bind or a
   * volume.  */
  yajl_val mounts = json_member (v, "Mounts");
  for (size_t i = 0;
       mounts != NULL && YAJL_IS_ARRAY (mounts) && i < mounts->u.array.len; i++)
    {
      const char *t = json_member_str (mounts->u.array.values[i], "Type");
      if (t == NULL || strcmp (t, "tmpfs") != 0)
        return "no Mounts or Volumes";
    }
  return NULL;
}

/* Record what the readback v showed to hold (container_readback_check
 * passed), as the finish fact's fields (include/crucible/sandbox.h: one
 * "name value" a line): the container, its image, and the items asked in
 * the words of doc/container-backend.md's hardening table.  */
static void
container_verified_readback (struct container_session *s, yajl_val v)
{
  const char *image = json_member_str (v, "Image");
  pthread_mutex_lock (&s->lock);
  free (s->verified);
  s->verified = xasprintf (
      "container %.12s\nimage %s\nread_back NetworkMode none, "
      "ReadonlyRootfs, Tmpfs nosuid,nodev,exec, CapDrop ALL, "
      "no-new-privileges, User %s, Memory=MemorySwap=%" PRIu64
      ", PidsLimit %" PRIu64 ", no Binds, Mounts or command Env, AutoRemove",
      s->id, image != NULL ? image : "?", s->req.user, s->req.memory_bytes,
      s->req.pids);
  pthread_mutex_unlock (&s->lock);
}

static bool container_caps_zero (const char *caps);

/* Append to the record what the runner's facts p (checked) said from
 * inside.  */
static void
container_verified_inside (struct container_session *s, const uint8_t *p,
                           size_t len)
{
  static const char *const keys[] = {
    JOBPROTO_FACT_UID,      JOBPROTO_FACT_CAPS,     JOBPROTO_FACT_NNP,
    JOBPROTO_FACT_SECCOMP,  JOBPROTO_FACT_FILTER,   JOBPROTO_FACT_USERNS,
    JOBPROTO_FACT_DUMPABLE, JOBPROTO_FACT_ROOT_RO,  JOBPROTO_FACT_MEMORY_MAX,
    JOBPROTO_FACT_SWAP_MAX, JOBPROTO_FACT_PIDS_MAX, JOBPROTO_FACT_RLIMITS
  };
  struct buf b = BUF_INIT;
  pthread_mutex_lock (&s->lock);
  buf_printf (&b, "%s\ninside", s->verified != NULL ? s->verified : "");
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    {
      cleanup_free char *val = jobproto_kv (p, len, keys[i]);
      /* The capability sets were checked all zero: said as "0", so that
       * the record stays within the journal's bound for a string.  */
      if (strcmp (keys[i], JOBPROTO_FACT_CAPS) == 0
          && container_caps_zero (val))
        buf_printf (&b, " %s=0", keys[i]);
      else
        buf_printf (&b, " %s=%s", keys[i], val != NULL ? val : "?");
    }
  free (s->verified);
  s->verified = buf_steal (&b, NULL);
  pthread_mutex_unlock (&s->lock);
}

/* --- facts from inside ------------------------------------------------------
 */

/* Whether every comma-separated hexadecimal word of caps is zero.  */
static bool
container_caps_zero (const char *caps)
{
  if (caps == NULL || *caps == '\0')
    return false;
  for (const char *p = caps; *p; p++)
    if (*p != '0' && *p != ',' && *p != 'x')
      return false;
  return true;
}

/* Whether a mount fact ("tmpfs,rw,nosuid,...") is a tmpfs that holds.  */
static bool
container_mount_fact_holds (const char *fact)
{
  return fact != NULL && strncmp (fact, "tmpfs,", 6) == 0
         && container_tmpfs_holds (fact + 6);
}

/* Whether the fact is the number want.  */
static bool
container_fact_is (const char *fact, uint64_t want)
{
  char *end = NULL;
  if (fact == NULL || *fact == '\0')
    return false;
  errno = 0;
  unsigned long long v = strtoull (fact, &end, 10);
  return errno == 0 && *end == '\0' && v == want;
}

/* Check the runner's 'R' facts against what was asked: the first that
 * does not hold, in words, or NULL.  Owned.  The runner runs beside the
 * workload in the container, so this is a claim compared, and what the
 * engine said of the container was checked before.  */
static char *
container_facts_check (const struct container_session *s, const uint8_t *p,
                       size_t len)
{
  static const char *const keys[] = {
    JOBPROTO_FACT_UID,      JOBPROTO_FACT_GID,        JOBPROTO_FACT_GROUPS,
    JOBPROTO_FACT_NNP,      JOBPROTO_FACT_CAPS,       JOBPROTO_FACT_SECCOMP,
    JOBPROTO_FACT_ROOT_RO,  JOBPROTO_FACT_WORKSPACE,  JOBPROTO_FACT_TMP,
    JOBPROTO_FACT_NET,      JOBPROTO_FACT_MEMORY_MAX, JOBPROTO_FACT_SWAP_MAX,
    JOBPROTO_FACT_PIDS_MAX, JOBPROTO_FACT_RLIMITS,    JOBPROTO_FACT_FILTER,
    JOBPROTO_FACT_USERNS,   JOBPROTO_FACT_DUMPABLE,
  };
  enum
  {
    UID,
    GID,
    GROUPS,
    NNP,
    CAPS,
    SECCOMP,
    ROOT_RO,
    WS,
    TMP,
    NET,
    MEM,
    SWAP,
    PIDS,
    RLIMITS,
    FILTER,
    USERNS,
    DUMPABLE,
    NKEYS
  };
  char *v[NKEYS];
  char *why = NULL;
  for (size_t i = 0; i < NKEYS; i++)
    v[i] = jobproto_kv (p, len, keys[i]);
  for (size_t i = 0; why == NULL && i < NKEYS; i++)
    if (v[i] == NULL && i != NET && i != GROUPS)
      why = xasprintf ("the runner did not say %s", keys[i]);
  if (why != NULL)
    goto out;
  if (strcmp (v[UID], "65534") != 0 || strcmp (v[GID], "65534") != 0)
    why = xasprintf ("it runs as uid %s gid %s, not 65534", v[UID], v[GID]);
  else if (v[GROUPS] != NULL && v[GROUPS][0] != '\0'
           && strcmp (v[GROUPS], "65534") != 0)
    why = xasprintf ("it has the supplementary groups %s", v[GROUPS]);
  else if (strcmp (v[NNP], "1") != 0)
    why = xasprintf ("no_new_privs is %s", v[NNP]);
  else if (!container_caps_zero (v[CAPS]))
    why = xasprintf ("it holds capabilities (%s)", v[CAPS]);
  else if (s->seccomp && strcmp (v[SECCOMP], "2") != 0)
    why = xasprintf ("no seccomp filter (Seccomp %s)", v[SECCOMP]);
  else if (strcmp (v[ROOT_RO], "1") != 0)
    why = xstrdup ("the root filesystem is writable");
  else if (!container_mount_fact_holds (v[WS]))
    why = xasprintf ("/workspace is %s", v[WS]);
  else if (!container_mount_fact_holds (v[TMP]))
    why = xasprintf ("/tmp is %s", v[TMP]);
  else if (v[NET] != NULL && v[NET][0] != '\0')
    why = xasprintf ("it has network interfaces (%s)", v[NET]);
  else if (!container_fact_is (v[MEM], s->req.memory_bytes))
    why = xasprintf ("memory_limit: the cgroup's memory limit is %s, "
                     "crucible asked for %" PRIu64
                     " (the engine accepted a limit it does not enforce)",
                     v[MEM], s->req.memory_bytes);
  else if (!container_fact_is (v[SWAP], s->req.memory_bytes))
    why = xasprintf ("memory_limit: the cgroup's memory and swap limit is "
                     "%s, crucible asked for %" PRIu64,
                     v[SWAP], s->req.memory_bytes);
  else if (!container_fact_is (v[PIDS], s->req.pids))
    why = xasprintf ("process_limit: the cgroup's process limit is %s, "
                     "crucible asked for %" PRIu64
                     " (the engine accepted a limit it does not enforce)",
                     v[PIDS], s->req.pids);
  else if (strcmp (v[FILTER], "crucible") != 0)
    why = xasprintf ("kernel_surface: the runner's own seccomp filter is "
                     "not loaded (%s)",
                     v[FILTER]);
  else if (strcmp (v[USERNS], "refused") != 0)
    why = xasprintf ("kernel_surface: a new user namespace is %s inside",
                     v[USERNS]);
  else if (strcmp (v[DUMPABLE], "0") != 0)
    why = xasprintf ("the job runner is dumpable (%s): the command could "
                     "ptrace it and forge its answer",
                     v[DUMPABLE]);
out:
  for (size_t i = 0; i < NKEYS; i++)
    free (v[i]);
  return why;
}

/* --- events -----------------------------------------------------------------
 */

/* Queue one event and wake the supervisor.  */
static void
container_push (struct container_session *s, const struct container_event *e,
                const char *message)
{
  pthread_mutex_lock (&s->lock);
  if (s->n_events < CONTAINER_EVENTS_MAX)
    s->events[s->n_events++] = *e;
  if (message != NULL && s->message == NULL)
    s->message = xstrdup (message);
  if (e->kind == SANDBOX_EVENT_DONE)
    s->done = true;
  pthread_mutex_unlock (&s->lock);
  char one = 'e';
  ssize_t n = write (s->ev_pipe[1], &one, 1);
  (void) n;
}

/* Queue the workload's ending.  */
static void
container_push_exit (struct container_session *s, int wait_status)
{
  struct container_event e
      = { .kind = SANDBOX_EVENT_EXITED, .wait_status = wait_status };
  container_push (s, &e, NULL);
}

/* Queue a failure to set the command up.  */
static void
container_push_failed (struct container_session *s, const char *message)
{
  struct container_event e = { .kind = SANDBOX_EVENT_FAILED,
                               .error = 0,
                               .failure = SANDBOX_FAILED_SETUP };
  container_push (s, &e, message);
}

/* --- the session's thread ---------------------------------------------------
 */

static void container_session_free (struct container_session *s);

/* Where the thread is in one command's life.  */
struct container_run
{
  struct container_session *s;
  struct engine_client *c;
  struct engine_stream *stream;
  struct engine_demux demux;
  struct jobproto_reader reader;
  int job_fd;         /* the job writer's pipe, or -1 once read */
  int writer_fd;      /* its write end, the writer's */
  char *writer_error; /* why the writer stopped, or NULL */
  pthread_t writer;
  bool writer_started;
  struct job job;       /* what the writer writes */
  struct job_sent sent; /* what it wrote of the workspace */
  bool writer_joined;
  struct buf out; /* bytes waiting to be sent to the engine */
  size_t out_off;
  struct buf stderr_text; /* the runner's own stderr, bounded */
  bool ready;             /* 'R' came and held */
  bool exited;            /* 'X' came */
  bool exit_reported;
  int wait_status;
  bool deadline_hit; /* 'X' said the runner's deadline came */
  bool failed;       /* a FAILED event was queued */
  bool stop_asked;
  uint64_t kill_at;    /* when to tell the engine to kill, or 0 */
  uint64_t close_at;   /* when to close the connection, or 0 */
  uint64_t hold_until; /* a deadline exit held until then, or 0 */
  bool killed;
  bool changes_done;      /* the change set took its last frame */
  bool container_started; /* its start was accepted */
  char *changes_why;      /* why there is no change set, or NULL */
  /* A kept container waiting for its command: the runner may say nothing
   * yet, and a byte it sends on stdout breaks it (early).  */
  bool waiting;
  bool early;
  /* 'Z' came: the runner has said all it will, and exits.  */
  bool answered;
};

/* Fail the command: queue FAILED with what, once, and have the container
 * killed at once.  */
static void
container_run_fail (struct container_run *r, const char *what)
{
  if (!r->failed && !r->exit_reported)
    {
      /* The failure stands for the command's ending, which follows it as
       * every backend's does (125: nothing of the command ran).  */
      container_push_failed (r->s, what);
      r->exit_reported = true;
      container_push_exit (r->s, 125 << 8);
    }
  r->failed = true;
  if (r->kill_at == 0)
    r->kill_at = clock_now_ms ();
}

/* Ask the engine one thing about the container, ignoring what it says:
 * a kill or a removal is confirmed by looking afterwards.  */
static void
container_engine_poke (struct container_run *r, const char *method,
                       const char *what)
{
  cleanup_free char *path = xasprintf ("/containers/%s%s", r->s->id, what);
  struct engine_request req
      = { .method = method, .path = path, .timeout_ms = 10000 };
  struct engine_answer a;
  struct cr_error *err = NULL;
  engine_call (r->c, &req, &a, &err);
  cr_error_free (err);
  engine_answer_clear (&a);
}

/* Whether the engine no longer knows the container: its description
 * answers 404.  */
static bool
container_gone (struct container_run *r)
{
  cleanup_free char *path = xasprintf ("/containers/%s/json", r->s->id);
  struct engine_request req
      = { .method = "GET", .path = path, .timeout_ms = 5000 };
  struct engine_answer a;
  struct cr_error *err = NULL;
  engine_call (r->c, &req, &a, &err);
  bool gone = a.status == 404;
  cr_error_free (err);
  engine_answer_clear (&a);
  return gone;
}

/* Confirm the container is gone: the engine removes it (AutoRemove) once
 * it ends; past the budget crucible removes it itself and looks again.
 * false when it is still there after both.  */
static bool
container_confirm_gone (struct container_run *r)
{
  struct timespec pause = { 0, 20L * 1000 * 1000 };
  /* Removed now rather than left to AutoRemove, which acts only once the
   * engine has seen the container end (and which Podman leaves to a
   * cleanup process of its own, 0.6 s later): never started, it is not
   * AutoRemove's at all.  */
  container_engine_poke (r, "DELETE", "?force=1&v=1");
  for (int round = 0; round < 2; round++)
    {
      uint64_t until = clock_now_ms () + CONTAINER_REMOVE_BUDGET_MS;
      do
        {
          if (container_gone (r))
            return true;
          nanosleep (&pause, NULL);
        }
      while (clock_now_ms () < until);
      container_engine_poke (r, "DELETE", "?force=1&v=1");
    }
  return container_gone (r);
}

/* Make the container: create it with every hardening item, read back
 * what the engine made and check it, attach, start it.  */
static int
container_make (struct container_run *r, struct cr_error **err)
{
  struct container_session *s = r->s;
  cleanup_free char *body = container_create_body (s);
  cleanup_free char *name
      = xasprintf ("/containers/create?name=crucible-%s", s->base.id);
  struct engine_request req = { .method = "POST",
                                .path = name,
                                .content_type = "application/json",
                                .body = body,
                                .body_len = strlen (body) };
  yajl_val v = NULL;
  if (engine_call_json (r->c, &req, &v, err) < 0)
    return cr_error_prefix (err, "making the command's container");
  const char *id = json_member_str (v, "Id");
  if (id == NULL || strlen (id) >= sizeof s->id
      || strspn (id, "0123456789abcdef") != strlen (id) || *id == '\0')
    {
      yajl_tree_free (v);
      return engine_fail (r->c, &req, err, "the answer names no container");
    }
  snprintf (s->id, sizeof s->id, "%s", id);
  yajl_tree_free (v);
  cleanup_free char *path = xasprintf ("/containers/%s/json", s->id);
  struct engine_request get = { .method = "GET", .path = path };
  if (engine_call_json (r->c, &get, &v, err) < 0)
    return cr_error_prefix (err, "reading back the command's container");
  const char *bad = container_readback_check (s, v);
  if (bad == NULL)
    container_verified_readback (s, v);
  yajl_tree_free (v);
  if (bad != NULL)
    return cr_error_set (err, 0,
                         "the engine %s did not make the container as asked: "
                         "%s does not hold in its description",
                         engine_client_name (r->c), bad);
  if (engine_attach (r->c, s->id, &r->stream, err) < 0)
    return cr_error_prefix (err, "attaching to the command's container");
  cleanup_free char *start = xasprintf ("/containers/%s/start", s->id);
  struct engine_request st = { .method = "POST", .path = start };
  struct engine_answer a;
  int ret = engine_call (r->c, &st, &a, err);
  engine_answer_clear (&a);
  if (ret < 0)
    return cr_error_prefix (err, "starting the command's container");
  r->container_started = true;
  return 0;
}

/* The job writer's thread: the whole job onto the pipe, then its end.  */
static void *
container_writer_main (void *data)
{
  struct container_run *r = data;
  struct cr_error *err = NULL;
  if (job_write (r->writer_fd, &r->job, &r->sent, &err) < 0)
    {
      /* The runner sees a job cut short and fails it; the words are kept
       * for the message.  */
      r->writer_error = xstrdup (err->msg);
      cr_error_free (err);
    }
  close (r->writer_fd);
  return NULL;
}

/* Start writing the job: its limits, the command's environment and line,
 * the workspace, 'G'.  */
static int
container_start_job (struct container_run *r, struct cr_error **err)
{
  struct container_session *s = r->s;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the job's pipe");
  uint64_t deadline_ms = (uint64_t) (s->command_seconds * 1000.0);
  deadline_ms = deadline_ms > 2 * CONTAINER_DEADLINE_MARGIN_MS
                    ? deadline_ms - CONTAINER_DEADLINE_MARGIN_MS
                    : deadline_ms / 2 + 1;
  r->job = (struct job){
    .line = s->line,
    .envp = s->envp,
    .root = s->root,
    .leave_out = (const char *const *) s->leave_out,
    .limits = {
      .cpu_s = s->req.cpu_seconds,
      .as_bytes = s->as_bytes,
      .fsize_bytes = s->req.file_bytes,
      .nproc = s->req.pids,
      .nofile = s->req.open_files,
      .deadline_ms = deadline_ms,
      .grace_ms = CONTAINER_GRACE_MS,
      .changes_max = CONTAINER_CHANGES_MAX,
      .stdio = s->stdio,
      .allow_binding = s->allow_binding,
    },
  };
  r->writer_fd = p[1];
  r->job_fd = p[0];
  if (pthread_create (&r->writer, NULL, container_writer_main, r) != 0)
    {
      close (p[0]);
      close (p[1]);
      r->job_fd = -1;
      return cr_error_set (err, 0, "starting the job's writer");
    }
  r->writer_started = true;
  return 0;
}

/* Write all of the command's output to the session's output pipe; a
 * reader that has gone is not the container's failure.  */
static void
container_output (struct container_run *r, const uint8_t *p, size_t len)
{
  while (len > 0 && r->s->out_fd >= 0)
    {
      ssize_t n = write (r->s->out_fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          close (r->s->out_fd);
          r->s->out_fd = -1;
          return;
        }
      p += n;
      len -= (size_t) n;
    }
}

/* Write all of the workload's stderr (stdio) to its pipe; a reader that
 * has gone is not the container's failure.  */
static void
container_error_output (struct container_run *r, const uint8_t *p, size_t len)
{
  while (len > 0 && r->s->err_fd >= 0)
    {
      ssize_t n = write (r->s->err_fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          close (r->s->err_fd);
          r->s->err_fd = -1;
          return;
        }
      p += n;
      len -= (size_t) n;
    }
}

/* The number after key at the start of text ("exit=3 deadline=1"),
 * ended by a space or the end; -1 when there is none.  */
static int
container_ending_number (const char *text, const char *key)
{
  size_t k = strlen (key);
  if (strncmp (text, key, k) != 0 || text[k] < '0' || text[k] > '9')
    return -1;
  char *end;
  errno = 0;
  long v = strtol (text + k, &end, 10);
  if (errno != 0 || (*end != '\0' && *end != ' ') || v > 1000)
    return -1;
  return (int) v;
}

/* Read "exit=N" or "signal=N" and its words into a wait status.  */
static int
container_exit_status (struct container_run *r, const uint8_t *p, size_t len)
{
  char text[128];
  int n = -1;
  if (len >= sizeof text || memchr (p, '\0', len) != NULL)
    return -1;
  memcpy (text, p, len);
  text[len] = '\0';
  r->deadline_hit = strstr (text, " deadline=1") != NULL;
  bool stopped = strstr (text, " stopped=1") != NULL;
  if ((n = container_ending_number (text, "exit=")) >= 0 && n < 256)
    r->wait_status = n << 8;
  else if ((n = container_ending_number (text, "signal=")) > 0 && n < 128)
    r->wait_status = n;
  else
    return -1;
  r->s->ordinary_exit = !r->deadline_hit && !stopped && !r->stop_asked
                        && WIFEXITED (r->wait_status);
  return 0;
}

/* Wait for the job's writer, which has written its last byte once the
 * runner answers after 'G': what it sent is the change set's input.  */
static void
container_join_writer (struct container_run *r)
{
  if (!r->writer_started || r->writer_joined)
    return;
  pthread_join (r->writer, NULL);
  r->writer_joined = true;
}

/* Start the change set the runner's frames after an ordinary exit go
 * to; a change set that cannot be made publishes nothing.  */
static void
container_begin_changes (struct container_run *r)
{
  struct container_session *s = r->s;
  struct cr_error *err = NULL;
  if (!s->ordinary_exit)
    return;
  container_join_writer (r);
  s->changes = job_changes_new (s->statedir, &r->job, &r->sent, &err);
  if (s->changes == NULL)
    {
      r->changes_why = xstrdup (err->msg);
      cr_error_free (err);
    }
}

/* Give one frame of the changes stream to the change set, which checks
 * and stages it; a refusal keeps its words for the note.  */
static void
container_keep_change (struct container_run *r, enum jobproto_type type,
                       const uint8_t *p, size_t len)
{
  struct container_session *s = r->s;
  struct cr_error *err = NULL;
  if (s->changes == NULL || r->changes_done)
    return;
  int rc = job_changes_frame (s->changes, type, p, len, &err);
  if (rc != 0)
    r->changes_done = true;
  cr_error_free (err);
}

/* Report the ending held back (a deadline's), or hold it: a command the
 * runner stopped at its deadline is reported when the supervisor's own
 * deadline stops it, so that it is told as having run too long.  */
static void
container_report_exit (struct container_run *r, bool now)
{
  if (r->exit_reported || !r->exited)
    return;
  if (!now && r->deadline_hit && !r->stop_asked)
    {
      if (r->hold_until == 0)
        r->hold_until = clock_now_ms () + 2 * CONTAINER_DEADLINE_MARGIN_MS
                        + CONTAINER_STOP_BUDGET_MS;
      return;
    }
  r->exit_reported = true;
  container_push_exit (r->s, r->wait_status);
}

/* One frame from the runner.  */
static int
container_on_frame (void *data, enum jobproto_type type, const uint8_t *payload,
                    size_t len, struct cr_error **err)
{
  struct container_run *r = data;
  if (type == ANS_READY && !r->ready && !r->exited)
    {
      cleanup_free char *why = container_facts_check (r->s, payload, len);
      if (why != NULL)
        return cr_error_set (err, 0,
                             "the container's hardening does not hold from "
                             "inside: %s",
                             why);
      container_verified_inside (r->s, payload, len);
      r->ready = true;
      return 0;
    }
  if (type == ANS_OUTPUT && r->ready && !r->exited)
    {
      container_output (r, payload, len);
      return 0;
    }
  if (type == ANS_ERROR_OUTPUT && r->s->stdio && r->ready && !r->exited)
    {
      container_error_output (r, payload, len);
      return 0;
    }
  if (type == ANS_EXIT && r->ready && !r->exited)
    {
      if (container_exit_status (r, payload, len) < 0)
        return cr_error_set (err, 0,
                             "the runner's ending \"%.*s\" is "
                             "malformed",
                             (int) (len < 60 ? len : 60),
                             (const char *) payload);
      r->exited = true;
      container_report_exit (r, false);
      container_begin_changes (r);
      return 0;
    }
  if ((type == ANS_CHANGES || type == ANS_DELETED || type == ANS_END)
      && r->exited)
    {
      container_keep_change (r, type, payload, len);
      r->answered |= type == ANS_END;
      return 0;
    }
  if (type == ANS_FAILED && r->exited)
    {
      /* The command ended; its changes could not be sent whole.  */
      if (r->s->changes != NULL && !r->changes_done)
        {
          cleanup_free char *why = xasprintf (
              "the job runner failed sending the changes: %.*s",
              (int) (len < 400 ? len : 400), (const char *) payload);
          job_changes_refuse (r->s->changes, why);
        }
      r->changes_done = true;
      return 0;
    }
  if (type == ANS_FAILED)
    return cr_error_set (err, 0, "the job runner failed: %.*s",
                         (int) (len < 400 ? len : 400), (const char *) payload);
  return cr_error_set (err, 0, "the job runner sent a frame '%c' out of order",
                       (int) type);
}

/* One run of the stream's payload: the runner's frames on stdout, its
 * own words on stderr.  */
static int
container_on_piece (void *data, int stream, const unsigned char *p, size_t n)
{
  struct container_run *r = data;
  struct cr_error *err = NULL;
  if (stream == 2 || stream == 0)
    {
      size_t room = CONTAINER_STDERR_MAX - r->stderr_text.len;
      buf_append (&r->stderr_text, p, n < room ? n : room);
      return 0;
    }
  if (r->waiting)
    {
      /* Nothing was asked of it yet: a kept container that speaks is
       * not one to give a command.  */
      r->early = true;
      return 0;
    }
  if (r->failed)
    return 0;
  if (jobproto_reader_feed (&r->reader, p, n, container_on_frame, r, &err) != 0)
    {
      container_run_fail (r, err != NULL ? err->msg
                                         : "the runner's answer "
                                           "broke the job protocol");
      cr_error_free (err);
    }
  return 0;
}

/* A stop from the supervisor: 'K' to the runner when the job is whole
 * (else straight to the outer kill), and the outer kill's timers.  */
static void
container_on_stop (struct container_run *r, int signo)
{
  uint64_t now = clock_now_ms ();
  struct cr_error *err = NULL;
  if (r->stop_asked)
    return;
  r->stop_asked = true;
  /* A deadline's ending that was held is the supervisor's to tell now. */
  container_report_exit (r, true);
  if (r->exited)
    return;
  if (r->job_fd < 0 && r->ready)
    {
      char sig[16];
      int n = snprintf (sig, sizeof sig, "%d", signo);
      if (jobproto_put (&r->out, JOB_STOP, sig, (size_t) n, &err) < 0)
        cr_error_free (err);
      r->kill_at = now + CONTAINER_STOP_BUDGET_MS;
    }
  else
    r->kill_at = now;
}

/* Move bytes of the job from the writer's pipe to the output buffer.  */
static void
container_pump_job (struct container_run *r)
{
  char chunk[65536];
  ssize_t n = read (r->job_fd, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR)
    return;
  if (n <= 0)
    {
      close (r->job_fd);
      r->job_fd = -1;
      return;
    }
  buf_append (&r->out, chunk, (size_t) n);
}

/* Move what the workload's standard input brings (stdio) into 'I'
 * frames after the job, and 'N' at its end.  */
static void
container_pump_input (struct container_run *r)
{
  struct container_session *s = r->s;
  struct cr_error *err = NULL;
  char chunk[65536];
  ssize_t n = read (s->in_fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n > 0)
    {
      if (jobproto_put (&r->out, JOB_INPUT, chunk, (size_t) n, &err) < 0)
        cr_error_free (err);
      return;
    }
  if (jobproto_put (&r->out, JOB_INPUT_END, "", 0, &err) < 0)
    cr_error_free (err);
  close (s->in_fd);
  s->in_fd = -1;
}

/* Send what waits; false on a broken connection.  */
static bool
container_flush (struct container_run *r)
{
  struct cr_error *err = NULL;
  while (r->out_off < r->out.len)
    {
      ssize_t n = engine_stream_send (r->stream, r->out.data + r->out_off,
                                      r->out.len - r->out_off, &err);
      if (n < 0)
        {
          cr_error_free (err);
          return false;
        }
      if (n == 0)
        return true;
      r->out_off += (size_t) n;
    }
  r->out.len = 0;
  r->out_off = 0;
  return true;
}

/* Read what the engine sent; false at the end of the stream.  */
static bool
container_drain (struct container_run *r)
{
  unsigned char chunk[65536];
  struct cr_error *err = NULL;
  for (;;)
    {
      ssize_t n = engine_stream_recv (r->stream, chunk, sizeof chunk, &err);
      if (n == -2)
        return true;
      if (n <= 0)
        {
          cr_error_free (err);
          return false;
        }
      if (engine_demux_feed (&r->demux, chunk, (size_t) n, container_on_piece,
                             r, &err)
          < 0)
        {
          container_run_fail (r, err->msg);
          cr_error_free (err);
          return false;
        }
    }
}

/* The poll timeout until the nearest of the run's timers.  */
static int
container_timeout (const struct container_run *r)
{
  uint64_t now = clock_now_ms ();
  uint64_t next = 0;
  const uint64_t at[] = { r->killed ? 0 : r->kill_at, r->close_at,
                          r->exit_reported ? 0 : r->hold_until };
  for (size_t i = 0; i < sizeof at / sizeof *at; i++)
    if (at[i] != 0 && (next == 0 || at[i] < next))
      next = at[i];
  if (next == 0)
    return -1;
  return next <= now ? 0 : (int) (next - now);
}

/* The timers: the outer kill, the connection's close, a held ending.  */
static bool
container_timers (struct container_run *r)
{
  uint64_t now = clock_now_ms ();
  if (r->hold_until != 0 && now >= r->hold_until)
    container_report_exit (r, true);
  if (r->kill_at != 0 && !r->killed && now >= r->kill_at)
    {
      r->killed = true;
      container_engine_poke (r, "POST", "/kill?signal=KILL");
      r->close_at = clock_now_ms () + CONTAINER_KILL_BUDGET_MS;
    }
  return !(r->close_at != 0 && now >= r->close_at);
}

/* Serve the attached stream until it ends.  */
static void
container_serve (struct container_run *r)
{
  struct container_session *s = r->s;
  for (;;)
    {
      bool abandoned;
      pthread_mutex_lock (&s->lock);
      abandoned = s->abandoned;
      pthread_mutex_unlock (&s->lock);
      if (abandoned)
        return; /* closing the connection ends the container */
      /* The workload's input goes after the whole job, bounded too.  */
      bool input = r->job_fd < 0 && r->writer_started && !r->exited
                   && s->in_fd >= 0 && r->out.len < 65536;
      struct pollfd p[4] = {
        { .fd = engine_stream_fd (r->stream), .events = POLLIN },
        { .fd = s->stop_pipe[0], .events = POLLIN },
        { .fd = r->out.len < 65536 ? r->job_fd : -1, .events = POLLIN },
        { .fd = input ? s->in_fd : -1, .events = POLLIN },
      };
      if (r->out_off < r->out.len)
        p[0].events |= POLLOUT;
      int n = poll (p, 4, container_timeout (r));
      if (n < 0 && errno != EINTR)
        return;
      if (p[1].revents)
        {
          int signo = SIGKILL;
          ssize_t got = read (s->stop_pipe[0], &signo, sizeof signo);
          if (got == (ssize_t) sizeof signo)
            container_on_stop (r, signo);
          else if (got == 0)
            return;
        }
      if (p[2].revents)
        container_pump_job (r);
      if (input && p[3].revents)
        container_pump_input (r);
      if (!container_flush (r))
        return;
      /* Read even without POLLIN: TLS may hold decrypted bytes.  */
      if (!container_drain (r))
        return;
      if (!container_timers (r))
        return;
      /* The answer is whole: the connection is not kept open for the
       * engine to notice the runner's exit (0.3 s on dockerd); the
       * container is removed and its removal confirmed next.  */
      if (r->answered)
        return;
    }
}

/* A deadline's ending is held for the supervisor's own deadline, which
 * comes just after the runner's, so that it is told as ran too long; the
 * runner exits as soon as it has said how the command ended, so the hold
 * outlasts the stream: wait for the supervisor's stop, or the hold's
 * end.  */
static void
container_hold_ending (struct container_run *r)
{
  while (r->deadline_hit && !r->stop_asked && !r->exit_reported)
    {
      uint64_t now = clock_now_ms ();
      if (r->hold_until == 0 || now >= r->hold_until)
        break;
      struct pollfd p = { .fd = r->s->stop_pipe[0], .events = POLLIN };
      int n = poll (&p, 1, (int) (r->hold_until - now));
      if (n < 0 && errno != EINTR)
        break;
      if (n > 0)
        {
          int signo = SIGKILL;
          ssize_t got = read (r->s->stop_pipe[0], &signo, sizeof signo);
          if (got == (ssize_t) sizeof signo)
            container_on_stop (r, signo);
          else if (got == 0)
            break;
        }
    }
}

/* What the ending of the stream means when no 'X' came: a stopped
 * command was killed; anything else is the container failing.  */
static void
container_after_stream (struct container_run *r)
{
  if (r->s->changes != NULL && !job_changes_complete (r->s->changes)
      && !r->changes_done)
    job_changes_refuse (r->s->changes, "the changes stream ended before its "
                                       "end ('Z')");
  if (r->exited)
    {
      container_hold_ending (r);
      container_report_exit (r, true);
      return;
    }
  if (r->failed)
    return;
  if (r->stop_asked)
    {
      r->exit_reported = true;
      container_push_exit (r->s, SIGKILL);
      return;
    }
  buf_puts (&r->stderr_text, "");
  cleanup_free char *why = xasprintf (
      "the command's container ended without saying how the command ended%s%s",
      r->stderr_text.len > 0 ? "; it said: " : "", r->stderr_text.data);
  container_run_fail (r, why);
}

/* Note why a kept container cannot be given its command, once: a take
 * finds it stale (container_ahead_current), and a start that raced with
 * this fails the command with the words.  */
static void
container_ahead_break (struct container_session *s, const char *why)
{
  pthread_mutex_lock (&s->lock);
  if (s->ahead_broken == NULL)
    s->ahead_broken = xstrdup (why);
  pthread_mutex_unlock (&s->lock);
}

/* A kept container waits for its command: read what the attached stream
 * brings (it must bring nothing: its end, or a byte of the runner's, is
 * the container gone or broken) until start says go.  true for go, false
 * for the word to remove it unused ('q', or the pipe's end).  */
static bool
container_await_go (struct container_run *r)
{
  struct container_session *s = r->s;
  bool watching = r->stream != NULL;
  r->waiting = true;
  for (;;)
    {
      struct pollfd p[2] = {
        { .fd = s->go_pipe[0], .events = POLLIN },
        { .fd = watching ? engine_stream_fd (r->stream) : -1,
          .events = POLLIN },
      };
      int n = poll (p, 2, -1);
      if (n < 0 && errno != EINTR)
        return false;
      if (p[0].revents)
        {
          char word = 'q';
          ssize_t got = read (s->go_pipe[0], &word, 1);
          if (got < 0 && errno == EINTR)
            continue;
          r->waiting = false;
          return got == 1 && word == 'g';
        }
      if (watching && p[1].revents)
        {
          /* Read even a TLS record that holds nothing for us.  */
          if (!container_drain (r) || r->early)
            {
              buf_puts (&r->stderr_text, "");
              cleanup_free char *why = xasprintf (
                  "the container kept for the command ended before it%s%s",
                  r->stderr_text.len > 0 ? "; it said: " : "",
                  r->stderr_text.data);
              container_ahead_break (s, why);
              watching = false;
            }
        }
    }
}

/* Make the command's container, or take the one kept (prepared ahead)
 * once start says go, then run the job; false when a kept container is
 * to be removed unused (nothing is reported then).  */
static bool
container_run_job (struct container_run *r)
{
  struct container_session *s = r->s;
  struct cr_error *err = NULL;
  cleanup_free char *made_why = NULL;
  if (container_make (r, &err) < 0)
    {
      made_why = xstrdup (err->msg);
      cr_error_clear (&err);
      if (s->ahead)
        {
          container_ahead_break (s, made_why);
          /* Made and not started, it has no dead-man switch: removed now
           * rather than left on the engine while it would wait.  */
          if (s->id[0] != '\0')
            container_engine_poke (r, "DELETE", "?force=1&v=1");
        }
    }
  if (s->ahead && !container_await_go (r))
    return false;
  pthread_mutex_lock (&s->lock);
  cleanup_free char *broken
      = s->ahead_broken != NULL ? xstrdup (s->ahead_broken) : NULL;
  pthread_mutex_unlock (&s->lock);
  if (made_why != NULL || broken != NULL)
    container_run_fail (r, made_why != NULL ? made_why : broken);
  else if (container_start_job (r, &err) < 0)
    {
      container_run_fail (r, err->msg);
      cr_error_clear (&err);
    }
  else
    container_serve (r);
  return true;
}

/* The session's thread: one command's container, from its making to its
 * removal confirmed.  */
static void *
container_thread_main (void *data)
{
  struct container_session *s = data;
  struct container_run r = { .s = s, .c = s->b->client, .job_fd = -1 };
  jobproto_reader_init (&r.reader);
  bool ran = container_run_job (&r);
  /* Close first: the connection's end is the container's stdin's end, on
   * which the runner kills everything (the dead-man switch).  */
  engine_stream_close (r.stream);
  r.stream = NULL;
  if (r.job_fd >= 0)
    close (r.job_fd);
  container_join_writer (&r);
  job_sent_clear (&r.sent);
  free (r.writer_error);
  free (r.changes_why);
  if (s->out_fd >= 0)
    close (s->out_fd);
  s->out_fd = -1;
  if (s->err_fd >= 0)
    close (s->err_fd);
  s->err_fd = -1;
  if (s->in_fd >= 0)
    close (s->in_fd);
  s->in_fd = -1;
  if (ran)
    container_after_stream (&r);
  else if (s->id[0] != '\0')
    {
      /* Kept and not used: removed now rather than waited for.  */
      container_engine_poke (&r, "DELETE", "?force=1&v=1");
    }
  bool gone = s->id[0] == '\0' || container_confirm_gone (&r);
  buf_free (&r.out);
  buf_free (&r.stderr_text);
  jobproto_reader_clear (&r.reader);
  if (gone)
    {
      struct container_event e = { .kind = SANDBOX_EVENT_DONE };
      container_push (s, &e, NULL);
    }
  else
    {
      pthread_mutex_lock (&s->lock);
      s->fatal = xasprintf ("the container %.12s is still on the engine %s "
                            "after crucible removed it",
                            s->id, engine_client_name (r.c));
      pthread_mutex_unlock (&s->lock);
      char one = 'f';
      ssize_t n = write (s->ev_pipe[1], &one, 1);
      (void) n;
    }
  struct container_backend *b = s->b;
  pthread_mutex_lock (&s->lock);
  s->thread_ended = true;
  bool abandoned = s->abandoned;
  bool leaving = s->leaving;
  pthread_mutex_unlock (&s->lock);
  pthread_mutex_lock (&b->lock);
  b->live--;
  if (leaving)
    {
      /* Disposed of unused, and nobody waited: what was not confirmed
       * gone is the next preparation's to say.  */
      if (!gone && b->kept_stuck == NULL)
        b->kept_stuck = xstrdup (s->id);
      b->leaving--;
      pthread_cond_broadcast (&b->left);
    }
  pthread_mutex_unlock (&b->lock);
  if (abandoned)
    {
      /* Nobody waits for it: the session is the thread's to free.  */
      container_session_free (s);
    }
  return NULL;
}

/* --- the vtable -------------------------------------------------------------
 */

/* Free what a session holds.  */
static void
container_session_free (struct container_session *s)
{
  for (int i = 0; i < 2; i++)
    {
      if (s->ev_pipe[i] >= 0)
        close (s->ev_pipe[i]);
      if (s->stop_pipe[i] >= 0)
        close (s->stop_pipe[i]);
      if (s->go_pipe[i] >= 0)
        close (s->go_pipe[i]);
    }
  free (s->ahead_root);
  free (s->ahead_broken);
  free (s->image_id);
  if (s->out_fd >= 0)
    close (s->out_fd);
  if (s->in_fd >= 0)
    close (s->in_fd);
  if (s->err_fd >= 0)
    close (s->err_fd);
  free (s->line);
  free (s->root);
  free (s->statedir);
  for (size_t i = 0; i < s->n_roots; i++)
    free (s->roots[i]);
  free (s->roots);
  free (s->guard_roots);
  for (size_t i = 0; s->leave_out != NULL && s->leave_out[i] != NULL; i++)
    free (s->leave_out[i]);
  free (s->leave_out);
  job_changes_free (s->changes);
  for (size_t i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
    {
      /* Credentials travel in it: wiped before the memory goes back.  */
      explicit_bzero (s->envp[i], strlen (s->envp[i]));
      free (s->envp[i]);
    }
  free (s->envp);
  free (s->message);
  free (s->verified);
  free (s->fatal);
  pthread_mutex_destroy (&s->lock);
  free (s);
}

/* The unreadable patterns as the workspace archive leaves them out:
 * relative ones as they are, absolute ones under root made relative
 * (those elsewhere are not in the archive at all).  NULL-terminated.  */
static char **
container_leave_out (const struct container_backend *b, const char *root)
{
  char **out = xcalloc (b->n_unreadable + 1, sizeof *out);
  size_t n = 0, rlen = strlen (root);
  for (size_t i = 0; i < b->n_unreadable; i++)
    {
      const char *p = b->unreadable[i];
      if (p[0] != '/')
        out[n++] = xstrdup (p);
      else if (strncmp (p, root, rlen) == 0 && p[rlen] == '/'
               && p[rlen + 1] != '\0')
        out[n++] = xstrdup (p + rlen + 1);
    }
  return out;
}

/* The session's status and stop pipes, and (prepared ahead) its go
 * pipe.  */
static int
container_pipes (struct container_session *s, struct cr_error **err)
{
  if (pipe2 (s->ev_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return cr_error_set (err, errno, "making the command's status pipe");
  if (pipe2 (s->stop_pipe, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the command's stop pipe");
  if (s->ahead && pipe2 (s->go_pipe, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the kept container's pipe");
  return 0;
}

/* Start the session's thread.  */
static int
container_thread_start (struct container_session *s, struct cr_error **err)
{
  pthread_mutex_lock (&s->b->lock);
  s->b->live++;
  pthread_mutex_unlock (&s->b->lock);
  if (pthread_create (&s->thread, NULL, container_thread_main, s) != 0)
    {
      pthread_mutex_lock (&s->b->lock);
      s->b->live--;
      pthread_mutex_unlock (&s->b->lock);
      return cr_error_set (err, 0, "starting the command's container thread");
    }
  return 0;
}

/* Prepare ahead: start the thread that makes the container (the image's
 * runner label was read at prepare; create with every hardening item,
 * the readback checked, attach, start), which then waits for start.  The
 * workspace archive, its baseline, the environment and the line are
 * start's: nothing of the workspace goes in before.  */
static int
container_prepare_ahead (struct sandbox_session *base, const char *cwd,
                         const char *shell, struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  (void) shell; /* the image's /bin/sh runs the line */
  if (s->started || s->ahead)
    return cr_error_set (err, 0, "the session was already prepared");
  s->ahead_root = realpath (cwd, NULL);
  if (s->ahead_root == NULL)
    return cr_error_set (err, errno, "resolving the workspace %s", cwd);
  s->ahead = true;
  if (container_pipes (s, err) < 0 || container_thread_start (s, err) < 0)
    {
      s->ahead = false;
      return -1;
    }
  return 0;
}

/* Whether the image's name still resolves to image_id on the engine; a
 * new ID (the image was rebuilt) is taken for the backend's next
 * preparations, with its runner checked again.  */
static bool
container_image_current (struct container_backend *b, const char *image_id)
{
  cleanup_free char *path = xasprintf ("/images/%s/json", container_image (b));
  struct engine_request req
      = { .method = "GET", .path = path, .timeout_ms = 5000 };
  struct cr_error *err = NULL;
  yajl_val v = NULL;
  if (engine_call_json (b->client, &req, &v, &err) < 0)
    {
      cr_error_free (err);
      return false;
    }
  const char *id = json_member_str (v, "Id");
  bool same = id != NULL && strcmp (id, image_id) == 0;
  if (!same && id != NULL && strncmp (id, "sha256:", 7) == 0)
    {
      pthread_mutex_lock (&b->lock);
      free (b->facts.image_id);
      b->facts.image_id = xstrdup (id);
      free (b->runner_why);
      b->runner_why = container_runner_check (b);
      pthread_mutex_unlock (&b->lock);
    }
  yajl_tree_free (v);
  return same;
}

/* Whether the kept container may still run a command in cwd: it waits
 * unbroken, for this workspace, and its image is still the one the
 * configuration names.  */
static bool
container_ahead_current (const struct sandbox_session *base, const char *cwd,
                         const char *shell)
{
  struct container_session *s = (struct container_session *) base;
  (void) shell;
  if (!s->ahead || s->started)
    return false;
  pthread_mutex_lock (&s->lock);
  bool broken = s->ahead_broken != NULL || s->thread_ended;
  pthread_mutex_unlock (&s->lock);
  cleanup_free char *root = realpath (cwd, NULL);
  return !broken && root != NULL && strcmp (root, s->ahead_root) == 0
         && container_image_current (s->b, s->image_id);
}

/* Refuse at publication what the command writes under rel, saying why.  */
static void
container_roots_add (struct container_session *s, char *rel, const char *why)
{
  size_t n = s->n_roots;
  s->roots = xrealloc (s->roots, (n + 2) * sizeof *s->roots);
  s->guard_roots = xrealloc (s->guard_roots, (n + 2) * sizeof *s->guard_roots);
  s->roots[n] = rel;
  s->roots[n + 1] = NULL;
  s->guard_roots[n] = (struct pubguard_root){ .path = rel, .why = why };
  s->guard_roots[n + 1] = (struct pubguard_root){ 0 };
  s->n_roots = n + 1;
  s->guard.roots = s->guard_roots;
  s->guard.n_roots = s->n_roots;
}

/* The roots taken as the command starts (a kept container was made
 * before either was there), refused at publication as the bwrap backend
 * refuses them: the directory core.hooksPath names inside the workspace
 * (git would run what the command wrote there at the person's next
 * commit), and this user's state directory when the workspace holds it
 * (records crucible trusts: a remembered probe, an MCP grant).  */
static void
container_roots_guard (struct container_session *s)
{
  char *rel = githooks_dir (s->root, NULL);
  if (rel != NULL)
    container_roots_add (s, rel, "a git hooks directory");
  rel = statedir_below (s->b->state_parent, getuid (), s->root);
  if (rel != NULL)
    container_roots_add (s, rel, "the sandbox state directory");
}

/* Start the command: copy what it is given and start the thread that
 * makes its container, or give it to the kept one.  */
static int
container_start (struct sandbox_session *base,
                 const struct sandbox_command *cmd, struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  if (s->started)
    return cr_error_set (err, 0, "the session has already started a command");
  if (!s->ahead && container_pipes (s, err) < 0)
    return -1;
  s->out_fd = fcntl (cmd->output_fd, F_DUPFD_CLOEXEC, 3);
  if (s->out_fd < 0)
    return cr_error_set (err, errno, "taking the command's output pipe");
  if (cmd->stdio)
    {
      /* Its own standard streams: the input is read by the thread, which
       * must not block on it while the answer waits.  */
      s->stdio = true;
      s->in_fd = fcntl (cmd->input_fd, F_DUPFD_CLOEXEC, 3);
      s->err_fd = fcntl (cmd->error_fd, F_DUPFD_CLOEXEC, 3);
      if (s->in_fd < 0 || s->err_fd < 0)
        return cr_error_set (err, errno,
                             "taking the workload's standard streams");
      int fl = fcntl (s->in_fd, F_GETFL);
      if (fl < 0 || fcntl (s->in_fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return cr_error_set (err, errno,
                             "making the workload's input "
                             "nonblocking");
    }
  s->root = realpath (cmd->cwd, NULL);
  if (s->root == NULL)
    return cr_error_set (err, errno, "resolving the workspace %s", cmd->cwd);
  if (statedir_refuse_workspace (s->b->state_parent, getuid (), s->root, err)
      < 0)
    return -1;
  s->leave_out = container_leave_out (s->b, s->root);
  container_roots_guard (s);
  /* The workspace as the command starts: a root changed while it runs
   * publishes nothing (sandbox/publish.c).  */
  if (publish_baseline_take (s->statedir, s->root, PUBLISH_WAIT_PREPARE_MS,
                             &s->baseline, err)
      < 0)
    return -1;
  s->line = xstrdup (cmd->line);
  size_t n = 0;
  while (cmd->envp != NULL && cmd->envp[n] != NULL)
    n++;
  s->envp = xcalloc (n + 1, sizeof *s->envp);
  for (size_t i = 0; i < n; i++)
    s->envp[i] = xstrdup (cmd->envp[i]);
  if (s->ahead)
    {
      /* The kept container waits: everything it runs is given above, and
       * the pipe's word orders what the thread reads after it.  */
      if (write (s->go_pipe[1], "g", 1) != 1)
        return cr_error_set (err, errno, "telling %s to take its command",
                             CONTAINER_WHO);
      s->started = true;
      return 0;
    }
  if (container_thread_start (s, err) < 0)
    return -1;
  s->started = true;
  return 0;
}

static int
container_status_fd (const struct sandbox_session *base)
{
  return ((const struct container_session *) base)->ev_pipe[0];
}

/* Join the session's thread once its last word was read: DONE, or why its
 * container could not be confirmed gone.  What is left of the thread then
 * takes only the locks the supervisor does not hold, and returns; joined
 * here, it has ended before anything the supervisor forks next (the
 * publication's child does its work without an exec, and a thread running
 * at that fork could hold a lock the child then waits on forever: GCC 12's
 * libasan takes none of its own around a fork).  */
static void
container_join_thread (struct container_session *s)
{
  if (s->joined)
    return;
  /* Only a bug fails it (the thread detached, or this one): carrying on
   * as if joined would let the session be freed under the thread.  */
  if (pthread_join (s->thread, NULL) != 0)
    abort ();
  s->joined = true;
}

/* The next event the thread queued.  */
static int
container_next_event (struct sandbox_session *base, struct sandbox_event *ev,
                      struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  char one;
  memset (ev, 0, sizeof *ev);
  ssize_t n = read (s->ev_pipe[0], &one, 1);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return 0;
  if (n <= 0)
    return cr_error_set (err, n < 0 ? errno : 0, "reading the status of %s",
                         CONTAINER_WHO);
  pthread_mutex_lock (&s->lock);
  int ret = 0;
  bool last = false;
  if (one == 'f' && s->fatal != NULL)
    {
      ret = cr_error_set (err, 0, "%s", s->fatal);
      last = true;
    }
  else if (s->n_events > 0)
    {
      struct container_event e = s->events[0];
      memmove (s->events, s->events + 1, (s->n_events - 1) * sizeof *s->events);
      s->n_events--;
      ev->kind = e.kind;
      ev->wait_status = e.wait_status;
      ev->error = e.error;
      ev->failure = e.failure;
      last = e.kind == SANDBOX_EVENT_DONE;
      if (e.kind == SANDBOX_EVENT_FAILED)
        ev->message = s->message;
      else if (e.kind == SANDBOX_EVENT_EXITED)
        ev->message = s->verified;
    }
  pthread_mutex_unlock (&s->lock);
  if (last)
    container_join_thread (s);
  return ret;
}

/* Tell the thread to stop the command; DONE follows.  */
static int
container_stop (struct sandbox_session *base, int signo, struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  if (!s->started || s->done)
    return 0;
  ssize_t n = write (s->stop_pipe[1], &signo, sizeof signo);
  if (n != (ssize_t) sizeof signo)
    return cr_error_set (err, errno, "asking %s to stop", CONTAINER_WHO);
  return 0;
}

static void container_abandon (struct sandbox_session *base);

/* Release the session once its container is confirmed gone.  */
static int
container_dispose (struct sandbox_session *base, struct sandbox_usage *usage,
                   struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  if (usage != NULL)
    memset (usage, 0, sizeof *usage);
  if (s->ahead && !s->started && !s->joined)
    {
      /* Kept and never used: its command never started, so nothing of it
       * runs once the thread closes the connection (the runner's dead-man
       * switch).  The thread then removes the container and confirms it
       * gone on its own, as it does after a command, and frees the
       * session: the supervisor's loop does not wait for the engine's
       * removal.  A removal it cannot confirm refuses the backend's later
       * preparations (container_prepare); crucible leaving waits for it
       * (container_free).  */
      pthread_mutex_lock (&s->b->lock);
      pthread_mutex_lock (&s->lock);
      s->leaving = !s->thread_ended;
      s->b->leaving += s->leaving ? 1 : 0;
      pthread_mutex_unlock (&s->lock);
      pthread_mutex_unlock (&s->b->lock);
      container_abandon (base);
      return 0;
    }
  if (s->started)
    {
      pthread_mutex_lock (&s->lock);
      bool done = s->done;
      pthread_mutex_unlock (&s->lock);
      if (!done)
        return cr_error_set (err, 0,
                             "%s has not been confirmed gone from the engine",
                             CONTAINER_WHO);
      container_join_thread (s);
    }
  container_session_free (s);
  return 0;
}

/* Give up on the session: the thread closes the connection (the
 * container's input ends, and it ends itself) and frees the session.  */
static void
container_abandon (struct sandbox_session *base)
{
  struct container_session *s = (struct container_session *) base;
  if (s->joined || (!s->started && !s->ahead))
    {
      container_session_free (s);
      return;
    }
  if (s->ahead && !s->started)
    {
      /* Kept and never used: the thread removes it and frees the rest.  */
      ssize_t n = write (s->go_pipe[1], "q", 1);
      (void) n;
    }
  pthread_mutex_lock (&s->lock);
  s->abandoned = true;
  bool ended = s->thread_ended;
  pthread_mutex_unlock (&s->lock);
  if (ended)
    {
      container_join_thread (s);
      container_session_free (s);
      return;
    }
  pthread_detach (s->thread);
  int signo = SIGKILL;
  ssize_t n = write (s->stop_pipe[1], &signo, sizeof signo);
  (void) n;
}

/* Publish the command's changes into the workspace through the same
 * transaction as every backend's (sandbox/container/changes.h).  */
static int
container_publish (struct sandbox_session *base, const char *call_id,
                   struct sandbox_publication *out, struct cr_error **err)
{
  struct container_session *s = (struct container_session *) base;
  memset (out, 0, sizeof *out);
  if (s->published || !s->baseline.taken)
    return 0;
  if (!s->done)
    return cr_error_set (err, 0, "%s has not been confirmed gone",
                         CONTAINER_WHO);
  if (s->changes == NULL)
    {
      s->published = true;
      out->published_nothing = true;
      out->outcome = "refused";
      out->note = xstrdup ("the command's changes could not be received; "
                           "nothing was published");
      return 0;
    }
  int ret = job_changes_publish (s->changes, call_id, &s->baseline, &s->guard,
                                 out, err);
  s->published = ret < 0 || !out->busy;
  return ret;
}

static void
container_free (struct sandbox_backend *base)
{
  struct container_backend *b = (struct container_backend *) base;
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += 3 * CONTAINER_REMOVE_BUDGET_MS / 1000;
  pthread_mutex_lock (&b->lock);
  /* Kept containers disposed of unused are removed before crucible
   * leaves, as a command's are; their threads' own bounds end the wait,
   * and this one stands behind them.  */
  while (b->leaving > 0
         && pthread_cond_timedwait (&b->left, &b->lock, &until) == 0)
    ;
  unsigned live = b->live;
  pthread_mutex_unlock (&b->lock);
  /* An abandoned session's thread still uses the client (crucible is
   * leaving, and the thread ends its container): it is left to the
   * process's end rather than freed under the thread.  */
  if (live > 0)
    return;
  engine_client_free (b->client);
  engine_facts_clear (&b->facts);
  free (b->engine);
  free (b->image);
  for (size_t i = 0; i < b->n_unreadable; i++)
    free (b->unreadable[i]);
  free (b->unreadable);
  free (b->why);
  free (b->runner_why);
  free (b->state_parent);
  free (b->kept_stuck);
  pthread_cond_destroy (&b->left);
  pthread_mutex_destroy (&b->lock);
  free (b);
}

static int container_prepare (struct sandbox_backend *b,
                              const struct sandbox_policy *policy,
                              struct sandbox_session **out,
                              struct cr_error **err);

static const struct sandbox_backend_ops container_ops = {
  .id = CONTAINER_BACKEND_ID,
  .claims = container_claims,
  .probe = container_probe,
  .prepare = container_prepare,
  .start = container_start,
  .status_fd = container_status_fd,
  .next_event = container_next_event,
  .stop = container_stop,
  .dispose = container_dispose,
  .abandon = container_abandon,
  .free = container_free,
  .publish = container_publish,
  .prepare_ahead = container_prepare_ahead,
  .ahead_current = container_ahead_current,
};

/* Keep the policy's readOnly and protected roots for publication, which
 * refuses any change to them (inside, the command has a copy).  */
static void
container_roots_copy (struct container_session *s,
                      const struct sandbox_policy *policy)
{
  s->n_roots = policy->n_read_only + policy->n_protected;
  s->roots = xcalloc (s->n_roots + 1, sizeof *s->roots);
  s->guard_roots = xcalloc (s->n_roots + 1, sizeof *s->guard_roots);
  for (size_t i = 0; i < s->n_roots; i++)
    {
      bool ro = i < policy->n_read_only;
      s->roots[i]
          = xstrdup (ro ? policy->read_only[i]
                        : policy->protected_paths[i - policy->n_read_only]);
      s->guard_roots[i]
          = (struct pubguard_root){ .path = s->roots[i],
                                    .why = ro ? "read-only" : "protected" };
    }
  s->guard = (struct pubguard){ .roots = s->guard_roots,
                                .n_roots = s->n_roots,
                                .git_templates = PUBGUARD_GIT_TEMPLATES };
}

/* Whether the kept container whose removal was not confirmed is gone now
 * (its description answers 404; it is removed again first); b->lock
 * held.  Forgotten once it is.  */
static bool
container_stuck_gone (struct container_backend *b)
{
  cleanup_free char *del
      = xasprintf ("/containers/%s?force=1&v=1", b->kept_stuck);
  cleanup_free char *path = xasprintf ("/containers/%s/json", b->kept_stuck);
  struct engine_request rm
      = { .method = "DELETE", .path = del, .timeout_ms = 5000 };
  struct engine_request get
      = { .method = "GET", .path = path, .timeout_ms = 5000 };
  struct engine_answer a;
  struct cr_error *err = NULL;
  engine_call (b->client, &rm, &a, &err);
  cr_error_clear (&err);
  engine_answer_clear (&a);
  engine_call (b->client, &get, &a, &err);
  bool gone = a.status == 404;
  cr_error_free (err);
  engine_answer_clear (&a);
  if (gone)
    {
      free (b->kept_stuck);
      b->kept_stuck = NULL;
    }
  return gone;
}

/* Prepare a session: refuse what the engine cannot hold, by name; reach
 * the engine and its image; remove containers of makers provably gone.  */
static int
container_prepare (struct sandbox_backend *base,
                   const struct sandbox_policy *policy,
                   struct sandbox_session **out, struct cr_error **err)
{
  struct container_backend *b = (struct container_backend *) base;
  struct sandbox_claims claims;
  *out = NULL;
  pthread_mutex_lock (&b->lock);
  int ret = container_ensure_client (b, err);
  if (ret == 0 && b->facts.image_id == NULL)
    ret = cr_error_set (err, 0,
                        "the image %s is not on the engine %s; `crucible "
                        "sandbox image build` makes it",
                        container_image (b), engine_client_name (b->client));
  if (ret == 0 && b->facts.image_id != NULL && b->runner_why != NULL)
    ret = cr_error_set (err, 0, "%s", b->runner_why);
  if (ret == 0 && !b->swept)
    {
      container_sweep (b);
      b->swept = true;
    }
  if (ret == 0 && b->kept_stuck != NULL && !container_stuck_gone (b))
    ret = cr_error_set (err, 0,
                        "the container kept for a command has not been "
                        "confirmed gone from the engine");
  pthread_mutex_unlock (&b->lock);
  if (ret < 0)
    return cr_error_prefix (err, "the container backend");
  container_claims (base, &claims);
  if (sandbox_check_policy (&claims, policy, container_ops.id, err) < 0)
    return -1;
  /* Egress to listed hosts is not designed for containers: the network
   * is none, and a policy naming domains or ports is refused.  */
  if (policy->n_domains > 0)
    return sandbox_refuse (err, SANDBOX_NETWORK_ALLOWLIST, container_ops.id);
  if (policy->n_ports > 0)
    return cr_error_set (err, 0,
                         "sandbox.network.ports cannot be held by the "
                         "container backend: its containers have no network");
  struct container_session *s = xcalloc (1, sizeof *s);
  s->base.ops = &container_ops;
  s->b = b;
  s->ev_pipe[0] = s->ev_pipe[1] = s->stop_pipe[0] = s->stop_pipe[1] = -1;
  s->go_pipe[0] = s->go_pipe[1] = -1;
  pthread_mutex_lock (&b->lock);
  s->image_id = xstrdup (b->facts.image_id);
  pthread_mutex_unlock (&b->lock);
  s->out_fd = s->in_fd = s->err_fd = -1;
  pthread_mutex_init (&s->lock, NULL);
  container_request_defaults (&s->req, b->cpu_seconds, b->open_files);
  if (policy->memory_bytes != 0 && policy->memory_bytes < s->req.memory_bytes)
    s->req.memory_bytes = policy->memory_bytes;
  if (policy->processes != 0 && policy->processes < s->req.pids)
    s->req.pids = policy->processes;
  s->command_seconds
      = policy->command_seconds > 0 ? policy->command_seconds : 600.0;
  s->seccomp = b->facts.seccomp;
  s->as_bytes = policy->memory_bytes;
  s->allow_binding = policy->allow_local_binding;
  container_roots_copy (s, policy);
  cleanup_close int statefd = -1;
  if (statedir_open (b->state_parent, getuid (), getgid (), &s->statedir,
                     &statefd, err)
      < 0)
    {
      container_session_free (s);
      return -1;
    }
  /* Staged change sets left by a crucible that was killed outright: only
   * those whose maker is gone.  */
  int recovered;
  statedir_recover (s->statedir, &recovered);
  *out = &s->base;
  return 0;
}

bool
container_backend_unreachable (const struct sandbox_backend *base)
{
  if (base == NULL || base->ops != &container_ops)
    return false;
  struct container_backend *b = (struct container_backend *) base;
  pthread_mutex_lock (&b->lock);
  bool unreachable = b->client == NULL && b->why != NULL;
  pthread_mutex_unlock (&b->lock);
  return unreachable;
}

struct sandbox_backend *
container_backend_new (const struct container_config *cfg)
{
  struct container_backend *b = xcalloc (1, sizeof *b);
  b->base.ops = &container_ops;
  b->engine = cfg->engine != NULL ? xstrdup (cfg->engine) : NULL;
  b->image = cfg->image != NULL ? xstrdup (cfg->image) : NULL;
  b->cpu_seconds = cfg->cpu_seconds;
  b->open_files = cfg->open_files;
  b->state_parent = xstrdup (cfg->state_parent != NULL ? cfg->state_parent
                                                       : STATEDIR_PARENT);
  b->unreadable = xcalloc (cfg->n_unreadable + 1, sizeof *b->unreadable);
  for (size_t i = 0; i < cfg->n_unreadable; i++)
    b->unreadable[b->n_unreadable++] = xstrdup (cfg->unreadable[i]);
  pthread_mutex_init (&b->lock, NULL);
  pthread_cond_init (&b->left, NULL);
  return &b->base;
}
