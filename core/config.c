/* Configuration: a table of every key, a yajl callback parser that checks
 * each value as it arrives (so an error can name its line), the rules by
 * which a project file may narrow, never widen, what home grants, and the
 * one writer of the home file (sandbox.enabled, the rules the person adds
 * for a workspace).  */
#include <config.h>

#include "core/config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "core/credentials.h"
#include "core/env.h"
#include "core/mcpservers.h"
#include "core/rules.h"
#include "lib/i18n.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "sandbox/policy.h"
#include "sandbox/registry.h"

/* Open objects a valid file can have at once: top level, mcpServers or
 * sandbox, a server or credentials, its env or one credential.  */
#define CONFIG_MAX_DEPTH 4

/* Untrusted text quoted in a message is cut to this many bytes.  */
#define CONFIG_SHOW_MAX 64

/* How the home file is named in messages, whatever HOME is.  */
#define CONFIG_HOME_NAME "~/.crucible/config.json"

/* The JSON shape a key takes.  */
enum config_kind
{
  CONFIG_KIND_OBJECT,
  CONFIG_KIND_BOOL,
  CONFIG_KIND_UINT,   /* a whole number, stored as uint64_t */
  CONFIG_KIND_NUMBER, /* any number, stored as double */
  CONFIG_KIND_STRING, /* stored as char * */
  CONFIG_KIND_LIST    /* an array of strings, stored as struct config_list */
};

/* What a project file may do with a key.  */
enum config_rule
{
  CONFIG_RULE_FREE,      /* set it, replacing home's value */
  CONFIG_RULE_HOME_ONLY, /* nothing: the key grants trust */
  CONFIG_RULE_REQUIRE,   /* turn it on, never off */
  CONFIG_RULE_NO_GRANT,  /* turn it off, or keep it on when home has */
  CONFIG_RULE_LOWER,     /* lower the inherited number, never raise it */
  CONFIG_RULE_SUBSET,    /* replace the list with part of home's list */
  CONFIG_RULE_UNION,     /* add entries to home's list */
  CONFIG_RULE_INSIDE     /* add entries, each inside the workspace */
};

/* What a string (or each list entry) must look like beyond being
 * non-empty, NUL-free and short enough.  */
enum config_check
{
  CONFIG_CHECK_TEXT,     /* anything */
  CONFIG_CHECK_PATH,     /* a path; relative ones are made workspace ones */
  CONFIG_CHECK_ABSOLUTE, /* an absolute path */
  CONFIG_CHECK_DOMAIN,   /* example.com or *.example.com, stored lowercase */
  CONFIG_CHECK_MODE,     /* "ask" or "fullAccess" */
  CONFIG_CHECK_THEME,    /* letters, digits, '-' and '_' */
  CONFIG_CHECK_RULE,     /* a permission rule core/rules.c compiles */
  CONFIG_CHECK_BACKEND,  /* an id in the backend registry */
  CONFIG_CHECK_PORT,     /* list entries are numbers: ports 1024..65535 */
  CONFIG_CHECK_MCP_NAME, /* an MCP server's name (core/mcpservers.h) */
  CONFIG_CHECK_VARNAME,  /* an environment variable's name */
  CONFIG_CHECK_ARGV      /* anything; a list keeps repeats, in order */
};

/* One key of the configuration, by its dotted name.  */
struct config_key
{
  const char *name;
  enum config_kind kind;
  enum config_rule rule;
  enum config_check check;
  double min, max;  /* numbers: bounds (NUMBER: min is exclusive) */
  size_t max_len;   /* strings and list entries: bytes */
  size_t max_count; /* lists: entries */
  size_t offset;    /* the field in struct config, or in the entry being
                     * read (config_key_base); objects have none */
};

#define CONFIG_OBJECT(n)                                                       \
  {                                                                            \
    n, CONFIG_KIND_OBJECT, CONFIG_RULE_FREE, CONFIG_CHECK_TEXT, 0, 0, 0, 0, 0  \
  }
#define CONFIG_BOOL(n, rule, field)                                            \
  {                                                                            \
    n, CONFIG_KIND_BOOL, rule, CONFIG_CHECK_TEXT, 0, 0, 0, 0,                  \
        offsetof (struct config, field)                                        \
  }
#define CONFIG_NUM(n, kind, min, max, field)                                   \
  {                                                                            \
    n, kind, CONFIG_RULE_LOWER, CONFIG_CHECK_TEXT, min, max, 0, 0,             \
        offsetof (struct config, field)                                        \
  }
#define CONFIG_STRING(n, rule, check, len, field)                              \
  {                                                                            \
    n, CONFIG_KIND_STRING, rule, check, 0, 0, len, 0,                          \
        offsetof (struct config, field)                                        \
  }
#define CONFIG_LIST(n, rule, check, len, count, field)                         \
  {                                                                            \
    n, CONFIG_KIND_LIST, rule, check, 0, 0, len, count,                        \
        offsetof (struct config, field)                                        \
  }

/* A key of the credential being read (sandbox.credentials.NAME.*).  */
#define CONFIG_CRED(n, kind, check, len, count, field)                         \
  {                                                                            \
    n, kind, CONFIG_RULE_HOME_ONLY, check, 0, 0, len, count,                   \
        offsetof (struct config_credential, field)                             \
  }

/* A field of one MCP server's entry (mcpServers.<name>.<field>).  */
#define CONFIG_SERVER_KEY(n, kind, check, len, count, field)                   \
  {                                                                            \
    n, kind, CONFIG_RULE_HOME_ONLY, check, 0, 0, len, count,                   \
        offsetof (struct mcp_server_config, field)                             \
  }

/* sandbox.network.ports: the lowest port (below are the system's) and
 * the most ports.  */
#define CONFIG_PORT_MIN 1024
#define CONFIG_PORTS_MAX 16
#define CONFIG_PORTS_EXPECTED                                                  \
  "expected an array of port numbers from 1024 to 65535"

