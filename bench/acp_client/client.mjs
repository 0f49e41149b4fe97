#!/usr/bin/env node
// The TypeScript SDK's example client (agentclientprotocol/typescript-sdk src/examples/client.ts),
// made non-interactive: it starts the agent command given after `--`, runs one prompt, answers a
// permission request with the first "allow" option, serves fs/read_text_file from disk, and prints
// one JSON line of what it saw. `node client.mjs [--prompt TEXT] -- minicode --acp`
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { Writable, Readable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 0 || split === argv.length - 1) {
  console.error("usage: node client.mjs [--prompt TEXT] -- AGENT-COMMAND...");
  process.exit(2);
}
const own = argv.slice(0, split);
const command = argv.slice(split + 1);
const promptText = own[0] === "--prompt" ? own[1] : "Hello, agent!";

const seen = { updates: {}, text: "", toolCalls: [], permissions: [], reads: [] };

class CheckClient {
  async requestPermission(params) {
    seen.permissions.push({ title: params.toolCall.title, options: params.options.map((o) => o.kind) });
    const allow = params.options.find((o) => o.kind.startsWith("allow")) ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  }

  async sessionUpdate(params) {
    const update = params.update;
    seen.updates[update.sessionUpdate] = (seen.updates[update.sessionUpdate] ?? 0) + 1;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      seen.text += update.content.text;
    } else if (update.sessionUpdate === "tool_call") {
      seen.toolCalls.push({ title: update.title, kind: update.kind, status: update.status });
    } else if (update.sessionUpdate === "tool_call_update" && update.status) {
      seen.toolCalls.push({ id: update.toolCallId, status: update.status });
    }
  }

  async writeTextFile(params) {
    throw acp.RequestError.methodNotFound("fs/write_text_file");
  }

  async readTextFile(params) {
    seen.reads.push(params.path);
    return { content: await readFile(params.path, "utf8") };
  }
}

async function main() {
  const agentProcess = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const input = Writable.toWeb(agentProcess.stdin);
  const output = Readable.toWeb(agentProcess.stdout);
  const connection = new acp.ClientSideConnection((_agent) => new CheckClient(), acp.ndJsonStream(input, output));
  let code = 0;
  try {
    const init = await connection.initialize({
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
    });
    const session = await connection.newSession({ cwd: process.cwd(), mcpServers: [] });
    const started = Date.now();
    const result = await connection.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: promptText }] });
    console.log(JSON.stringify({
      protocolVersion: init.protocolVersion, agent: init.agentInfo, sessionId: session.sessionId,
      modes: session.modes?.availableModes.map((m) => m.id), stopReason: result.stopReason,
      promptMs: Date.now() - started, ...seen,
    }));
  } catch (error) {
    console.error("[client] error:", error);
    code = 1;
  } finally {
    agentProcess.stdin.end();
    await new Promise((resolve) => agentProcess.on("exit", resolve));
    process.exit(code);
  }
}

main();
