/* `crucible sandbox quarantine [list] | restore ID | drop ID`: what
 * publication kept because a rollback could not be proved.  */
#ifndef CRUCIBLE_TUI_CMD_QUARANTINE_H
#define CRUCIBLE_TUI_CMD_QUARANTINE_H

/* argv[0] is "quarantine".  Exits 0 when done, 1 when it failed, 2 on a
 * usage error.  */
int cmd_quarantine (int argc, char **argv);

#endif