/* Every key; doc/configuration.md documents each row.  */
static const struct config_key config_keys[] = {
  CONFIG_OBJECT ("sandbox"),
  CONFIG_BOOL ("sandbox.enabled", CONFIG_RULE_REQUIRE, sandbox_enabled),
  /* Which backend enforces: it decides what confinement means, so only
   * the person's own file may choose it.  */
  CONFIG_STRING ("sandbox.backend", CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_BACKEND,
                 64, sandbox_backend),
  /* The container backend's engine and image: where commands would run,
   * and the code they would run on, so only the person's own file says.  */
  CONFIG_OBJECT ("sandbox.container"),
  CONFIG_STRING ("sandbox.container.engine", CONFIG_RULE_HOME_ONLY,
                 CONFIG_CHECK_TEXT, 1024, container_engine),
  CONFIG_STRING ("sandbox.container.image", CONFIG_RULE_HOME_ONLY,
                 CONFIG_CHECK_TEXT, 256, container_image),
  CONFIG_OBJECT ("sandbox.filesystem"),
  CONFIG_LIST ("sandbox.filesystem.writable", CONFIG_RULE_INSIDE,
               CONFIG_CHECK_PATH, 4096, 256, fs_writable),
  CONFIG_LIST ("sandbox.filesystem.readOnly", CONFIG_RULE_UNION,
               CONFIG_CHECK_TEXT, 4096, 256, fs_read_only),
  CONFIG_LIST ("sandbox.filesystem.protected", CONFIG_RULE_UNION,
               CONFIG_CHECK_TEXT, 4096, 256, fs_protected),
  CONFIG_LIST ("sandbox.filesystem.unreadable", CONFIG_RULE_UNION,
               CONFIG_CHECK_TEXT, 4096, 256, fs_unreadable),
  CONFIG_OBJECT ("sandbox.network"),
  CONFIG_LIST ("sandbox.network.domains", CONFIG_RULE_SUBSET,
               CONFIG_CHECK_DOMAIN, 253, 256, net_domains),
  CONFIG_BOOL ("sandbox.network.allowLocalBinding", CONFIG_RULE_NO_GRANT,
               net_allow_local_binding),
  /* Private ranges an allowed name resolves to: the person's own network
   * is theirs to open, never a project's.  */
  CONFIG_BOOL ("sandbox.network.allowPrivateAddresses", CONFIG_RULE_HOME_ONLY,
               net_allow_private),
  /* Ports of a confined server reachable from the host's loopback and
   * the session's other commands: the person's own machine is theirs to
   * open, never a project's.  Numbers, stored as decimal strings.  */
  { "sandbox.network.ports", CONFIG_KIND_LIST, CONFIG_RULE_HOME_ONLY,
    CONFIG_CHECK_PORT, CONFIG_PORT_MIN, 65535, 5, CONFIG_PORTS_MAX,
    offsetof (struct config, net_ports) },
  /* 107: a Unix socket path must fit sun_path with its NUL.  */
  CONFIG_LIST ("sandbox.network.allowUnixSockets", CONFIG_RULE_SUBSET,
               CONFIG_CHECK_ABSOLUTE, 107, 64, net_unix_sockets),
  /* Credentials a command gets in its environment: the person's own
   * secrets, which only the person's own file may name.  Each NAME is a
   * variable; its value comes from "env" or "file" (core/credentials.c).  */
  { "sandbox.credentials", CONFIG_KIND_OBJECT, CONFIG_RULE_HOME_ONLY,
    CONFIG_CHECK_TEXT, 0, 0, 0, 0, 0 },
  { "sandbox.credentials.*", CONFIG_KIND_OBJECT, CONFIG_RULE_HOME_ONLY,
    CONFIG_CHECK_TEXT, 0, 0, 0, 0, 0 },
  CONFIG_CRED ("sandbox.credentials.*.env", CONFIG_KIND_STRING,
               CONFIG_CHECK_VARNAME, ENV_MAX_NAME, 0, env),
  CONFIG_CRED ("sandbox.credentials.*.file", CONFIG_KIND_STRING,
               CONFIG_CHECK_ABSOLUTE, 4096, 0, file),
  CONFIG_CRED ("sandbox.credentials.*.commands", CONFIG_KIND_LIST,
               CONFIG_CHECK_RULE, 4096, 64, commands),
  /* Names no command of this workspace gets: a project may add to it,
   * which only narrows.  */
  CONFIG_LIST ("sandbox.withheldCredentials", CONFIG_RULE_UNION,
               CONFIG_CHECK_VARNAME, ENV_MAX_NAME, CONFIG_CREDENTIALS_MAX,
               withheld_credentials),
  CONFIG_OBJECT ("sandbox.limits"),
  CONFIG_NUM ("sandbox.limits.outputBytes", CONFIG_KIND_UINT, 1, 68719476736.0,
              output_bytes),
  CONFIG_NUM ("sandbox.limits.cpuSeconds", CONFIG_KIND_UINT, 1, 604800,
              cpu_seconds),
  CONFIG_NUM ("sandbox.limits.openFiles", CONFIG_KIND_UINT, 1, 1048576,
              open_files),
  CONFIG_NUM ("sandbox.limits.commandSeconds", CONFIG_KIND_NUMBER, 0, 604800,
              command_seconds),
  CONFIG_NUM ("sandbox.limits.concurrency", CONFIG_KIND_UINT, 1, 64,
              concurrency),
  CONFIG_OBJECT ("permissions"),
  CONFIG_STRING ("permissions.mode", CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_MODE,
                 16, permissions_mode),
  CONFIG_LIST ("permissions.allow", CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_RULE,
               4096, 1024, allow),
  CONFIG_LIST ("permissions.deny", CONFIG_RULE_UNION, CONFIG_CHECK_RULE, 4096,
               1024, deny),
  CONFIG_OBJECT ("agent"),
  CONFIG_STRING ("agent.command", CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_TEXT,
                 4096, agent_command),
  CONFIG_STRING ("theme", CONFIG_RULE_FREE, CONFIG_CHECK_THEME, 64, theme),
  /* How long ended sessions' journals are kept: the person's own audit
   * record, which a project may neither shorten nor lengthen.  */
  CONFIG_OBJECT ("journal"),
  { "journal.keepDays", CONFIG_KIND_UINT, CONFIG_RULE_HOME_ONLY,
    CONFIG_CHECK_TEXT, 0, 36500, 0, 0,
    offsetof (struct config, journal_keep_days) },
  /* Rules added from the approval panel, keyed by workspace: "*" stands
   * for any absolute path, and only this workspace's list is kept.  */
  { "workspaces", CONFIG_KIND_OBJECT, CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_TEXT,
    0, 0, 0, 0, 0 },
  CONFIG_OBJECT ("workspaces.*"),
  CONFIG_LIST ("workspaces.*.allow", CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_RULE,
               4096, 1024, workspace_allow),
  /* Names allowed always for a workspace from the network question.  */
  CONFIG_LIST ("workspaces.*.domains", CONFIG_RULE_HOME_ONLY,
               CONFIG_CHECK_DOMAIN, 253, 256, workspace_domains),
  /* MCP servers are programs crucible starts: only the person's own file
   * names them.  The keys below mcpServers.* are fields of one
   * struct mcp_server_config (config_key_base).  */
  { "mcpServers", CONFIG_KIND_OBJECT, CONFIG_RULE_HOME_ONLY, CONFIG_CHECK_TEXT,
    0, 0, 0, 0, 0 },
  CONFIG_OBJECT ("mcpServers.*"),
  CONFIG_SERVER_KEY ("mcpServers.*.command", CONFIG_KIND_STRING,
                     CONFIG_CHECK_TEXT, 4096, 0, command),
  CONFIG_SERVER_KEY ("mcpServers.*.args", CONFIG_KIND_LIST, CONFIG_CHECK_ARGV,
                     4096, 256, args),
  CONFIG_OBJECT ("mcpServers.*.env"),
  CONFIG_SERVER_KEY ("mcpServers.*.env.*", CONFIG_KIND_STRING,
                     CONFIG_CHECK_TEXT, 65536, 0, env),
  CONFIG_SERVER_KEY ("mcpServers.*.optional", CONFIG_KIND_BOOL,
                     CONFIG_CHECK_TEXT, 0, 0, optional),
  CONFIG_SERVER_KEY ("mcpServers.*.credentials", CONFIG_KIND_LIST,
                     CONFIG_CHECK_VARNAME, 128, 64, credentials),
  /* Servers not started in this workspace: a project may only add.  */
  CONFIG_LIST ("disabledMcpServers", CONFIG_RULE_UNION, CONFIG_CHECK_MCP_NAME,
               MCPSERVERS_NAME_MAX, 256, mcp_disabled),
};

#define CONFIG_KEY_COUNT (sizeof config_keys / sizeof config_keys[0])

/* What a key of each kind expects, as the person reads it.  */
static const char *const config_expected[] = {
  [CONFIG_KIND_OBJECT] = N_ ("expected an object"),
  [CONFIG_KIND_BOOL] = N_ ("expected true or false"),
  [CONFIG_KIND_UINT] = N_ ("expected a whole number"),
  [CONFIG_KIND_NUMBER] = N_ ("expected a number"),
  [CONFIG_KIND_STRING] = N_ ("expected a string"),
  [CONFIG_KIND_LIST] = N_ ("expected an array of strings"),
};

/* The state of one file's parse.  */
struct config_parse
{
  struct config *cfg;
  const char *text;
  size_t len;
  const char *path;
  const char *workspace;
  enum config_origin origin;
  yajl_handle yajl;
  bool finishing;       /* inside yajl_complete_parse: offsets are not ours */
  struct cr_error *err; /* set by a callback that stopped the parse */
  size_t depth;         /* objects open */
  const struct config_key *object[CONFIG_MAX_DEPTH]; /* NULL: the top */
  const struct config_key *pending; /* the key whose value comes next */
  bool in_list;
  struct config_list items; /* the list being read */
  size_t items_read;        /* entries read, duplicates included */
  bool seen[CONFIG_KEY_COUNT];
  bool other_workspace; /* inside workspaces.<a workspace other than ours> */
  char **workspaces;    /* workspace paths read (normalised), hashed */
  size_t n_workspaces, cap_workspaces;
  struct mcp_server_config *server; /* inside mcpServers.<name> */
  char *env_name;                   /* the mcpServers.*.env key read */
};

/* Whether key is a field of an MCP server's entry.  */
static bool
config_key_per_server (const struct config_key *key)
{
  return strncmp (key->name, "mcpServers.*.", 13) == 0;
}

/* Whether key is a field of one credential (sandbox.credentials.NAME.*).  */
static bool
config_key_per_credential (const struct config_key *key)
{
  return strncmp (key->name, "sandbox.credentials.*.", 22) == 0;
}

/* What key's offset is into: the server or the credential being read, or
 * the config.  */
static void *
config_key_base (const struct config_parse *p, const struct config_key *key)
{
  if (config_key_per_credential (key))
    return &p->cfg->credentials[p->cfg->n_credentials - 1];
  return config_key_per_server (key) ? (void *) p->server : (void *) p->cfg;
}

/* A field described by key, in the config or the entry being read.  */
#define CONFIG_FIELD_OF(p, key, type)                                          \
  ((type *) (void *) ((char *) config_key_base (p, key) + (key)->offset))

/* --- lists --------------------------------------------------------------- */

/* Make an empty list (items is never NULL: it holds the terminator).  */
static void
config_list_init (struct config_list *list)
{
  list->items = xcalloc (1, sizeof *list->items);
  list->count = 0;
}

/* Free a list's entries and storage.  */
static void
config_list_free (struct config_list *list)
{
  for (size_t i = 0; i < list->count; i++)
    free (list->items[i]);
  free (list->items);
  list->items = NULL;
  list->count = 0;
}

/* Whether list holds s.  */
static bool
config_list_has (const struct config_list *list, const char *s)
{
  for (size_t i = 0; i < list->count; i++)
    if (strcmp (list->items[i], s) == 0)
      return true;
  return false;
}

/* Add s (taking it) unless the list holds it already.  */
static void
config_list_add (struct config_list *list, char *s)
{
  if (config_list_has (list, s))
    {
      free (s);
      return;
    }
  list->items = xrealloc (list->items, (list->count + 2) * sizeof *list->items);
  list->items[list->count++] = s;
  list->items[list->count] = NULL;
}

/* Add s (taking it) at the end, even when the list holds it (an argument
 * vector keeps its repeats).  */
static void
config_list_push (struct config_list *list, char *s)
{
  list->items = xrealloc (list->items, (list->count + 2) * sizeof *list->items);
  list->items[list->count++] = s;
  list->items[list->count] = NULL;
}

/* Move from's entries to the end of to, leaving from empty.  */
static void
config_list_union (struct config_list *to, struct config_list *from)
{
  for (size_t i = 0; i < from->count; i++)
    config_list_add (to, from->items[i]);
  free (from->items);
  config_list_init (from);
}

/* Replace to's entries with from's, leaving from empty.  */
static void
config_list_replace (struct config_list *to, struct config_list *from)
{
  config_list_free (to);
  *to = *from;
  config_list_init (from);
}

/* --- text ---------------------------------------------------------------- */

/* The 1-based line holding the byte before offset (the token just read).  */
static size_t
config_line_at (const char *text, size_t len, size_t offset)
{
  size_t line = 1;
  if (offset > len)
    offset = len;
  for (size_t i = 0; i + 1 < offset; i++)
    if (text[i] == '\n')
      line++;
  return line;
}

