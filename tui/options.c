/* Reading command lines through each command's table of options, and
 * `crucible run`'s.  */
#include <config.h>

#include "tui/options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"

/* Whether word is spec's name or short spelling.  */
static bool
options_is (const struct options_spec *spec, const char *word)
{
  return strcmp (word, spec->name) == 0
         || (spec->alias != NULL && strcmp (word, spec->alias) == 0);
}

int
options_find (const struct options_table *t, const char *word)
{
  for (size_t i = 0; i < t->n; i++)
    if (options_is (&t->specs[i], word))
      return t->specs[i].id;
  return OPTIONS_UNKNOWN;
}

/* The option the first len bytes of a long word name: that name exactly,
 * else (with OPTIONS_PREFIXES) the one name they begin; NULL for none or
 * more than one.  */
static const struct options_spec *
options_match (const struct options_table *t, const char *word, size_t len)
{
  const struct options_spec *found = NULL;
  size_t n_found = 0;
  for (size_t i = 0; i < t->n; i++)
    {
      const char *name = t->specs[i].name;
      if (strncmp (name, word, len) != 0)
        continue;
      if (name[len] == '\0')
        return &t->specs[i];
      found = &t->specs[i];
      n_found++;
    }
  return (t->flags & OPTIONS_PREFIXES) && n_found == 1 ? found : NULL;
}

void
options_begin (struct options_parser *p, const struct options_table *t,
               int argc, char **argv)
{
  memset (p, 0, sizeof *p);
  p->table = t;
  p->argc = argc;
  p->argv = argv;
  p->next = 1;
}

/* Whether word ends the options (OPTIONS_OPERANDS), and where the operands
 * then start.  */
static bool
options_ends (struct options_parser *p, const char *word)
{
  if (!(p->table->flags & OPTIONS_OPERANDS))
    return false;
  if (strcmp (word, "--") == 0)
    {
      p->next++;
      return true;
    }
  return word[0] != '-' || word[1] == '\0';
}

int
options_next (struct options_parser *p)
{
  p->value = NULL;
  if (p->next >= p->argc)
    return OPTIONS_END;
  const char *word = p->argv[p->next];
  if (options_ends (p, word))
    return OPTIONS_END;
  p->word = word;
  p->next++;
  const struct options_spec *spec = NULL;
  const char *eq = NULL;
  if (strncmp (word, "--", 2) == 0)
    {
      /* --NAME or --NAME=VALUE.  */
      eq = strchr (word, '=');
      size_t len = eq != NULL ? (size_t) (eq - word) : strlen (word);
      spec = options_match (p->table, word, len);
    }
  for (size_t i = 0; spec == NULL && eq == NULL && i < p->table->n; i++)
    if (p->table->specs[i].alias != NULL
        && strcmp (word, p->table->specs[i].alias) == 0)
      spec = &p->table->specs[i];
  if (spec == NULL || (eq != NULL && !spec->value))
    return OPTIONS_UNKNOWN;
  if (spec->value && eq != NULL)
    p->value = eq + 1;
  else if (spec->value && p->next < p->argc)
    p->value = p->argv[p->next++];
  else if (spec->value)
    return OPTIONS_NO_VALUE;
  return spec->id;
}

int
options_error (const struct options_parser *p, int what, struct cr_error **err)
{
  if (what == OPTIONS_NO_VALUE)
    return cr_error_set (err, 0, _ ("%s needs a value"), p->word);
  return cr_error_set (err, 0, _ ("unknown option '%s'"), p->word);
}

/* The longest --timeout accepted: a year, far past any command ceiling.  */
#define OPTIONS_MAX_SECONDS (365.0 * 24 * 3600)

int
options_parse_seconds (const char *text, double *out, struct cr_error **err)
{
  char *end;
  if (text == NULL)
    text = "";
  errno = 0;
  double v = strtod (text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite (v) || v <= 0
      || v > OPTIONS_MAX_SECONDS)
    return cr_error_set (err, 0,
                         _ ("--timeout takes a number of seconds greater than "
                            "0 and at most 31536000 (fractions allowed), not "
                            "'%s'"),
                         text);
  *out = v;
  return 0;
}

/* Add one --env NAME=VALUE.  */
static int
run_options_add_env (struct run_options *opts, const char *arg,
                     struct cr_error **err)
{
  struct env_var v;
  if (env_parse_assignment (arg, &v, err) < 0)
    return -1;
  opts->env = xrealloc (opts->env, (opts->n_env + 1) * sizeof *opts->env);
  opts->env[opts->n_env++] = v;
  return 0;
}

/* Join the command words with single spaces.  */
static char *
run_options_join (int argc, char **argv)
{
  struct buf b = BUF_INIT;
  for (int i = 0; i < argc; i++)
    {
      if (i > 0)
        buf_putc (&b, ' ');
      buf_puts (&b, argv[i]);
    }
  return buf_steal (&b, NULL);
}

/* crucible run's options.  */
enum run_option
{
  RUN_OPT_TIMEOUT,
  RUN_OPT_ENV,
  RUN_OPT_DESCRIPTION,
  RUN_OPT_HELP
};

static const struct options_spec run_option_specs[] = {
  { "--timeout", NULL, RUN_OPT_TIMEOUT, true },
  { "--env", NULL, RUN_OPT_ENV, true },
  { "--description", NULL, RUN_OPT_DESCRIPTION, true },
  { "--help", NULL, RUN_OPT_HELP, false },
};

/* The first word that is not an option ends them, so the command's own
 * options are never read as ours.  */
static const struct options_table run_option_table
    = OPTIONS_TABLE (run_option_specs, OPTIONS_OPERANDS | OPTIONS_PREFIXES);

int
run_options_parse (struct run_options *opts, int argc, char **argv,
                   struct cr_error **err)
{
  struct options_parser p;
  int c;

  memset (opts, 0, sizeof *opts);
  options_begin (&p, &run_option_table, argc, argv);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case RUN_OPT_TIMEOUT:
        if (options_parse_seconds (p.value, &opts->timeout_seconds, err) < 0)
          return -1;
        break;
      case RUN_OPT_ENV:
        if (run_options_add_env (opts, p.value, err) < 0)
          return -1;
        break;
      case RUN_OPT_DESCRIPTION:
        free (opts->description);
        opts->description = xstrdup (p.value);
        break;
      case RUN_OPT_HELP:
        opts->help = 1;
        return 0;
      default:
        return options_error (&p, c, err);
      }
  if (p.next >= argc)
    return cr_error_set (
        err, 0, _ ("no command given: crucible run [OPTION]... -- COMMAND"));
  opts->command = run_options_join (argc - p.next, argv + p.next);
  return 0;
}

void
run_options_clear (struct run_options *opts)
{
  for (size_t i = 0; i < opts->n_env; i++)
    free ((char *) opts->env[i].name);
  free (opts->env);
  free (opts->description);
  free (opts->command);
  memset (opts, 0, sizeof *opts);
}
