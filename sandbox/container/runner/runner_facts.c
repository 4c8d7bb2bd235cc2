/* The job runner's 'R' facts: what the container looks like from inside
 * (runner.h, JOBPROTO_FACT_* in jobproto.h).  Claims for crucible to
 * compare with what it asked, read where the kernel keeps them.  */
#include <config.h>

#include "sandbox/container/runner/runner.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/container/jobproto.h"

const char *runner_filter_state = "none";

/* A cgroup v1 limit at or over this is no limit.  */
#define RUNNER_V1_UNLIMITED (UINT64_C (1) << 62)

/* The first line of a small file, or NULL.  */
static char *
runner_read_line (const char *path)
{
  FILE *f = fopen (path, "re");
  char line[512];
  bool got = f != NULL && fgets (line, sizeof line, f) != NULL;
  if (f != NULL)
    fclose (f);
  if (!got)
    return NULL;
  line[strcspn (line, "\n")] = '\0';
  return xstrdup (line);
}

/* The value of "Key:" in /proc/self/status, spaces and tabs off.  */
static char *
runner_status (const char *key)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/status", "re");
  char line[512];
  size_t n = strlen (key);
  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, key, n) == 0 && line[n] == ':')
      {
        char *v = line + n + 1;
        v += strspn (v, " \t");
        v[strcspn (v, "\n")] = '\0';
        return xstrdup (v);
      }
  return xstrdup ("unknown");
}

/* "fstype,options" of the mount at path (mountinfo's last match: what
 * covers it), or "none".  */
static char *
runner_mount (const char *path)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[4096];
  char *found = NULL;
  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    {
      char mnt[1024], opts[1024], fstype[64], super[1024];
      /* id parent major:minor root mountpoint options [optional...] -
       * fstype source superoptions */
      char *dash = strstr (line, " - ");
      if (dash == NULL
          || sscanf (line, "%*s %*s %*s %*s %1023s %1023s", mnt, opts) != 2
          || sscanf (dash + 3, "%63s %*s %1023s", fstype, super) != 2
          || strcmp (mnt, path) != 0)
        continue;
      free (found);
      found = xasprintf ("%s,%s,%s", fstype, opts, super);
    }
  return found != NULL ? found : xstrdup ("none");
}

/* The interfaces other than lo, comma-separated ("" when none).  */
static char *
runner_net (void)
{
  cleanup_closedir DIR *d = opendir ("/sys/class/net");
  struct buf b = BUF_INIT;
  struct dirent *de;
  while (d != NULL && (de = readdir (d)) != NULL)
    if (de->d_name[0] != '.' && strcmp (de->d_name, "lo") != 0)
      buf_printf (&b, "%s%s", b.len ? "," : "", de->d_name);
  if (d == NULL)
    buf_puts (&b, "unknown");
  return buf_steal (&b, NULL);
}

/* One rlimit of pid (its hard limit, which binds it), in decimal or
 * "unlimited".  */
static void
runner_rlimit (struct buf *b, pid_t pid, int resource)
{
  struct rlimit r;
  if (prlimit (pid, (enum __rlimit_resource) resource, NULL, &r) < 0)
    buf_puts (b, "unknown");
  else if (r.rlim_max == RLIM_INFINITY)
    buf_puts (b, "unlimited");
  else
    buf_printf (b, "%llu", (unsigned long long) r.rlim_max);
}

/* A cgroup limit: v2's file, else v1's (a huge v1 value is "max"), else
 * "none".  */
static char *
runner_cgroup (const char *v2, const char *v1)
{
  char *v = runner_read_line (v2);
  if (v != NULL)
    return v;
  v = runner_read_line (v1);
  if (v == NULL)
    return xstrdup ("none");
  if (strtoull (v, NULL, 10) >= RUNNER_V1_UNLIMITED)
    {
      free (v);
      return xstrdup ("max");
    }
  return v;
}

