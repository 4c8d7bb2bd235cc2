/* `crucible sandbox inspect|enable|disable` and `crucible --sandbox`.
 *
 * Inspecting starts nothing and writes nothing: it reads the two
 * configuration files, finds the backend without starting it, and prints.
 * enable and disable write the home configuration, and only it.  */
#include <config.h>

#include "tui/cmd_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "sandbox/registry.h"
#include "tui/cmd_audit.h"
#include "tui/cmd_quarantine.h"
#include "tui/front.h"

/* The report's options: [--json].  */
struct sandbox_report_options
{
  bool json;
};

/* Print a person-facing error and return the failure status.  */
static int
sandbox_fail (struct cr_error *err)
{
  fprintf (stderr, "crucible: %s\n", err->msg);
  cr_error_free (err);
  return SANDBOX_EXIT_FAILED;
}

/* Print sandbox's usage.  */
static void
sandbox_usage (FILE *out)
{
  fputs (_ ("Usage: crucible sandbox inspect [--json]\n"
            "       crucible sandbox audit [--json] [--backend ID]\n"
            "       crucible sandbox enable | disable\n"
            "       crucible sandbox quarantine [list | restore ID | drop ID]\n"
            "       crucible --sandbox [--json]\n\n"
            "inspect  print the backend and what a command here would run "
            "under,\n"
            "         starting nothing and writing nothing\n"
            "audit    check the backend's claims against its answers\n"
            "enable   turn confinement on in ~/.crucible/config.json, once "
            "this\n"
            "         machine is found able to enforce it\n"
            "disable  turn confinement off in ~/.crucible/config.json\n"
            "quarantine  what publication kept when a rollback could not "
            "be proved\n"),
         out);
}

/* Parse the report's options (argv[0] is the command's own name).  */
static int
sandbox_report_options (int argc, char **argv,
                        struct sandbox_report_options *opts)
{
  memset (opts, 0, sizeof *opts);
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        opts->json = true;
      else if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        {
          sandbox_usage (stdout);
          return 1;
        }
      else
        {
          fprintf (stderr,
                   _ ("crucible: sandbox inspect: unknown option '%s'\n"),
                   argv[i]);
          sandbox_usage (stderr);
          return -1;
        }
    }
  return 0;
}

/* Say that the report could not be made at stage, and why.  */
static int
sandbox_report_failed (const struct sandbox_report_options *opts,
                       const char *stage, struct cr_error *err)
{
  if (opts->json)
    {
      cleanup_free char *line = inspect_failed_json (stage);
      fputs (line, stdout);
    }
  return sandbox_fail (err);
}

/* Write s to standard output, and say so when that fails.  */
static int
sandbox_print (const char *s)
{
  if (fputs (s, stdout) == EOF || fflush (stdout) == EOF)
    {
      fprintf (stderr, _ ("crucible: writing the report: %s\n"),
               strerror (errno));
      return SANDBOX_EXIT_FAILED;
    }
  return SANDBOX_EXIT_OK;
}

/* Make and print the report for the current directory.  */
static int
sandbox_inspect (const struct sandbox_report_options *opts)
{
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  struct inspect_backend_info info;
  struct inspect_report *report = NULL;
  struct policy_input in;
  cleanup_free char *workspace = front_workspace (&err);
  cleanup_free char *text = NULL;

  if (workspace == NULL)
    return sandbox_report_failed (opts, "workspace", err);
  if (config_load (&cfg, NULL, workspace, &err) < 0)
    return sandbox_report_failed (opts, "configuration", err);
  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  int ret = inspect_build (&in, &info, &report, &err);
  inspect_backend_info_clear (&info);
  config_free (cfg);
  if (ret < 0)
    return sandbox_report_failed (opts, "policy", err);
  text = opts->json ? inspect_format_json (report)
                    : inspect_format_text (report);
  inspect_report_free (report);
  return sandbox_print (text);
}

int
cmd_sandbox_report (int argc, char **argv)
{
  struct sandbox_report_options opts;
  int ret = sandbox_report_options (argc, argv, &opts);
  if (ret != 0)
    return ret > 0 ? SANDBOX_EXIT_OK : SANDBOX_EXIT_USAGE;
  return sandbox_inspect (&opts);
}

