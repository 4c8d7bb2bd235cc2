/* Command-line options of `crucible run`.  */
#ifndef CRUCIBLE_TUI_OPTIONS_H
#define CRUCIBLE_TUI_OPTIONS_H

#include <stddef.h>

#include "core/env.h"
#include "lib/error.h"

struct run_options
{
  double timeout_seconds; /* 0 when not given */
  char *description;      /* owned, or NULL */
  struct env_var *env;    /* owned names; values point into argv */
  size_t n_env;
  char *command; /* the words after --, joined by spaces; owned */
  int help;
};

/* Parse argv (argv[0] is "run").  Errors say which option and why.  */
int run_options_parse (struct run_options *opts, int argc, char **argv,
                       struct cr_error **err);
void run_options_clear (struct run_options *opts);

/* Parse a --timeout value: seconds, fractions allowed, > 0.  */
int options_parse_seconds (const char *text, double *out,
                           struct cr_error **err);

#endif