/* The line of the last non-blank byte (where a truncated file stops).  */
static size_t
config_line_last (const char *text, size_t len)
{
  size_t end = len;
  while (end > 0 && strchr (" \t\r\n", text[end - 1]) != NULL)
    end--;
  return config_line_at (text, len, end);
}

/* Whether text holds nothing but JSON whitespace.  */
static bool
config_blank (const char *text, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\0' || strchr (" \t\r\n", text[i]) == NULL)
      return false;
  return true;
}

/* The length of the UTF-8 sequence lead byte c starts.  */
static size_t
config_utf8_len (unsigned char c)
{
  if (c >= 0xf0)
    return 4;
  if (c >= 0xe0)
    return 3;
  if (c >= 0xc0)
    return 2;
  return 1;
}

/* A bounded, harmless rendering of untrusted text for a message: C0, DEL
 * and C1 controls and backslashes become \xHH, so a hostile file cannot
 * drive the person's terminal; text past CONFIG_SHOW_MAX bytes is "...".  */
static char *
config_show (const char *s, size_t n)
{
  struct buf out = BUF_INIT;
  size_t i = 0;
  /* Terminated even if nothing is added: buf_steal of an untouched buf
   * returns unterminated storage.  */
  buf_append (&out, "", 0);
  while (i < n)
    {
      unsigned char c = (unsigned char) s[i];
      size_t step = config_utf8_len (c);
      if (i + step > CONFIG_SHOW_MAX || i + step > n)
        break;
      bool c1 = c == 0xc2 && (unsigned char) s[i + 1] < 0xa0;
      if (c1)
        buf_printf (&out, "\\x%02x\\x%02x", c, (unsigned char) s[i + 1]);
      else if (c < 0x20 || c == 0x7f || c == '\\')
        buf_printf (&out, "\\x%02x", c);
      else
        buf_append (&out, s + i, step);
      i += step;
    }
  if (i < n)
    buf_puts (&out, "...");
  return buf_steal (&out, NULL);
}

/* Normalise an absolute path without touching the filesystem: "//", "."
 * and ".." are resolved by spelling alone ("/.." is "/").  */
static char *
config_path_normalize (const char *path)
{
  struct buf out = BUF_INIT;
  const char *s = path;
  while (*s != '\0')
    {
      s += strspn (s, "/");
      size_t n = strcspn (s, "/");
      if (n == 2 && s[0] == '.' && s[1] == '.')
        {
          char *slash = out.len ? strrchr (out.data, '/') : NULL;
          if (slash != NULL)
            {
              out.len = (size_t) (slash - out.data);
              *slash = '\0';
            }
        }
      else if (n > 0 && !(n == 1 && s[0] == '.'))
        {
          buf_putc (&out, '/');
          buf_append (&out, s, n);
        }
      s += n;
    }
  if (out.len == 0)
    buf_putc (&out, '/');
  return buf_steal (&out, NULL);
}

/* Whether the normalised absolute path lies in (or is) the workspace.  */
static bool
config_path_inside (const char *path, const char *workspace)
{
  if (workspace == NULL || path[0] != '/')
    return false;
  cleanup_free char *root = config_path_normalize (workspace);
  size_t n = strlen (root);
  if (strcmp (root, "/") == 0)
    return true;
  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* --- checks on strings ---------------------------------------------------- */

/* Why s is not an absolute path, or NULL.  */
static const char *
config_refuse_relative (const char *s)
{
  return s[0] == '/' ? NULL : N_ ("must be an absolute path");
}

/* Whether c may appear in a domain label.  */
static bool
config_domain_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-';
}

/* Why s is not a domain name (optionally "*." and one), or NULL.  */
static const char *
config_refuse_domain (const char *s)
{
  static const char *const why
      = N_ ("must be a domain name such as example.com or *.example.com");
  if (strncmp (s, "*.", 2) == 0)
    s += 2;
  size_t label = 0;
  for (; *s != '\0'; s++)
    {
      if (*s == '.' && label == 0)
        return why;
      if (*s != '.' && !config_domain_char (*s))
        return why;
      label = *s == '.' ? 0 : label + 1;
      if (label > 63)
        return why;
    }
  return label == 0 ? why : NULL;
}

/* Why s is not a permissions mode, or NULL.  */
static const char *
config_refuse_mode (const char *s)
{
  if (strcmp (s, "ask") == 0 || strcmp (s, "fullAccess") == 0)
    return NULL;
  return N_ ("must be \"ask\" or \"fullAccess\"");
}

/* Why s is not a theme name, or NULL (it names a file: no '/' or '.').  */
static const char *
config_refuse_theme (const char *s)
{
  for (; *s != '\0'; s++)
    if (!config_domain_char (*s) && *s != '_')
      return N_ ("must be a theme name made of letters, digits, '-' and '_'");
  return NULL;
}

/* Why s names no backend of sandbox/registry.c, or NULL.  The known
 * names come from the table.  */
static const char *
config_refuse_backend (const char *s)
{
  static char why[320];
  if (sandbox_registry_find (s) != NULL)
    return NULL;
  snprintf (why, sizeof why, _ ("is not a known backend (known: %s)"),
            sandbox_registry_known ());
  return why;
}

/* Why s is not an environment variable's name, or NULL.  */
static const char *
config_refuse_varname (const char *s)
{
  if (env_name_ok (s))
    return NULL;
  return N_ ("must be an environment variable name (letters, digits and _, "
             "not starting with a digit, at most 128 bytes)");
}

/* A domain as stored: lowercase, so that comparisons are exact.  */
static char *
config_domain_store (const char *s, const char *workspace)
{
  char *copy = xstrdup (s);
  for (char *c = copy; *c != '\0'; c++)
    if (*c >= 'A' && *c <= 'Z')
      *c = (char) (*c - 'A' + 'a');
  return copy;
}

/* A path as stored: relative ones are made absolute in the workspace (kept
 * as written when there is none), and every absolute one normalised.  */
static char *
config_path_store (const char *s, const char *workspace)
{
  if (s[0] == '/')
    return config_path_normalize (s);
  if (workspace == NULL)
    return xstrdup (s);
  cleanup_free char *joined = xasprintf ("%s/%s", workspace, s);
  return config_path_normalize (joined);
}

/* How each check refuses a string and what form it is stored in.  */
static const struct
{
  const char *(*refuse) (const char *s);
  char *(*store) (const char *s, const char *workspace);
} config_checks[] = {
  [CONFIG_CHECK_TEXT] = { NULL, NULL },
  [CONFIG_CHECK_PATH] = { NULL, config_path_store },
  [CONFIG_CHECK_ABSOLUTE] = { config_refuse_relative, NULL },
  [CONFIG_CHECK_DOMAIN] = { config_refuse_domain, config_domain_store },
  [CONFIG_CHECK_MODE] = { config_refuse_mode, NULL },
  [CONFIG_CHECK_THEME] = { config_refuse_theme, NULL },
  /* Checked here, so that a bad rule is named by file and line and shown
   * escaped like every other value, rather than failing later in
   * core/rules.c with the rule as written.  */
  [CONFIG_CHECK_RULE] = { rules_refuse, NULL },
  [CONFIG_CHECK_BACKEND] = { config_refuse_backend, NULL },
  [CONFIG_CHECK_PORT] = { NULL, NULL },
  [CONFIG_CHECK_MCP_NAME] = { mcpservers_name_refuse, NULL },
  [CONFIG_CHECK_VARNAME] = { config_refuse_varname, NULL },
  [CONFIG_CHECK_ARGV] = { NULL, NULL },
};

/* --- failing ----------------------------------------------------------------
 * Every message is "<path>:<line>: <key>: <what>" (doc/strings.md,
 * "Configuration errors").  */

/* A server's key as a message names it, by the server
 * (mcpServers.files.args[0], mcpServers.files.env.TOKEN), or NULL for
 * every other key; the caller owns it.  */
static char *
config_key_named (const struct config_parse *p, const char *key)
{
  /* A credential's keys are named by its variable, not by "*".  */
  if (key != NULL && strncmp (key, "sandbox.credentials.*", 21) == 0
      && p->cfg->n_credentials > 0)
    return xasprintf ("sandbox.credentials.%s%s",
                      p->cfg->credentials[p->cfg->n_credentials - 1].name,
                      key + 21);
  if (key != NULL && p->server != NULL && strcmp (key, "mcpServers.*") == 0)
    return xasprintf ("mcpServers.%s", p->server->name);
  if (key == NULL || p->server == NULL
      || strncmp (key, "mcpServers.*.", 13) != 0)
    return NULL;
  if (strcmp (key, "mcpServers.*.env.*") == 0)
    return xasprintf ("mcpServers.%s.env.%s", p->server->name,
                      p->env_name != NULL ? p->env_name : "*");
  return xasprintf ("mcpServers.%s.%s", p->server->name, key + 13);
}

/* Stop the parse with a message about key (NULL: none) at the current
 * position.  Returns 0, which tells yajl to stop.  */
static int __attribute__ ((format (printf, 3, 0)))
config_vfail (struct config_parse *p, const char *key, const char *fmt,
              va_list ap)
{
  cleanup_free char *what = xvasprintf (fmt, ap);
  cleanup_free char *named = config_key_named (p, key);
  if (named != NULL)
    key = named;
  size_t line = p->finishing
                    ? config_line_last (p->text, p->len)
                    : config_line_at (p->text, p->len,
                                      yajl_get_bytes_consumed (p->yajl));
  if (key == NULL)
    cr_error_set (&p->err, 0, _ ("%s:%zu: %s"), p->path, line, what);
  else
    cr_error_set (&p->err, 0, _ ("%s:%zu: %s: %s"), p->path, line, key, what);
  return 0;
}

