/* `crucible mcp`: a Model Context Protocol server on standard input and
 * output (JSON-RPC 2.0, one message per line), exposing the tools `bash`
 * and `bash_output` over the supervisor.  */
#ifndef CRUCIBLE_TUI_CMD_MCP_H
#define CRUCIBLE_TUI_CMD_MCP_H

#include <stdint.h>

/* The protocol version this server speaks.  */
#define MCP_PROTOCOL_VERSION "2025-06-18"

int cmd_mcp (int argc, char **argv);

/* Asking about a confined command's connection to a name its policy does
 * not allow (the proxy's asker hook, core/proxy.h; the answers map to
 * PROXY_ANSWER_REFUSE and PROXY_ANSWER_COMMAND).  The client may be a
 * model, so the only grant offered is "this command": never the
 * workspace's configuration.  */
enum mcp_net_answer
{
  MCP_NET_REFUSE,
  MCP_NET_COMMAND,
};

struct mcp;
typedef void (*mcp_net_answer_fn) (void *data, uint64_t question,
                                   enum mcp_net_answer a);

/* Ask through elicitation whether the connection may reach name (made by
 * the MCP server server, or with NULL by a command); fn hears the answer
 * exactly once: refused at once when the client cannot be asked, when it
 * declines or fails, and when MCP_NET_WAIT_MS pass.  */
#define MCP_NET_WAIT_MS 60000u
void mcp_net_ask (struct mcp *m, uint64_t question, const char *name,
                  const char *server, mcp_net_answer_fn fn, void *data);

#endif
