/* What publication refuses, by name and by content.  */
#include <config.h>

#include "sandbox/pubguard.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "lib/xalloc.h"

/* Recognized agent and editor configuration: each runs or steers
 * something at the person's next action, the same class as a git hook
 * (doc/linux-confinement.md, "Protected names").  */
static const char *const pubguard_agents[] = {
  ".crucible", /* crucible's own project configuration */
  ".claude",   /* Claude Code: settings, hooks, commands */
  ".codex",    /* Codex CLI */
  ".gemini",   /* Gemini CLI */
  ".cursor",   /* Cursor: rules, MCP servers */
  ".vscode",   /* tasks.json runOn folderOpen, launch, settings */
  ".idea",     /* JetBrains run configurations, startup tasks */
  ".envrc",    /* direnv: sourced on cd */
  NULL,
};

const char *const *
pubguard_agent_names (void)
{
  return pubguard_agents;
}

/* Whether name, without trailing dots and spaces, is want (ASCII case
 * ignored).  */
static bool
pubguard_name_is (const char *name, const char *want)
{
  size_t n = strlen (name);
  while (n > 0 && (name[n - 1] == '.' || name[n - 1] == ' '))
    n--;
  return n == strlen (want) && strncasecmp (name, want, n) == 0;
}

enum pubguard_name
pubguard_classify (const char *name)
{
  if (pubguard_name_is (name, ".git") || pubguard_name_is (name, "git~1"))
    return PUBGUARD_GIT;
  for (size_t i = 0; pubguard_agents[i] != NULL; i++)
    if (pubguard_name_is (name, pubguard_agents[i]))
      return PUBGUARD_AGENT;
  return PUBGUARD_PLAIN;
}

