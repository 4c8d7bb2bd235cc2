/* Parsing `crucible run`'s command line.  */
#include <config.h>

#include "tui/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"

/* The longest --timeout accepted: a year, far past any command ceiling.  */
#define OPTIONS_MAX_SECONDS (365.0 * 24 * 3600)

int
options_parse_seconds (const char *text, double *out, struct cr_error **err)
{
  char *end;
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

int
run_options_parse (struct run_options *opts, int argc, char **argv,
                   struct cr_error **err)
{
  static const struct option longopts[] = {
    { "timeout", required_argument, NULL, 't' },
    { "env", required_argument, NULL, 'e' },
    { "description", required_argument, NULL, 'd' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  memset (opts, 0, sizeof *opts);
  optind = 1;
  opterr = 0;
  /* '+': stop at the first word that is not an option, so the command's own
   * options are never read as ours.  */
  while ((c = getopt_long (argc, argv, "+:", longopts, NULL)) != -1)
    switch (c)
      {
      case 't':
        if (options_parse_seconds (optarg, &opts->timeout_seconds, err) < 0)
          return -1;
        break;
      case 'e':
        if (run_options_add_env (opts, optarg, err) < 0)
          return -1;
        break;
      case 'd':
        free (opts->description);
        opts->description = xstrdup (optarg);
        break;
      case 'h':
        opts->help = 1;
        return 0;
      case ':':
        return cr_error_set (err, 0, _ ("%s needs a value"), argv[optind - 1]);
      default:
        return cr_error_set (err, 0, _ ("unknown option '%s'"),
                             argv[optind - 1]);
      }
  if (optind >= argc)
    return cr_error_set (
        err, 0, _ ("no command given: crucible run [OPTION]... -- COMMAND"));
  opts->command = run_options_join (argc - optind, argv + optind);
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
