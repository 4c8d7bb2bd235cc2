/* The container backend's inspection and image build
 * (sandbox/container/container.h).  */
#include <config.h>

#include "sandbox/container/container.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "sandbox/container/engine.h"
#include "sandbox/container/facts.h"
#include "sandbox/container/tar.h"
#include "sandbox/sha256.h"

/* The most the job runner may weigh.  */
#define CONTAINER_RUNNER_MAX (8u << 20)

/* The most busybox-static may weigh, and its applet list.  */
#define CONTAINER_BUSYBOX_MAX (16u << 20)
#define CONTAINER_APPLETS_MAX (64u << 10)

/* An image import or build may take this long.  */
#define CONTAINER_BUILD_TIMEOUT_MS 300000L

/* Where crucible's own tools go in an image layered with --from, so that
 * they never shadow the image's.  */
#define CONTAINER_TOOLS_DIR "usr/local/lib/crucible"

extern char **environ;

/* The image a configuration names.  */
static const char *
container_image_name (const struct container_config *cfg)
{
  return cfg->image != NULL ? cfg->image : CONTAINER_DEFAULT_IMAGE;
}

/* Find the engine and connect to it; *ep keeps the endpoint for the
 * report when connecting fails (the client owns it otherwise).  */
static int
container_connect (const struct container_config *cfg,
                   struct engine_endpoint *ep, struct engine_client **c,
                   struct cr_error **err)
{
  struct engine_env env;
  char rootless[256];
  engine_env_from_process (&env, rootless, sizeof rootless);
  *c = NULL;
  if (engine_discover (cfg->engine, &env, ep, err) < 0)
    return -1;
  struct engine_endpoint copy = *ep;
  /* The client takes the endpoint; keep a copy of its address and source
   * for a report of a failure.  */
  memset (ep, 0, sizeof *ep);
  ep->address = xstrdup (copy.address);
  ep->source = copy.source;
  return engine_connect (&copy, c, err);
}

char *
container_inspect (const struct container_config *cfg,
                   const struct container_inspect_input *in)
{
  struct engine_endpoint ep = { 0 };
  struct engine_client *c = NULL;
  struct engine_facts facts = { 0 };
  struct container_request req;
  struct cr_error *err = NULL;

  container_request_defaults (&req, cfg->cpu_seconds, cfg->open_files);
  if (in->asking != NULL)
    in->asking (in->data);
  if (container_connect (cfg, &ep, &c, &err) == 0
      && engine_facts_read (c, container_image_name (cfg), &facts, &err) < 0)
    {
      engine_client_free (c);
      c = NULL;
    }
  struct container_report r = {
    .workspace = in->workspace,
    .mode = in->mode,
    .enabled = in->enabled,
    .endpoint = c != NULL            ? engine_client_endpoint (c)
                : ep.address != NULL ? &ep
                                     : NULL,
    .client = c,
    .why = err != NULL ? err->msg : NULL,
    .facts = &facts,
    .request = &req,
  };
  char *text
      = in->json ? container_report_json (&r) : container_report_text (&r);
  cr_error_free (err);
  engine_facts_clear (&facts);
  engine_client_free (c);
  engine_endpoint_clear (&ep);
  return text;
}

/* Read the whole regular file at path (at most max bytes).  */
static int
container_read_file (const char *path, size_t max, struct buf *out,
                     struct cr_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "%s", path);
  if (!S_ISREG (st.st_mode) || (size_t) st.st_size > max)
    return cr_error_set (err, 0,
                         "%s is not a regular file of at most %zu "
                         "bytes",
                         path, max);
  char chunk[65536];
  ssize_t n;
  while ((n = read (fd, chunk, sizeof chunk)) > 0 && out->len + n <= max)
    buf_append (out, chunk, (size_t) n);
  if (n < 0)
    return cr_error_set (err, errno, "reading %s", path);
  return 0;
}

/* Whether the ELF image in b needs no program interpreter (is static): a
 * dynamic busybox would find no libc in an image made of it alone.  */
