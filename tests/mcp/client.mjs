#!/usr/bin/env node
// End-to-end test of `reflectctl mcp`, driven by the official MCP TypeScript SDK.
//
// Usage: node client.mjs REFLECTD_BIN REFLECTCTL_BIN
//
// Starts a private reflectd (ipc endpoints and a store in a temp dir), talks to
// `reflectctl mcp` as a real MCP client would, and prints one line per step:
// "ok <step>" or "FAIL <step>: <detail>", then "N passed, N failed".
// Exit status: 0 when every step passed, 1 otherwise.
//
// The SDK is used on purpose rather than hand-written JSON-RPC: it applies the
// same schema checks (envelopes, result shapes, outputSchema validation) that
// MCP hosts built on it apply, so a server that passes here works with them.
// Only the protocol-version step talks raw JSON-RPC, because the SDK always
// offers its own latest version and cannot be asked to offer another.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

const NAMESPACE = 'mcp-test';
const MEDALLION_ID = `med:${NAMESPACE}`;
const MEDALLION_URI = `reflectd://medallion/${MEDALLION_ID}`;
const EXPECTED_TOOLS = ['context', 'forget', 'get', 'medallion', 'recall', 'remember', 'revise'];
const LATEST_SERVER_PROTOCOL = '2025-11-25';

// A hung server must fail the step, not stall the test until CTest kills it
// (which would orphan the daemon). The SDK's own default is 60 s per request.
const RPC = { timeout: 15_000 };
const STEP_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 20_000;
const READY_POLL_MS = 100;
const RAW_LINE_TIMEOUT_MS = 5_000;
const RAW_EXIT_TIMEOUT_MS = 5_000;
const DAEMON_STOP_TIMEOUT_MS = 10_000;
const STDERR_KEEP = 64 * 1024;

const REMEMBER_ARGS = {
  content: 'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.',
  namespace: NAMESPACE,
  kind: 'prompt',
  agent_id: 'Caroline',
  timestamp: '2023-05-08T13:57:00Z',
  episode_id: 's1',
  id: 'mcp-1',
};

// ---------------------------------------------------------------------------
// Small helpers

const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' | ');
const show = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

function check(cond, message) {
  if (!cond) throw new Error(message);
}

function expectEq(actual, expected, what) {
  check(isDeepStrictEqual(actual, expected), `${what}: expected ${show(expected)}, got ${show(actual)}`);
}

function textOf(result) {
  return (result?.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

// A successful tool result must carry structuredContent; return it so the
// caller's checks read naturally, and put the server's own text in the failure.
function structured(result, tool) {
  check(!result.isError, `${tool} returned isError: ${oneLine(textOf(result))}`);
  check(
    result.structuredContent && typeof result.structuredContent === 'object',
    `${tool} returned no structuredContent (content: ${oneLine(textOf(result))})`,
  );
  return result.structuredContent;
}

function expectToolError(result, tool, mustMention) {
  const text = textOf(result);
  check(result.isError === true, `${tool}: expected isError true, got ${show(result.isError)} (text: ${oneLine(text)})`);
  check(text.trim() !== '', `${tool}: isError result has no text naming the problem`);
  if (mustMention !== undefined) {
    check(text.includes(mustMention), `${tool}: error text should mention ${show(mustMention)}, got ${show(text)}`);
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Bounded capture of a child's output, printed only if something failed.
function capture(stream) {
  const buf = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk) => {
    buf.text = (buf.text + chunk).slice(-STDERR_KEEP);
  });
  return buf;
}

function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

// Runs a command to completion; never throws for a non-zero exit, so callers
// can report the code and output themselves.
function run(cmd, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = capture(child.stdout);
    const err = capture(child.stderr);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out.text, stderr: err.text });
    });
  });
}

const describeExit = (r) => (r.signal ? `signal ${r.signal}` : `code ${r.code}`);

