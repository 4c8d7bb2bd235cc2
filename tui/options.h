/* Reading command lines: every command has a table of its options (the
 * way tmux gives each command its own), and one parser reads any table.
 * Also the options of `crucible run`.  */
#ifndef CRUCIBLE_TUI_OPTIONS_H
#define CRUCIBLE_TUI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/env.h"
#include "lib/error.h"

/* How a table's words are read.  */
enum options_flags
{
  /* The first word that is not an option ("-" alone included) begins the
   * operands, and so does the word after "--"; without this flag every
   * word must be an option, "--" too.  */
  OPTIONS_OPERANDS = 1 << 0,
  /* A beginning of a long name that only one name has names it
   * (getopt_long's way, as crucible run has always read them).  */
  OPTIONS_PREFIXES = 1 << 1,
};

/* One option: --NAME, its short spelling, and whether it takes a value
 * (--NAME=VALUE or --NAME VALUE).  */
struct options_spec
{
  const char *name;  /* "--timeout" */
  const char *alias; /* "-h", or NULL */
  int id;            /* what options_next returns for it, >= 0 */
  bool value;
};

/* A command's options.  */
struct options_table
{
  const struct options_spec *specs;
  size_t n;
  unsigned flags;
};

#define OPTIONS_TABLE(specs, flags)                                            \
  {                                                                            \
    (specs), sizeof (specs) / sizeof *(specs), (flags)                         \
  }

/* What options_next returns besides an option's id.  */
enum
{
  OPTIONS_END = -1,      /* no more options; operands start at next */
  OPTIONS_UNKNOWN = -2,  /* word names no option of the table */
  OPTIONS_NO_VALUE = -3, /* word names an option whose value is missing */
};

/* Reading one command line against one table.  */
struct options_parser
{
  const struct options_table *table;
  int argc;
  char **argv;
  int next;          /* the next word; after OPTIONS_END, the first operand */
  const char *word;  /* the word last read */
  const char *value; /* the value of the option last read, or NULL */
};

/* Start reading argv[1] on (argv[0] is the command's name).  */
void options_begin (struct options_parser *p, const struct options_table *t,
                    int argc, char **argv);

/* The next option's id, OPTIONS_END, or an error (p->word names it).  */
int options_next (struct options_parser *p);

/* Set *err to what an error of options_next says: "unknown option 'W'" or
 * "W needs a value"; returns -1.  */
int options_error (const struct options_parser *p, int what,
                   struct cr_error **err);

/* The id of the option word names in t (exactly, no value), or
 * OPTIONS_UNKNOWN.  */
int options_find (const struct options_table *t, const char *word);

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
