/* `crucible sandbox quarantine`: list, restore and drop the publications
 * kept in this user's state directory (sandbox/quarantine.h).  */
#include <config.h>

#include "tui/cmd_quarantine.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "sandbox/quarantine.h"
#include "sandbox/statedir.h"
#include "tui/options.h"

#define QUARANTINE_EXIT_OK 0
#define QUARANTINE_EXIT_FAILED 1
#define QUARANTINE_EXIT_USAGE 2

/* Print the usage.  */
static void
quarantine_usage (FILE *out)
{
  fputs (_ ("Usage: crucible sandbox quarantine [list]\n"
            "       crucible sandbox quarantine restore ID\n"
            "       crucible sandbox quarantine drop ID\n\n"
            "list     what publication kept because a rollback could not be\n"
            "         proved: when, from which root, and why\n"
            "restore  put that root back as the publication found it, when\n"
            "         every path it touched is still as it found or left it\n"
            "drop     remove the entry and all it keeps\n"),
         out);
}

/* Print a failure and return the failure status.  */
static int
quarantine_fail (struct cr_error *err)
{
  fprintf (stderr, "crucible: %s\n", err->msg);
  cr_error_free (err);
  return QUARANTINE_EXIT_FAILED;
}

/* List every entry, oldest first.  */
static int
quarantine_print (const char *statedir)
{
  struct quarantine_entry *e;
  size_t n;
  struct cr_error *err = NULL;

  if (quarantine_list (statedir, &e, &n, &err) < 0)
    return quarantine_fail (err);
  if (n == 0)
    printf ("%s\n", _ ("nothing is in quarantine"));
  for (size_t i = 0; i < n; i++)
    {
      char when[64] = "?";
      time_t t = (time_t) e[i].when;
      struct tm tm;
      if (e[i].when > 0 && gmtime_r (&t, &tm) != NULL)
        strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
      printf (_ ("%s  %s  from %s  (%s)\n"), e[i].id, when,
              e[i].root ? e[i].root : "?", e[i].reason);
    }
  quarantine_entries_free (e, n);
  return QUARANTINE_EXIT_OK;
}

/* Run restore or drop on one entry.  */
static int
quarantine_act (const char *statedir, const char *verb, const char *id)
{
  struct cr_error *err = NULL;
  bool restore = strcmp (verb, "restore") == 0;
  int rc = restore ? quarantine_restore (statedir, id, &err)
                   : quarantine_drop (statedir, id, &err);
  if (rc < 0)
    return quarantine_fail (err);
  printf (restore ? _ ("restored the root of %s as it was found; the entry "
                       "is dropped\n")
                  : _ ("dropped %s\n"),
          id);
  return QUARANTINE_EXIT_OK;
}

int
cmd_quarantine (int argc, char **argv)
{
  cleanup_free char *statedir = NULL;
  cleanup_close int fd = -1;
  struct cr_error *err = NULL;

  /* The verbs are operands; --help is the one option.  */
  static const struct options_spec specs[] = { { "--help", "-h", 0, false } };
  static const struct options_table table = OPTIONS_TABLE (specs, 0);
  if (argc >= 2 && options_find (&table, argv[1]) == 0)
    {
      quarantine_usage (stdout);
      return QUARANTINE_EXIT_OK;
    }
  bool list = argc == 1 || (argc == 2 && strcmp (argv[1], "list") == 0);
  bool act
      = argc == 3
        && (strcmp (argv[1], "restore") == 0 || strcmp (argv[1], "drop") == 0);
  if (!list && !act)
    {
      quarantine_usage (stderr);
      return QUARANTINE_EXIT_USAGE;
    }
  if (statedir_open (STATEDIR_PARENT, getuid (), getgid (), &statedir, &fd,
                     &err)
      < 0)
    return quarantine_fail (err);
  return list ? quarantine_print (statedir)
              : quarantine_act (statedir, argv[1], argv[2]);
}
