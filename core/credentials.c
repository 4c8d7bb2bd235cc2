/* Resolving sandbox.credentials for one command line: the limits that
 * withhold an entry, the two sources and their checks, and the pages the
 * values live in.  */
#include <config.h>

#include "core/credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cmdline.h"
#include "core/rules.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* The pages holding every value of one set: no value is larger than the
 * whole environment may be, so one environment's worth per credential is
 * enough, and the count is bounded by the configuration.  */
#define CREDENTIALS_VAULT_EACH ((size_t) ENV_MAX_BYTES)

/* Why an entry is withheld.  */
#define CREDENTIALS_WHY_PROJECT "sandbox.withheldCredentials names it"
#define CREDENTIALS_WHY_COMMANDS                                               \
  "the line runs a program its \"commands\" do not list"
/* Any variable the call sets can load code into the programs the rules
 * allowed (LD_PRELOAD, NODE_OPTIONS, GIT_SSH_COMMAND, PAGER, ...), so the
 * line alone no longer says what runs with the value.  */
#define CREDENTIALS_WHY_NAMED                                                  \
  "the call sets environment variables, which can change what its programs "   \
  "run"
/* A directory of PATH the command can fill (relative, the working
 * directory, the workspace, a writable path) makes a program the line
 * names possibly one the workspace holds: a command before put it there.  */
#define CREDENTIALS_WHY_PATH                                                   \
  "PATH has a directory that is relative or that commands can write, so a "    \
  "program the line names may be the workspace's own"
#define CREDENTIALS_WHY_UNREAD                                                 \
  "the line cannot be read, so its programs cannot be checked against its "    \
  "\"commands\""

struct credentials
{
  struct credential items[CONFIG_CREDENTIALS_MAX];
  size_t n;
  struct credential_withheld withheld[CONFIG_CREDENTIALS_MAX];
  size_t n_withheld;
  char *vault; /* mmap'd, MADV_DONTDUMP */
  size_t vault_size, vault_used;
};

/* Make crucible not dumpable before a value is read: no core of it is
 * written (and, with fs.suid_dumpable 2, the one written leaves out the
 * vault), and no process of the same user may ptrace it or read its
 * memory through /proc.  Never undone: copies outlive the set.  */