/* Generate v (a value of a file that loaded) into g, as it was.  */
static void
sandbox_gen_value (yajl_gen g, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          const char *k = v->u.object.keys[i];
          yajl_gen_string (g, (const unsigned char *) k, strlen (k));
          sandbox_gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        sandbox_gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_STRING (v))
    yajl_gen_string (g, (const unsigned char *) v->u.string,
                     strlen (v->u.string));
  else if (YAJL_IS_NUMBER (v))
    /* The number as it was spelled: 1200.5 stays 1200.5.  */
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v))
    yajl_gen_bool (g, 1);
  else if (YAJL_IS_FALSE (v))
    yajl_gen_bool (g, 0);
  else
    yajl_gen_null (g);
}

void
cmd_home_gen_object_with (yajl_gen g, yajl_val obj, const char *key,
                          cmd_home_gen_fn gen, const void *data)
{
  bool done = false;

  if (obj != NULL && !YAJL_IS_OBJECT (obj))
    obj = NULL;
  yajl_gen_map_open (g);
  for (size_t i = 0; obj != NULL && i < obj->u.object.len; i++)
    {
      const char *k = obj->u.object.keys[i];
      yajl_gen_string (g, (const unsigned char *) k, strlen (k));
      if (strcmp (k, key) == 0 && !done)
        {
          gen (g, obj->u.object.values[i], data);
          done = true;
        }
      else
        sandbox_gen_value (g, obj->u.object.values[i]);
    }
  if (!done)
    {
      yajl_gen_string (g, (const unsigned char *) key, strlen (key));
      gen (g, NULL, data);
    }
  yajl_gen_map_close (g);
}

/* The new text of the home file: root (an object, or NULL for a file that
 * was missing or blank) with key generated by gen.  Owned.  */
static char *
sandbox_rewrite (yajl_val root, const char *key, cmd_home_gen_fn gen,
                 const void *data)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *out;
  size_t len;

  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  cmd_home_gen_object_with (g, root, key, gen, data);
  yajl_gen_get_buf (g, &out, &len);
  char *text = xstrndup ((const char *) out, len);
  yajl_gen_free (g);
  /* yajl's beautified output already ends in a newline.  */
  return text;
}

/* Read the file at path (which may be missing: *text is then NULL).  */
static int
sandbox_read_home (const char *path, char **text, struct cr_error **err)
{
  struct buf b = BUF_INIT;
  char chunk[8192];
  struct stat st;
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  *text = NULL;
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    return cr_error_set (err, errno, _ ("cannot read %s"), path);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return cr_error_set (err, 0, _ ("cannot read %s: not a regular file"),
                         path);
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          buf_free (&b);
          return cr_error_set (err, saved, _ ("cannot read %s"), path);
        }
      if (n == 0)
        break;
      buf_append (&b, chunk, (size_t) n);
      if (b.len > CONFIG_FILE_MAX_BYTES)
        {
          buf_free (&b);
          return cr_error_set (err, 0, _ ("cannot read %s: too large"), path);
        }
    }
  *text = buf_steal (&b, NULL);
  return 0;
}

