/* `crucible mcp`: a Model Context Protocol server on standard input and
 * output (JSON-RPC 2.0, one message per line), exposing the tools `bash`
 * and `bash_output` over the supervisor.  */
#ifndef CRUCIBLE_TUI_CMD_MCP_H
#define CRUCIBLE_TUI_CMD_MCP_H

/* The protocol version this server speaks.  */
#define MCP_PROTOCOL_VERSION "2025-06-18"

int cmd_mcp (int argc, char **argv);

#endif