/* Memory and swap together: v1's memsw; on v2 memory.max when swap.max
 * is 0, their sum when both are numbers, else "max".  */
static char *
runner_memsw (void)
{
  cleanup_free char *mem = runner_read_line ("/sys/fs/cgroup/memory.max");
  cleanup_free char *swap = runner_read_line ("/sys/fs/cgroup/memory.swap.max");
  if (mem == NULL)
    return runner_cgroup ("/nonexistent",
                          "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes");
  if (swap == NULL || strcmp (mem, "max") == 0 || strcmp (swap, "max") == 0)
    return xstrdup (swap != NULL && strcmp (swap, "0") == 0 ? mem : "max");
  return xasprintf ("%llu",
                    strtoull (mem, NULL, 10) + strtoull (swap, NULL, 10));
}

/* The supplementary groups, comma-separated.  */
static char *
runner_groups (void)
{
  gid_t g[256];
  int n = getgroups (256, g);
  struct buf b = BUF_INIT;
  for (int i = 0; i < n; i++)
    buf_printf (&b, "%s%lu", i ? "," : "", (unsigned long) g[i]);
  return buf_steal (&b, NULL);
}

char *
runner_facts (const char *workspace, pid_t pid, size_t *len)
{
  static const int limits[]
      = { RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_NOFILE };
  struct buf b = BUF_INIT;
  struct statvfs vfs;
  char *v;

  buf_printf (&b, "%s=%lu\n%s=%lu\n", JOBPROTO_FACT_UID,
              (unsigned long) getuid (), JOBPROTO_FACT_GID,
              (unsigned long) getgid ());
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_GROUPS, v = runner_groups ());
  free (v);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_NNP,
              v = runner_status ("NoNewPrivs"));
  free (v);
  buf_printf (&b, "%s=", JOBPROTO_FACT_CAPS);
  static const char *const caps[] = { "CapEff", "CapPrm", "CapBnd", "CapAmb" };
  for (size_t i = 0; i < 4; i++)
    {
      buf_printf (&b, "%s%s", i ? "," : "", v = runner_status (caps[i]));
      free (v);
    }
  buf_printf (&b, "\n%s=%s\n", JOBPROTO_FACT_SECCOMP,
              v = runner_status ("Seccomp"));
  free (v);
  buf_printf (&b, "%s=%d\n", JOBPROTO_FACT_ROOT_RO,
              statvfs ("/", &vfs) == 0 && (vfs.f_flag & ST_RDONLY) ? 1 : 0);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_WORKSPACE,
              v = runner_mount (workspace));
  free (v);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_TMP, v = runner_mount ("/tmp"));
  free (v);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_NET, v = runner_net ());
  free (v);
  buf_printf (&b, "%s=", JOBPROTO_FACT_RLIMITS);
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    {
      if (i)
        buf_putc (&b, ',');
      runner_rlimit (&b, pid, limits[i]);
    }
  buf_printf (&b, "\n%s=%s\n", JOBPROTO_FACT_MEMORY_MAX,
              v = runner_cgroup ("/sys/fs/cgroup/memory.max",
                                 "/sys/fs/cgroup/memory/"
                                 "memory.limit_in_bytes"));
  free (v);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_SWAP_MAX, v = runner_memsw ());
  free (v);
  buf_printf (&b, "%s=%s\n", JOBPROTO_FACT_PIDS_MAX,
              v = runner_cgroup ("/sys/fs/cgroup/pids.max",
                                 "/sys/fs/cgroup/pids/pids.max"));
  free (v);
  buf_printf (&b, "%s=%s\n%s=%s\n%s=%d\n", JOBPROTO_FACT_FILTER,
              runner_filter_state, JOBPROTO_FACT_USERNS, runner_userns_probe (),
              JOBPROTO_FACT_DUMPABLE, prctl (PR_GET_DUMPABLE, 0, 0, 0, 0));
  return buf_steal (&b, len);
}
