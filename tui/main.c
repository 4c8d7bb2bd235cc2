/* crucible's entry point: the subcommand table.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/cmd_mcp.h"
#include "tui/cmd_run.h"
#include "tui/cmd_sandbox.h"
#include "tui/cmd_session.h"
#include "tui/options.h"
#include "tui/ui.h"

#define MAIN_EXIT_USAGE 2

struct cmd_entry
{
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
};

static const struct cmd_entry main_commands[] = {
  { "mcp", cmd_mcp,
    N_ ("serve bash and bash_output over the Model Context Protocol") },
  { "run", cmd_run,
    N_ ("run one command as one bash call and print its result") },
  { "sandbox", cmd_sandbox,
    N_ ("inspect the sandbox, or turn confinement on or off") },
  { "session", cmd_session,
    N_ ("a session reading prompts from standard input, one per line") },
};

/* The options crucible itself reads before a command; the session's own
 * (--agent, --theme, DIR) are read by ui_main.  */
enum main_option
{
  MAIN_OPT_HELP,
  MAIN_OPT_SANDBOX,
  MAIN_OPT_VERSION
};

static const struct options_spec main_option_specs[] = {
  { "--help", "-h", MAIN_OPT_HELP, false },
  { "--sandbox", NULL, MAIN_OPT_SANDBOX, false },
  { "--version", NULL, MAIN_OPT_VERSION, false },
};

static const struct options_table main_option_table
    = OPTIONS_TABLE (main_option_specs, 0);

/* Print the top-level usage.  */
static void
main_usage (FILE *out)
{
  fputs (_ ("Usage: crucible [--agent CMD] [--theme NAME] [DIR]\n"
            "       crucible COMMAND [ARG]...\n"
            "       crucible --sandbox [--json]\n"
            "       crucible --help | --version\n\n"
            "Without a command, the full-screen session opens in DIR "
            "(default: the\n"
            "current directory).\n\n"
            "Commands:\n"),
         out);
  for (size_t i = 0; i < sizeof main_commands / sizeof *main_commands; i++)
    fprintf (out, "  %-8s %s\n", main_commands[i].name,
             _ (main_commands[i].summary));
}

/* Set up the person's character set and language, and nothing else of
 * their locale: numbers are read from JSON and written into it and into
 * the exact results with a '.', which a locale such as fr_FR would make a
 * ',' for strtod and printf (LC_NUMERIC), and no other category is used.
 * Each category of a locale is a file when there is no locale archive
 * (C.UTF-8 on Debian), so the two are also most of what a start opens.
 * The catalogues are looked for in share/locale beside the installed
 * program first (an installation moved as a whole keeps its language),
 * then where configure put them.  */
static void
main_locale (void)
{
  setlocale (LC_CTYPE, "");
  setlocale (LC_MESSAGES, "");
#ifdef ENABLE_NLS
  char exe[PATH_MAX];
  const char *dir = LOCALEDIR;
  char *beside = NULL;
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = n > 0 ? (exe[n] = '\0', strrchr (exe, '/')) : NULL;
  if (slash != NULL)
    {
      *slash = '\0';
      beside = xasprintf ("%s/../share/locale", exe);
      struct stat st;
      if (stat (beside, &st) == 0 && S_ISDIR (st.st_mode))
        dir = beside;
    }
  bindtextdomain (PACKAGE, dir);
  textdomain (PACKAGE);
  free (beside);
#endif
}

/* Give a standard descriptor that was closed (`crucible mcp <&-`) /dev/null,
 * so that the next descriptor made (the loop's signal pipe) cannot take
 * its number and be read as standard input or written as output.  */
static void
main_std_fds (void)
{
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
    if (fcntl (fd, F_GETFD) < 0 && errno == EBADF)
      {
        int null = open ("/dev/null", O_RDWR);
        if (null < 0)
          exit (MAIN_EXIT_USAGE);
        if (null != fd)
          {
            dup2 (null, fd);
            close (null);
          }
      }
}

int
main (int argc, char **argv)
{
  main_std_fds ();
  main_locale ();
  /* A closed pipe is reported where it is written, not by dying.  */
  signal (SIGPIPE, SIG_IGN);
  if (argc < 2)
    return ui_main (argc, argv);
  switch (options_find (&main_option_table, argv[1]))
    {
    case MAIN_OPT_HELP:
      main_usage (stdout);
      return 0;
    case MAIN_OPT_SANDBOX:
      return cmd_sandbox_report (argc - 1, argv + 1);
    case MAIN_OPT_VERSION:
      printf ("crucible %s\n", PACKAGE_VERSION);
      return 0;
    }
  for (size_t i = 0; i < sizeof main_commands / sizeof *main_commands; i++)
    if (strcmp (argv[1], main_commands[i].name) == 0)
      return main_commands[i].fn (argc - 1, argv + 1);
  /* Options of the session, or the directory it opens in.  */
  struct stat st;
  if (argv[1][0] == '-' || strchr (argv[1], '/') != NULL
      || (stat (argv[1], &st) == 0 && S_ISDIR (st.st_mode)))
    return ui_main (argc, argv);
  fprintf (stderr, _ ("crucible: unknown command '%s'\n"), argv[1]);
  main_usage (stderr);
  return MAIN_EXIT_USAGE;
}
