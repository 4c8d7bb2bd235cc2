/* The /sandbox panel: a Settings tab (enabled, where that came from, the
 * backend, the roots, the network, the limits) and a Dependencies tab
 * (bubblewrap, the broker, user namespaces, overlay support, the probe of
 * the backend and whether its claims hold the confined policy: each found
 * or not, and why), from the probe and inspection functions rather than
 * the report's text.  Tab switches, Esc closes.  */
#ifndef CRUCIBLE_TUI_SANDBOX_PANEL_H
#define CRUCIBLE_TUI_SANDBOX_PANEL_H

#include <termkey.h>

struct ui;
struct screen_lines;
struct sandbox_panel;

/* Gather what both tabs show (this probes the backend: a short bwrap run). */
struct sandbox_panel *sandbox_panel_new (struct ui *ui);
void sandbox_panel_free (struct sandbox_panel *p);

void sandbox_panel_lines (struct ui *ui, int cols, struct screen_lines *out);
void sandbox_panel_key (struct ui *ui, TermKey *tk, const TermKeyKey *key);

#endif
