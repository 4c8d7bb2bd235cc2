// A test-only MCP client built on the official SDK (@modelcontextprotocol/sdk,
// pinned in tests/mcp-servers): starts `crucible mcp` on stdio, runs the steps
// given as arguments, and prints what it learns, one fact a line, for the
// integration tests to assert on (tests/integration/mcp-host*.sh):
//
//   tool NAME · call NAME ok|is_error, the result's text, "end" ·
//   call NAME error: MESSAGE · elicited MESSAGE · list_changed ·
//   exec: OUTPUT · stderr: LINE (crucible's) · exit STATUS
//
// node mcp_sdk_client.cjs CRUCIBLE [--elicit accept|decline] STEP...
//   list · call NAME JSON · wait-changed · wait-tool NAME · sleep MS ·
//   exec SHELL-LINE
// (wait-tool: list the tools until NAME is among them, 30 s at most, as a
// server being restarted offers none until it is ready again.)
// Run with NODE_PATH naming tests/mcp-servers/node_modules.  After the last
// step crucible's input is closed (the end of the run) and its exit awaited
// (60 s); "kill" as a step ends it with SIGTERM instead.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const types = require("@modelcontextprotocol/sdk/types.js");
const { execSync } = require("node:child_process");

const out = (s) => process.stdout.write(s + "\n");

async function main() {
  const argv = process.argv.slice(2);
  const crucible = argv.shift();
  let elicit = "decline";
  if (argv[0] === "--elicit") {
    argv.shift();
    elicit = argv.shift();
  }
  const transport = new StdioClientTransport({
    command: crucible, args: ["mcp"], cwd: process.cwd(), env: process.env,
    stderr: "pipe",
  });
  let buffered = "";
  transport.stderr.on("data", (d) => {
    buffered += d.toString();
    let i;
    while ((i = buffered.indexOf("\n")) >= 0) {
      out("stderr: " + buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
    }
  });
  const client = new Client({ name: "crucible-test", version: "1.0.0" },
                            { capabilities: { elicitation: {} } });
  let changed = 0;
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => {
    changed++;
    out("list_changed");
  });
  client.setRequestHandler(types.ElicitRequestSchema, (req) => {
    out("elicited " + req.params.message.replace(/\n/g, " | "));
    return elicit === "accept"
      ? { action: "accept", content: { allow: true } }
      : { action: "decline" };
  });
  await client.connect(transport);
  const proc = transport._process;
  const exited = new Promise((resolve) => proc.once("close", (code, sig) =>
    resolve(code !== null ? code : 128 + (require("os").constants.signals[sig] || 0))));
  let killed = false;
  while (argv.length > 0) {
    const step = argv.shift();
    if (step === "list") {
      const r = await client.listTools();
      for (const t of r.tools) out("tool " + t.name);
    } else if (step === "call") {
      const name = argv.shift();
      const args = JSON.parse(argv.shift());
      try {
        const r = await client.callTool({ name, arguments: args }, undefined,
                                        { timeout: 120000 });
        const text = (r.content || []).map((c) => c.text || "").join("");
        out(`call ${name} ${r.isError ? "is_error" : "ok"}\n${text}\nend`);
      } catch (e) {
        out(`call ${name} error: ${e.message}`);
      }
    } else if (step === "wait-changed") {
      const until = Date.now() + 30000;
      while (changed === 0 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      changed = 0;
    } else if (step === "wait-tool") {
      const name = argv.shift();
      const until = Date.now() + 30000;
      while (Date.now() < until) {
        const r = await client.listTools();
        if (r.tools.some((t) => t.name === name)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } else if (step === "sleep") {
      await new Promise((r) => setTimeout(r, Number(argv.shift())));
    } else if (step === "exec") {
      const line = argv.shift();
      let text;
      try {
        text = execSync(line, { shell: "/bin/sh", encoding: "utf8" });
      } catch (e) {
        text = (e.stdout || "") + "[status " + e.status + "]";
      }
      out("exec: " + text.trim());
    } else if (step === "kill") {
      killed = true;
      proc.kill("SIGTERM");
    } else {
      throw new Error("unknown step " + step);
    }
  }
  if (!killed)
    proc.stdin.end();
  const timer = setTimeout(() => { out("exit timeout"); proc.kill("SIGKILL"); }, 60000);
  const code = await exited;
  clearTimeout(timer);
  if (buffered !== "")
    out("stderr: " + buffered);
  out("exit " + code);
  process.exit(0);
}

main().catch((e) => {
  out("client failed: " + (e && e.message));
  process.exit(1);
});
