/* Permission rules for commands: see core/rules.h and doc/cmdline.md.  */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/rules.h"
#include "core/mcpservers.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

/* A compiled pattern: text with a parallel wildcard mask.  */
struct rule
{
  char *written; /* the rule as written */
  bool every;    /* `Bash` alone */
  char *lit;     /* normalised pattern; lit[i] is a wildcard when star[i] */
  bool *star;
  size_t len;
  bool opt_tail; /* ends with " *", which may also match nothing */
  /* A tool rule (mcp__server__tool, or mcp__server for the tools of the
   * server's recorded listing): never a command pattern, so no command
   * matches it, and it is matched only by rules_decide_tool.  tool is
   * NULL for mcp__server.  */
  bool is_tool;
  char *server;
  char *tool;
};

struct rules
{
  enum rules_mode mode;
  struct rule *allow;
  size_t n_allow;
  struct rule *deny;
  size_t n_deny;
};

static void
rule_free (struct rule *r)
{
  free (r->written);
  free (r->lit);
  free (r->star);
  free (r->server);
  free (r->tool);
}

/* Whether a rule is written for another tool: Name(...) with Name not
 * Bash.  */
static bool
other_tool (const char *s)
{
  size_t n = 0;
  if (!isupper ((unsigned char) s[0]))
    return false;
  while (isalpha ((unsigned char) s[n]))
    n++;
  return s[n] == '(' && s[strlen (s) - 1] == ')'
         && !(n == 4 && strncmp (s, "Bash", 4) == 0);
}

/* Whether c may be in a tool's name in a rule: the characters MCP's tool
 * names are made of (letters, digits, '_', '-', '.').  */
static bool
tool_name_char (char c)
{
  return isascii ((unsigned char) c)
         && (isalnum ((unsigned char) c) || c == '_' || c == '-' || c == '.');
}

/* Why a tool rule (one beginning "mcp__") cannot be compiled, or NULL.  */
static const char *
tool_refuse (const char *s)
{
  const char *rest = s + strlen (RULES_TOOL_PREFIX);
  const char *sep = strstr (rest, "__");
  size_t server_len = sep != NULL ? (size_t) (sep - rest) : strlen (rest);
  char server[MCPSERVERS_NAME_MAX + 1];

  if (server_len == 0 || server_len > MCPSERVERS_NAME_MAX)
    return "is a tool rule without a server name; write mcp__SERVER or "
           "mcp__SERVER__TOOL";
  memcpy (server, rest, server_len);
  server[server_len] = '\0';
  if (mcpservers_name_refuse (server) != NULL)
    return "is a tool rule whose server is not a server name (at most 32 "
           "letters, digits, '-' and '_', with no \"__\" and no '_' at "
           "either end)";
  if (sep == NULL)
    return NULL;
  const char *tool = sep + 2;
  size_t n = strlen (tool);
  if (n == 0)
    return "names no tool; write mcp__SERVER for the server's tools";
  if (n > RULES_TOOL_NAME_MAX)
    return "names a tool longer than 128 bytes";
  for (size_t i = 0; i < n; i++)
    if (!tool_name_char (tool[i]))
      return "names a tool with a character other than letters, digits, "
             "'_', '-' and '.' (a tool rule has no pattern: it names one "
             "tool)";
  return NULL;
}

/* Whether s is a tool rule rather than a command pattern.  */
static bool
is_tool_rule (const char *s)
{
  return strncmp (s, RULES_TOOL_PREFIX, strlen (RULES_TOOL_PREFIX)) == 0;
}

/* Why a rule cannot be compiled, or NULL (core/rules.h).  */
const char *
rules_refuse (const char *s)
{
  size_t plen = strlen (s), content = 0;
  const char *pat = s;
  if (strcmp (s, "Bash") == 0)
    return NULL;
  if (is_tool_rule (s))
    return tool_refuse (s);
  if (strncmp (s, "Bash(", 5) == 0)
    {
      if (plen < 6 || s[plen - 1] != ')')
        return "does not end with \")\"";
      pat = s + 5;
      plen -= 6;
    }
  else if (other_tool (s))
    return "is not a command rule; write Bash(command)";
  for (size_t i = 0; i < plen; i++)
    {
      unsigned char c = (unsigned char) pat[i];
      if (c < 0x20 || c == 0x7f)
        return "holds a control character";
      if (c == '\\')
        {
          if (i + 1 >= plen || (pat[i + 1] != '*' && pat[i + 1] != '\\'))
            return "has a \\ that is not \\* or \\\\";
          i++;
        }
      content += c != ' ' && c != '\t';
    }
  if (content == 0)
    return "names no command; write Bash for every command";
  return NULL;
}