/* config_vfail with arguments.  */
static int __attribute__ ((format (printf, 3, 4)))
config_fail (struct config_parse *p, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  config_vfail (p, key, fmt, ap);
  va_end (ap);
  return 0;
}

/* Stop the parse: the value just read has the wrong type for its key.  */
static int
config_wrong_type (struct config_parse *p)
{
  if (p->in_list)
    return config_fail (p, p->pending->name, "%s",
                        _ (config_expected[CONFIG_KIND_LIST]));
  if (p->pending == NULL)
    return config_fail (p, NULL, "%s",
                        _ ("the top level must be a JSON object"));
  return config_fail (p, p->pending->name, "%s",
                      _ (config_expected[p->pending->kind]));
}

/* What an overlong form, a surrogate or a code point past U+10FFFF is
 * refused with (yajl lets them through).  */
#define CONFIG_NOT_UTF8                                                        \
  "must be valid UTF-8 (no overlong forms, surrogates or code points above "   \
  "U+10FFFF)"

/* Whether s[0..n) is UTF-8 as RFC 3629 has it.  */
static bool
config_utf8_valid (const char *s, size_t n)
{
  for (size_t i = 0, k; i < n; i += k)
    if ((k = utf8_char_len ((const unsigned char *) s + i, n - i)) == 0)
      return false;
  return true;
}

/* Check a string value (named name in messages) against key's rules.
 * Returns a NUL-terminated copy (yajl's text is not terminated), or NULL
 * with the parse stopped.  */
static char *
config_check_string (struct config_parse *p, const struct config_key *key,
                     const char *name, const char *s, size_t n)
{
  if (n == 0)
    config_fail (p, name, "%s", _ ("must not be empty"));
  else if (memchr (s, '\0', n) != NULL)
    config_fail (p, name, "%s", _ ("must not contain a NUL character"));
  else if (!config_utf8_valid (s, n))
    config_fail (p, name, "%s", _ (CONFIG_NOT_UTF8));
  else if (n > key->max_len)
    config_fail (p, name, _ ("must be at most %zu bytes long"), key->max_len);
  else
    {
      char *copy = xstrndup (s, n);
      const char *why = config_checks[key->check].refuse
                            ? config_checks[key->check].refuse (copy)
                            : NULL;
      if (why == NULL)
        return copy;
      free (copy);
      config_fail (p, name, "%s", _ (why));
    }
  return NULL;
}

/* The stored form of a checked string, owned by the caller.  */
static char *
config_store (const struct config_parse *p, const struct config_key *key,
              const char *s)
{
  if (config_checks[key->check].store == NULL)
    return xstrdup (s);
  return config_checks[key->check].store (s, p->workspace);
}

/* --- values ----------------------------------------------------------------
 */

/* Set a boolean key, refusing what a project may not do.  */
static int
config_set_bool (struct config_parse *p, const struct config_key *key,
                 bool value)
{
  bool *field = CONFIG_FIELD_OF (p, key, bool);
  if (p->origin == CONFIG_PROJECT && key->rule == CONFIG_RULE_REQUIRE && !value)
    return config_fail (p, key->name, "%s",
                        _ ("only the home configuration may disable "
                           "confinement"));
  if (p->origin == CONFIG_PROJECT && key->rule == CONFIG_RULE_NO_GRANT && value
      && !*field)
    return config_fail (p, key->name, "%s",
                        _ ("a project may not grant this; only the home "
                           "configuration can"));
  *field = value;
  /* sandbox.enabled is the only key whose setter is reported (inspection's
   * "required by project configuration").  */
  if (key->offset == offsetof (struct config, sandbox_enabled))
    p->cfg->sandbox_enabled_origin = p->origin;
  return 1;
}

/* Set a whole-number key from its JSON spelling s.  */
static int
config_set_uint (struct config_parse *p, const struct config_key *key,
                 const char *s)
{
  uint64_t *field = CONFIG_FIELD_OF (p, key, uint64_t);
  uint64_t min = (uint64_t) key->min, max = (uint64_t) key->max;
  if (strpbrk (s, ".eE") != NULL)
    return config_fail (p, key->name, "%s",
                        _ (config_expected[CONFIG_KIND_UINT]));
  errno = 0;
  unsigned long long v = s[0] == '-' ? 0 : strtoull (s, NULL, 10);
  if (errno == ERANGE || v < min || v > max)
    return config_fail (
        p, key->name, _ ("must be between %" PRIu64 " and %" PRIu64), min, max);
  if (p->origin == CONFIG_PROJECT && v > *field)
    return config_fail (p, key->name,
                        _ ("a project may only lower this limit (inherited: "
                           "%" PRIu64 ")"),
                        *field);
  *field = v;
  return 1;
}

/* Set a number key (fractions allowed) from its JSON spelling s.  */
static int
config_set_double (struct config_parse *p, const struct config_key *key,
                   const char *s)
{
  double *field = CONFIG_FIELD_OF (p, key, double);
  double v = strtod (s, NULL);
  if (!isfinite (v) || !(v > key->min) || v > key->max)
    return config_fail (p, key->name, _ ("must be more than %g and at most %g"),
                        key->min, key->max);
  if (p->origin == CONFIG_PROJECT && v > *field)
    return config_fail (p, key->name,
                        _ ("a project may only lower this limit (inherited: "
                           "%.15g)"),
                        *field);
  *field = v;
  return 1;
}

/* Set a string key.  */
static int
config_set_string (struct config_parse *p, const struct config_key *key,
                   const char *s, size_t n)
{
  cleanup_free char *copy = config_check_string (p, key, key->name, s, n);
  if (copy == NULL)
    return 0;
  char **field = CONFIG_FIELD_OF (p, key, char *);
  free (*field);
  *field = config_store (p, key, copy);
  return 1;
}

/* Whether a home domain grants the domain d: the same name, or a wildcard
 * "*.example.com" over any name (or narrower wildcard) below example.com.  */
static bool
config_domain_covers (const char *home, const char *d)
{
  if (strcmp (home, d) == 0)
    return true;
  if (strncmp (home, "*.", 2) != 0)
    return false;
  size_t n = strlen (d), suffix = strlen (home + 1);
  return n > suffix && strcmp (d + n - suffix, home + 1) == 0;
}

/* Whether the inherited list grants a project's entry value.  */
static bool
config_granted (const struct config_key *key,
                const struct config_list *inherited, const char *value)
{
  if (key->check != CONFIG_CHECK_DOMAIN)
    return config_list_has (inherited, value);
  for (size_t i = 0; i < inherited->count; i++)
    if (config_domain_covers (inherited->items[i], value))
      return true;
  return false;
}

/* Refuse a project list entry (stored form value, as written s) that would
 * widen what home grants; returns 1 when it may stay.  */
static int
config_project_entry (struct config_parse *p, const struct config_key *key,
                      const char *name, const char *value, const char *s,
                      size_t n)
{
  const struct config_list *inherited
      = CONFIG_FIELD_OF (p, key, struct config_list);
  cleanup_free char *shown = config_show (s, n);
  if (key->rule == CONFIG_RULE_INSIDE
      && !config_path_inside (value, p->workspace))
    return config_fail (p, name, _ ("\"%s\" is outside the workspace"), shown);
  if (key->rule == CONFIG_RULE_SUBSET
      && !config_granted (key, inherited, value))
    return config_fail (
        p, name, _ ("\"%s\" is not granted by the home configuration"), shown);
  return 1;
}

/* Read one entry of the list being read.  */
static int
config_list_entry (struct config_parse *p, const char *s, size_t n)
{
  const struct config_key *key = p->pending;
  cleanup_free char *name = xasprintf ("%s[%zu]", key->name, p->items_read);
  if (p->items_read++ == key->max_count)
    return config_fail (p, key->name, _ ("more than %zu entries"),
                        key->max_count);
  cleanup_free char *copy = config_check_string (p, key, name, s, n);
  if (copy == NULL)
    return 0;
  char *value = config_store (p, key, copy);
  if (p->origin == CONFIG_PROJECT
      && !config_project_entry (p, key, name, value, s, n))
    {
      free (value);
      return 0;
    }
  if (key->check == CONFIG_CHECK_ARGV)
    config_list_push (&p->items, value);
  else
    config_list_add (&p->items, value);
  return 1;
}

/* Read one entry of a port list (sandbox.network.ports), spelled s: a
 * whole number from key->min to key->max, not given twice, stored in
 * decimal.  */
static int
config_port_entry (struct config_parse *p, const struct config_key *key,
                   const char *s, size_t n)
{
  cleanup_free char *spelled = xstrndup (s, n);
  if (p->items_read++ == key->max_count)
    return config_fail (p, key->name, _ ("more than %zu entries"),
                        key->max_count);
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul (spelled, &end, 10);
  if (spelled[0] == '-' || spelled[0] == '\0' || *end != '\0' || errno == ERANGE
      || v < (unsigned long) key->min || v > (unsigned long) key->max)
    return config_fail (p, key->name, "%s", _ (CONFIG_PORTS_EXPECTED));
  cleanup_free char *value = xasprintf ("%lu", v);
  if (config_list_has (&p->items, value))
    return config_fail (p, key->name, _ ("port %lu is listed twice"), v);
  config_list_add (&p->items, xstrdup (value));
  return 1;
}

/* Put the list just read in place: a project adds to the filesystem and
 * deny lists and narrows the network lists; home replaces the default.  */