static bool
container_elf_static (const struct buf *b)
{
  Elf64_Ehdr eh;
  if (b->len < sizeof eh)
    return false;
  memcpy (&eh, b->data, sizeof eh);
  if (memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64
      || eh.e_phentsize != sizeof (Elf64_Phdr))
    return false;
  for (size_t i = 0; i < eh.e_phnum; i++)
    {
      Elf64_Phdr ph;
      size_t off = eh.e_phoff + i * sizeof ph;
      if (off + sizeof ph > b->len)
        return false;
      memcpy (&ph, b->data + off, sizeof ph);
      if (ph.p_type == PT_INTERP)
        return false;
    }
  return true;
}

/* The host's busybox-static, checked to be static.  */
static int
container_busybox (const char *path, struct buf *out, struct cr_error **err)
{
  if (access (path, F_OK) < 0)
    return cr_error_set (err, 0,
                         "no %s: the image is made from the host's "
                         "busybox-static (apt-get install busybox-static)",
                         path);
  if (container_read_file (path, CONTAINER_BUSYBOX_MAX, out, err) < 0)
    return cr_error_prefix (err, "the image needs busybox-static (apt-get "
                                 "install busybox-static)");
  if (!container_elf_static (out))
    return cr_error_set (err, 0,
                         "%s is not a statically linked 64-bit ELF program; "
                         "the image needs busybox-static (apt-get install "
                         "busybox-static)",
                         path);
  return 0;
}

