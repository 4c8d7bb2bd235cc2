/* The /sandbox panel.  */
#include <config.h>

#include "tui/sandbox_panel.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mcpservers.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "sandbox/inspect.h"
#include "sandbox/policy.h"
#include "sandbox/registry.h"
#include "tui/front.h"
#include "tui/screen.h"

/* The panel's state: both tabs, made when it opened.  */
struct sandbox_panel
{
  const struct panel_host *host;
  int tab; /* 0: Settings, 1: Dependencies */
  struct screen_lines settings;
  struct screen_lines deps;
};

/* Where sandbox.enabled came from, in words.  */
static const char *
sandbox_panel_origin (const struct config *cfg)
{
  switch (cfg->sandbox_enabled_origin)
    {
    case CONFIG_HOME:
      return cfg->home_file;
    case CONFIG_PROJECT:
      return cfg->project_file;
    default:
      return _ ("the default");
    }
}

/* A list of paths or names, or "none".  */
static void
sandbox_panel_list (struct screen_lines *l, const char *what,
                    const struct config_list *list)
{
  if (list->count == 0)
    {
      if (*what != '\0')
        screen_lines_add (l, THEME_TEXT, "  %-12s %s", what, _ ("none"));
      return;
    }
  for (size_t i = 0; i < list->count; i++)
    screen_lines_add (l, THEME_TEXT, "  %-12s %s", i == 0 ? what : "",
                      list->items[i]);
}

/* A row whose setting takes effect only while confinement is on.  */
static void
sandbox_panel_off (struct screen_lines *l, const char *what)
{
  screen_lines_add (l, THEME_TEXT, "  %-12s %s", what,
                    _ ("not restricted: confinement is off"));
}

/* The network row: closed, or the domains the host proxy lets through.  */
static void
sandbox_panel_network (const struct config *cfg, struct screen_lines *l)
{
  const struct config_list *d = &cfg->net_domains;
  if (d->count == 0)
    {
      screen_lines_add (l, THEME_TEXT, "  %-12s %s", _ ("network"),
                        _ ("closed"));
      return;
    }
  screen_lines_add (l, THEME_TEXT,
                    P_ ("  %-12s %zu domain, through the host proxy",
                        "  %-12s %zu domains, through the host proxy",
                        d->count),
                    _ ("network"), d->count);
  sandbox_panel_list (l, "", d);
}

/* The Settings tab: what holds for a command in the mode configured.
 * Unconfined, a command reaches every path and address the user can, and
 * only the host's own ceilings apply: each row says so rather than show a
 * restriction that is not there.  */
static void
sandbox_panel_settings (const struct config *cfg, const char *workspace,
                        struct screen_lines *l)
{
  bool on = cfg->sandbox_enabled;
  screen_lines_add (l, on ? THEME_SUCCESS : THEME_WARNING, "  %-12s %s (%s)",
                    _ ("enabled"), on ? _ ("yes") : _ ("no"),
                    sandbox_panel_origin (cfg));
  screen_lines_add (l, THEME_TEXT, "  %-12s %s", _ ("backend"),
                    on ? (cfg->sandbox_backend != NULL
                              ? cfg->sandbox_backend
                              : SANDBOX_REGISTRY_DEFAULT)
                       : _ ("compat (unconfined)"));
  screen_lines_add (l, THEME_TEXT, "  %-12s %s", _ ("workspace"), workspace);
  if (!on)
    {
      sandbox_panel_off (l, _ ("writable"));
      sandbox_panel_off (l, _ ("read-only"));
      sandbox_panel_off (l, _ ("network"));
      screen_lines_add (l, THEME_TEXT,
                        _ ("  %-12s output %" PRIu64 " bytes · %.0f s a "
                           "command · %" PRIu64 " at once · cpu, open files: "
                           "not restricted"),
                        _ ("limits"), cfg->output_bytes, cfg->command_seconds,
                        cfg->concurrency);
      return;
    }
  screen_lines_add (l, THEME_TEXT, "  %-12s %s", _ ("writable"),
                    _ ("the workspace"));
  sandbox_panel_list (l, "", &cfg->fs_writable);
  sandbox_panel_list (l, _ ("read-only"), &cfg->fs_read_only);
  sandbox_panel_network (cfg, l);
  screen_lines_add (l, THEME_TEXT,
                    _ ("  %-12s output %" PRIu64 " bytes · cpu %" PRIu64
                       " s · %" PRIu64
                       " open files · %.0f s a command · %" PRIu64 " at once"),
                    _ ("limits"), cfg->output_bytes, cfg->cpu_seconds,
                    cfg->open_files, cfg->command_seconds, cfg->concurrency);
}