/* Compile a tool rule rules_refuse has let through.  */
static int
rule_compile_tool (struct rule *r, const char *s, const char *what,
                   struct cr_error **err)
{
  if (!mcpservers_split (s, &r->server, &r->tool))
    return cr_error_set (err, 0, "%s: rule \"%s\" is not a tool rule", what, s);
  r->is_tool = true;
  r->written = xstrdup (s);
  return 0;
}

/* Compile one rule; what names the list in messages, where the rule is
 * shown through the shared sanitiser (a rule comes from a file).  */
static int
rule_compile (struct rule *r, const char *s, const char *what,
              struct cr_error **err)
{
  const char *pat = s;
  size_t plen = strlen (s);

  memset (r, 0, sizeof *r);
  const char *why = rules_refuse (s);
  if (why != NULL)
    {
      cleanup_free char *shown = utf8_show_dup (s, 0);
      return cr_error_set (err, 0, "%s: rule \"%s\" %s", what, shown, why);
    }
  if (strcmp (s, "Bash") == 0)
    {
      r->written = xstrdup (s);
      r->every = true;
      return 0;
    }
  if (is_tool_rule (s))
    return rule_compile_tool (r, s, what, err);
  if (strncmp (s, "Bash(", 5) == 0)
    {
      pat = s + 5;
      plen -= 6;
    }

  r->lit = xmalloc (plen + 1);
  r->star = xcalloc (plen + 1, sizeof *r->star);
  for (size_t i = 0; i < plen; i++)
    {
      char c = pat[i];
      if (c == '\\')
        {
          r->lit[r->len++] = pat[++i];
          continue;
        }
      if (c == ' ' || c == '\t')
        {
          if (r->len > 0
              && !(r->lit[r->len - 1] == ' ' && !r->star[r->len - 1]))
            r->lit[r->len++] = ' ';
          continue;
        }
      r->star[r->len] = c == '*';
      r->lit[r->len++] = c;
    }
  if (r->len > 0 && r->lit[r->len - 1] == ' ' && !r->star[r->len - 1])
    r->len--;
  r->lit[r->len] = '\0';
  r->opt_tail = r->len >= 2 && r->star[r->len - 1] && r->lit[r->len - 2] == ' '
                && !r->star[r->len - 2];
  r->written = xstrdup (s);
  return 0;
}

/* Glob match of lit/star[0..plen) against the whole of text.  */
static bool
match_n (const struct rule *r, size_t plen, const char *text)
{
  size_t p = 0, t = 0, tlen = strlen (text);
  size_t back_p = (size_t) -1, back_t = 0;

  while (t < tlen)
    {
      if (p < plen && r->star[p])
        {
          back_p = p++;
          back_t = t;
        }
      else if (p < plen && r->lit[p] == text[t])
        p++, t++;
      else if (back_p != (size_t) -1)
        {
          p = back_p + 1;
          t = ++back_t;
        }
      else
        return false;
    }
  while (p < plen && r->star[p])
    p++;
  return p == plen;
}

static bool
rule_matches (const struct rule *r, const char *text)
{
  if (r->is_tool)
    return false;
  if (r->every)
    return true;
  return match_n (r, r->len, text)
         || (r->opt_tail && match_n (r, r->len - 2, text));
}

/* The first rule of list that matches text, or NULL.  */
static const struct rule *
first_match (const struct rule *list, size_t n, const char *text)
{
  for (size_t i = 0; i < n; i++)
    if (rule_matches (&list[i], text))
      return &list[i];
  return NULL;
}

