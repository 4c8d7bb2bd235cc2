/* The Linux backend's probe: find and pin bwrap and the broker, then start
 * bwrap, bounded by a short timeout and from an empty environment, to
 * read its option surface and version and to see that it can make its
 * namespaces (sandbox/bwrap.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "sandbox/bwrap_int.h"
#include "sandbox/seccomp.h"
#include "sandbox/sha256.h"
#include "sandbox/statedir.h"

/* A probe never hangs a session: each bwrap it starts gets this long.  */
#define BWRAP_PROBE_MS 3000

/* The options the launch uses, which the probe looks for in --help: the
 * surface is checked rather than the version, since distributions
 * backport options (Debian's 0.8.0 has --ro-bind-fd).  */
static const char *const bwrap_required_options[] = {
  "--unshare-all",
  "--unshare-user",
  "--disable-userns",
  "--new-session",
  "--die-with-parent",
  "--as-pid-1",
  "--clearenv",
  "--ro-bind",
  "--ro-bind-fd",
  "--bind",
  "--symlink",
  "--proc",
  "--dev",
  "--tmpfs",
  "--dir",
  "--perms",
  "--remount-ro",
  "--cap-drop",
  "--cap-add",
  "--seccomp",
  "--ro-bind-data",
  /* The launch in crucible's own user namespaces (sandbox/userns.h).  */
  "--unshare-ipc",
  "--unshare-pid",
  "--unshare-net",
  "--unshare-uts",
  "--unshare-cgroup-try",
  "--userns",
  "--userns2",
  "--assert-userns-disabled",
};

const char *const *
bwrap_probed_options (size_t *n)
{
  *n = sizeof bwrap_required_options / sizeof *bwrap_required_options;
  return bwrap_required_options;
}

/* Run bwrap with argv and fds (in: /dev/null; out and err: a pipe read
 * here), for at most BWRAP_PROBE_MS.  *text gets what it printed (owned,
 * bounded); the return is its wait status, or -1 for a timeout or a
 * failure to start.  */