static void
config_list_commit (struct config_parse *p, const struct config_key *key)
{
  struct config_list *field = CONFIG_FIELD_OF (p, key, struct config_list);
  bool adds = key->rule == CONFIG_RULE_UNION || key->rule == CONFIG_RULE_INSIDE;
  if ((field == &p->cfg->workspace_allow || field == &p->cfg->workspace_domains)
      && p->other_workspace)
    {
      /* Another workspace's rules: checked, then let go.  */
      config_list_free (&p->items);
      config_list_init (&p->items);
      return;
    }
  if (p->origin == CONFIG_PROJECT && adds)
    config_list_union (field, &p->items);
  else
    config_list_replace (field, &p->items);
  if (config_key_per_credential (key))
    p->cfg->credentials[p->cfg->n_credentials - 1].limited = true;
}

/* --- keys ------------------------------------------------------------------
 */

/* The key named by the object key s under parent (NULL: the top), or NULL.
 * A name holding '.' or NUL never matches, so "sandbox.enabled" cannot be
 * spelled flat at the top level.  */
static const struct config_key *
config_key_find (const struct config_key *parent, const char *s, size_t n)
{
  /* Under workspaces, every key is a workspace's absolute path.  */
  if (parent != NULL && strcmp (parent->name, "workspaces") == 0)
    {
      bool path = n > 0 && s[0] == '/' && memchr (s, '\0', n) == NULL;
      s = "*";
      n = path ? 1 : 0;
    }
  /* Under mcpServers every key is a server's name, and under a server's
   * env or sandbox.credentials a variable's; each is checked once it is
   * read, so that the message can say what is wrong.  */
  if (parent != NULL
      && (strcmp (parent->name, "mcpServers") == 0
          || strcmp (parent->name, "mcpServers.*.env") == 0
          || strcmp (parent->name, "sandbox.credentials") == 0))
    {
      bool named = n > 0 && memchr (s, '\0', n) == NULL;
      s = "*";
      n = named ? 1 : 0;
    }
  if (n == 0 || memchr (s, '.', n) != NULL || memchr (s, '\0', n) != NULL)
    return NULL;
  cleanup_free char *name
      = parent ? xasprintf ("%s.%.*s", parent->name, (int) n, s)
               : xstrndup (s, n);
  for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
    if (strcmp (config_keys[i].name, name) == 0)
      return &config_keys[i];
  return NULL;
}

/* The dotted name of an unknown key, safe to print.  */
static char *
config_key_shown (const struct config_key *parent, const char *s, size_t n)
{
  cleanup_free char *shown = n ? config_show (s, n) : xstrdup ("\"\"");
  if (parent == NULL)
    return steal_pointer (&shown);
  return xasprintf ("%s.%s", parent->name, shown);
}

/* FNV-1a of s, for the set of workspace paths.  */
static size_t
config_hash (const char *s)
{
  size_t h = (size_t) 14695981039346656037ULL;
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char) *s) * (size_t) 1099511628211ULL;
  return h;
}

/* Put a path in an open-addressed table of cap (a power of two) slots;
 * returns false when it is there already (path is then not taken).  */
static bool
config_set_put (char **slots, size_t cap, char *path)
{
  for (size_t i = config_hash (path) & (cap - 1);; i = (i + 1) & (cap - 1))
    {
      if (slots[i] == NULL)
        {
          slots[i] = path;
          return true;
        }
      if (strcmp (slots[i], path) == 0)
        return false;
    }
}

/* Record a workspace path (owned) read under workspaces; returns false when
 * it was read before.  A hash set, so a file of many workspaces is read in
 * linear time.  */
static bool
config_workspace_new (struct config_parse *p, char *path)
{
  if (2 * (p->n_workspaces + 1) > p->cap_workspaces)
    {
      size_t cap = p->cap_workspaces ? 2 * p->cap_workspaces : 16;
      char **slots = xcalloc (cap, sizeof *slots);
      for (size_t i = 0; i < p->cap_workspaces; i++)
        if (p->workspaces[i] != NULL)
          config_set_put (slots, cap, p->workspaces[i]);
      free (p->workspaces);
      p->workspaces = slots;
      p->cap_workspaces = cap;
    }
  if (!config_set_put (p->workspaces, p->cap_workspaces, path))
    {
      free (path);
      return false;
    }
  p->n_workspaces++;
  return true;
}

/* --- MCP servers --------------------------------------------------------- */

/* Start reading the entry of the server named s (n bytes): a name of the
 * mcp__<server>__<tool> syntax, given once.  Returns 0 with the parse
 * stopped.  */
static int
config_server_begin (struct config_parse *p, const struct config_key *parent,
                     const char *s, size_t n)
{
  cleanup_free char *name = xstrndup (s, n);
  cleanup_free char *shown = config_key_shown (parent, s, n);
  const char *why = config_utf8_valid (s, n) ? mcpservers_name_refuse (name)
                                             : CONFIG_NOT_UTF8;
  if (why != NULL)
    return config_fail (p, shown, "%s", _ (why));
  if (mcpservers_find (p->cfg, name) != NULL)
    return config_fail (p, shown, "%s", _ ("duplicate key"));
  p->cfg->mcp_servers
      = xrealloc (p->cfg->mcp_servers,
                  (p->cfg->n_mcp_servers + 1) * sizeof *p->cfg->mcp_servers);
  p->server = &p->cfg->mcp_servers[p->cfg->n_mcp_servers++];
  mcpservers_init (p->server, name);
  for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
    if (config_key_per_server (&config_keys[i]))
      p->seen[i] = false;
  return 1;
}

/* --- credentials ---------------------------------------------------------- */

/* Start reading the credential named s (the key under sandbox.credentials):
 * a variable's name that crucible does not set itself, given once, within
 * the count.  Returns 1, or 0 with the parse stopped.  */
static int
config_credential_begin (struct config_parse *p, const char *s, size_t n)
{
  struct config *cfg = p->cfg;
  cleanup_free char *name = xstrndup (s, n);
  cleanup_free char *shown = config_show (s, n);
  cleanup_free char *key = xasprintf ("sandbox.credentials.%s", shown);

  if (!config_utf8_valid (s, n) || !env_name_ok (name))
    return config_fail (p, key, "%s", _ (config_refuse_varname ("")));
  if (env_name_reserved (name))
    return config_fail (p, key, "%s",
                        _ ("is a variable crucible sets itself (PATH, HOME, "
                           "TMPDIR, LANG, LC_*, TERM, the proxy variables); a "
                           "credential may not take it"));
  for (size_t i = 0; i < cfg->n_credentials; i++)
    if (strcmp (cfg->credentials[i].name, name) == 0)
      return config_fail (p, key, "%s", _ ("duplicate key"));
  if (cfg->n_credentials == CONFIG_CREDENTIALS_MAX)
    return config_fail (p, "sandbox.credentials", _ ("more than %d entries"),
                        CONFIG_CREDENTIALS_MAX);
  struct config_credential *c = &cfg->credentials[cfg->n_credentials++];
  memset (c, 0, sizeof *c);
  c->name = steal_pointer (&name);
  config_list_init (&c->commands);
  for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
    if (config_key_per_credential (&config_keys[i]))
      p->seen[i] = false;
  return 1;
}

/* The prefix of a server's keys in messages: "mcpServers.NAME".  */
static char *
config_server_shown (const struct config_parse *p)
{
  return xasprintf ("mcpServers.%s", p->server->name);
}

/* Read a key of a server's entry, or of its env (a variable's name, given
 * once).  Returns 0 with the parse stopped.  */
static int
config_server_key (struct config_parse *p, const struct config_key *key,
                   const struct config_key *parent, const char *s, size_t n)
{
  if (strcmp (key->name, "mcpServers.*") == 0)
    return config_server_begin (p, parent, s, n);
  cleanup_free char *prefix = config_server_shown (p);
  cleanup_free char *shown = config_show (s, n);
  cleanup_free char *name = xstrndup (s, n);
  if (strcmp (key->name, "mcpServers.*.env.*") != 0)
    {
      if (p->seen[key - config_keys])
        return config_fail (p, NULL, "%s.%s: %s", prefix, shown,
                            _ ("duplicate key"));
      return 1;
    }
  const char *why = config_refuse_varname (name);
  if (why != NULL)
    return config_fail (p, NULL, "%s.env.%s: %s", prefix, shown, _ (why));
  size_t len = strlen (name);
  for (size_t i = 0; i < p->server->env.count; i++)
    if (strncmp (p->server->env.items[i], name, len) == 0
        && p->server->env.items[i][len] == '=')
      return config_fail (p, NULL, "%s.env.%s: %s", prefix, shown,
                          _ ("duplicate key"));
  free (p->env_name);
  p->env_name = steal_pointer (&name);
  return 1;
}

/* A value of a server's env: any UTF-8 text without NUL, kept as
 * NAME=VALUE.  */
static int
config_server_env (struct config_parse *p, const char *s, size_t n)
{
  cleanup_free char *prefix = config_server_shown (p);
  cleanup_free char *key = xasprintf ("%s.env.%s", prefix, p->env_name);
  if (memchr (s, '\0', n) != NULL)
    return config_fail (p, key, "%s", _ ("must not contain a NUL character"));
  if (!config_utf8_valid (s, n))
    return config_fail (p, key, "%s", _ (CONFIG_NOT_UTF8));
  if (n > ENV_MAX_BYTES)
    return config_fail (p, key, _ ("must be at most %d bytes long"),
                        ENV_MAX_BYTES);
  config_list_push (&p->server->env,
                    xasprintf ("%s=%.*s", p->env_name, (int) n, s));
  return 1;
}

/* A server's entry closes: it must name its command.  */
static int
config_server_end (struct config_parse *p)
{
  if (p->server->command != NULL)
    return 1;
  cleanup_free char *prefix = config_server_shown (p);
  return config_fail (p, prefix, "%s",
                      _ ("needs a command (only servers on standard input "
                         "and output are supported)"));
}

