/* Permission rules for commands: permissions.mode, .allow and .deny.
 *
 * A rule is `Bash` (every command), `Bash(PATTERN)`, or a bare PATTERN
 * (the same as Bash(PATTERN)).  In a pattern `*` matches any run of
 * characters, spaces included; `\*` is a literal star and `\\` a literal
 * backslash; a trailing ` *` also matches nothing, so `Bash(npm run *)`
 * matches `npm run`.  Runs of blanks in a pattern count as one space.
 * Rules are matched against every simple command the reader found,
 * including those inside $( ), backquotes, subshells and sh -c strings.
 *
 * deny beats ask beats allow: a command matching a deny rule refuses the
 * line in every mode, even one the person typed.  An unreadable line is
 * asked about (allowed only in fullAccess or when the person typed it); no
 * allow rule ever covers it.  Otherwise a line runs without a question only
 * in fullAccess, when the person typed it, or when every command matches
 * an allow rule.
 *
 * A rule beginning "mcp__" is a tool rule, not a command pattern:
 * mcp__SERVER__TOOL names one tool of a configured MCP server, and
 * mcp__SERVER the tools the server had when crucible first saw the rule
 * with its listing (recorded across runs, core/mcphost.c).  No
 * command matches one; rules_decide_tool decides with them.
 * doc/cmdline.md is the reference.  */
#ifndef CRUCIBLE_CORE_RULES_H
#define CRUCIBLE_CORE_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cmdline.h"
#include "lib/error.h"

enum rules_verdict
{
  RULES_ALLOW,
  RULES_ASK,
  RULES_DENY
};

enum rules_mode
{
  RULES_MODE_ASK,
  RULES_MODE_FULL_ACCESS
};

struct rules;

/* What every tool rule begins with.  */
#define RULES_TOOL_PREFIX "mcp__"

/* The longest tool name a tool rule may name, in bytes.  */
#define RULES_TOOL_NAME_MAX 128

/* Compile a mode ("ask", "fullAccess"; NULL means "ask") and rule lists.
 * The strings are copied.  A bad mode or rule is an error naming it, e.g.
 * `permissions.deny: rule "Bash(rm" does not end with ")"`.  */
/* Why rule (as written in permissions.allow or .deny) cannot be compiled,
 * a static text such as "holds a control character", or NULL when it can
 * be.  */
const char *rules_refuse (const char *rule);

struct rules *rules_new (const char *mode, char *const *allow, size_t n_allow,
                         char *const *deny, size_t n_deny,
                         struct cr_error **err);

/* Free rules; NULL is allowed.  */
void rules_free (struct rules *r);

enum rules_mode rules_mode (const struct rules *r);

/* Add one allow rule (what names where it came from, for the error).  */
int rules_add_allow (struct rules *r, const char *rule, const char *what,
                     struct cr_error **err);

/* Change the mode for the rest of the session (shift+tab in the
 * full-screen session); the configuration file is not touched.  */
void rules_set_mode (struct rules *r, enum rules_mode mode);

/* Decide about a line.  cl is NULL when the line could not be read.  On
 * RULES_DENY, *rule_out (when rule_out is not NULL) is the first deny rule
 * that matched, as written, owned by r; otherwise it is set to NULL.  */
enum rules_verdict rules_decide (const struct rules *r,
                                 const struct cmdline *cl, bool typed_by_person,
                                 const char **rule_out);

/* Decide about a call of tool, of the MCP server named server.  initial:
 * the tool is one an mcp__<server> allow rule covers, those of the
 * listing recorded when crucible first saw the rule (not added later
 * by list_changed or at a later start).  A deny rule naming the tool,
 * or the server, refuses it in every mode (RULES_DENY, *rule_out the
 * first such rule as written).  Otherwise fullAccess allows it
 * (*rule_out NULL); in ask mode an allow rule naming the tool, or the
 * server when initial, allows it (*rule_out that rule), and anything
 * else is RULES_ASK (*rule_out NULL).  Command rules take no part.
 * rule_out may be NULL.  */
enum rules_verdict rules_decide_tool (const struct rules *r, const char *server,
                                      const char *tool, bool initial,
                                      const char **rule_out);

/* One command a deny rule matched.  */
struct rules_denial
{
  size_t command;   /* index into cl->cmds */
  const char *rule; /* the rule as written, owned by r */
};

/* Every command of cl that a deny rule matches (the first matching rule
 * for each), in order.  Returns how many; *out is owned by the caller (free
 * it), NULL when there are none.  */
size_t rules_denials (const struct rules *r, const struct cmdline *cl,
                      struct rules_denial **out);

/* The model-facing refusal for a denied line, owned by the caller:
 * "Not run: your deny rules refuse it (`rm -rf build` matches
 * Bash(rm *))." with one clause per denied command, separated by "; ".
 * NULL when nothing in cl is denied.  */
char *rules_deny_message (const struct rules *r, const struct cmdline *cl);

#endif