static int
bwrap_run_probe (struct bwrap_backend *b, char **argv, struct bwrap_fds *f,
                 char **text)
{
  int out[2];
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  struct buf got = BUF_INIT;
  long long end = (long long) clock_now_ms () + BWRAP_PROBE_MS;

  *text = NULL;
  if (devnull < 0 || pipe2 (out, O_CLOEXEC) < 0)
    return -1;
  f->in = devnull;
  f->out = f->err = out[1];
  f->self = b->bwrap.fd;
  pid_t pid = fork ();
  if (pid == 0)
    bwrap_child_exec (f, argv);
  close (out[1]);
  if (pid < 0)
    {
      close (out[0]);
      return -1;
    }
  for (;;)
    {
      struct pollfd p = { .fd = out[0], .events = POLLIN };
      long long left = end - (long long) clock_now_ms ();
      if (left <= 0 || poll (&p, 1, (int) left) == 0)
        break;
      char chunk[4096];
      ssize_t n = read (out[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      if (got.len < 65536)
        buf_append (&got, chunk, (size_t) n);
    }
  close (out[0]);
  long long left = end - (long long) clock_now_ms ();
  int status = bwrap_wait_bounded (pid, left > 0 ? (int) left : 0, NULL);
  *text = buf_steal (&got, NULL);
  return status;
}

/* Whether help lists option as an option of its own.  */
static bool
bwrap_help_has (const char *help, const char *option)
{
  size_t n = strlen (option);
  for (const char *p = strstr (help, option); p != NULL;
       p = strstr (p + 1, option))
    if ((p == help || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

/* The descriptors of a probe run: the broker and the seccomp program when
 * given (-1 otherwise), no channel, environment, output or cgroup.  */
static struct bwrap_fds
bwrap_probe_fds (int broker, int seccomp)
{
  return (struct bwrap_fds){ .status = -1,
                             .broker = broker,
                             .seccomp = seccomp,
                             .env = -1,
                             .output = -1,
                             .workload_seccomp = -1,
                             .cgroup_procs = -1 };
}

/* The option surface: every option the launch uses is in --help.  */
static int
bwrap_probe_surface (struct bwrap_backend *b, char **why)
{
  char *argv[] = { (char *) "bwrap", (char *) "--help", NULL };
  struct bwrap_fds f = bwrap_probe_fds (-1, -1);
  cleanup_free char *help = NULL;
  int status = bwrap_run_probe (b, argv, &f, &help);

  if (status < 0 || help == NULL || help[0] == '\0')
    {
      *why = xasprintf ("bwrap --help did not answer within %d ms",
                        BWRAP_PROBE_MS);
      return -1;
    }
  for (size_t i = 0;
       i < sizeof bwrap_required_options / sizeof *bwrap_required_options; i++)
    if (!bwrap_help_has (help, bwrap_required_options[i]))
      {
        *why = xasprintf ("%s lacks the %s option (its --help does not "
                          "list it)",
                          b->bwrap.path, bwrap_required_options[i]);
        return -1;
      }
  return 0;
}

/* Read "PREFIX A.B.C" into v; -1 unless all three numbers are there.  */
static int
bwrap_parse_version (const char *text, const char *prefix, unsigned long v[3])
{
  size_t n = strlen (prefix);
  const char *p = text + n;
  if (strncmp (text, prefix, n) != 0)
    return -1;
  for (int i = 0; i < 3; i++)
    {
      char *end;
      if (*p < '0' || *p > '9')
        return -1;
      v[i] = strtoul (p, &end, 10);
      if (i < 2 && *end != '.')
        return -1;
      p = end + 1;
    }
  return 0;
}

/* The numeric version from --version ("bubblewrap 0.8.0").  */
static int
bwrap_probe_version (struct bwrap_backend *b, char **version, char **why)
{
  char *argv[] = { (char *) "bwrap", (char *) "--version", NULL };
  struct bwrap_fds f = bwrap_probe_fds (-1, -1);
  cleanup_free char *text = NULL;
  int status = bwrap_run_probe (b, argv, &f, &text);
  unsigned long v[3] = { 0 };

  if (status < 0 || text == NULL
      || bwrap_parse_version (text, "bubblewrap ", v) < 0)
    {
      cleanup_free char *q = bwrap_quote (text != NULL ? text : "");
      *why = xasprintf ("bwrap --version gave no numeric version: \"%s\"", q);
      return -1;
    }
  *version = xasprintf ("bubblewrap %lu.%lu.%lu", v[0], v[1], v[2]);
  return 0;
}

/* That the namespaces can be made: the launch's own options, with the
 * broker run inside and asked nothing (it answers with its usage and
 * 125), which also shows the pinned broker and the seccomp filter
 * reach it.  */
static int
bwrap_probe_namespaces (struct bwrap_backend *b, char **why)
{
  struct bwrap_argv a = { 0 };
  struct cr_error *err = NULL;
  char fd_text[2][16];
  cleanup_close int seccomp = sandbox_seccomp_fd (false, &err);
  cleanup_free char *text = NULL;

  if (seccomp < 0)
    {
      *why = xstrdup (err->msg);
      cr_error_free (err);
      return -1;
    }
  snprintf (fd_text[0], sizeof fd_text[0], "%d", BWRAP_FD_BROKER);
  snprintf (fd_text[1], sizeof fd_text[1], "%d", BWRAP_FD_SECCOMP);
  bwrap_args (&a, "bwrap", (char *) NULL);
  bwrap_args_namespaces (&a);
  bwrap_args_runtime (&a);
  bwrap_args (&a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
              "--ro-bind-fd", fd_text[0], BWRAP_HIDDEN_BROKER, "--remount-ro",
              "/", "--seccomp", fd_text[1], "--", BWRAP_HIDDEN_BROKER,
              (char *) NULL);
  struct bwrap_fds f = bwrap_probe_fds (b->broker_fd, seccomp);
  int status = bwrap_run_probe (b, a.v, &f, &text);
  bwrap_argv_free (a.v);
  if (status < 0)
    {
      *why = xasprintf ("bwrap did not make its namespaces within %d ms",
                        BWRAP_PROBE_MS);
      return -1;
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 125
      || strstr (text, BROKER_PROGRAM_NAME ": ") == NULL)
    {
      cleanup_free char *q = bwrap_quote (text);
      *why = xasprintf ("bwrap could not start the broker in new "
                        "namespaces: \"%s\"",
                        q);
      return -1;
    }
  return 0;
}

/* --- the remembered probe -------------------------------------------------
 * A passed probe is remembered in this user's state directory under the
 * digest of everything it depended on (doc/linux-confinement.md, "The
 * remembered probe"): a key that differs in anything is another record's
 * name, so nothing is compared, only found or not.  */

/* One file's identity for the key: where, which inode, its size and
 * times (a replaced or touched file differs), and its digest.  */
static void
bwrap_key_file (struct buf *k, const char *what, const char *path, int fd,
                const char *sha256)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    memset (&st, 0, sizeof st);
  buf_printf (k, "%s %s %ju %ju %jd %jd.%09ld %jd.%09ld %s\n", what, path,
              (uintmax_t) st.st_dev, (uintmax_t) st.st_ino,
              (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec,
              st.st_mtim.tv_nsec, (intmax_t) st.st_ctim.tv_sec,
              st.st_ctim.tv_nsec, sha256);
}

/* dl_iterate_phdr's visit of the running program (the first object):
 * its GNU build ID, which the linker computes over the whole program.  */
static int
bwrap_key_build_id (struct dl_phdr_info *info, size_t size, void *data)
{
  struct buf *k = data;

  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_NOTE)
        continue;
      const char *p = (const char *) (info->dlpi_addr + ph->p_vaddr);
      const char *end = p + ph->p_memsz;
      while (p + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *nh = (const void *) p;
          const char *name = p + sizeof *nh;
          const unsigned char *desc
              = (const unsigned char *) name + ((nh->n_namesz + 3) & ~3U);
          if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4
              && memcmp (name, "GNU", 4) == 0)
            for (ElfW (Word) j = 0; j < nh->n_descsz; j++)
              buf_printf (k, "%02x", desc[j]);
          p = (const char *) desc + ((nh->n_descsz + 3) & ~3U);
        }
    }
  return 1; /* the program only, not its libraries */
}

/* crucible's own build: the running program's build ID and the file it
 * was started from (replaced or touched, it is another build).  */
static void
bwrap_key_build (struct buf *k)
{
  struct stat st;

  buf_puts (k, "build ");
  dl_iterate_phdr (bwrap_key_build_id, k);
  if (stat ("/proc/self/exe", &st) < 0)
    memset (&st, 0, sizeof st);
  buf_printf (k, " %ju %ju %jd %jd.%09ld %jd.%09ld\n", (uintmax_t) st.st_dev,
              (uintmax_t) st.st_ino, (intmax_t) st.st_size,
              (intmax_t) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
              (intmax_t) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The broker's digest, once its thread is done (or computed here when
 * none was started); "unreadable" when the broker could not be read.  */
static void
bwrap_broker_digest (struct bwrap_backend *b)
{
  struct cr_error *err = NULL;

  if (b->broker_sha256[0] != '\0')
    return;
  if (b->broker_job == NULL)
    b->broker_job = sha256_file_start (b->broker_fd);
  if (sha256_file_finish (steal_pointer (&b->broker_job), b->broker_sha256,
                          &err)
      < 0)
    snprintf (b->broker_sha256, sizeof b->broker_sha256, "unreadable");
  cr_error_free (err);
}

/* The digest of the probe's key for the candidate in b->bwrap into hex:
 * the candidate (identity and SHA-256) and the broker (identity),
 * crucible's build and its libseccomp (which writes the filter the probe
 * passes), the options probed for, the kernel, and who probes.  It names
 * the record; the whole key adds the broker's SHA-256
 * (bwrap_probe_whole).  */
static void
bwrap_probe_key (struct bwrap_backend *b, char *hex)
{
  struct buf k = BUF_INIT;
  struct utsname u;
  char seccomp[64];

  buf_puts (&k, "crucible probe key v2\n");
  bwrap_key_file (&k, "bwrap", b->bwrap.path, b->bwrap.fd, b->bwrap.sha256);
  bwrap_key_file (&k, "broker", b->broker_path, b->broker_fd, "-");
  bwrap_key_build (&k);
  sandbox_seccomp_library (seccomp, sizeof seccomp);
  buf_printf (&k, "libseccomp %s\noptions", seccomp);
  for (size_t i = 0;
       i < sizeof bwrap_required_options / sizeof *bwrap_required_options; i++)
    buf_printf (&k, " %s", bwrap_required_options[i]);
  if (uname (&u) < 0)
    memset (&u, 0, sizeof u);
  buf_printf (&k, "\nkernel %s %s %s\nids %lu %lu %lu %lu\n", u.release,
              u.version, u.machine, (unsigned long) getuid (),
              (unsigned long) geteuid (), (unsigned long) getgid (),
              (unsigned long) getegid ());
  sha256_buffer (k.data, k.len, hex);
  buf_free (&k);
}

/* The digest of the whole key into hex: the key's digest (b->probe_key,
 * for the candidate taken) with the broker's SHA-256, which this waits
 * for.  */
static void
bwrap_probe_whole (struct bwrap_backend *b, char *hex)
{
  bwrap_broker_digest (b);
  cleanup_free char *k
      = xasprintf ("crucible probe whole key v2\n%s\nbroker sha256 %s\n",
                   b->probe_key, b->broker_sha256);
  sha256_buffer (k, strlen (k), hex);
}

/* Whether a probe of the candidate in b->bwrap passed before for the same
 * key; its version text (parsed again, as if bwrap had printed it) goes
 * in *version, and the whole key it was written for in b->probe_whole.
 * The key is kept in b->probe_key either way.  */
static bool
bwrap_probe_recall (struct bwrap_backend *b, char **version)
{
  char text[STATEDIR_PROBE_BYTES];
  unsigned long v[3];

  bwrap_probe_key (b, b->probe_key);
  if (b->no_recall
      || statedir_probe_recall (b->opt.state_parent, getuid (), getgid (),
                                b->probe_key, b->probe_whole,
                                sizeof b->probe_whole, text, sizeof text)
             != 1
      || bwrap_parse_version (text, "bubblewrap ", v) < 0)
    return false;
  *version = xasprintf ("bubblewrap %lu.%lu.%lu", v[0], v[1], v[2]);
  return true;
}

/* The probes of the candidate in b->bwrap, in order; 0 when all pass.  */
static int
bwrap_probe_candidate (struct bwrap_backend *b, char **version, char **why)
{
  if (bwrap_probe_recall (b, version))
    {
      b->remembered = true;
      return 0;
    }
  if (bwrap_probe_surface (b, why) < 0
      || bwrap_probe_version (b, version, why) < 0
      || bwrap_probe_namespaces (b, why) < 0)
    return -1;
  /* Not written: the next preparation probes again, as before.  */
  bwrap_probe_whole (b, b->probe_whole);
  statedir_probe_remember (b->opt.state_parent, getuid (), getgid (),
                           b->probe_key, b->probe_whole, *version);
  return 0;
}

void
bwrap_probe_forget (struct bwrap_backend *b)
{
  if (!b->remembered)
    return;
  statedir_probe_forget (b->opt.state_parent, getuid (), getgid (),
                         b->probe_key);
  sandbox_probe_clear (&b->probe);
  memset (&b->probe, 0, sizeof b->probe);
  bwrap_location_clear (&b->bwrap);
  b->probed = false;
  b->remembered = false;
  b->no_recall = true;
}

void
bwrap_probe_settle (struct bwrap_backend *b)
{
  char whole[SHA256_HEX_LEN + 1];

  if (b->broker_fd < 0)
    return;
  bwrap_broker_digest (b);
  if (!b->remembered)
    return;
  bwrap_probe_whole (b, whole);
  if (strcmp (whole, b->probe_whole) == 0)
    return;
  bwrap_probe_forget (b);
  bwrap_probe_once (b);
}

/* Find, pin and probe, once; the answer is kept.  */
void
bwrap_probe_once (struct bwrap_backend *b)
{
  struct cr_error *err = NULL;
  char *why = NULL, *version = NULL;

  if (b->probed)
    return;
  b->probed = true;
  b->probe.confined = true;
  if (b->broker_fd < 0
      && broker_locate (&b->broker_path, &b->broker_fd, &err) < 0)
    {
      b->probe.reason = xstrdup (err->msg);
      cr_error_free (err);
      return;
    }
  /* The broker's digest, about a millisecond of a start's CPU, is
   * computed beside the rest of the preparation: a record is found by the
   * key without it, and bwrap_probe_settle compares the whole key.  */
  if (b->broker_sha256[0] == '\0' && b->broker_job == NULL)
    b->broker_job = sha256_file_start (b->broker_fd);
  /* Every trusted candidate, in order, until one passes its probes; each
   * one that fails says why, and the next is tried.  */
  struct buf failed = BUF_INIT;
  char *last = NULL;
  int tried = 0;
  for (;; tried++)
    {
      if (bwrap_locate_nth (getenv ("PATH"), tried, &b->bwrap, &err) < 0)
        break;
      if (bwrap_probe_candidate (b, &version, &why) == 0)
        {
          b->probe.usable = true;
          b->probe.version = version;
          buf_free (&failed);
          free (last);
          return;
        }
      buf_printf (&failed, "%s%s: %s", failed.len > 0 ? "; " : "",
                  b->bwrap.path, why);
      free (last);
      last = why;
      free (version);
      why = version = NULL;
      bwrap_location_clear (&b->bwrap);
    }
  /* None trusted: where each was looked for and why not.  One trusted
   * that failed: its own reason.  Several: each one's.  */
  if (tried == 0)
    b->probe.reason = xstrdup (err->msg);
  else if (tried == 1)
    b->probe.reason = steal_pointer (&last);
  else
    b->probe.reason
        = xasprintf ("no trusted bwrap passed its probes: %s", failed.data);
  cr_error_free (err);
  buf_free (&failed);
  free (last);
}

/* The answer as it stands, into out.  */
static int
bwrap_probe_answer (const struct bwrap_backend *b, struct sandbox_probe *out)
{
  out->usable = b->probe.usable;
  out->confined = b->probe.usable;
  out->reason = b->probe.reason != NULL ? xstrdup (b->probe.reason) : NULL;
  out->version = b->probe.version != NULL ? xstrdup (b->probe.version) : NULL;
  return 0;
}

int
bwrap_probe (struct sandbox_backend *base, struct sandbox_probe *out,
             struct cr_error **err)
{
  struct bwrap_backend *b = (struct bwrap_backend *) base;

  (void) err;
  bwrap_probe_once (b);
  bwrap_probe_settle (b);
  return bwrap_probe_answer (b, out);
}

/* The probe for a host about to start: a remembered answer's whole key is
 * compared by the launch (bwrap_launch), once the broker's digest is in.  */
int
bwrap_probe_starting (struct sandbox_backend *base, struct sandbox_probe *out,
                      struct cr_error **err)
{
  struct bwrap_backend *b = (struct bwrap_backend *) base;

  (void) err;
  bwrap_probe_once (b);
  return bwrap_probe_answer (b, out);
}
