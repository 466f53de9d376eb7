// A transcription of the original agent's RpcClient (reference
// original-behavior.md §6.5: RC:44-55, 73-78, 307-319, 462-527), as far
// as the retry-relevant calls go: each request gets id "req_<n>" after
// its fields, a call resolves on the response with its id (success is
// not checked by setAutoRetry/abortRetry), and only the agent events
// reach listeners (auto_retry_* lines are written but filtered out).
// Usage: node rpcclient.js BIN [BINARGS...]; the environment is passed on.
// It prints one JSON object: what the calls returned and the events seen.
"use strict";
const { spawn } = require("child_process");

const AGENT_EVENTS = new Set(["agent_start", "agent_end", "turn_start", "turn_end", "message_start",
  "message_update", "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end"]);

class RpcClient {
  #proc; #n = 0; #pending = new Map(); #listeners = []; #buf = ""; #stderr = ""; raw = [];
  constructor(bin, args) {
    this.#proc = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
    this.#proc.stdout.setEncoding("utf8");
    this.#proc.stdout.on("data", (chunk) => {
      this.#buf += chunk;
      let i;
      while ((i = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 1);
        this.#handleLine(line);
      }
    });
    this.#proc.stderr.on("data", (d) => { this.#stderr += d; });
  }
  onEvent(fn) { this.#listeners.push(fn); }
  #handleLine(line) {
    let obj;
    try { obj = JSON.parse(line); } catch { return; }
    this.raw.push(obj.type);
    if (obj.type === "response" && obj.id && this.#pending.has(obj.id)) {
      const p = this.#pending.get(obj.id);
      this.#pending.delete(obj.id);
      clearTimeout(p.timer);
      p.resolve(obj);
      return;
    }
    if (AGENT_EVENTS.has(obj.type)) for (const fn of this.#listeners) fn(obj);
  }
  #send(command) {
    const id = `req_${++this.#n}`;
    const full = { ...command, id };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`Timeout waiting for response to ${command.type}. Stderr: ${this.#stderr}`));
      }, 30000);
      this.#pending.set(id, { resolve, timer });
      this.#proc.stdin.write(JSON.stringify(full) + "\n");
    });
  }
  #data(r) { if (!r.success) throw new Error(r.error); return r.data; }
  async prompt(message) { this.#data(await this.#send({ type: "prompt", message })); }
  async getState() { return this.#data(await this.#send({ type: "get_state" })); }
  async setAutoRetry(enabled) { await this.#send({ type: "set_auto_retry", enabled }); }
  async abortRetry() { await this.#send({ type: "abort_retry" }); }
  async abort() { await this.#send({ type: "abort" }); }
  // advance is the simulator's own command (virtual time), sent the same way.
  async advance(ms) { return this.#data(await this.#send({ type: "advance", ms })); }
  stop() { this.#proc.stdin.end(); return new Promise((r) => this.#proc.on("close", (code) => r(code))); }
}

(async () => {
  const [bin, ...args] = process.argv.slice(2);
  const client = new RpcClient(bin, args);
  const events = [];
  client.onEvent((e) => events.push(e.type));
  const out = {};
  out.before = await client.getState();
  await client.prompt("hi");
  out.during = await client.getState();
  await client.setAutoRetry(true);
  await client.advance(2000);
  out.after = await client.getState();
  await client.abortRetry();
  await client.setAutoRetry(false);
  out.disabled = await client.getState();
  out.events = events;
  out.exit = await client.stop();
  out.raw = client.raw;
  process.stdout.write(JSON.stringify(out) + "\n");
})().catch((e) => { process.stderr.write(String(e.stack || e) + "\n"); process.exit(1); });