/* How a command would fare here, in the report's words: ready, refused
 * (the backend's claims do not hold the policy) or unavailable.  Only
 * asked while confinement is enabled.  */
static enum inspect_status
sandbox_panel_status (const struct config *cfg, const char *workspace)
{
  struct inspect_backend_info info;
  struct inspect_dependencies deps;
  struct policy_input in;
  struct cr_error *err = NULL;
  enum inspect_status status = INSPECT_READY;

  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  if (inspect_dependencies (&deps, &in, &info, &err) < 0)
    {
      cr_error_free (err);
      status = INSPECT_FAILED;
    }
  else if (!deps.available)
    status = INSPECT_UNAVAILABLE;
  else if (!deps.holds_policy)
    status = INSPECT_REFUSED;
  if (status != INSPECT_FAILED)
    inspect_dependencies_clear (&deps);
  inspect_backend_info_clear (&info);
  return status;
}

/* The MCP servers rows of the Settings tab: each configured server, its
 * name padded to the longest, and whether it would run confined (the
 * words of `crucible sandbox inspect`), or none.  */
static void
sandbox_panel_servers (const struct config *cfg, const char *workspace,
                       struct screen_lines *l)
{
  const char *what = _ ("MCP servers");
  int width = 0;

  if (cfg->n_mcp_servers == 0)
    {
      screen_lines_add (l, THEME_TEXT, "  %-12s %s", what, _ ("none"));
      return;
    }
  enum inspect_status status = cfg->sandbox_enabled
                                   ? sandbox_panel_status (cfg, workspace)
                                   : INSPECT_READY;
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    if ((int) strlen (cfg->mcp_servers[i].name) > width)
      width = (int) strlen (cfg->mcp_servers[i].name);
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    {
      const struct mcp_server_config *m = &cfg->mcp_servers[i];
      struct inspect_server s
          = { .name = m->name,
              .optional = m->optional,
              .disabled = mcpservers_disabled (cfg, m->name) };
      cleanup_free char *words
          = inspect_server_words (&s, cfg->sandbox_enabled, status);
      bool confined
          = inspect_server_run (&s, cfg->sandbox_enabled, status, NULL)
            == INSPECT_SERVER_CONFINED;
      screen_lines_add (l, confined ? THEME_TEXT : THEME_WARNING,
                        "  %-12s %-*s  %s", i == 0 ? what : "", width, m->name,
                        words);
    }
}

/* One requirement: ✓ or ✗, its name, and what was found or why not.  */
static void
sandbox_panel_dep (struct screen_lines *l, bool ok, const char *name,
                   const char *detail)
{
  screen_lines_add (l, ok ? THEME_SUCCESS : THEME_ERROR, "  %s %-18s %s",
                    ok ? "\xe2\x9c\x93" : "\xe2\x9c\x97", name, detail);
}

/* One line the backend's entry gives its Dependencies tab.  */
static void
sandbox_panel_part (void *data, enum sandbox_dep_state state, const char *name,
                    const char *detail)
{
  struct screen_lines *l = data;
  if (state == SANDBOX_DEP_NOTE)
    screen_lines_add (l, THEME_DIM, "    %-18s %s", name, detail);
  else
    sandbox_panel_dep (l, state == SANDBOX_DEP_MET, name, detail);
}

/* The parts of the backend the configuration selects, as its entry in
 * sandbox/registry.c lists them.  */
static void
sandbox_panel_parts (const struct config *cfg, struct screen_lines *l)
{
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  if (e != NULL)
    e->dependencies (sandbox_panel_part, l);
}

/* The probe: the backend started with the options crucible needs.  */
static void
sandbox_panel_probe (const struct config *cfg, struct screen_lines *l)
{
  struct sandbox_backend_config bc;
  config_backend_input (cfg, &bc);
  const struct sandbox_registry_entry *e = sandbox_registry_selected (&bc);
  struct sandbox_backend *b
      = e != NULL ? sandbox_registry_backend_new (&bc, e->id) : NULL;
  if (b == NULL)
    return;
  struct sandbox_probe probe = { 0 };
  struct cr_error *err = NULL;
  if (sandbox_probe (b, &probe, &err) < 0)
    sandbox_panel_dep (l, false, _ ("probe"), err->msg);
  else if (!probe.usable || !probe.confined)
    sandbox_panel_dep (l, false, _ ("probe"),
                       probe.reason != NULL ? probe.reason : "");
  else
    {
      cleanup_free char *ok
          = xasprintf (_ ("the options crucible needs work (%s)"),
                       probe.version != NULL ? probe.version : "?");
      sandbox_panel_dep (l, true, _ ("probe"), ok);
    }
  cr_error_free (err);
  sandbox_probe_clear (&probe);
  sandbox_backend_free (b);
}