// Reads newline-delimited stdout of a raw `reflectctl mcp` one line at a time.
class LineReader {
  constructor(stream) {
    this.buffer = '';
    this.lines = [];
    this.waiters = [];
    this.ended = false;
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      this.buffer += chunk;
      let nl;
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, nl).replace(/\r$/, ''));
        this.buffer = this.buffer.slice(nl + 1);
      }
      this.wake();
    });
    stream.on('end', () => {
      this.ended = true;
      this.wake();
    });
  }

  wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  async next(ms) {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0) {
      if (this.ended) throw new Error('stdout closed before a complete line arrived');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no line on stdout within ${ms} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lines.shift();
  }
}

// ---------------------------------------------------------------------------
// Step bookkeeping

const results = { passed: 0, failed: 0 };

// Runs one named step. A step returns nothing, or a note worth recording
// (printed after "#"). Any exception, including a timeout, fails the step.
async function step(name, fn, { skipIf } = {}) {
  if (skipIf) {
    results.failed++;
    console.log(`FAIL ${name}: not run (${skipIf})`);
    return false;
  }
  try {
    const note = await withTimeout(Promise.resolve().then(fn), STEP_TIMEOUT_MS, name);
    results.passed++;
    console.log(note ? `ok ${name} # ${oneLine(note)}` : `ok ${name}`);
    return true;
  } catch (e) {
    results.failed++;
    console.log(`FAIL ${name}: ${oneLine(e?.message ?? e)}`);
    return false;
  }
}

// ---------------------------------------------------------------------------
// Environment: temp dir, config, daemon

const [reflectdBin, reflectctlBin] = process.argv.slice(2);
if (!reflectdBin || !reflectctlBin) {
  console.error('usage: node client.mjs REFLECTD_BIN REFLECTCTL_BIN');
  process.exit(2);
}

// ipc:// endpoints are Unix socket paths, limited to ~107 bytes; a long
// $TMPDIR would make the daemon fail to bind, so fall back to /tmp then.
const tmpBase = os.tmpdir().length > 60 ? '/tmp' : os.tmpdir();
const tmp = mkdtempSync(path.join(tmpBase, 'rd-mcp-'));
const cfg = path.join(tmp, 'reflectd.yaml');
const q = (s) => JSON.stringify(s); // a JSON string is a valid YAML double-quoted scalar

const job = '{interval_s: 604800, after_events: 0, idle_s: 0}';
writeFileSync(
  cfg,
  [
    'log: {level: warn}',
    'bus:',
    `  ingest: [${q(`ipc://${tmp}/i`)}]`,
    `  push: [${q(`ipc://${tmp}/p`)}]`,
    `  notify: [${q(`ipc://${tmp}/n`)}]`,
    `  control: [${q(`ipc://${tmp}/c`)}]`,
    `store: {path: ${q(path.join(tmp, 'reflectd.db'))}}`,
    'daemon: {metrics_listen: "127.0.0.1:0"}',
    'http: {listen: "127.0.0.1:0"}',
    // Jobs only run when asked (`reflectctl run ... --wait`), so what the tools
    // see does not depend on timing.
    'jobs:',
    ...['consolidate', 'decay', 'cluster', 'importance', 'medallion', 'facts'].map((j) => `  ${j}: ${job}`),
    '',
  ].join('\n'),
);

const ctl = (...args) => ['--config', cfg, ...args];

let daemon = null;
let daemonLog = { text: '' };
let mcpLog = { text: '' };
let client = null;

// Last-resort cleanup for paths that skip the orderly one (uncaught errors,
// signals): never leave a daemon or a temp dir behind.
function cleanupSync() {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.log(`FAIL interrupted: ${sig}`);
    process.exit(1);
  });
}

