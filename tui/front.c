/* What every front end does the same way.  */
#include <config.h>

#include "tui/front.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/i18n.h"

char *
front_workspace (struct cr_error **err)
{
  char *cwd = getcwd (NULL, 0);
  if (cwd == NULL)
    {
      cr_error_set (err, errno, _ ("finding the current directory"));
      return NULL;
    }
  if (access (cwd, R_OK | X_OK) < 0)
    {
      cr_error_set (err, errno, _ ("the current directory %s cannot be read"),
                    cwd);
      free (cwd);
      return NULL;
    }
  return cwd;
}

struct journal *
front_journal (void)
{
  struct journal *j = NULL;
  struct cr_error *err = NULL;
  if (journal_open (&j, NULL, &err) == 0)
    return j;
  fprintf (stderr,
           _ ("crucible: this session's lifecycle facts are not recorded: "
              "%s\n"),
           err->msg);
  cr_error_free (err);
  return NULL;
}

const char *
front_refusal (const struct config *cfg)
{
  return cfg->sandbox_enabled ? FRONT_NO_BACKEND : NULL;
}
