/* `crucible session`: a line-oriented session for scripts and tests.
 * Prompts are read from standard input, one per line; the transcript is
 * written to standard output as lines.  */
#ifndef CRUCIBLE_TUI_CMD_SESSION_H
#define CRUCIBLE_TUI_CMD_SESSION_H

/* How long the session waits, once it stops every command, for them and
 * the agent to be gone.  */
#define SESSION_EXIT_WAIT_MS 10000

/* The exit status when the session could not start or could not confirm
 * that everything it started has ended (as `crucible run` refusing).  */
#define SESSION_EXIT_FAILED 125

int cmd_session (int argc, char **argv);

#endif