/* The credential just read closes: it names exactly one source.  */
static int
config_credential_end (struct config_parse *p)
{
  const struct config_credential *c
      = &p->cfg->credentials[p->cfg->n_credentials - 1];
  if ((c->env == NULL) == (c->file == NULL))
    return config_fail (p, "sandbox.credentials.*", "%s",
                        _ ("needs exactly one of \"env\" and \"file\""));
  return 1;
}

/* --- yajl callbacks ------------------------------------------------------ */

/* yajl: null is never a valid value.  */
static int
config_on_null (void *ctx)
{
  return config_wrong_type (ctx);
}

/* yajl: true or false.  */
static int
config_on_boolean (void *ctx, int value)
{
  struct config_parse *p = ctx;
  const struct config_key *key = p->pending;
  if (p->in_list || key == NULL || key->kind != CONFIG_KIND_BOOL)
    return config_wrong_type (p);
  p->pending = NULL;
  return config_set_bool (p, key, value != 0);
}

/* yajl: a number, as spelled in the file.  */
static int
config_on_number (void *ctx, const char *s, size_t n)
{
  struct config_parse *p = ctx;
  const struct config_key *key = p->pending;
  if (p->in_list && key->check == CONFIG_CHECK_PORT)
    return config_port_entry (p, key, s, n);
  if (p->in_list || key == NULL
      || (key->kind != CONFIG_KIND_UINT && key->kind != CONFIG_KIND_NUMBER))
    return config_wrong_type (p);
  p->pending = NULL;
  cleanup_free char *spelled = xstrndup (s, n);
  if (key->kind == CONFIG_KIND_UINT)
    return config_set_uint (p, key, spelled);
  return config_set_double (p, key, spelled);
}

/* yajl: a string, as a value or a list entry.  */
static int
config_on_string (void *ctx, const unsigned char *s, size_t n)
{
  struct config_parse *p = ctx;
  const struct config_key *key = p->pending;
  if (p->in_list && key->check == CONFIG_CHECK_PORT)
    return config_fail (p, key->name, "%s", _ (CONFIG_PORTS_EXPECTED));
  if (p->in_list)
    return config_list_entry (p, (const char *) s, n);
  if (key == NULL || key->kind != CONFIG_KIND_STRING)
    return config_wrong_type (p);
  p->pending = NULL;
  if (strcmp (key->name, "mcpServers.*.env.*") == 0)
    return config_server_env (p, (const char *) s, n);
  return config_set_string (p, key, (const char *) s, n);
}

/* yajl: an object opens (the top level, or a key's value).  */
static int
config_on_start_map (void *ctx)
{
  struct config_parse *p = ctx;
  bool top = p->depth == 0 && p->pending == NULL;
  if (!top
      && (p->in_list || p->pending == NULL
          || p->pending->kind != CONFIG_KIND_OBJECT))
    return config_wrong_type (p);
  p->object[p->depth++] = p->pending;
  p->pending = NULL;
  return 1;
}

/* yajl: a key inside an object.  */
static int
config_on_map_key (void *ctx, const unsigned char *s, size_t n)
{
  struct config_parse *p = ctx;
  const struct config_key *parent = p->object[p->depth - 1];
  const struct config_key *key = config_key_find (parent, (const char *) s, n);
  if (key == NULL)
    {
      cleanup_free char *shown = config_key_shown (parent, (const char *) s, n);
      if (memchr (s, '.', n) != NULL)
        return config_fail (p, shown, "%s",
                            _ ("unknown key (a dotted name is written as "
                               "nested objects)"));
      return config_fail (p, shown, "%s", _ ("unknown key"));
    }
  if (strcmp (key->name, "workspaces.*") == 0)
    {
      /* Each workspace has its own entry; only this one's is kept.  */
      cleanup_free char *ws = xstrndup ((const char *) s, n);
      cleanup_free char *mine
          = p->workspace != NULL ? config_path_normalize (p->workspace) : NULL;
      if (!config_utf8_valid (ws, n))
        return config_fail (p, key->name, "%s", _ (CONFIG_NOT_UTF8));
      cleanup_free char *theirs = config_path_normalize (ws);
      if (!config_workspace_new (p, xstrdup (theirs)))
        {
          cleanup_free char *shown = config_key_shown (parent, ws, n);
          return config_fail (p, shown, "%s", _ ("duplicate key"));
        }
      p->other_workspace = mine == NULL || strcmp (mine, theirs) != 0;
      for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
        if (strncmp (config_keys[i].name, "workspaces.*.", 13) == 0)
          p->seen[i] = false;
    }
  else if (config_key_per_server (key)
           || strcmp (key->name, "mcpServers.*") == 0)
    {
      if (config_server_key (p, key, parent, (const char *) s, n) == 0)
        return 0;
    }
  else if (strcmp (key->name, "sandbox.credentials.*") == 0)
    {
      if (config_credential_begin (p, (const char *) s, n) == 0)
        return 0;
    }
  else if (p->seen[key - config_keys])
    return config_fail (p, key->name, "%s", _ ("duplicate key"));
  p->seen[key - config_keys] = true;
  if (p->origin == CONFIG_PROJECT && key->rule == CONFIG_RULE_HOME_ONLY)
    return config_fail (p, key->name,
                        _ ("may only be set in the home configuration (%s), "
                           "not in a project"),
                        CONFIG_HOME_NAME);
  p->pending = key;
  return 1;
}

/* yajl: an object closes.  */
static int
config_on_end_map (void *ctx)
{
  struct config_parse *p = ctx;
  const struct config_key *closing = p->object[--p->depth];
  if (closing != NULL && strcmp (closing->name, "mcpServers.*") == 0)
    return config_server_end (p);
  if (closing != NULL && strcmp (closing->name, "sandbox.credentials.*") == 0)
    return config_credential_end (p);
  return 1;
}

/* yajl: an array opens; only a list key's value may be one.  */
static int
config_on_start_array (void *ctx)
{
  struct config_parse *p = ctx;
  if (p->in_list || p->pending == NULL || p->pending->kind != CONFIG_KIND_LIST)
    return config_wrong_type (p);
  p->in_list = true;
  p->items_read = 0;
  return 1;
}

/* yajl: the list being read closes.  */
static int
config_on_end_array (void *ctx)
{
  struct config_parse *p = ctx;
  config_list_commit (p, p->pending);
  p->in_list = false;
  p->pending = NULL;
  return 1;
}

static const yajl_callbacks config_callbacks = {
  .yajl_null = config_on_null,
  .yajl_boolean = config_on_boolean,
  .yajl_number = config_on_number,
  .yajl_string = config_on_string,
  .yajl_start_map = config_on_start_map,
  .yajl_map_key = config_on_map_key,
  .yajl_end_map = config_on_end_map,
  .yajl_start_array = config_on_start_array,
  .yajl_end_array = config_on_end_array,
};

/* --- merging ----------------------------------------------------------------
 */

/* Report a syntax error yajl found: "<path>:<line>: <yajl's message>".  */
static int
config_syntax_error (struct config_parse *p, size_t line, struct cr_error **err)
{
  unsigned char *msg = yajl_get_error (p->yajl, 0, NULL, 0);
  size_t n = strlen ((const char *) msg);
  while (n > 0 && strchr (" \t\r\n", msg[n - 1]) != NULL)
    n--;
  cr_error_set (err, 0, _ ("%s:%zu: %.*s"), p->path, line, (int) n,
                (const char *) msg);
  yajl_free_error (p->yajl, msg);
  return -1;
}

/* Run yajl over the whole text (one call, so offsets are into it).  */
static int
config_parse_run (struct config_parse *p, struct cr_error **err)
{
  yajl_status st
      = yajl_parse (p->yajl, (const unsigned char *) p->text, p->len);
  size_t line
      = config_line_at (p->text, p->len, yajl_get_bytes_consumed (p->yajl));
  if (st == yajl_status_ok)
    {
      p->finishing = true;
      st = yajl_complete_parse (p->yajl);
      line = config_line_last (p->text, p->len);
    }
  if (st == yajl_status_client_canceled)
    {
      if (err != NULL && *err == NULL)
        *err = steal_pointer (&p->err);
      return -1;
    }
  if (st != yajl_status_ok)
    return config_syntax_error (p, line, err);
  return 0;
}

int
config_merge_text (struct config *cfg, const char *text, size_t len,
                   const char *path, enum config_origin origin,
                   const char *workspace, struct cr_error **err)
{
  /* An empty file reads as {}: `touch config.json` is not a mistake.  */
  if (config_blank (text, len))
    return 0;
  struct config_parse p = {
    .cfg = cfg,
    .text = text,
    .len = len,
    .path = path,
    .workspace = workspace,
    .origin = origin,
  };
  config_list_init (&p.items);
  p.yajl = yajl_alloc (&config_callbacks, NULL, &p);
  if (p.yajl == NULL)
    abort ();
  int ret = config_parse_run (&p, err);
  yajl_free (p.yajl);
  /* The names allowed always for this workspace are allowed wherever the
   * home file's own are: a project then narrows among them too.  */
  if (ret == 0 && origin == CONFIG_HOME)
    for (size_t i = 0; i < cfg->workspace_domains.count; i++)
      config_list_add (&cfg->net_domains,
                       xstrdup (cfg->workspace_domains.items[i]));
  for (size_t i = 0; i < p.cap_workspaces; i++)
    free (p.workspaces[i]);
  free (p.workspaces);
  config_list_free (&p.items);
  free (p.env_name);
  cr_error_free (p.err);
  return ret;
}

/* --- files ------------------------------------------------------------------
 */

/* Read a whole configuration file into *text.  Returns 1 when read, 0 when
 * there is no file, -1 on error.  O_NONBLOCK: a fifo planted by a
 * repository must not hang crucible; only a regular file is read.  */