/* Whether the backend's claims hold the policy confinement would use.  */
static void
sandbox_panel_claims (const struct config *cfg, const char *workspace,
                      struct screen_lines *l)
{
  struct inspect_backend_info info;
  struct inspect_dependencies deps;
  struct policy_input in;
  struct cr_error *err = NULL;
  config_policy_input (cfg, workspace, &in);
  front_backend_info (cfg, &info);
  if (inspect_dependencies (&deps, &in, &info, &err) < 0)
    {
      sandbox_panel_dep (l, false, _ ("policy"), err->msg);
      cr_error_free (err);
      inspect_backend_info_clear (&info);
      return;
    }
  sandbox_panel_dep (l, deps.holds_policy, _ ("policy"),
                     deps.holds_policy
                         ? _ ("the backend's claims hold the confined policy")
                     : deps.refusal != NULL ? deps.refusal
                                            : "");
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (deps.missing[f])
      screen_lines_add (l, THEME_ERROR, "      %s: %s",
                        sandbox_feature_name ((enum sandbox_feature) f),
                        _ ("required and not enforced"));
  inspect_dependencies_clear (&deps);
  inspect_backend_info_clear (&info);
}

/* Free the panel's state.  */
static void
sandbox_panel_free (void *state)
{
  struct sandbox_panel *p = state;
  screen_lines_free (&p->settings);
  screen_lines_free (&p->deps);
  free (p);
}

/* The panel's lines for cols columns: the tabs, then the one shown.  */
static void
sandbox_panel_draw (void *state, int cols, struct screen_lines *out)
{
  struct sandbox_panel *p = state;
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  const char *settings = _ ("Settings"), *deps = _ ("Dependencies");
  screen_lines_add (out, THEME_ACCENT, "%s  %s%s%s   %s%s%s", _ ("Sandbox"),
                    p->tab == 0 ? "[" : " ", settings, p->tab == 0 ? "]" : " ",
                    p->tab == 1 ? "[" : " ", deps, p->tab == 1 ? "]" : " ");
  screen_lines_add (out, THEME_TEXT, "%s", "");
  const struct screen_lines *tab = p->tab == 0 ? &p->settings : &p->deps;
  for (size_t i = 0; i < tab->n; i++)
    screen_lines_add (out, tab->v[i].role, "%s", tab->v[i].text);
  screen_lines_add (out, THEME_TEXT, "%s", "");
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("tab switches \xc2\xb7 esc to close \xc2\xb7 /sandbox "
                       "enable|disable changes it"));
}

/* A key while the panel is open: Tab and the arrows switch, Esc and
 * Enter close.  */
static void
sandbox_panel_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct sandbox_panel *p = state;
  if (key->type == TERMKEY_TYPE_KEYSYM && key->code.sym == TERMKEY_SYM_TAB)
    p->tab = !p->tab;
  else if (key->type == TERMKEY_TYPE_KEYSYM
           && (key->code.sym == TERMKEY_SYM_ESCAPE
               || key->code.sym == TERMKEY_SYM_ENTER))
    p->host->close (p->host->data);
  else if (key->type == TERMKEY_TYPE_KEYSYM
           && (key->code.sym == TERMKEY_SYM_LEFT
               || key->code.sym == TERMKEY_SYM_RIGHT))
    p->tab = key->code.sym == TERMKEY_SYM_RIGHT;
  p->host->dirty (p->host->data);
}

const struct panel_ops sandbox_panel_ops = {
  .name = "sandbox",
  .draw = sandbox_panel_draw,
  .key = sandbox_panel_key,
  .free = sandbox_panel_free,
};

struct panel
sandbox_panel_new (const struct panel_host *host, const struct config *cfg,
                   const char *workspace)
{
  struct sandbox_panel *p = xcalloc (1, sizeof *p);
  p->host = host;
  sandbox_panel_settings (cfg, workspace, &p->settings);
  sandbox_panel_servers (cfg, workspace, &p->settings);
  sandbox_panel_parts (cfg, &p->deps);
  sandbox_panel_probe (cfg, &p->deps);
  sandbox_panel_claims (cfg, workspace, &p->deps);
  return (struct panel){ .ops = &sandbox_panel_ops, .state = p };
}