async function startDaemon() {
  daemon = spawn(reflectdBin, ['--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  capture(daemon.stdout);
  daemonLog = capture(daemon.stderr);
  const spawnError = new Promise((_, reject) => daemon.once('error', reject));
  spawnError.catch(() => {}); // observed below through Promise.race

  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = null;
  while (Date.now() < deadline) {
    if (daemon.exitCode !== null || daemon.signalCode !== null) {
      throw new Error(`reflectd exited early (${describeExit({ code: daemon.exitCode, signal: daemon.signalCode })})`);
    }
    last = await Promise.race([run(reflectctlBin, ctl('status'), 5_000), spawnError]);
    if (last.code === 0) return;
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  throw new Error(
    `reflectctl status did not succeed within ${READY_TIMEOUT_MS} ms` +
      (last ? ` (last: ${describeExit(last)}: ${oneLine(last.stderr.trim())})` : ''),
  );
}

async function stopDaemon() {
  // No pid: the spawn itself failed, there is nothing to stop.
  if (!daemon?.pid || daemon.exitCode !== null || daemon.signalCode !== null) return;
  daemon.kill('SIGTERM');
  const r = await waitExit(daemon, DAEMON_STOP_TIMEOUT_MS);
  if (r === null) {
    console.log(`# reflectd did not exit within ${DAEMON_STOP_TIMEOUT_MS} ms of SIGTERM; killed`);
    daemon.kill('SIGKILL');
    await waitExit(daemon, 5_000);
  } else if (r.code !== 0) {
    console.log(`# reflectd exited with ${describeExit(r)} after SIGTERM`);
  }
}

// ---------------------------------------------------------------------------
// Raw JSON-RPC (protocol negotiation cannot be driven through the SDK)

function startRawServer() {
  const child = spawn(reflectctlBin, ctl('mcp'), { stdio: ['pipe', 'pipe', 'pipe'] });
  const log = capture(child.stderr);
  const spawned = new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  child.stdin.on('error', () => {}); // EPIPE if the server died; the read reports it
  return { child, log, spawned, reader: new LineReader(child.stdout) };
}

async function rawRequest(server, line, what) {
  server.child.stdin.write(line + '\n');
  let reply;
  try {
    reply = await server.reader.next(RAW_LINE_TIMEOUT_MS);
  } catch (e) {
    throw new Error(`${what}: ${e.message}; stderr: ${oneLine(server.log.text.trim())}`);
  }
  try {
    return JSON.parse(reply);
  } catch {
    throw new Error(`${what}: first stdout line is not JSON: ${show(reply)}`);
  }
}

// Closing stdin is how an MCP host ends a stdio server; it must leave cleanly.
async function closeRawServer(server) {
  server.child.stdin.end();
  const r = await waitExit(server.child, RAW_EXIT_TIMEOUT_MS);
  if (r === null) {
    server.child.kill('SIGKILL');
    throw new Error(`reflectctl mcp still running ${RAW_EXIT_TIMEOUT_MS} ms after stdin was closed`);
  }
  check(r.code === 0, `reflectctl mcp exited with ${describeExit(r)} after stdin was closed`);
}

function initializeLine(protocolVersion) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
}

async function rawNegotiation(offered, expected, extra) {
  const server = startRawServer();
  try {
    await server.spawned;
    const reply = await rawRequest(server, initializeLine(offered), `initialize ${offered}`);
    check(reply.error === undefined, `initialize ${offered} answered with an error: ${show(reply.error)}`);
    expectEq(reply.result?.protocolVersion, expected, `protocolVersion answered to ${offered}`);
    if (extra) await extra(server);
    await closeRawServer(server);
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------------------
// The checks

async function main() {
  const daemonUp = await step('daemon-start', startDaemon);
  const noDaemon = daemonUp ? undefined : 'daemon did not start';

  let connected = false;
  const protocolNoise = [];
  connected = await step(
    'a-initialize',
    async () => {
      // The SDK passes only a handful of variables (HOME, PATH, ...) to the
      // server by default; pass everything so sanitizer and library settings of
      // the build under test reach reflectctl too.
      const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string'));
      const transport = new StdioClientTransport({ command: reflectctlBin, args: ctl('mcp'), env, stderr: 'pipe' });
      mcpLog = capture(transport.stderr);
      client = new Client({ name: 'reflectd-mcp-e2e', version: '1.0.0' });
      // Stray stdout lines and malformed envelopes are not request failures:
      // the SDK drops them and reports them here, so collect them for the
      // stdout-clean step instead of letting them pass unnoticed.
      client.onerror = (e) => protocolNoise.push(e?.message ?? String(e));
      await client.connect(transport, RPC);

      expectEq(client.getServerVersion()?.name, 'reflectd', 'serverInfo.name');
      const caps = client.getServerCapabilities() ?? {};
      check(caps.tools !== undefined, `capabilities lack "tools": ${show(caps)}`);
      check(caps.resources !== undefined, `capabilities lack "resources": ${show(caps)}`);
    },
    { skipIf: noDaemon },
  );
  const skipIf = noDaemon ?? (connected ? undefined : 'connect failed');

  await step(
    'b-list-tools',
    async () => {
      // listTools also makes the SDK compile each tool's outputSchema, which
      // callTool then enforces on structuredContent from here on.
      const { tools } = await client.listTools(undefined, RPC);
      expectEq(tools.map((t) => t.name).sort(), EXPECTED_TOOLS, 'tool names');
      for (const t of tools) {
        expectEq(t.inputSchema?.type, 'object', `${t.name}.inputSchema.type`);
        check(typeof t.description === 'string' && t.description.trim() !== '', `${t.name} has no description`);
      }
      const withOutput = tools.filter((t) => t.outputSchema).map((t) => t.name);
      return withOutput.length ? `outputSchema on: ${withOutput.join(', ')}` : 'no tool declares an outputSchema';
    },
    { skipIf },
  );

  await step(
    'c-remember',
    async () => {
      const first = structured(await client.callTool({ name: 'remember', arguments: REMEMBER_ARGS }, undefined, RPC), 'remember');
      expectEq(first.status, 'stored', 'remember status');
      expectEq(first.id, 'mcp-1', 'remember id');
      // The same id again must be recognised, not stored twice.
      const again = structured(await client.callTool({ name: 'remember', arguments: REMEMBER_ARGS }, undefined, RPC), 'remember (repeat)');
      expectEq(again.status, 'duplicate', 'repeated remember status');
    },
    { skipIf },
  );

  await step(
    'd-recall',
    async () => {
      const r = await client.callTool(
        { name: 'recall', arguments: { query: 'When did Caroline go to the support group?', namespace: NAMESPACE } },
        undefined,
        RPC,
      );
      const sc = structured(r, 'recall');
      check(Array.isArray(sc.results), `recall results is not an array: ${show(sc.results)}`);
      check(sc.results.length > 0, 'recall returned no results');
      expectEq(sc.results[0]?.id, 'mcp-1', 'first recall result id');
      // Hosts that ignore structuredContent show the text block to the model,
      // so it must carry the same answer.
      expectEq(r.content?.[0]?.type, 'text', 'recall content[0].type');
      check(r.content[0].text.includes('mcp-1'), `recall text does not mention mcp-1: ${show(r.content[0].text)}`);
    },
    { skipIf },
  );

  await step(
    'e-context',
    async () => {
      const sc = structured(
        await client.callTool(
          { name: 'context', arguments: { query: 'support group', namespace: NAMESPACE, max_tokens: 200 } },
          undefined,
          RPC,
        ),
        'context',
      );
      check(
        typeof sc.context_text === 'string' && sc.context_text.includes('mcp-1'),
        `context_text does not mention mcp-1: ${show(sc.context_text)}`,
      );
      check(typeof sc.total_tokens === 'number', `total_tokens is not a number: ${show(sc.total_tokens)}`);
      check(sc.total_tokens <= 200, `total_tokens ${sc.total_tokens} exceeds max_tokens 200`);
    },
    { skipIf },
  );

  await step(
    'f-get',
    async () => {
      const sc = structured(await client.callTool({ name: 'get', arguments: { ids: ['mcp-1', 'nope'] } }, undefined, RPC), 'get');
      const content = sc.events?.[0]?.content;
      check(typeof content === 'string' && content.includes('support group'), `events[0].content: ${show(content)}`);
      expectEq(sc.missing, ['nope'], 'get missing');
    },
    { skipIf },
  );

  await step(
    'g-medallion',
    async () => {
      // The medallion job is on a weekly timer in this config; run it now and
      // wait, so the medallion exists before the tool is asked for it.
      const job = await run(reflectctlBin, ctl('run', 'medallion', '--wait'), 60_000);
      check(job.code === 0, `reflectctl run medallion --wait: ${describeExit(job)}: ${oneLine(job.stderr.trim())}`);

      const list = structured(await client.callTool({ name: 'medallion', arguments: { action: 'list' } }, undefined, RPC), 'medallion list');
      check(Array.isArray(list.medallions), `medallions is not an array: ${show(list.medallions)}`);
      check(
        list.medallions.some((m) => m?.id === MEDALLION_ID),
        `no medallion with id ${MEDALLION_ID} in ${show(list.medallions.map((m) => m?.id))}`,
      );

      const got = structured(
        await client.callTool({ name: 'medallion', arguments: { action: 'get', id: MEDALLION_ID } }, undefined, RPC),
        'medallion get',
      );
      expectEq(got.medallion?.meta?.medallion_id, MEDALLION_ID, 'medallion.meta.medallion_id');

      // An agent writes its own medallion (seed 001) with evidence; the job's own refuses
      // a status change as a tool error.
      const created = structured(
        await client.callTool(
          {
            name: 'medallion',
            arguments: {
              action: 'create',
              namespace: NAMESPACE,
              medallion: {
                meta: { medallion_id: 'mcp-resume' },
                scope: { graph_nodes: ['conversation:mcp'], tags: ['resume'] },
                summary: { high_level: 'Caroline went to a support group; Melanie paints.' },
                affordances: { recommended_entry_points: ['recall "support group"'], avoid_repeating: [] },
              },
              evidence: { session_summary: 'MCP client test session' },
            },
          },
          undefined,
          RPC,
        ),
        'medallion create',
      );
      expectEq(created.written?.id, 'mcp-resume', 'medallion create id');
      expectEq(created.written?.status, 'active', 'medallion create status');
      const mine = structured(
        await client.callTool({ name: 'medallion', arguments: { action: 'get', id: 'mcp-resume' } }, undefined, RPC),
        'medallion get mcp-resume',
      );
      expectEq(mine.evidence?.session_summary, 'MCP client test session', 'medallion get evidence');
      expectToolError(
        await client.callTool(
          { name: 'medallion', arguments: { action: 'set_status', id: MEDALLION_ID, status: 'stale', rationale: 'test' } },
          undefined,
          RPC,
        ),
        'medallion set_status',
        'medallion job',
      );
    },
    { skipIf },
  );

  await step(
    'h-resources',
    async () => {
      const { resources } = await client.listResources(undefined, RPC);
      const res = resources.find((r) => r.uri === MEDALLION_URI);
      check(res, `no resource ${MEDALLION_URI} in ${show(resources.map((r) => r.uri))}`);
      expectEq(res.mimeType, 'application/json', `${MEDALLION_URI} mimeType`);

      const { contents } = await client.readResource({ uri: MEDALLION_URI }, RPC);
      const text = contents?.[0]?.text;
      check(typeof text === 'string', `contents[0] has no text: ${show(contents?.[0])}`);
      let doc;
      try {
        doc = JSON.parse(text);
      } catch (e) {
        throw new Error(`contents[0].text is not JSON (${e.message})`);
      }
      expectEq(doc?.meta?.medallion_id, MEDALLION_ID, 'resource meta.medallion_id');
    },
    { skipIf },
  );

  await step(
    'i-forget',
    async () => {
      const dry = structured(
        await client.callTool({ name: 'forget', arguments: { ids: ['mcp-1'], dry_run: true } }, undefined, RPC),
        'forget dry run',
      );
      expectEq(dry.dry_run, true, 'forget dry_run');
      const done = structured(await client.callTool({ name: 'forget', arguments: { ids: ['mcp-1'] } }, undefined, RPC), 'forget');
      expectEq(done.events_archived, 1, 'forget events_archived');
    },
    { skipIf },
  );

  await step(
    'i-revise',
    async () => {
      const stored = structured(
        await client.callTool(
          { name: 'remember', arguments: { content: 'Melanie paints sunsets', namespace: NAMESPACE, id: 'mcp-2' } },
          undefined,
          RPC,
        ),
        'remember mcp-2',
      );
      expectEq(stored.status, 'stored', 'remember mcp-2 status');
      const r = await client.callTool(
        { name: 'revise', arguments: { id: 'mcp-2', content: 'Melanie paints sunrises', rationale: 'misheard' } },
        undefined,
        RPC,
      );
      const sc = structured(r, 'revise');
      expectEq(sc.id, 'mcp-2', 'revise id');
      check(
        typeof sc.revision?.id === 'string' && sc.revision.id !== 'mcp-2',
        `revise names no new revision: ${show(sc)}`,
      );
      check(r.content[0].text.includes(sc.revision.id), `revise text does not name the revision: ${show(r.content[0].text)}`);
      expectToolError(
        await client.callTool({ name: 'revise', arguments: { id: 'mcp-2', content: 'x', rationale: 'again' } }, undefined, RPC),
        'revise',
        'superseded',
      );
    },
    { skipIf },
  );

  // Tool failures must reach the model as results it can read (isError), not
  // as JSON-RPC errors, which hosts surface to the user instead.
  await step(
    'j-error-empty-query',
    async () => expectToolError(await client.callTool({ name: 'recall', arguments: { query: '' } }, undefined, RPC), 'recall'),
    { skipIf },
  );
  await step(
    'j-error-unknown-id',
    async () =>
      expectToolError(await client.callTool({ name: 'forget', arguments: { ids: ['nope'] } }, undefined, RPC), 'forget', 'nope'),
    { skipIf },
  );
  await step(
    'j-error-no-namespace',
    async () =>
      expectToolError(
        await client.callTool({ name: 'remember', arguments: { content: 'x' } }, undefined, RPC),
        'remember',
        'namespace',
      ),
    { skipIf },
  );

  await step(
    'k-unknown-tool',
    async () => {
      let r;
      try {
        r = await client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, RPC);
      } catch (e) {
        // A timeout or a dead connection also surfaces as McpError; only a
        // real JSON-RPC error response from the server counts.
        const local = [ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed];
        if (e instanceof McpError && !local.includes(e.code)) return `protocol error: ${e.message}`;
        throw e;
      }
      check(r.isError === true, `neither a protocol error nor isError: ${show(r)}`);
      return `isError result: ${textOf(r)}`;
    },
    { skipIf },
  );

  await step(
    'stdout-clean',
    async () => {
      check(protocolNoise.length === 0, `SDK reported ${protocolNoise.length} protocol error(s): ${protocolNoise.join(' | ')}`);
    },
    { skipIf },
  );

  await step('l-protocol-2024-11-05', () => rawNegotiation('2024-11-05', '2024-11-05'), { skipIf: noDaemon });
  await step(
    'l-protocol-fallback',
    () =>
      rawNegotiation('1999-01-01', LATEST_SERVER_PROTOCOL, async (server) => {
        const reply = await rawRequest(server, 'this is { not json', 'non-JSON line');
        check(reply.error !== undefined, `non-JSON line: expected a JSON-RPC error, got ${show(reply)}`);
        expectEq(reply.error.code, -32700, 'error.code for a non-JSON line');
      }),
    { skipIf: noDaemon },
  );
}

let exitCode = 1;
try {
  await main();
} catch (e) {
  // main() only throws on a bug here; count it so the run cannot pass.
  results.failed++;
  console.log(`FAIL harness: ${oneLine(e?.stack ?? e)}`);
} finally {
  try {
    await client?.close();
  } catch (e) {
    console.log(`# closing the MCP client: ${oneLine(e?.message ?? e)}`);
  }
  await stopDaemon();
  if (results.failed > 0) {
    for (const [what, log] of [['reflectctl mcp', mcpLog], ['reflectd', daemonLog]]) {
      const text = log.text.trim();
      if (text) console.log(`# --- ${what} stderr ---\n${text.replace(/^/gm, '# ')}`);
    }
  }
  cleanupSync();
  console.log(`${results.passed} passed, ${results.failed} failed`);
  exitCode = results.failed === 0 ? 0 : 1;
}
process.exit(exitCode);