/* Whether rel is path or below it.  */
static bool
pubguard_at_or_under (const char *rel, const char *path)
{
  size_t n = strlen (path);
  return strncmp (rel, path, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

const struct pubguard_root *
pubguard_root_over (const struct pubguard *g, const char *rel)
{
  for (size_t i = 0; g != NULL && i < g->n_roots; i++)
    if (pubguard_at_or_under (rel, g->roots[i].path))
      return &g->roots[i];
  return NULL;
}

const struct pubguard_root *
pubguard_root_below (const struct pubguard *g, const char *rel)
{
  for (size_t i = 0; g != NULL && i < g->n_roots; i++)
    if (strcmp (rel, g->roots[i].path) != 0
        && pubguard_at_or_under (g->roots[i].path, rel))
      return &g->roots[i];
  return NULL;
}

bool
pubguard_hook_sample (const char *name)
{
  static const char suffix[] = ".sample";
  size_t n = strlen (name);
  return n > sizeof suffix - 1 && name[0] != '.'
         && strcmp (name + n - (sizeof suffix - 1), suffix) == 0;
}

/* --- git configuration -----------------------------------------------------
 * A reader of git's own grammar (config.c: sections "[name]",
 * "[name \"sub\"]" and the old "[name.sub]", "key = value" with quotes,
 * backslash escapes and continuations, '#' and ';' comments), just
 * enough to name each variable; anything git would read differently or
 * refuse is "malformed", and left out like a program.  */

/* Whether the subsection part of a rule matches.  */
enum pubguard_sub
{
  PUBGUARD_SUB_NONE,  /* section.key only */
  PUBGUARD_SUB_ANY,   /* section.<sub>.key only */
  PUBGUARD_SUB_EITHER /* both */
};

/* A variable that names a program (git-config(1)); key NULL: every key
 * of the section; bang: only when the value starts with '!' (a shell
 * command rather than a git one).  */
struct pubguard_git_key
{
  const char *section;
  const char *key;
  enum pubguard_sub sub;
  bool bang;
};

static const struct pubguard_git_key pubguard_git_keys[] = {
  { "core", "fsmonitor", PUBGUARD_SUB_NONE, false },
  { "core", "hookspath", PUBGUARD_SUB_NONE, false },
  { "core", "sshcommand", PUBGUARD_SUB_NONE, false },
  { "core", "pager", PUBGUARD_SUB_NONE, false },
  { "core", "editor", PUBGUARD_SUB_NONE, false },
  { "core", "askpass", PUBGUARD_SUB_NONE, false },
  { "core", "gitproxy", PUBGUARD_SUB_NONE, false },
  { "core", "alternaterefscommand", PUBGUARD_SUB_NONE, false },
  /* Not a program, but it moves the work tree git acts on elsewhere.  */
  { "core", "worktree", PUBGUARD_SUB_NONE, false },
  { "sequence", "editor", PUBGUARD_SUB_NONE, false },
  { "interactive", "difffilter", PUBGUARD_SUB_NONE, false },
  { "diff", "external", PUBGUARD_SUB_NONE, false },
  { "diff", "textconv", PUBGUARD_SUB_ANY, false },
  { "diff", "command", PUBGUARD_SUB_ANY, false },
  { "filter", NULL, PUBGUARD_SUB_EITHER, false }, /* clean, smudge, process */
  { "merge", "driver", PUBGUARD_SUB_ANY, false },
  { "mergetool", NULL, PUBGUARD_SUB_EITHER, false },
  { "difftool", NULL, PUBGUARD_SUB_EITHER, false },
  /* Another file's variables, which this reader does not see.  */
  { "include", "path", PUBGUARD_SUB_NONE, false },
  { "includeif", "path", PUBGUARD_SUB_ANY, false },
  { "credential", "helper", PUBGUARD_SUB_EITHER, false },
  { "gpg", NULL, PUBGUARD_SUB_EITHER, false }, /* program, defaultKeyCommand */
  { "pager", NULL, PUBGUARD_SUB_EITHER, false },
  /* Every alias, not only "!cmd": "st = -c core.fsmonitor=PROG status",
   * "difftool -x PROG", "rebase --exec PROG" run a program as well, and
   * the repository's alias overrides the person's own of that name.  */
  { "alias", NULL, PUBGUARD_SUB_EITHER, false },
  { "browser", NULL, PUBGUARD_SUB_EITHER, false },
  { "web", "browser", PUBGUARD_SUB_NONE, false },
  { "help", "browser", PUBGUARD_SUB_NONE, false },
  { "man", NULL, PUBGUARD_SUB_EITHER, false },
  { "sendemail", NULL, PUBGUARD_SUB_EITHER, false }, /* *cmd, smtpServer */
  { "imap", "tunnel", PUBGUARD_SUB_NONE, false },
  { "guitool", NULL, PUBGUARD_SUB_EITHER, false },
  { "instaweb", NULL, PUBGUARD_SUB_EITHER, false },
  { "trailer", "command", PUBGUARD_SUB_ANY, false },
  { "trailer", "cmd", PUBGUARD_SUB_ANY, false },
  { "hook", NULL, PUBGUARD_SUB_EITHER, false },
  { "uploadpack", "packobjectshook", PUBGUARD_SUB_NONE, false },
  { "remote", "uploadpack", PUBGUARD_SUB_ANY, false },
  { "remote", "receivepack", PUBGUARD_SUB_ANY, false },
  { "remote", "vcs", PUBGUARD_SUB_ANY, false },
  /* protocol.ext.allow lets a URL be a command line ("ext::sh -c …").  */
  { "protocol", NULL, PUBGUARD_SUB_EITHER, false },
  { "submodule", "update", PUBGUARD_SUB_ANY, true },
  { "tar", "command", PUBGUARD_SUB_ANY, false },
  /* Hooks copied in at the next git init.  */
  { "init", "templatedir", PUBGUARD_SUB_NONE, false },
};

struct pubguard_cfg
{
  const char *p, *end;
  struct buf section; /* lowercased */
  bool has_sub;
  struct buf key;   /* lowercased */
  struct buf value; /* as git would read it */
};

/* The next byte, or -1 at the end.  */
static int
pubguard_cfg_next (struct pubguard_cfg *c)
{
  return c->p < c->end ? (unsigned char) *c->p++ : -1;
}

/* Skip to the end of the line (a comment).  */
static void
pubguard_cfg_skip_line (struct pubguard_cfg *c)
{
  int ch;
  while ((ch = pubguard_cfg_next (c)) != -1 && ch != '\n')
    ;
}

/* Whether ch may be in a section or key name.  */
static bool
pubguard_cfg_namechar (int ch)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
         || (ch >= '0' && ch <= '9') || ch == '-';
}

static int
pubguard_lower (int ch)
{
  return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* "[name]", "[name \"sub\"]" or "[name.sub]", after the '['.  */
static int
pubguard_cfg_section (struct pubguard_cfg *c)
{
  int ch;
  buf_free (&c->section);
  c->has_sub = false;
  while ((ch = pubguard_cfg_next (c)) != -1 && ch != ']')
    {
      if (ch == '.')
        c->has_sub = true; /* the old spelling: what follows is the sub */
      else if (ch == ' ' || ch == '\t')
        break;
      else if (!pubguard_cfg_namechar (ch))
        return -1;
      else if (!c->has_sub)
        buf_putc (&c->section, (char) pubguard_lower (ch));
    }
  if (ch == ']')
    return c->section.len > 0 ? 0 : -1;
  if (ch == -1 || c->has_sub)
    return -1;
  while ((ch = pubguard_cfg_next (c)) == ' ' || ch == '\t')
    ;
  if (ch != '"')
    return -1;
  c->has_sub = true;
  while ((ch = pubguard_cfg_next (c)) != '"')
    {
      if (ch == -1 || ch == '\n')
        return -1;
      if (ch == '\\' && ((ch = pubguard_cfg_next (c)) == -1 || ch == '\n'))
        return -1;
    }
  return pubguard_cfg_next (c) == ']' && c->section.len > 0 ? 0 : -1;
}

/* A value after '=', as git reads it: quotes, escapes, continuations,
 * comments, trailing blanks dropped.  */
static int
pubguard_cfg_value (struct pubguard_cfg *c)
{
  bool quoted = false;
  size_t kept = 0; /* length without trailing blanks outside quotes */
  int ch;

  buf_free (&c->value);
  while ((ch = pubguard_cfg_next (c)) == ' ' || ch == '\t')
    ;
  for (; ch != -1; ch = pubguard_cfg_next (c))
    {
      if (ch == '\n')
        {
          if (quoted)
            return -1;
          break;
        }
      if (!quoted && (ch == '#' || ch == ';'))
        {
          pubguard_cfg_skip_line (c);
          break;
        }
      if (ch == '"')
        {
          quoted = !quoted;
          continue;
        }
      if (ch == '\\')
        {
          ch = pubguard_cfg_next (c);
          if (ch == '\n')
            continue;
          static const char from[] = "tnb\\\"", to[] = "\t\n\b\\\"";
          const char *e = ch > 0 ? strchr (from, ch) : NULL;
          if (e == NULL)
            return -1;
          ch = (unsigned char) to[e - from];
        }
      buf_putc (&c->value, (char) ch);
      if (quoted || (ch != ' ' && ch != '\t'))
        kept = c->value.len;
    }
  if (quoted)
    return -1;
  c->value.len = kept;
  return 0;
}

/* A variable, from its first letter: name, then nothing or "= value".  */
static int
pubguard_cfg_variable (struct pubguard_cfg *c, int ch)
{
  buf_free (&c->key);
  buf_free (&c->value);
  for (; ch != -1 && pubguard_cfg_namechar (ch); ch = pubguard_cfg_next (c))
    buf_putc (&c->key, (char) pubguard_lower (ch));
  while (ch == ' ' || ch == '\t')
    ch = pubguard_cfg_next (c);
  if (ch == '#' || ch == ';')
    {
      pubguard_cfg_skip_line (c);
      return 0;
    }
  if (ch == -1 || ch == '\n')
    return 0; /* a boolean true */
  if (ch == '\r' && (c->p == c->end || *c->p == '\n'))
    return 0;
  if (ch != '=')
    return -1;
  return pubguard_cfg_value (c);
}

/* A name buffer as a string ("" while empty).  */
static const char *
pubguard_str (const struct buf *b)
{
  return b->data != NULL ? b->data : "";
}

/* The rule the current variable falls under, or NULL.  */
static const struct pubguard_git_key *
pubguard_cfg_match (const struct pubguard_cfg *c)
{
  for (size_t i = 0; i < sizeof pubguard_git_keys / sizeof *pubguard_git_keys;
       i++)
    {
      const struct pubguard_git_key *k = &pubguard_git_keys[i];
      if (strcmp (k->section, pubguard_str (&c->section)) != 0
          || (k->sub == PUBGUARD_SUB_NONE && c->has_sub)
          || (k->sub == PUBGUARD_SUB_ANY && !c->has_sub)
          || (k->key != NULL && strcmp (k->key, pubguard_str (&c->key)) != 0))
        continue;
      if (k->bang)
        {
          /* The value starts after the blanks git itself skipped.  */
          if (c->value.len == 0 || c->value.data[0] != '!')
            continue;
        }
      return k;
    }
  return NULL;
}

/* The reported name of the current variable: "section[.*].key".  */
static char *
pubguard_cfg_name (const struct pubguard_cfg *c)
{
  return xasprintf ("%s%s.%s", pubguard_str (&c->section),
                    c->has_sub ? ".*" : "", pubguard_str (&c->key));
}

static void
pubguard_cfg_free (struct pubguard_cfg *c)
{
  buf_free (&c->section);
  buf_free (&c->key);
  buf_free (&c->value);
}

/* Called for each variable of a configuration text, in order; true ends
 * the walk.  */
typedef bool (*pubguard_cfg_fn) (struct pubguard_cfg *c, void *data);

/* Walk the variables of git configuration text (a UTF-8 byte order mark
 * skipped); -1 when it is not configuration git would read the same way,
 * and the walk stops there.  */
static int
pubguard_cfg_walk (const char *text, size_t len, pubguard_cfg_fn fn, void *data)
{
  struct pubguard_cfg c = { .p = text, .end = text + len };
  bool stop = false;
  int ch, rc = 0;

  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    c.p += 3;
  while (rc == 0 && !stop && (ch = pubguard_cfg_next (&c)) != -1)
    {
      if (ch == '\n' || ch == ' ' || ch == '\t' || ch == '\r')
        continue;
      if (ch == '#' || ch == ';')
        pubguard_cfg_skip_line (&c);
      else if (ch == '[')
        rc = pubguard_cfg_section (&c);
      else if (((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') && c.section.len > 0)
        {
          rc = pubguard_cfg_variable (&c, ch);
          if (rc == 0)
            stop = fn (&c, data);
        }
      else
        rc = -1;
    }
  pubguard_cfg_free (&c);
  return rc < 0 ? -1 : 0;
}

/* The first variable naming a program (data: where its name goes).  */
static bool
pubguard_cfg_runs_one (struct pubguard_cfg *c, void *data)
{
  char **found = data;

  if (pubguard_cfg_match (c) == NULL)
    return false;
  *found = pubguard_cfg_name (c);
  return true;
}

char *
pubguard_git_config_runs (const char *text, size_t len)
{
  char *found = NULL;

  if (pubguard_cfg_walk (text, len, pubguard_cfg_runs_one, &found) < 0
      && found == NULL)
    found = xstrdup ("");
  return found;
}

/* What pubguard_git_config_value looks for, and the last value found.  */
struct pubguard_cfg_want
{
  const char *section, *key;
  char *found;
};

/* Keep the value of section.key (no subsection), the last one winning.  */
static bool
pubguard_cfg_value_one (struct pubguard_cfg *c, void *data)
{
  struct pubguard_cfg_want *w = data;

  if (!c->has_sub && strcmp (pubguard_str (&c->section), w->section) == 0
      && strcmp (pubguard_str (&c->key), w->key) == 0)
    {
      free (w->found);
      w->found = xstrndup (pubguard_str (&c->value), c->value.len);
    }
  return false;
}

char *
pubguard_git_config_value (const char *text, size_t len, const char *section,
                           const char *key)
{
  struct pubguard_cfg_want w = { .section = section, .key = key };

  pubguard_cfg_walk (text, len, pubguard_cfg_value_one, &w);
  return w.found;
}
