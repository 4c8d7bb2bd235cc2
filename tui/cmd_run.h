/* `crucible run`: one bash call, no UI, printing the model's result.  */
#ifndef CRUCIBLE_TUI_CMD_RUN_H
#define CRUCIBLE_TUI_CMD_RUN_H

/* Exit statuses beyond the command's own: stopped at its deadline; refused
 * or failed before starting it; stopped at the output ceiling (128 plus
 * SIGXFSZ, the signal for passing a file-size limit).  */
#define RUN_EXIT_TIMEOUT 124
#define RUN_EXIT_REFUSED 125
#define RUN_EXIT_CEILING 153

int cmd_run (int argc, char **argv);

#endif
