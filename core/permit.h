/* Whether a call may run: the deny and allow rules over every command the
 * line runs, the mode, and the refusal of a line that sleeps to wait for a
 * later command.  One decision for every front end; and which allow rules
 * to propose when the person allows a call from now on.  */
#ifndef CRUCIBLE_CORE_PERMIT_H
#define CRUCIBLE_CORE_PERMIT_H

#include <stdbool.h>

#include "core/config.h"
#include "core/rules.h"
#include "lib/error.h"

enum permit_verdict
{
  PERMIT_RUN,   /* runs without asking */
  PERMIT_ASK,   /* the person is asked */
  PERMIT_REFUSE /* refused; refusal says why */
};

struct permit
{
  enum permit_verdict verdict;
  char *refusal; /* "[refused: …; nothing was run]" when refused; owned */
};

/* The rules of a configuration (mode, allow, deny).  A rule that cannot be
 * read is an error naming it.  */
struct rules *permit_rules (const struct config *cfg, struct cr_error **err);

/* Decide about a bash call.  typed_by_person: the person wrote the line
 * (crucible run, the built-in shell agent), so only deny rules can stop
 * it.  */
void permit_decide (const struct rules *rules, const char *line,
                    bool typed_by_person, bool background, struct permit *out);

void permit_clear (struct permit *p);

/* The allow rules proposed for a line the person allows "from now on":
 * one for each command it runs, each once, in the order they run.  None
 * for a line the reader cannot read, or one that runs no program.  */
struct permit_proposal
{
  char **rules; /* "Bash(npm run *)", "Bash(make *)"; owned */
  size_t n;
};

/* Propose the rules for line: each command's assignments, its program and,
 * when the next word is a subcommand rather than an option, a path or a
 * number, that word too, then anything; '*' and '\' in a word escaped.
 * Every front end that offers "allow from now on" proposes through this,
 * so the rule saved is the same whichever one asked.  */
void permit_propose (const char *line, struct permit_proposal *out);

void permit_proposal_clear (struct permit_proposal *p);

#endif
