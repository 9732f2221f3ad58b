// A scripted MCP session against `sandrun mcp`, driven by the official
// TypeScript SDK client (tests/integration/mcp.bats runs it).
//   node client.mjs RUNTIME [mcp args...]
// Env: MCP_SESSIONS=kernel|files|none (what the runtime's sessions can do),
//      MCP_MARK: a unique number the cancelled run sleeps for (its process
//      must be gone afterwards).
// Prints "ok - NAME" per check; exits 1 at the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, readFileSync } from "node:fs";

const [runtime, ...mcpArgs] = process.argv.slice(2);
const sessions = process.env.MCP_SESSIONS ?? "none";
const mark = process.env.MCP_MARK ?? String(31000 + (process.pid % 1000));

function check(cond, name, detail) {
  if (!cond) {
    console.log(`not ok - ${name}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok - ${name}`);
}

async function rejects(p, code, name) {
  try {
    await p;
  } catch (e) {
    return check(e.code === code, name, { code: e.code, message: e.message });
  }
  check(false, name, "resolved");
}

// Processes whose command line starts with `needle`, from /proc.
function processesWith(needle) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (cmd.startsWith(needle) && Number(pid) !== process.pid) found.push(`${pid}: ${cmd}`);
    } catch {}
  }
  return found;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const env = process.env.FAKE_SANDRUN_STATE ? { FAKE_SANDRUN_STATE: process.env.FAKE_SANDRUN_STATE } : undefined;
const transport = new StdioClientTransport({ command: runtime, args: ["mcp", ...mcpArgs], env, stderr: "inherit" });
const client = new Client({ name: "sandrun-tests", version: "1.0.0" });
await client.connect(transport);

check(client.getServerVersion()?.name === "sandrun", "initialize: the server is sandrun", client.getServerVersion());
await client.ping();
check(true, "ping");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(
  JSON.stringify(names) ===
    JSON.stringify(["run_code", "session_exec", "session_read_file", "session_start", "session_stop", "session_write_file"]),
  "tools/list: the six tools",
  names,
);
const runCode = tools.find((t) => t.name === "run_code");
check(/no network/.test(runCode.description) && /timeout 5s/.test(runCode.description) && /memory 64M/.test(runCode.description),
  "run_code's description declares the constraints", runCode.description);
check(runCode.outputSchema?.type === "object", "run_code has an outputSchema");

// The SDK validates structuredContent against the outputSchema itself.
let r = await client.callTool({ name: "run_code", arguments: { language: "python", code: "print(6 * 7)" } });
check(!r.isError && r.structuredContent.exit_code === 0 && r.structuredContent.stdout === "42\n",
  "run_code python: the receipt", r);
check(r.content[0].type === "text" && /exit code 0/.test(r.content[0].text) && /42/.test(r.content[0].text),
  "run_code: a text summary", r.content);

r = await client.callTool({
  name: "run_code",
  arguments: { language: "shell", code: "cat in/data.txt; echo made > out.txt; exit 3", files: { "in/data.txt": "hello from files\n" } },
});
check(r.structuredContent.exit_code === 3 && r.structuredContent.stdout === "hello from files\n",
  "run_code shell: files placed in /work, exit status kept", r.structuredContent);
check(r.structuredContent.files.some((f) => f.path.endsWith("out.txt")), "run_code: files written are listed", r.structuredContent.files);
check(/exit code 3/.test(r.content[0].text) && /out\.txt/.test(r.content[0].text), "run_code: the summary names the failure and the file", r.content[0].text);

// A limit: the server's cap is 5 s; the call asks for 1 s.
r = await client.callTool({ name: "run_code", arguments: { language: "python", code: "while True: pass", timeout: 1 } });
check(r.structuredContent.limit_exceeded === "timeout" && r.structuredContent.exit_code !== 0,
  "run_code: a run over its timeout is stopped and named", r.structuredContent);
check(/timeout/.test(r.content[0].text), "run_code: the summary says which limit", r.content[0].text);