static int
config_read (const char *path, char **text, size_t *len, struct cr_error **err)
{
  cleanup_close int fd
      = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0 || fstat (fd, &st) < 0)
    return cr_error_set (err, errno, _ ("cannot read %s"), path);
  if (S_ISDIR (st.st_mode))
    return cr_error_set (err, EISDIR, _ ("cannot read %s"), path);
  if (!S_ISREG (st.st_mode))
    return cr_error_set (err, 0, _ ("cannot read %s: not a regular file"),
                         path);
  struct buf b = BUF_INIT;
  char chunk[65536];
  ssize_t got;
  while (b.len <= CONFIG_FILE_MAX_BYTES
         && (got = read (fd, chunk, sizeof chunk)) != 0)
    {
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          int saved = errno;
          buf_free (&b);
          return cr_error_set (err, saved, _ ("cannot read %s"), path);
        }
      buf_append (&b, chunk, (size_t) got);
    }
  if (b.len > CONFIG_FILE_MAX_BYTES)
    {
      buf_free (&b);
      return cr_error_set (err, 0,
                           _ ("cannot read %s: larger than %zu bytes, the "
                              "most a configuration file may hold"),
                           path, CONFIG_FILE_MAX_BYTES);
    }
  *text = buf_steal (&b, len);
  return 1;
}

/* Merge the file at path, if there is one, recording that it was read.  */
static int
config_load_file (struct config *cfg, const char *path,
                  enum config_origin origin, const char *workspace,
                  struct cr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  int found = config_read (path, &text, &len, err);
  if (found <= 0)
    return found;
  if (config_merge_text (cfg, text, len, path, origin, workspace, err) < 0)
    return -1;
  char **slot = origin == CONFIG_PROJECT ? &cfg->project_file : &cfg->home_file;
  free (*slot);
  *slot = xstrdup (path);
  return 0;
}

/* Whether two paths name one existing file (a workspace that is $HOME has
 * its home file as its project file, and it is read once, as home).  */
static bool
config_same_file (const char *a, const char *b)
{
  struct stat sa, sb;
  if (stat (a, &sa) < 0 || stat (b, &sb) < 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Ports need a workload that may listen: home's ports without home's
 * allowLocalBinding is refused, naming both keys.  (A project may still
 * turn binding off afterwards; its commands then serve nothing.)  */
static int
config_check_ports (const struct config *cfg, const char *home,
                    struct cr_error **err)
{
  if (cfg->net_ports.count == 0 || cfg->net_allow_local_binding)
    return 0;
  return cr_error_set (err, 0,
                       _ ("%s: sandbox.network.ports: needs "
                          "sandbox.network.allowLocalBinding set to true "
                          "(a port is served only by a command that may "
                          "listen)"),
                       home);
}

/* Whole-file checks of the home configuration: each MCP server's
 * credentials name entries of sandbox.credentials, so that a server never
 * asks for a value nobody configured.  */
static int
config_check_server_credentials (const struct config *cfg, const char *home,
                                 struct cr_error **err)
{
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    {
      const struct mcp_server_config *s = &cfg->mcp_servers[i];
      for (size_t j = 0; j < s->credentials.count; j++)
        {
          const char *name = s->credentials.items[j];
          bool found = false;
          for (size_t k = 0; k < cfg->n_credentials && !found; k++)
            found = strcmp (cfg->credentials[k].name, name) == 0;
          if (!found)
            return cr_error_set (err, 0,
                                 _ ("%s: mcpServers.%s.credentials[%zu]: "
                                    "names %s, which sandbox.credentials "
                                    "does not give"),
                                 home, s->name, j, name);
        }
    }
  return 0;
}

struct config *
config_new_defaults (void)
{
  struct config *cfg = xcalloc (1, sizeof *cfg);
  cfg->sandbox_enabled = false;
  cfg->sandbox_enabled_origin = CONFIG_DEFAULT;
  config_list_init (&cfg->fs_writable);
  config_list_init (&cfg->fs_read_only);
  config_list_init (&cfg->fs_protected);
  config_list_init (&cfg->fs_unreadable);
  config_list_init (&cfg->net_domains);
  config_list_init (&cfg->net_ports);
  config_list_init (&cfg->net_unix_sockets);
  config_list_init (&cfg->allow);
  config_list_init (&cfg->workspace_allow);
  config_list_init (&cfg->workspace_domains);
  config_list_init (&cfg->deny);
  config_list_init (&cfg->mcp_disabled);
  config_list_init (&cfg->withheld_credentials);
  cfg->output_bytes = 10485760;
  cfg->cpu_seconds = 3600;
  cfg->open_files = 4096;
  cfg->command_seconds = 1200;
  cfg->concurrency = 4;
  cfg->journal_keep_days = CONFIG_JOURNAL_KEEP_DAYS;
  cfg->permissions_mode = xstrdup ("ask");
  return cfg;
}

void
config_free (struct config *cfg)
{
  if (cfg == NULL)
    return;
  config_list_free (&cfg->fs_writable);
  config_list_free (&cfg->fs_read_only);
  config_list_free (&cfg->fs_protected);
  config_list_free (&cfg->fs_unreadable);
  config_list_free (&cfg->net_domains);
  config_list_free (&cfg->net_ports);
  config_list_free (&cfg->net_unix_sockets);
  config_list_free (&cfg->allow);
  config_list_free (&cfg->workspace_allow);
  config_list_free (&cfg->workspace_domains);
  config_list_free (&cfg->deny);
  config_list_free (&cfg->withheld_credentials);
  for (size_t i = 0; i < cfg->n_credentials; i++)
    {
      free (cfg->credentials[i].name);
      free (cfg->credentials[i].env);
      free (cfg->credentials[i].file);
      config_list_free (&cfg->credentials[i].commands);
    }
  free (cfg->permissions_mode);
  free (cfg->agent_command);
  free (cfg->sandbox_backend);
  free (cfg->container_engine);
  free (cfg->container_image);
  free (cfg->theme);
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    mcpservers_clear (&cfg->mcp_servers[i]);
  free (cfg->mcp_servers);
  config_list_free (&cfg->mcp_disabled);
  free (cfg->home_file);
  free (cfg->project_file);
  free (cfg);
}

char *
config_home_path (struct cr_error **err)
{
  const char *home = getenv ("HOME");
  if (home == NULL || home[0] != '/')
    {
      cr_error_set (err, 0,
                    _ ("HOME is not set to an absolute path, so the home "
                       "configuration (%s) cannot be found"),
                    CONFIG_HOME_NAME);
      return NULL;
    }
  size_t n = strlen (home);
  const char *sep = home[n - 1] == '/' ? "" : "/";
  return xasprintf ("%s%s.crucible/config.json", home, sep);
}

char *
config_project_path (const char *workspace)
{
  size_t n = strlen (workspace);
  const char *sep = n > 0 && workspace[n - 1] == '/' ? "" : "/";
  return xasprintf ("%s%s.crucible/config.json", workspace, sep);
}

int
config_load (struct config **out, const char *home_path, const char *workspace,
             struct cr_error **err)
{
  cleanup_free char *home
      = home_path ? xstrdup (home_path) : config_home_path (err);
  if (home == NULL)
    return -1;
  struct config *cfg = config_new_defaults ();
  int ret = config_load_file (cfg, home, CONFIG_HOME, workspace, err);
  if (ret == 0)
    ret = config_check_ports (cfg, home, err);
  if (ret == 0)
    ret = config_check_server_credentials (cfg, home, err);
  if (ret == 0 && workspace != NULL)
    {
      cleanup_free char *project = config_project_path (workspace);
      if (!config_same_file (home, project))
        ret = config_load_file (cfg, project, CONFIG_PROJECT, workspace, err);
    }
  if (ret < 0)
    {
      config_free (cfg);
      return -1;
    }
  *out = cfg;
  return 0;
}

/* Point a policy list at a configuration list.  */
static void
config_policy_list (const struct config_list *l, struct policy_list *out)
{
  out->items = l->items;
  out->count = l->count;
}

/* The sandbox policy's input from a configuration.  */
void
config_policy_input (const struct config *cfg, const char *workspace,
                     struct policy_input *in)
{
  memset (in, 0, sizeof *in);
  in->enabled = cfg->sandbox_enabled;
  in->enabled_source
      = cfg->sandbox_enabled_origin == CONFIG_PROJECT ? POLICY_SOURCE_PROJECT
        : cfg->sandbox_enabled_origin == CONFIG_HOME  ? POLICY_SOURCE_HOME
                                                      : POLICY_SOURCE_DEFAULT;
  in->workspace = workspace;
  config_policy_list (&cfg->fs_writable, &in->writable);
  config_policy_list (&cfg->fs_read_only, &in->read_only);
  config_policy_list (&cfg->fs_protected, &in->protected_paths);
  config_policy_list (&cfg->fs_unreadable, &in->unreadable);
  config_policy_list (&cfg->net_domains, &in->domains);
  in->allow_local_binding = cfg->net_allow_local_binding;
  in->allow_private_addresses = cfg->net_allow_private;
  /* Ports only for a workload that may listen (a project may have turned
   * binding off).  */
  if (cfg->net_allow_local_binding)
    config_policy_list (&cfg->net_ports, &in->ports);
  config_policy_list (&cfg->net_unix_sockets, &in->unix_sockets);
  in->cpu_seconds = cfg->cpu_seconds;
  in->open_files = cfg->open_files;
  in->output_bytes = cfg->output_bytes;
  in->command_seconds = cfg->command_seconds;
  in->concurrency = cfg->concurrency;
  in->credentials = credentials_configured (cfg);
}

/* --- writing the home file --------------------------------------------- */

/* Generate a key's new value into g from its old one (NULL when the key
 * was absent); data is the caller's.  */
typedef void (*config_gen_fn) (struct jsonw *g, yajl_val old, const void *data);

/* Generate v (a value of a file that loaded) into g, as it was.  */
static void
config_gen_value (struct jsonw *g, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      jsonw_object_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          const char *k = v->u.object.keys[i];
          jsonw_key (g, k);
          config_gen_value (g, v->u.object.values[i]);
        }
      jsonw_object_close (g);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      jsonw_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        config_gen_value (g, v->u.array.values[i]);
      jsonw_array_close (g);
    }
  else if (YAJL_IS_STRING (v))
    jsonw_cstr (g, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    /* The number as it was spelled: 1200.5 stays 1200.5.  */
    jsonw_raw (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v))
    jsonw_bool (g, true);
  else if (YAJL_IS_FALSE (v))
    jsonw_bool (g, false);
  else
    jsonw_null (g);
}

