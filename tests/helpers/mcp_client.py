"""The shell tests' MCP client of `crucible mcp` (tests/integration/ports.sh,
tests/integration/network.sh, tests/security/netattack.sh): it starts
`crucible mcp`, makes the handshake, and calls tools one at a time over
the standard streams, one JSON-RPC message a line.

A test's inline script imports it by the directory it is given:

    import sys; sys.path.insert(0, sys.argv[2])
    from mcp_client import start
    mcp = start(sys.argv[1], 120)      # crucible, seconds before giving up
    print(mcp.call(1, "bash", command="echo hi"))

A server that never answers fails the test's checks, not the run: after
the given seconds the client prints that it timed out, kills crucible mcp
and exits 1.
"""
import json
import signal
import subprocess
import sys


class McpClient:
    """One `crucible mcp` (p) and the requests made of it."""

    def __init__(self, crucible, seconds):
        self.p = subprocess.Popen([crucible, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        signal.signal(signal.SIGALRM, self.give_up)
        signal.alarm(seconds)

    def give_up(self, signum, frame):
        """The alarm: say so, end crucible mcp, fail."""
        print("timed out waiting for crucible mcp")
        self.p.kill()
        sys.exit(1)

    def send(self, message):
        """One message, as one line."""
        self.p.stdin.write((json.dumps(message) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, want):
        """The answer to request want (messages before it are skipped), or
        None at the end of crucible mcp's output."""
        while True:
            line = self.p.stdout.readline()
            if not line:
                return None
            message = json.loads(line)
            if message.get("id") == want:
                return message

    def initialize(self):
        """The handshake: initialize, then notifications/initialized."""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18",
                              "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}}})
        self.recv(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, i, tool, **arguments):
        """Call tool as request i: its text content joined, or the answer
        as Python spells it when it holds no result."""
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})
        answer = self.recv(i)
        if answer and "result" in answer:
            return "".join(c.get("text", "")
                           for c in answer["result"]["content"])
        return repr(answer)


def start(crucible, seconds):
    """`crucible mcp` started and initialized, given up after seconds."""
    client = McpClient(crucible, seconds)
    client.initialize()
    return client
