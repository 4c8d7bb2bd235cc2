/* `crucible run`: one bash call, no UI, printing the model's result.  */
#ifndef CRUCIBLE_TUI_CMD_RUN_H
#define CRUCIBLE_TUI_CMD_RUN_H

/* Exit statuses beyond the command's own.  */
#define RUN_EXIT_TIMEOUT 124 /* stopped at its deadline */
#define RUN_EXIT_REFUSED 125 /* crucible refused or failed before starting it */
#define RUN_EXIT_CEILING 153 /* 128+SIGXFSZ: stopped at the output ceiling */

int cmd_run (int argc, char **argv);

#endif