static int
compile_list (struct rule **out, size_t *n_out, char *const *src, size_t n,
              const char *what, struct cr_error **err)
{
  *out = xcalloc (n ? n : 1, sizeof **out);
  *n_out = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (rule_compile (&(*out)[i], src[i], what, err) < 0)
        return -1;
      (*n_out)++;
    }
  return 0;
}

struct rules *
rules_new (const char *mode, char *const *allow, size_t n_allow,
           char *const *deny, size_t n_deny, struct cr_error **err)
{
  struct rules *r = xcalloc (1, sizeof *r);

  if (mode == NULL || strcmp (mode, "ask") == 0)
    r->mode = RULES_MODE_ASK;
  else if (strcmp (mode, "fullAccess") == 0)
    r->mode = RULES_MODE_FULL_ACCESS;
  else
    {
      cr_error_set (err, 0,
                    "permissions.mode: \"%s\" is not a mode; use "
                    "\"ask\" or \"fullAccess\"",
                    mode);
      rules_free (r);
      return NULL;
    }
  if (compile_list (&r->allow, &r->n_allow, allow, n_allow, "permissions.allow",
                    err)
          < 0
      || compile_list (&r->deny, &r->n_deny, deny, n_deny, "permissions.deny",
                       err)
             < 0)
    {
      rules_free (r);
      return NULL;
    }
  return r;
}

void
rules_free (struct rules *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_allow; i++)
    rule_free (&r->allow[i]);
  for (size_t i = 0; i < r->n_deny; i++)
    rule_free (&r->deny[i]);
  free (r->allow);
  free (r->deny);
  free (r);
}

enum rules_mode
rules_mode (const struct rules *r)
{
  return r->mode;
}

int
rules_add_allow (struct rules *r, const char *rule, const char *what,
                 struct cr_error **err)
{
  struct rule compiled;
  if (rule_compile (&compiled, rule, what, err) < 0)
    return -1;
  r->allow = xrealloc (r->allow, (r->n_allow + 1) * sizeof *r->allow);
  r->allow[r->n_allow++] = compiled;
  return 0;
}

void
rules_set_mode (struct rules *r, enum rules_mode mode)
{
  r->mode = mode;
}

/* Whether a wrapped command's words from k on are tried as a command of
 * their own: the first RULES_SUFFIX_WORDS words, the program the reader
 * found, and what follows find's -exec family or a "--".  The bound keeps
 * a long argument list from costing quadratic time.  */
#define RULES_SUFFIX_WORDS 64

static bool
suffix_tried (const struct cmdline_command *c, size_t k)
{
  static const char *const before[]
      = { "-exec", "-execdir", "-ok", "-okdir", "--", NULL };
  if (k <= RULES_SUFFIX_WORDS || k == c->program)
    return true;
  for (size_t i = 0; before[i]; i++)
    if (strcmp (c->argv[k - 1], before[i]) == 0)
      return true;
  return false;
}

/* The first deny rule one command matches: its words, its full text, and
 * for a wrapped program (sudo, env, xargs, find -exec, ...) the words from
 * each of its later words on, so `sudo -u x rm` meets Bash(rm *) however
 * sudo's options were read.  */
static const struct rule *
deny_match (const struct rules *r, const struct cmdline_command *c)
{
  const struct rule *m;
  char *text = cmdline_command_text (c);
  m = first_match (r->deny, r->n_deny, text);
  if (m == NULL)
    {
      char *full = cmdline_command_full_text (c);
      m = first_match (r->deny, r->n_deny, full);
      free (full);
    }
  if (m == NULL && c->program > 0)
    {
      /* The words are joined by single spaces, so the words from k on are
       * a tail of text.  */
      size_t off = 0;
      for (size_t k = 1; k < c->argc && m == NULL; k++)
        {
          off += strlen (c->argv[k - 1]) + 1;
          if (suffix_tried (c, k))
            m = first_match (r->deny, r->n_deny, text + off);
        }
    }
  free (text);
  return m;
}

size_t
rules_denials (const struct rules *r, const struct cmdline *cl,
               struct rules_denial **out)
{
  size_t n = 0;
  *out = NULL;
  if (cl == NULL)
    return 0;
  for (size_t i = 0; i < cl->n; i++)
    {
      const struct rule *m = deny_match (r, &cl->cmds[i]);
      if (m == NULL)
        continue;
      *out = xrealloc (*out, (n + 1) * sizeof **out);
      (*out)[n++] = (struct rules_denial){ i, m->written };
    }
  return n;
}