// Bad calls are JSON-RPC errors (-32602), and the server goes on.
await rejects(client.callTool({ name: "run_code", arguments: { language: "cobol", code: "x" } }), -32602, "bad language: invalid params");
await rejects(client.callTool({ name: "run_code", arguments: { code: "x" } }), -32602, "missing argument: invalid params");
await rejects(client.callTool({ name: "run_code", arguments: { language: "shell", code: "true", network: true } }), -32602, "unknown argument: invalid params");
await rejects(client.callTool({ name: "rm_rf", arguments: {} }), -32602, "unknown tool: invalid params");
await rejects(client.callTool({ name: "run_code", arguments: { language: "shell", code: "true", files: { "../escape": "x" } } }), -32602, "a file outside /work: invalid params");
await rejects(client.callTool({ name: "session_exec", arguments: { session: "not-mine", command: "true" } }), -32602, "a session the server did not start: invalid params");
await rejects(client.request({ method: "resources/list", params: {} }, (await import("@modelcontextprotocol/sdk/types.js")).ListResourcesResultSchema), -32601, "unknown method: method not found");

// Sessions.
if (sessions === "none") {
  console.log("ok - # SKIP sessions: this runtime has no `sandbox start` yet");
} else {
  r = await client.callTool({ name: "session_start", arguments: {} });
  const s = r.structuredContent?.session;
  check(!r.isError && typeof s === "string", "session_start", r);
  r = await client.callTool({ name: "session_write_file", arguments: { session: s, path: "notes.txt", content: "step one\n" } });
  check(!r.isError && r.structuredContent.path === "/work/notes.txt", "session_write_file", r);
  r = await client.callTool({ name: "session_exec", arguments: { session: s, command: "cat notes.txt; echo step two >> notes.txt" } });
  check(r.structuredContent?.stdout === "step one\n", "session_exec sees the file written before", r);
  r = await client.callTool({ name: "session_read_file", arguments: { session: s, path: "/work/notes.txt" } });
  check(r.structuredContent?.content === "step one\nstep two\n" && r.structuredContent.encoding === "utf-8",
    "session_read_file sees what the execution wrote", r);
  r = await client.callTool({ name: "session_write_file", arguments: { session: s, path: "bin.dat", content: "AP8=", encoding: "base64" } });
  r = await client.callTool({ name: "session_read_file", arguments: { session: s, path: "bin.dat" } });
  check(r.structuredContent?.encoding === "base64" && r.structuredContent.content === "AP8=", "binary files travel as base64", r);
  await rejects(client.callTool({ name: "session_read_file", arguments: { session: s, path: "/etc/passwd" } }), -32602, "a path outside /work and /tmp: invalid params");
  if (sessions === "kernel") {
    await client.callTool({ name: "run_code", arguments: { session: s, language: "python", code: "x = 41" } });
    r = await client.callTool({ name: "run_code", arguments: { session: s, language: "python", code: "print(x + 1)" } });
    check(r.structuredContent?.stdout === "42\n", "run_code in a session: the interpreter's state persists", r);
  }
  r = await client.callTool({ name: "session_stop", arguments: { session: s } });
  check(!r.isError && r.structuredContent.stopped === true, "session_stop", r);
  await rejects(client.callTool({ name: "session_exec", arguments: { session: s, command: "true" } }), -32602, "a stopped session is gone");
  // One left running on purpose: closing the client must stop it (mcp.bats checks).
  r = await client.callTool({ name: "session_start", arguments: {} });
  check(!r.isError, "a session left for the server to stop", r);
}

// Cancellation: notifications/cancelled stops the running execution.
const ac = new AbortController();
const long = client.callTool({ name: "run_code", arguments: { language: "shell", code: `sleep ${mark}` } }, undefined, { signal: ac.signal });
for (let i = 0; i < 200 && processesWith(`sleep ${mark}`).length === 0; i++) await sleep(50);
check(processesWith(`sleep ${mark}`).length > 0, "the long run started");
ac.abort("test");
let cancelled = false;
try {
  await long;
} catch (e) {
  cancelled = true;
}
check(cancelled, "the cancelled call rejects on the client");
for (let i = 0; i < 200 && processesWith(`sleep ${mark}`).length > 0; i++) await sleep(50);
check(processesWith(`sleep ${mark}`).length === 0, "cancel stopped the execution", processesWith(`sleep ${mark}`));
await client.ping();
r = await client.callTool({ name: "run_code", arguments: { language: "shell", code: "echo still here" } });
check(r.structuredContent?.stdout === "still here\n", "the server serves calls after a cancellation", r);

await client.close();
console.log("ok - closed");