/* Write all of text to fd.  */
static int
sandbox_write_all (int fd, const char *text)
{
  size_t len = strlen (text), done = 0;
  while (done < len)
    {
      ssize_t n = write (fd, text + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      done += (size_t) n;
    }
  return 0;
}

/* Write text to a temporary file in path's directory and rename it to
 * path: a reader sees the old file or the new one, never half of either.  */
static int
sandbox_replace (const char *path, const char *text, struct cr_error **err)
{
  cleanup_free char *copy = xstrdup (path);
  const char *dir = dirname (copy);
  cleanup_free char *tmp = xasprintf ("%s/.config.json.XXXXXX", dir);
  cleanup_close int fd = mkostemp (tmp, O_CLOEXEC);
  cleanup_close int dfd = -1;

  if (fd < 0)
    return cr_error_set (err, errno, _ ("cannot write %s"), path);
  if (fchmod (fd, 0600) < 0 || sandbox_write_all (fd, text) < 0
      || fsync (fd) < 0 || rename (tmp, path) < 0)
    {
      int saved = errno;
      unlink (tmp);
      return cr_error_set (err, saved, _ ("cannot write %s"), path);
    }
  /* The rename is durable once the directory is.  */
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    fsync (dfd);
  return 0;
}

/* The file to write for home_file: its target when it is a symlink, so a
 * configuration kept elsewhere stays there; its directory made (0700) when
 * missing.  Owned.  */
static char *
sandbox_home_target (const char *home_file, struct cr_error **err)
{
  struct stat st;
  if (lstat (home_file, &st) == 0 && S_ISLNK (st.st_mode))
    {
      char *target = realpath (home_file, NULL);
      if (target == NULL)
        cr_error_set (err, errno, _ ("cannot follow %s"), home_file);
      return target;
    }
  cleanup_free char *copy = xstrdup (home_file);
  const char *dir = dirname (copy);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    {
      cr_error_set (err, errno, _ ("cannot make %s"), dir);
      return NULL;
    }
  return xstrdup (home_file);
}

int
cmd_home_update (const char *home_file, const char *key, cmd_home_gen_fn gen,
                 const void *data, struct cr_error **err)
{
  cleanup_free char *target = sandbox_home_target (home_file, err);
  cleanup_free char *old = NULL;
  cleanup_free char *text = NULL;
  char why[256] = "";
  yajl_val root = NULL;

  if (target == NULL || sandbox_read_home (target, &old, err) < 0)
    return -1;
  if (old != NULL && strspn (old, " \t\r\n") != strlen (old))
    {
      root = yajl_tree_parse (old, why, sizeof why);
      if (root == NULL || !YAJL_IS_OBJECT (root))
        {
          yajl_tree_free (root);
          return cr_error_set (err, 0,
                               _ ("%s: not a JSON object; it was left as it "
                                  "is"),
                               home_file);
        }
    }
  text = sandbox_rewrite (root, key, gen, data);
  yajl_tree_free (root);
  /* What is written must load: a file crucible cannot read back would stop
   * every later run.  */
  struct config *check = config_new_defaults ();
  int ret = config_merge_text (check, text, strlen (text), home_file,
                               CONFIG_HOME, NULL, err);
  config_free (check);
  if (ret < 0)
    return -1;
  return sandbox_replace (target, text, err);
}

void
cmd_home_gen_value (yajl_gen g, yajl_val v)
{
  sandbox_gen_value (g, v);
}

/* sandbox.enabled's new value (data: a bool).  */
static void
sandbox_gen_enabled (yajl_gen g, yajl_val old, const void *data)
{
  (void) old;
  yajl_gen_bool (g, *(const bool *) data);
}

/* The sandbox object with enabled set (data: a bool).  */
static void
sandbox_gen_sandbox (yajl_gen g, yajl_val old, const void *data)
{
  cmd_home_gen_object_with (g, old, "enabled", sandbox_gen_enabled, data);
}

int
cmd_sandbox_write_enabled (const char *home_file, bool enabled,
                           struct cr_error **err)
{
  return cmd_home_update (home_file, "sandbox", sandbox_gen_sandbox, &enabled,
                          err);
}

/* Why confinement cannot be enforced here, or NULL when it can: a backend
 * is found, its claims hold the policy enabling would give, and its probe
 * says it is usable and confined.  Owned.  */
static char *
sandbox_cannot_enforce (const struct config *cfg, const char *workspace)
{
  struct inspect_backend_info info;
  struct inspect_dependencies deps;
  struct policy_input in;
  struct cr_error *err = NULL;
  char *why = NULL;

  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  if (inspect_dependencies (&deps, &in, &info, &err) < 0)
    {
      why = xstrdup (err->msg);
      cr_error_free (err);
    }
  else if (!deps.available)
    why = xasprintf ("no sandbox backend was found: %s", deps.why_unavailable);
  else if (!deps.holds_policy)
    why = xstrdup (deps.refusal);
  inspect_dependencies_clear (&deps);
  /* The backend enabling would give, made as a command's is.  */
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  struct sandbox_backend *backend
      = why == NULL && e != NULL ? sandbox_registry_backend_new (&bc, e->id)
                                 : NULL;
  if (backend != NULL)
    {
      struct sandbox_probe probe = { 0 };
      if (sandbox_probe (backend, &probe, &err) < 0)
        {
          why = xstrdup (err->msg);
          cr_error_free (err);
        }
      else if (!probe.usable || !probe.confined)
        why = xstrdup (probe.reason != NULL ? probe.reason
                                            : "the backend is not usable");
      sandbox_probe_clear (&probe);
      sandbox_backend_free (backend);
    }
  inspect_backend_info_clear (&info);
  return why;
}

int
cmd_sandbox_set (bool enabled, const char *workspace, char **message)
{
  struct cr_error *err = NULL;
  struct config *cfg = NULL;
  cleanup_free char *home_file = NULL;
  cleanup_free char *why = NULL;

  *message = NULL;
  if (config_load (&cfg, NULL, workspace, &err) < 0
      || (home_file = config_home_path (&err)) == NULL)
    {
      config_free (cfg);
      *message = xstrdup (err->msg);
      cr_error_free (err);
      return SANDBOX_EXIT_FAILED;
    }
  if (!enabled && cfg->sandbox_enabled_origin == CONFIG_PROJECT)
    {
      *message = xasprintf (
          _ ("confinement stays enabled: this project's configuration "
             "requires it (sandbox.enabled in %s), and only a project can "
             "lift its own requirement; nothing was changed"),
          cfg->project_file);
      config_free (cfg);
      return SANDBOX_EXIT_FAILED;
    }
  if (enabled)
    why = sandbox_cannot_enforce (cfg, workspace);
  config_free (cfg);
  if (why != NULL)
    {
      *message = xasprintf (_ ("confinement was not enabled: %s; nothing was "
                               "changed"),
                            why);
      return SANDBOX_EXIT_FAILED;
    }
  if (cmd_sandbox_write_enabled (home_file, enabled, &err) < 0)
    {
      *message = xstrdup (err->msg);
      cr_error_free (err);
      return SANDBOX_EXIT_FAILED;
    }
  *message = xasprintf (enabled ? _ ("sandbox enabled: %s sets "
                                     "sandbox.enabled to true")
                                : _ ("sandbox disabled: %s sets "
                                     "sandbox.enabled to false"),
                        home_file);
  return SANDBOX_EXIT_OK;
}

/* `crucible sandbox enable` or `disable`.  */
static int
sandbox_set (bool enabled)
{
  struct cr_error *err = NULL;
  cleanup_free char *workspace = front_workspace (&err);
  cleanup_free char *message = NULL;

  if (workspace == NULL)
    return sandbox_fail (err);
  int status = cmd_sandbox_set (enabled, workspace, &message);
  if (status == SANDBOX_EXIT_OK)
    printf ("%s\n", message);
  else
    fprintf (stderr, "crucible: %s\n", message);
  return status;
}

/* `crucible sandbox enable` or `disable` (argv[0]), which take nothing.  */
static int
sandbox_cmd_set (int argc, char **argv)
{
  if (argc == 1)
    return sandbox_set (strcmp (argv[0], "enable") == 0);
  fprintf (stderr, _ ("crucible: sandbox %s: unexpected argument '%s'\n"),
           argv[0], argv[1]);
  sandbox_usage (stderr);
  return SANDBOX_EXIT_USAGE;
}

/* A subcommand of `crucible sandbox`: its name, and what runs it with
 * argv[0] its name.  */
struct sandbox_subcommand
{
  const char *name;
  int (*run) (int argc, char **argv);
};

static const struct sandbox_subcommand sandbox_subcommands[] = {
  { "inspect", cmd_sandbox_report }, { "audit", cmd_audit },
  { "enable", sandbox_cmd_set },     { "disable", sandbox_cmd_set },
  { "quarantine", cmd_quarantine },
};

int
cmd_sandbox (int argc, char **argv)
{
  if (argc < 2)
    {
      sandbox_usage (stderr);
      return SANDBOX_EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      sandbox_usage (stdout);
      return SANDBOX_EXIT_OK;
    }
  for (size_t i = 0;
       i < sizeof sandbox_subcommands / sizeof *sandbox_subcommands; i++)
    if (strcmp (argv[1], sandbox_subcommands[i].name) == 0)
      return sandbox_subcommands[i].run (argc - 1, argv + 1);
  fprintf (stderr, _ ("crucible: sandbox: unknown command '%s'\n"), argv[1]);
  sandbox_usage (stderr);
  return SANDBOX_EXIT_USAGE;
}
