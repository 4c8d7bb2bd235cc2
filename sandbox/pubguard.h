/* What publication refuses, decided by name and by content, never by
 * walking the workspace: repository metadata and recognized agent
 * configuration at any depth, the configured protected and readOnly
 * roots, and inside a git directory the command made, whatever would run
 * at the person's next git command (a hook, a configuration key that
 * names a program).  Pure decisions; pubplan's walk asks them for each
 * path it finds changed, so the cost stays with what changed
 * (doc/publication.md, "What is never published").  */
#ifndef CRUCIBLE_SANDBOX_PUBGUARD_H
#define CRUCIBLE_SANDBOX_PUBGUARD_H

#include <stdbool.h>
#include <stddef.h>

/* What a name is.  */
enum pubguard_name
{
  PUBGUARD_PLAIN,
  PUBGUARD_GIT,  /* .git, in any case or spelling git itself accepts */
  PUBGUARD_AGENT /* agent or editor configuration (.vscode, .envrc, ...) */
};

/* Classify one path component.  ASCII case is ignored, and so are the
 * trailing dots and spaces and the 8.3 short name (GIT~1) by which NTFS
 * and HFS+ open the same entry: a workspace published on one of them, or
 * on a casefolded ext4 directory, must not reopen it by another spelling.  */
enum pubguard_name pubguard_classify (const char *name);

/* The recognized agent configuration names, NULL-terminated (static), for
 * the broker's --protect at the root.  .git is not among them.  */
const char *const *pubguard_agent_names (void);

/* A configured root inside the workspace that nothing may change:
 * relative to it, canonical (no "", "." or ".." component), and the
 * word for why ("protected", "read-only").  The caller owns both.  */
struct pubguard_root
{
  const char *path;
  const char *why;
};

struct pubguard
{
  const struct pubguard_root *roots;
  size_t n_roots;
  /* Where git's own hook templates are (PUBGUARD_GIT_TEMPLATES): a
   * *.sample hook publishes only holding exactly the bytes of the one
   * there.  NULL: none does.  */
  const char *git_templates;
};

#define PUBGUARD_GIT_TEMPLATES "/usr/share/git-core/templates/hooks"

/* The configured root rel is at or under, or NULL.  */
const struct pubguard_root *pubguard_root_over (const struct pubguard *g,
                                                const char *rel);

/* The first configured root strictly under rel, or NULL: removing or
 * replacing rel would change it.  */
const struct pubguard_root *pubguard_root_below (const struct pubguard *g,
                                                 const char *rel);

/* Whether a name inside a hooks directory is one of git's own inert
 * samples ("pre-commit.sample"), which git never runs.  */
bool pubguard_hook_sample (const char *name);

/* The first variable of git configuration text (len bytes, any content)
 * that names a program git would run, as "section.key" lowercased
 * ("core.fsmonitor", "filter.*.smudge", "alias.* with '!'"), or
 * "malformed" when the text is not configuration git would read the same
 * way; NULL when it names none.  Owned by the caller.  */
char *pubguard_git_config_runs (const char *text, size_t len);

/* The value git would take for section.key (no subsection; both names
 * lowercase) in the configuration text: the last one, as git reads it;
 * NULL when it is not set there.  Reading stops where git would refuse
 * the file.  include.path is not followed.  */
char *pubguard_git_config_value (const char *text, size_t len,
                                 const char *section, const char *key);

#endif
