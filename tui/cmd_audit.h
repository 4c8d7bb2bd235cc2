/* `crucible sandbox audit [--json] [--backend ID]`: the conformance suite
 * (sandbox/conformance) over a backend, in the current directory.  */
#ifndef CRUCIBLE_TUI_CMD_AUDIT_H
#define CRUCIBLE_TUI_CMD_AUDIT_H

/* Exit statuses (doc/strings.md, "crucible sandbox audit").  */
#define AUDIT_EXIT_PASS 0       /* no fault */
#define AUDIT_EXIT_FAULT 1      /* a claim was overclaimed or withheld */
#define AUDIT_EXIT_USAGE 2      /* an unknown option or backend */
#define AUDIT_EXIT_NO_BACKEND 3 /* no backend could be probed */
#define AUDIT_EXIT_FAILED 4     /* the audit could not be run */

/* `crucible sandbox audit ...` (argv[0] is "audit").  */
int cmd_audit (int argc, char **argv);

#endif