/* The directory of the running crucible (owned), or NULL.  */
static char *
container_exe_dir (void)
{
  char exe[4096];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return NULL;
  exe[n] = '\0';
  char *slash = strrchr (exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  return xstrdup (exe[0] ? exe : "/");
}

int
container_runner_locate (char **path, struct cr_error **err)
{
  cleanup_free char *dir = container_exe_dir ();
  char *tries[3] = {
    dir ? xasprintf ("%s/../libexec/crucible/crucible-job-runner", dir) : NULL,
    dir ? xasprintf ("%s/crucible-job-runner", dir) : NULL,
    xstrdup (CRUCIBLE_PKGLIBEXECDIR "/crucible-job-runner"),
  };
  *path = NULL;
  for (size_t i = 0; i < 3; i++)
    {
      if (*path == NULL && tries[i] != NULL && access (tries[i], F_OK) == 0)
        *path = steal_pointer (&tries[i]);
      free (tries[i]);
    }
  if (*path == NULL)
    return cr_error_set (err, 0,
                         "the job runner (crucible-job-runner) is not "
                         "installed in %s",
                         CRUCIBLE_PKGLIBEXECDIR);
  return 0;
}

int
container_runner_read (struct buf *body, char *hex, struct cr_error **err)
{
  cleanup_free char *path = NULL;
  struct buf mine = BUF_INIT;
  struct buf *b = body != NULL ? body : &mine;
  int ret = -1;
  if (container_runner_locate (&path, err) < 0)
    return -1;
  if (container_read_file (path, CONTAINER_RUNNER_MAX, b, err) < 0)
    cr_error_prefix (err, "reading the job runner");
  else if (!container_elf_static (b))
    cr_error_set (err, 0,
                  "the job runner %s is not a statically linked 64-bit ELF "
                  "program",
                  path);
  else
    {
      sha256_buffer (b->data, b->len, hex);
      ret = 0;
    }
  buf_free (&mine);
  return ret;
}

/* The applets busybox at path provides (`busybox --list`), one a line.  */
static int
container_applets (const char *path, struct buf *out, struct cr_error **err)
{
  int p[2];
  pid_t pid;
  posix_spawn_file_actions_t fa;
  char *argv[] = { (char *) path, (char *) "--list", NULL };
  char *envp[] = { NULL };
  if (pipe2 (p, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "pipe");
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, p[1], STDOUT_FILENO);
  int rc = posix_spawn (&pid, path, &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy (&fa);
  close (p[1]);
  if (rc != 0)
    {
      close (p[0]);
      return cr_error_set (err, rc, "running %s --list", path);
    }
  char chunk[4096];
  ssize_t n;
  while ((n = read (p[0], chunk, sizeof chunk)) > 0)
    if (out->len + (size_t) n <= CONTAINER_APPLETS_MAX)
      buf_append (out, chunk, (size_t) n);
  close (p[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || out->len == 0)
    return cr_error_set (err, 0, "%s --list listed no applets", path);
  return 0;
}

/* The image's fixed files: who the unprivileged user is.  */
static const char container_passwd[]
    = "root:x:0:0:root:/:/bin/sh\n"
      "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n";
static const char container_group[] = "root:x:0:\nnogroup:x:65534:\n";

/* The root of an image made of busybox alone: /bin/busybox and a link per
 * applet, /etc/passwd and group, the workspace and /tmp mount points, and
 * the job runner.  */
static int
container_busybox_root (const struct buf *busybox, const char *applets,
                        const struct buf *runner, struct buf *t,
                        struct cr_error **err)
{
  static const struct
  {
    const char *name;
    unsigned mode;
  } dirs[] = { { "bin", 0755 },
               { "etc", 0755 },
               { "tmp", 01777 },
               { "proc", 0555 },
               { "dev", 0755 },
               { "sys", 0555 },
               /* Writable by the unprivileged user the runner runs as, as
                * /tmp is: Podman copies the mount point's mode onto the
                * tmpfs mounted there (and ignores a tmpfs mode option).  */
               { "workspace", 01777 },
               { "usr", 0755 },
               { "usr/local", 0755 },
               { "usr/local/lib", 0755 },
               { CONTAINER_TOOLS_DIR, 0755 } };
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    if (tar_dir (t, dirs[i].name, dirs[i].mode, err) < 0)
      return -1;
  if (tar_file (t, CONTAINER_RUNNER_PATH + 1, 0755, runner->data, runner->len,
                err)
          < 0
      || tar_file (t, "bin/busybox", 0755, busybox->data, busybox->len, err) < 0
      || tar_file (t, "etc/passwd", 0644, container_passwd,
                   sizeof container_passwd - 1, err)
             < 0
      || tar_file (t, "etc/group", 0644, container_group,
                   sizeof container_group - 1, err)
             < 0)
    return -1;
  cleanup_free char *list = xstrdup (applets);
  char *save = NULL;
  for (char *a = strtok_r (list, "\n", &save); a != NULL;
       a = strtok_r (NULL, "\n", &save))
    {
      /* An applet name is one path component; busybox itself is there.  */
      if (strchr (a, '/') != NULL || strcmp (a, "busybox") == 0 || a[0] == '.')
        continue;
      cleanup_free char *name = xasprintf ("bin/%s", a);
      if (tar_symlink (t, name, "busybox", err) < 0)
        return -1;
    }
  tar_end (t);
  return 0;
}

/* Split image into repository and tag (latest when none); a digest
 * cannot be built.  */
static int
container_split_image (const char *image, char **repo, char **tag,
                       struct cr_error **err)
{
  if (strchr (image, '@') != NULL)
    return cr_error_set (err, 0,
                         "the image %s is named by digest, which names what "
                         "exists and cannot be built; name it by tag",
                         image);
  const char *slash = strrchr (image, '/');
  const char *colon = strrchr (image, ':');
  if (colon != NULL && (slash == NULL || colon > slash))
    {
      *repo = xstrndup (image, (size_t) (colon - image));
      *tag = xstrdup (colon + 1);
    }
  else
    {
      *repo = xstrdup (image);
      *tag = xstrdup ("latest");
    }
  if (**repo == '\0' || **tag == '\0')
    return cr_error_set (err, 0, "the image name %s has an empty part", image);
  return 0;
}

/* Percent-encode s for a query string.  Owned.  */
static char *
container_query_escape (const char *s)
{
  struct buf b = BUF_INIT;
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
        || (*p >= '0' && *p <= '9') || strchr ("-._~", *p) != NULL)
      buf_putc (&b, (char) *p);
    else
      buf_printf (&b, "%%%02X", *p);
  return buf_steal (&b, NULL);
}

/* The ID of image on the engine.  */
static int
container_image_id (struct engine_client *c, const char *image, char **id,
                    struct cr_error **err)
{
  cleanup_free char *path = xasprintf ("/images/%s/json", image);
  struct engine_request req = { .method = "GET", .path = path };
  yajl_val v = NULL;
  if (engine_call_json (c, &req, &v, err) < 0)
    return -1;
  const char *s = json_member_str (v, "Id");
  int ret = 0;
  if (s == NULL || strncmp (s, "sha256:", 7) != 0)
    ret = engine_fail (c, &req, err, "the image has no sha256 ID");
  else
    *id = xstrdup (s);
  yajl_tree_free (v);
  return ret;
}

/* Whether a streamed answer (one JSON object a line) reports an error:
 * the engine's own words.  Owned, or NULL.  */
static char *
container_stream_error (const struct buf *body)
{
  const char *e = body->data != NULL ? strstr (body->data, "\"error\"") : NULL;
  if (e == NULL)
    e = body->data != NULL ? strstr (body->data, "\"errorDetail\"") : NULL;
  if (e == NULL)
    return NULL;
  const char *line = e;
  while (line > body->data && line[-1] != '\n')
    line--;
  return xstrndup (line, strcspn (line, "\n"));
}

/* POST a tar body to path and check the streamed answer for errors.  */
static int
container_post_tar (struct engine_client *c, const char *path,
                    const struct buf *tar, const char *content_type,
                    struct cr_error **err)
{
  struct engine_request req = { .method = "POST",
                                .path = path,
                                .content_type = content_type,
                                .body = tar->data,
                                .body_len = tar->len,
                                .timeout_ms = CONTAINER_BUILD_TIMEOUT_MS };
  struct engine_answer a;
  int ret = engine_call (c, &req, &a, err);
  cleanup_free char *bad = ret == 0 ? container_stream_error (&a.body) : NULL;
  if (bad != NULL)
    ret = engine_fail (c, &req, err, "%s", bad);
  engine_answer_clear (&a);
  return ret;
}

/* Import busybox's root as repo:tag.  */
static int
container_build_busybox (struct engine_client *c, const char *busybox_path,
                         const char *repo, const char *tag,
                         struct cr_error **err)
{
  struct buf bb = BUF_INIT, applets = BUF_INIT, tar = BUF_INIT;
  struct buf runner = BUF_INIT;
  char hex[SHA256_HEX_LEN + 1];
  int ret = -1;
  if (container_busybox (busybox_path, &bb, err) == 0
      && container_applets (busybox_path, &applets, err) == 0
      && container_runner_read (&runner, hex, err) == 0
      && container_busybox_root (&bb, applets.data, &runner, &tar, err) == 0)
    {
      /* The tag goes inside repo: Podman 4.3 ignores the tag parameter of
       * an import, and dockerd reads a tag there too.  The label is a
       * change applied by the import itself, as `docker import --change`
       * does.  */
      cleanup_free char *name = xasprintf ("%s:%s", repo, tag);
      cleanup_free char *r = container_query_escape (name);
      cleanup_free char *label
          = xasprintf ("LABEL " CONTAINER_RUNNER_LABEL "=%s", hex);
      cleanup_free char *l = container_query_escape (label);
      cleanup_free char *path
          = xasprintf ("/images/create?fromSrc=-&repo=%s&changes=%s", r, l);
      ret = container_post_tar (c, path, &tar, "application/x-tar", err);
    }
  buf_free (&bb);
  buf_free (&applets);
  buf_free (&tar);
  buf_free (&runner);
  return ret;
}

/* The build context that layers crucible's needs onto from: busybox-static
 * in crucible's own directory, the workspace and /tmp mount points.  No
 * RUN step: nothing runs while the image is built.  */
static int
container_layer_context (const char *from, const struct buf *busybox,
                         const struct buf *runner, const char *runner_hex,
                         struct buf *t, struct cr_error **err)
{
  cleanup_free char *dockerfile
      = xasprintf ("FROM %s\n"
                   "COPY busybox /" CONTAINER_TOOLS_DIR "/busybox\n"
                   "COPY crucible-job-runner " CONTAINER_RUNNER_PATH "\n"
                   "COPY root/ /\n"
                   "LABEL org.crucible.base=\"%s\"\n"
                   "LABEL " CONTAINER_RUNNER_LABEL "=\"%s\"\n",
                   from, from, runner_hex);
  if (tar_file (t, "Dockerfile", 0644, dockerfile, strlen (dockerfile), err) < 0
      || tar_file (t, "busybox", 0755, busybox->data, busybox->len, err) < 0
      || tar_file (t, "crucible-job-runner", 0755, runner->data, runner->len,
                   err)
             < 0
      || tar_dir (t, "root", 0755, err) < 0
      || tar_dir (t, "root/workspace", 01777, err) < 0
      || tar_dir (t, "root/tmp", 01777, err) < 0)
    return -1;
  tar_end (t);
  return 0;
}

/* Build repo:tag from the local image from, pulling nothing.  */
static int
container_build_from (struct engine_client *c, const char *from,
                      const char *busybox_path, const char *image,
                      struct cr_error **err)
{
  cleanup_free char *base_id = NULL;
  if (container_image_id (c, from, &base_id, err) < 0)
    return cr_error_prefix (err,
                            "the image to build from (--from %s) must "
                            "be on the engine already; crucible pulls "
                            "nothing",
                            from);
  if (strpbrk (from, "\n\r\"") != NULL)
    return cr_error_set (err, 0, "--from %s: not an image name", from);
  struct buf bb = BUF_INIT, tar = BUF_INIT, runner = BUF_INIT;
  char hex[SHA256_HEX_LEN + 1];
  int ret = -1;
  if (container_busybox (busybox_path, &bb, err) == 0
      && container_runner_read (&runner, hex, err) == 0
      && container_layer_context (from, &bb, &runner, hex, &tar, err) == 0)
    {
      cleanup_free char *t = container_query_escape (image);
      /* pull=0: the base is the local image checked above; networkmode
       * none: a build step reaches no network.  */
      cleanup_free char *path = xasprintf (
          "/build?t=%s&pull=0&rm=1&forcerm=1&networkmode=none&q=1", t);
      ret = container_post_tar (c, path, &tar, "application/x-tar", err);
    }
  buf_free (&bb);
  buf_free (&tar);
  buf_free (&runner);
  return ret;
}

int
container_image_build (const struct container_config *cfg, const char *from,
                       const char *busybox_path,
                       void (*progress) (void *data, const char *step),
                       void *data, char **image_id, struct cr_error **err)
{
  struct engine_endpoint ep = { 0 };
  struct engine_client *c = NULL;
  cleanup_free char *repo = NULL;
  cleanup_free char *tag = NULL;
  const char *image = container_image_name (cfg);
  int ret = -1;

  *image_id = NULL;
  if (container_split_image (image, &repo, &tag, err) < 0)
    return -1;
  if (container_connect (cfg, &ep, &c, err) < 0)
    {
      engine_endpoint_clear (&ep);
      return -1;
    }
  engine_endpoint_clear (&ep);
  if (progress != NULL)
    progress (data, engine_client_name (c));
  if (from == NULL)
    ret = container_build_busybox (c, busybox_path, repo, tag, err);
  else
    ret = container_build_from (c, from, busybox_path, image, err);
  if (ret == 0)
    ret = container_image_id (c, image, image_id, err);
  if (ret < 0)
    cr_error_prefix (err, "building the image %s", image);
  engine_client_free (c);
  return ret;
}
