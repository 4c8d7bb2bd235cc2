/* The /sandbox panel: a Settings tab (enabled, where that came from, the
 * backend, the roots, the network, the limits) and a Dependencies tab
 * (bubblewrap, the broker, user namespaces, overlay support, the probe of
 * the backend and whether its claims hold the confined policy: each found
 * or not, and why), from the probe and inspection functions rather than
 * the report's text.  Tab switches, Esc closes.  */
#ifndef CRUCIBLE_TUI_SANDBOX_PANEL_H
#define CRUCIBLE_TUI_SANDBOX_PANEL_H

#include "core/config.h"
#include "tui/panel.h"

extern const struct panel_ops sandbox_panel_ops;

/* Gather what both tabs show for cfg and workspace (this probes the
 * backend: a short bwrap run) and open on Settings.  Nothing is kept of
 * cfg or workspace.  */
struct panel sandbox_panel_new (const struct panel_host *host,
                                const struct config *cfg,
                                const char *workspace);

#endif
