/* Reading a command line far enough to say which programs will run.
 *
 * The bash tool runs a line through sh -c; permission rules are written
 * about the programs it starts, so the line is read as POSIX sh reads it:
 * quotes, escapes, lists, pipelines, subshells, brace groups, the compound
 * commands (if, for, while, until, case), command substitution (whose
 * commands run too), parameter and arithmetic expansion, redirections and
 * here-documents.  The text of a literal `sh -c`, `bash -c`, `eval` or
 * `trap` action is read the same way, because the commands in it run too.
 *
 * A line that cannot be read that far (an unclosed quote, a program name
 * produced by an expansion, eval of text that is not written out, syntax
 * this reader does not take, too deep, too long) is refused with a short
 * model-facing reason, never guessed at.  doc/cmdline.md records every
 * decision, including which leading sleeps count.  */
#ifndef CRUCIBLE_CORE_CMDLINE_H
#define CRUCIBLE_CORE_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/* A line longer than this is refused unread (256 KiB).  */
#define CMDLINE_MAX_LEN ((size_t) 256 * 1024)
/* Nesting (subshells, groups, $( ), backquotes, ${ }, sh -c, eval) beyond
 * this is refused.  */
#define CMDLINE_MAX_DEPTH 32
/* A line that holds more simple commands than this is refused.  */
#define CMDLINE_MAX_COMMANDS 4096

/* One simple command.  Every string and array is owned by the cmdline.  */
struct cmdline_command
{
  char **argv;   /* words after quote removal, NULL-terminated; a word
                    holding an expansion keeps its expansion as written
                    ("$HOME/x", "$(date)") */
  size_t argc;   /* 0 for an assignment or a redirection on its own */
  char **assign; /* "NAME=value" before the program, NULL-terminated */
  size_t n_assign;
  char **redirs; /* redirections as read: ">out", "2>&1", "<<EOF" */
  size_t n_redirs;
  size_t program;   /* index in argv of the program a wrapper (sudo, env,
                       nohup, xargs, find -exec, ...) runs, 0 when unwrapped */
  bool dynamic;     /* some word, assignment value or redirection target
                       depends on an expansion or a glob; the program name
                       never does (such a line is refused) */
  bool background;  /* runs in a list ended by & */
  bool transparent; /* a literal `sh -c TEXT` or `eval TEXT` with no
                       assignment or file-writing redirection: the commands
                       of TEXT follow in the list and stand for it */
};

/* A line read: its simple commands in the order they were read (a
 * command substitution's commands before the command they are part of, a
 * `sh -c` string's commands after the shell).  */
struct cmdline
{
  struct cmdline_command *cmds; /* owned */
  size_t n;
  bool begins_with_sleep; /* see cmdline_begins_with_sleep */
};

/* Read len bytes of line.  On success *out is a new cmdline the caller frees
 * with cmdline_free; on failure returns -1 and *err says why, as
 * "cannot read this command line: <reason>" (model-facing English).  */
int cmdline_read (const char *line, size_t len, struct cmdline **out,
                  struct cr_error **err);

/* Free a cmdline; NULL is allowed.  */
void cmdline_free (struct cmdline *cl);

/* Whether the line is a wait written as a command: its first command is a
 * foreground `sleep` with literal, not all zero, durations, and at the top
 * level another command is reached after it through && or through ; or a
 * newline.  A sleep with nothing after it, one in the background, in a
 * pipeline, or followed only by || is not.  */
bool cmdline_begins_with_sleep (const struct cmdline *cl);

/* The command's words joined by single spaces, owned by the caller.  */
char *cmdline_command_text (const struct cmdline_command *c);

/* Assignments, words and the redirections that write a file (not to
 * /dev/null), joined by single spaces; owned by the caller.  This is the
 * text an allow rule must match.  */
char *cmdline_command_full_text (const struct cmdline_command *c);

#endif