char *
rules_deny_message (const struct rules *r, const struct cmdline *cl)
{
  struct rules_denial *d;
  size_t n = rules_denials (r, cl, &d);
  struct buf b = BUF_INIT;

  if (n == 0)
    return NULL;
  buf_puts (&b, "the deny rules refuse it (");
  for (size_t i = 0; i < n; i++)
    {
      /* The line is the peer's and the rule the file's: both are shown
       * through the shared sanitiser, so the refusal is valid UTF-8 and
       * drives no terminal.  */
      char *text = cmdline_command_full_text (&cl->cmds[d[i].command]);
      char *shown = utf8_show_dup (text, 0);
      char *rule = utf8_show_dup (d[i].rule, 0);
      buf_printf (&b, "%s`%s` matches %s", i ? "; " : "", shown, rule);
      free (rule);
      free (shown);
      free (text);
    }
  buf_puts (&b, ")");
  free (d);
  return buf_steal (&b, NULL);
}

/* Whether an allow rule covers every command a line runs.  */
static bool
all_allowed (const struct rules *r, const struct cmdline *cl)
{
  size_t covered = 0;
  for (size_t i = 0; i < cl->n; i++)
    {
      const struct cmdline_command *c = &cl->cmds[i];
      if (c->transparent)
        continue;
      char *text = cmdline_command_full_text (c);
      bool ok = first_match (r->allow, r->n_allow, text) != NULL;
      free (text);
      if (!ok)
        return false;
      covered++;
    }
  return covered > 0;
}

enum rules_verdict
rules_decide (const struct rules *r, const struct cmdline *cl,
              bool typed_by_person, const char **rule_out)
{
  bool free_pass = typed_by_person || r->mode == RULES_MODE_FULL_ACCESS;

  if (rule_out != NULL)
    *rule_out = NULL;
  if (cl != NULL)
    for (size_t i = 0; i < cl->n; i++)
      {
        const struct rule *m = deny_match (r, &cl->cmds[i]);
        if (m != NULL)
          {
            if (rule_out != NULL)
              *rule_out = m->written;
            return RULES_DENY;
          }
      }
  if (free_pass)
    return RULES_ALLOW;
  if (cl == NULL)
    return RULES_ASK;
  return all_allowed (r, cl) ? RULES_ALLOW : RULES_ASK;
}

/* Whether tool rule r names the tool of server.  An allow rule naming the
 * server alone covers only the tools of its recorded listing (initial); a
 * deny rule naming it covers them all.  */
static bool
tool_rule_matches (const struct rule *r, const char *server, const char *tool,
                   bool initial, bool deny)
{
  if (!r->is_tool || strcmp (r->server, server) != 0)
    return false;
  if (r->tool == NULL)
    return deny || initial;
  return strcmp (r->tool, tool) == 0;
}

/* The first tool rule of list that names the tool, or NULL.  */
static const struct rule *
tool_first_match (const struct rule *list, size_t n, const char *server,
                  const char *tool, bool initial, bool deny)
{
  for (size_t i = 0; i < n; i++)
    if (tool_rule_matches (&list[i], server, tool, initial, deny))
      return &list[i];
  return NULL;
}

enum rules_verdict
rules_decide_tool (const struct rules *r, const char *server, const char *tool,
                   bool initial, const char **rule_out)
{
  const struct rule *m;

  if (rule_out != NULL)
    *rule_out = NULL;
  m = tool_first_match (r->deny, r->n_deny, server, tool, initial, true);
  if (m != NULL)
    {
      if (rule_out != NULL)
        *rule_out = m->written;
      return RULES_DENY;
    }
  if (r->mode == RULES_MODE_FULL_ACCESS)
    return RULES_ALLOW;
  m = tool_first_match (r->allow, r->n_allow, server, tool, initial, false);
  if (m == NULL)
    return RULES_ASK;
  if (rule_out != NULL)
    *rule_out = m->written;
  return RULES_ALLOW;
}