/* Generate obj (an object; NULL or anything else counts as empty) with
 * key's value generated by gen where it was, or added last; every other
 * key as it was.  Nest calls to set a key deeper down.  */
static void
config_gen_object_with (struct jsonw *g, yajl_val obj, const char *key,
                        config_gen_fn gen, const void *data)
{
  bool done = false;

  if (obj != NULL && !YAJL_IS_OBJECT (obj))
    obj = NULL;
  jsonw_object_open (g);
  for (size_t i = 0; obj != NULL && i < obj->u.object.len; i++)
    {
      const char *k = obj->u.object.keys[i];
      jsonw_key (g, k);
      if (strcmp (k, key) == 0 && !done)
        {
          gen (g, obj->u.object.values[i], data);
          done = true;
        }
      else
        config_gen_value (g, obj->u.object.values[i]);
    }
  if (!done)
    {
      jsonw_key (g, key);
      gen (g, NULL, data);
    }
  jsonw_object_close (g);
}

/* The new text of the home file: root (an object, or NULL for a file that
 * was missing or blank) with key generated by gen.  Owned.  */
static char *
config_home_rewrite (yajl_val root, const char *key, config_gen_fn gen,
                     const void *data)
{
  struct jsonw *g = jsonw_new_pretty ();

  config_gen_object_with (g, root, key, gen, data);
  /* The writer's pretty output already ends in a newline.  */
  return jsonw_steal (g, NULL);
}

/* Read the file at path as the loader does (which may be missing: *text
 * is then NULL).  */
static int
config_home_read (const char *path, char **text, struct cr_error **err)
{
  size_t len;
  *text = NULL;
  return config_read (path, text, &len, err) < 0 ? -1 : 0;
}

/* Write all of text to fd.  */
static int
config_home_write_all (int fd, const char *text)
{
  size_t len = strlen (text), done = 0;
  while (done < len)
    {
      ssize_t n = write (fd, text + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      done += (size_t) n;
    }
  return 0;
}

/* Write text to a temporary file in path's directory and rename it to
 * path: a reader sees the old file or the new one, never half of either.  */
static int
config_home_replace (const char *path, const char *text, struct cr_error **err)
{
  cleanup_free char *copy = xstrdup (path);
  const char *dir = dirname (copy);
  cleanup_free char *tmp = xasprintf ("%s/.config.json.XXXXXX", dir);
  cleanup_close int fd = mkostemp (tmp, O_CLOEXEC);
  cleanup_close int dfd = -1;

  if (fd < 0)
    return cr_error_set (err, errno, _ ("cannot write %s"), path);
  if (fchmod (fd, 0600) < 0 || config_home_write_all (fd, text) < 0
      || fsync (fd) < 0 || rename (tmp, path) < 0)
    {
      int saved = errno;
      unlink (tmp);
      return cr_error_set (err, saved, _ ("cannot write %s"), path);
    }
  /* The rename is durable once the directory is.  */
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    fsync (dfd);
  return 0;
}

/* The file to write for home_file: its target when it is a symlink, so a
 * configuration kept elsewhere stays there; its directory made (0700) when
 * missing.  Owned.  */
static char *
config_home_target (const char *home_file, struct cr_error **err)
{
  struct stat st;
  if (lstat (home_file, &st) == 0 && S_ISLNK (st.st_mode))
    {
      char *target = realpath (home_file, NULL);
      if (target == NULL)
        cr_error_set (err, errno, _ ("cannot follow %s"), home_file);
      return target;
    }
  cleanup_free char *copy = xstrdup (home_file);
  const char *dir = dirname (copy);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    {
      cr_error_set (err, errno, _ ("cannot make %s"), dir);
      return NULL;
    }
  return xstrdup (home_file);
}

/* Rewrite home_file with its top-level key generated by gen: read, parsed,
 * rewritten and checked to load, then written beside it (0600) and renamed
 * over it.  */
static int
config_home_update (const char *home_file, const char *key, config_gen_fn gen,
                    const void *data, struct cr_error **err)
{
  cleanup_free char *target = config_home_target (home_file, err);
  cleanup_free char *old = NULL;
  cleanup_free char *text = NULL;
  char why[256] = "";
  yajl_val root = NULL;

  if (target == NULL || config_home_read (target, &old, err) < 0)
    return -1;
  if (old != NULL && strspn (old, " \t\r\n") != strlen (old))
    {
      root = yajl_tree_parse (old, why, sizeof why);
      if (root == NULL || !YAJL_IS_OBJECT (root))
        {
          yajl_tree_free (root);
          return cr_error_set (err, 0,
                               _ ("%s: not a JSON object; it was left as it "
                                  "is"),
                               home_file);
        }
    }
  text = config_home_rewrite (root, key, gen, data);
  yajl_tree_free (root);
  /* What is written must load: a file crucible cannot read back would stop
   * every later run.  */
  struct config *check = config_new_defaults ();
  int ret = config_merge_text (check, text, strlen (text), home_file,
                               CONFIG_HOME, NULL, err);
  config_free (check);
  if (ret < 0)
    return -1;
  return config_home_replace (target, text, err);
}

/* sandbox.enabled's new value (data: a bool).  */
static void
config_gen_enabled (struct jsonw *g, yajl_val old, const void *data)
{
  (void) old;
  jsonw_bool (g, *(const bool *) data);
}

/* The sandbox object with enabled set (data: a bool).  */
static void
config_gen_sandbox (struct jsonw *g, yajl_val old, const void *data)
{
  config_gen_object_with (g, old, "enabled", config_gen_enabled, data);
}

int
config_home_set_enabled (const char *home_file, bool enabled,
                         struct cr_error **err)
{
  return config_home_update (home_file, "sandbox", config_gen_sandbox, &enabled,
                             err);
}

/* The entries config_home_add_allow (or _domain) adds, the list of the
 * workspace's they join, and the workspace.  */
struct config_allow_add
{
  const char *workspace;
  const char *key; /* "allow" or "domains" */
  char *const *rules;
  size_t n;
};

/* Generate the allow list: what it held, then the new rules not in it
 * (data: the config_allow_add).  */
static void
config_gen_allow (struct jsonw *g, yajl_val allow, const void *data)
{
  const struct config_allow_add *r = data;
  if (allow != NULL && !YAJL_IS_ARRAY (allow))
    allow = NULL;
  jsonw_array_open (g);
  for (size_t i = 0; allow != NULL && i < allow->u.array.len; i++)
    config_gen_value (g, allow->u.array.values[i]);
  for (size_t k = 0; k < r->n; k++)
    {
      bool there = false;
      for (size_t i = 0; allow != NULL && i < allow->u.array.len && !there; i++)
        there
            = YAJL_IS_STRING (allow->u.array.values[i])
              && strcmp (allow->u.array.values[i]->u.string, r->rules[k]) == 0;
      if (!there)
        jsonw_cstr (g, r->rules[k]);
    }
  jsonw_array_close (g);
}

/* Generate this workspace's object, its list grown.  */
static void
config_gen_workspace (struct jsonw *g, yajl_val ws, const void *data)
{
  const struct config_allow_add *r = data;
  config_gen_object_with (g, ws, r->key, config_gen_allow, data);
}

/* Generate the workspaces object with this workspace's rules added.  */
static void
config_gen_workspaces (struct jsonw *g, yajl_val all, const void *data)
{
  const struct config_allow_add *r = data;
  config_gen_object_with (g, all, r->workspace, config_gen_workspace, r);
}

int
config_home_add_allow (const char *home_file, const char *workspace,
                       char *const *rules, size_t n, struct cr_error **err)
{
  struct config_allow_add r
      = { .workspace = workspace, .key = "allow", .rules = rules, .n = n };
  return config_home_update (home_file, "workspaces", config_gen_workspaces, &r,
                             err);
}

void
config_allow_domain (struct config *cfg, const char *name)
{
  config_list_add (&cfg->workspace_domains, xstrdup (name));
  config_list_add (&cfg->net_domains, xstrdup (name));
}

int
config_home_add_domain (const char *home_file, const char *workspace,
                        const char *name, struct cr_error **err)
{
  char *names[] = { (char *) name };
  struct config_allow_add r
      = { .workspace = workspace, .key = "domains", .rules = names, .n = 1 };
  return config_home_update (home_file, "workspaces", config_gen_workspaces, &r,
                             err);
}

void
config_backend_input (const struct config *cfg,
                      struct sandbox_backend_config *out)
{
  memset (out, 0, sizeof *out);
  out->backend = cfg->sandbox_backend;
  out->enabled = cfg->sandbox_enabled;
  out->cpu_seconds = cfg->cpu_seconds;
  out->open_files = cfg->open_files;
  out->unreadable = (const char *const *) cfg->fs_unreadable.items;
  out->n_unreadable = cfg->fs_unreadable.count;
  out->unix_sockets = (const char *const *) cfg->net_unix_sockets.items;
  out->n_unix_sockets = cfg->net_unix_sockets.count;
  out->container_engine = cfg->container_engine;
  out->container_image = cfg->container_image;
}