static void
credentials_undumpable (void)
{
  (void) prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* Not dumpable once any credential is configured (credentials.h).  */
void
credentials_guard (const struct config *cfg)
{
  if (cfg->n_credentials > 0)
    credentials_undumpable ();
}

/* Map the pages for n values, excluded from core dumps and, where the
 * memory lock limit allows, from swap.  */
static int
credentials_vault (struct credentials *c, size_t n, struct cr_error **err)
{
  c->vault_size = n * CREDENTIALS_VAULT_EACH;
  void *p = mmap (NULL, c->vault_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return cr_error_set (err, errno, "reserving memory for credentials");
  c->vault = p;
  /* A core written despite PR_SET_DUMPABLE (fs.suid_dumpable 2) leaves
   * these pages out; a forked child does not inherit their content.  */
  if (madvise (p, c->vault_size, MADV_DONTDUMP) < 0)
    return cr_error_set (err, errno, "excluding credentials from core dumps");
  (void) madvise (p, c->vault_size, MADV_WIPEONFORK);
  (void) mlock (p, c->vault_size);
  return 0;
}

/* A fresh opaque handle for one projection.  */
static void
credentials_handle (char out[24])
{
  unsigned char r[8] = { 0 };
  if (getrandom (r, sizeof r, 0) != (ssize_t) sizeof r)
    abort ();
  char hex[2 * sizeof r + 1];
  buf_hex (hex, r, sizeof r);
  snprintf (out, 24, "cred-%s", hex);
}

/* Whether the configuration's withheld list names name.  */
static bool
credentials_named_withheld (const struct config *cfg, const char *name)
{
  for (size_t i = 0; i < cfg->withheld_credentials.count; i++)
    if (strcmp (cfg->withheld_credentials.items[i], name) == 0)
      return true;
  return false;
}

/* dir with the longest part of it that exists made canonical (symbolic
 * links resolved), the rest appended as written.  Owned.  */
static char *
credentials_canonical (const char *dir)
{
  size_t cut = strlen (dir);
  for (;;)
    {
      cleanup_free char *head = xstrndup (dir, cut);
      cleanup_free char *real = realpath (head, NULL);
      if (real != NULL)
        return xasprintf ("%s%s", real, dir + cut);
      char *slash = strrchr (head, '/');
      if (slash == NULL || slash == head)
        return xstrdup (dir);
      cut = (size_t) (slash - head);
    }
}

/* Whether the canonical dir is root (canonical too) or below it.  */
static bool
credentials_under (const char *dir, const char *root)
{
  size_t n = strlen (root);
  return strncmp (dir, root, n) == 0
         && (dir[n] == '/' || dir[n] == '\0' || (n > 0 && root[n - 1] == '/'));
}

/* Whether one PATH directory can hold a program a command put there:
 * empty (the working directory) or relative, or in the workspace or a
 * writable path (sandbox.filesystem.writable).  */
static bool
credentials_path_dir_open (const struct config *cfg, const char *dir,
                           size_t len, const char *workspace)
{
  if (len == 0 || dir[0] != '/')
    return true;
  cleanup_free char *text = xstrndup (dir, len);
  cleanup_free char *canon = credentials_canonical (text);
  if (workspace != NULL)
    {
      cleanup_free char *ws = credentials_canonical (workspace);
      if (credentials_under (canon, ws))
        return true;
    }
  for (size_t i = 0; i < cfg->fs_writable.count; i++)
    {
      cleanup_free char *w = credentials_canonical (cfg->fs_writable.items[i]);
      if (credentials_under (canon, w))
        return true;
    }
  return false;
}

/* Whether the PATH the command gets from crucible's environment has a
 * directory a command could have filled (credentials_path_dir_open).  A
 * program the line names is looked up there, not where the person's is:
 * the rules would match the name of the workspace's own program.  */
static bool
credentials_path_open (const struct config *cfg, char *const *host_env,
                       const char *workspace)
{
  const char *path = NULL;
  for (char *const *h = host_env; h != NULL && *h != NULL; h++)
    if (strncmp (*h, "PATH=", 5) == 0)
      path = *h + 5;
  if (path == NULL)
    return false;
  for (const char *p = path;; p++)
    {
      size_t len = strcspn (p, ":");
      if (credentials_path_dir_open (cfg, p, len, workspace))
        return true;
      p += len;
      if (*p == '\0')
        return false;
    }
}

/* Why entry e is withheld from the line cl (NULL: it could not be read),
 * or NULL when the line gets it; call_why, when not NULL, is why the call
 * itself gets none limited by "commands".  Every program the line runs
 * must match one of its rules, read the way allow rules are
 * (core/rules.c), and the call may set no variable: one could make an
 * allowed program run other code (LD_PRELOAD), which no rule sees.  */
static const char *
credentials_why_withheld (const struct config *cfg,
                          const struct config_credential *e,
                          const struct cmdline *cl, const char *call_why)
{
  if (credentials_named_withheld (cfg, e->name))
    return CREDENTIALS_WHY_PROJECT;
  if (!e->limited)
    return NULL;
  if (call_why != NULL)
    return call_why;
  if (cl == NULL)
    return CREDENTIALS_WHY_UNREAD;
  struct cr_error *ignored = NULL;
  struct rules *r = rules_new ("ask", e->commands.items, e->commands.count,
                               NULL, 0, &ignored);
  /* The rules were checked when the file was read.  */
  if (r == NULL)
    {
      cr_error_free (ignored);
      return CREDENTIALS_WHY_COMMANDS;
    }
  enum rules_verdict v = rules_decide (r, cl, false, NULL);
  rules_free (r);
  return v == RULES_ALLOW ? NULL : CREDENTIALS_WHY_COMMANDS;
}

/* Take a value from crucible's own environment into the vault.  */
static int
credentials_from_env (struct credentials *c, struct credential *out,
                      const struct config_credential *e, char *const *host_env,
                      struct cr_error **err)
{
  size_t len = strlen (e->env);
  for (char *const *h = host_env; h != NULL && *h != NULL; h++)
    if (strncmp (*h, e->env, len) == 0 && (*h)[len] == '=')
      {
        const char *v = *h + len + 1;
        out->value_len = strlen (v);
        if (out->value_len > CREDENTIALS_VAULT_EACH)
          return cr_error_set (err, 0,
                               "credential %s: its value is larger than %d "
                               "bytes",
                               e->name, ENV_MAX_BYTES);
        memcpy (c->vault + c->vault_used, v, out->value_len);
        return 0;
      }
  return cr_error_set (err, 0,
                       "credential %s: crucible's environment has no "
                       "variable %s",
                       e->name, e->env);
}

/* Check the open credential file fd the way ssh checks a key: a regular
 * file, the user's own, no access for group or others, not too large.  */
static int
credentials_check_file (int fd, const char *name, struct cr_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "credential %s: its file cannot be read",
                         name);
  if (!S_ISREG (st.st_mode))
    return cr_error_set (err, 0,
                         "credential %s: its file is not a regular file", name);
  if (st.st_uid != geteuid ())
    return cr_error_set (err, 0,
                         "credential %s: its file is owned by uid %u, not by "
                         "you (uid %u)",
                         name, (unsigned) st.st_uid, (unsigned) geteuid ());
  if ((st.st_mode & 077) != 0)
    return cr_error_set (err, 0,
                         "credential %s: its file's mode is %04o, which lets "
                         "others than you read or change it; chmod 600 it",
                         name, (unsigned) (st.st_mode & 07777));
  if (st.st_size > CREDENTIALS_FILE_MAX)
    return cr_error_set (err, 0,
                         "credential %s: its file is larger than %d bytes",
                         name, CREDENTIALS_FILE_MAX);
  return 0;
}

/* Read a value from a file into the vault, one trailing newline removed.
 * O_NOFOLLOW: a symlink put in the file's place is refused, not followed;
 * the checks are made on the descriptor that is read, so what is checked
 * is what is read.  O_NONBLOCK: a fifo cannot hang crucible.  */
static int
credentials_from_file (struct credentials *c, struct credential *out,
                       const struct config_credential *e, struct cr_error **err)
{
  cleanup_close int fd = open (e->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC
                                            | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP)
    return cr_error_set (err, 0,
                         "credential %s: its file is a symbolic link, which "
                         "is not followed",
                         e->name);
  if (fd < 0)
    return cr_error_set (err, errno, "credential %s: its file cannot be opened",
                         e->name);
  if (credentials_check_file (fd, e->name, err) < 0)
    return -1;
  char *at = c->vault + c->vault_used;
  size_t got = 0;
  while (got <= CREDENTIALS_FILE_MAX)
    {
      ssize_t n = read (fd, at + got, CREDENTIALS_VAULT_EACH - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return cr_error_set (err, errno,
                             "credential %s: its file cannot be read", e->name);
      if (n == 0)
        break;
      got += (size_t) n;
      if (got == CREDENTIALS_VAULT_EACH)
        break;
    }
  if (got > CREDENTIALS_FILE_MAX)
    return cr_error_set (err, 0,
                         "credential %s: its file is larger than %d bytes",
                         e->name, CREDENTIALS_FILE_MAX);
  if (got > 0 && at[got - 1] == '\n')
    at[--got] = '\0';
  out->value_len = got;
  return 0;
}

/* Read entry e's value into the next place of the set.  */
static int
credentials_read_one (struct credentials *c, const struct config_credential *e,
                      char *const *host_env, struct cr_error **err)
{
  struct credential *out = &c->items[c->n];
  memset (out, 0, sizeof *out);
  out->name = e->name;
  out->source = e->env != NULL ? CREDENTIALS_FROM_ENV : CREDENTIALS_FROM_FILE;
  out->origin = e->env != NULL ? e->env : e->file;
  int rc = e->env != NULL ? credentials_from_env (c, out, e, host_env, err)
                          : credentials_from_file (c, out, e, err);
  if (rc < 0)
    return -1;
  out->value = c->vault + c->vault_used;
  c->vault_used += CREDENTIALS_VAULT_EACH;
  credentials_handle (out->handle);
  c->n++;
  return 0;
}

#ifdef CRUCIBLE_FAULT_INJECTION
/* Test builds only (--enable-fault-injection): crash with the values held,
 * so a test can look for them in a core of crucible.  */
static void
credentials_fault_abort (void)
{
  if (getenv ("CRUCIBLE_FAULT_CREDENTIALS_ABORT") != NULL)
    abort ();
}
#else
static void
credentials_fault_abort (void)
{
}
#endif

int
credentials_resolve (const struct config *cfg, char *const *host_env,
                     const char *line, struct credentials **out,
                     struct cr_error **err)
{
  return credentials_resolve_named (cfg, host_env, line, NULL, 0, out, err);
}

/* Whether some entry of cfg is limited by "commands".  */
static bool
credentials_any_limited (const struct config *cfg)
{
  for (size_t i = 0; i < cfg->n_credentials; i++)
    if (cfg->credentials[i].limited)
      return true;
  return false;
}

int
credentials_resolve_named (const struct config *cfg, char *const *host_env,
                           const char *line, const char *workspace,
                           size_t n_named, struct credentials **out,
                           struct cr_error **err)
{
  struct credentials *c = xcalloc (1, sizeof *c);
  struct cmdline *cl = NULL;
  struct cr_error *unread = NULL;
  const char *call_why = NULL;

  if (n_named > 0)
    call_why = CREDENTIALS_WHY_NAMED;
  else if (credentials_any_limited (cfg)
           && credentials_path_open (cfg, host_env, workspace))
    call_why = CREDENTIALS_WHY_PATH;

  if (cfg->n_credentials > 0
      && cmdline_read (line, strlen (line), &cl, &unread) < 0)
    cr_error_free (unread);
  size_t wanted = 0;
  const struct config_credential *given[CONFIG_CREDENTIALS_MAX];
  for (size_t i = 0; i < cfg->n_credentials; i++)
    {
      const struct config_credential *e = &cfg->credentials[i];
      const char *why = credentials_why_withheld (cfg, e, cl, call_why);
      if (why == NULL)
        given[wanted++] = e;
      else
        c->withheld[c->n_withheld++]
            = (struct credential_withheld){ .name = e->name, .why = why };
    }
  cmdline_free (cl);
  /* Also when every one is withheld: the value of one read from "env" is
   * in crucible's own environment, which a command of the same user (an
   * unconfined one: compatibility) reads in /proc unless crucible is not
   * dumpable.  */
  credentials_guard (cfg);
  if (wanted > 0 && credentials_vault (c, wanted, err) < 0)
    goto fail;
  for (size_t i = 0; i < wanted; i++)
    if (credentials_read_one (c, given[i], host_env, err) < 0)
      goto fail;
  credentials_fault_abort ();
  *out = c;
  return 0;

fail:
  credentials_free (c);
  return -1;
}

size_t
credentials_count (const struct credentials *c)
{
  return c == NULL ? 0 : c->n;
}

const struct credential *
credentials_get (const struct credentials *c, size_t i)
{
  return &c->items[i];
}

void
credentials_env (const struct credentials *c, struct env_var *vars)
{
  for (size_t i = 0; c != NULL && i < c->n; i++)
    vars[i] = (struct env_var){ .name = c->items[i].name,
                                .value = c->items[i].value,
                                .value_len = c->items[i].value_len };
}

char *
credentials_withheld_note (const struct credentials *c)
{
  if (c == NULL || c->n_withheld == 0)
    return NULL;
  struct buf b = BUF_INIT;
  buf_puts (&b, "[credentials withheld: ");
  for (size_t i = 0; i < c->n_withheld; i++)
    buf_printf (&b, "%s%s (%s)", i > 0 ? "; " : "", c->withheld[i].name,
                c->withheld[i].why);
  buf_puts (&b, "]");
  return buf_steal (&b, NULL);
}

int
credentials_check_named (const struct config *cfg, const struct env_var *named,
                         size_t n_named, struct cr_error **err)
{
  for (size_t i = 0; i < n_named; i++)
    for (size_t k = 0; k < cfg->n_credentials; k++)
      if (strcmp (named[i].name, cfg->credentials[k].name) == 0)
        return cr_error_set (err, 0,
                             "environment variable %s is a credential's "
                             "(sandbox.credentials): the call may not set it",
                             named[i].name);
  return 0;
}

size_t
credentials_configured (const struct config *cfg)
{
  size_t n = 0;
  for (size_t i = 0; i < cfg->n_credentials; i++)
    if (!credentials_named_withheld (cfg, cfg->credentials[i].name))
      n++;
  return n;
}

void
credentials_free (struct credentials *c)
{
  if (c == NULL)
    return;
  if (c->vault != NULL)
    {
      explicit_bzero (c->vault, c->vault_size);
      munmap (c->vault, c->vault_size);
    }
  explicit_bzero (c, sizeof *c);
  free (c);
}
