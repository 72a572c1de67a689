#!/usr/bin/env node
// End-to-end test of MCP over Streamable HTTP at the daemon's /mcp, driven by the official
// MCP TypeScript SDK's StreamableHTTPClientTransport with a bearer token.
//
// Usage: node http_client.mjs REFLECTD_BIN
//
// Starts a private reflectd (ipc sockets, the HTTP API on a free loopback port, a tokens file
// in a temp dir) and prints "ok <step>" or "FAIL <step>: <detail>" per step, then
// "N passed, N failed". Exit status: 0 when every step passed, 1 otherwise.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const TOKEN = 'mcp-http-token';
const OTHER_TOKEN = 'mcp-other-token';
const NAMESPACE = 'mcp-http';
const RPC = { timeout: 15_000 };

const tmp = mkdtempSync('/tmp/rd-mcp-http-');
const q = (s) => JSON.stringify(s);
const sha = (s) => createHash('sha256').update(s).digest('hex');
writeFileSync(
  path.join(tmp, 'tokens.yaml'),
  [
    'tokens:',
    `  - {sha256: ${sha(TOKEN)}, agent_id: planner, namespaces: [${NAMESPACE}], max_sensitivity: medium}`,
    `  - {sha256: ${sha(OTHER_TOKEN)}, agent_id: other, namespaces: ["*"], max_sensitivity: hyper}`,
    '',
  ].join('\n'),
);
const cfg = path.join(tmp, 'reflectd.yaml');
writeFileSync(
  cfg,
  [
    'bus:',
    ...['ingest', 'push', 'notify', 'control'].map((r) => `  ${r}: [${q(`ipc://${tmp}/${r[0]}`)}]`),
    `store: {path: ${q(path.join(tmp, 'reflectd.db'))}}`,
    'daemon: {metrics_listen: ""}',
    'http: {listen: "127.0.0.1:0"}',
    `security: {http_tokens_file: ${q(path.join(tmp, 'tokens.yaml'))}}`,
    'recall: {wordnet_dir: ""}',
    '',
  ].join('\n'),
);

let passed = 0;
let failed = 0;
async function step(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${String(error?.stack ?? error).split('\n')[0]}`);
  }
}
function check(cond, message) {
  if (!cond) throw new Error(message);
}

const logPath = path.join(tmp, 'stderr.log');
const daemon = spawn(process.argv[2], ['--config', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
let log = '';
daemon.stderr.on('data', (d) => {
  log += d;
});
process.on('exit', () => {
  if (daemon.exitCode === null) daemon.kill('SIGKILL');
  writeFileSync(logPath, log);
  rmSync(tmp, { recursive: true, force: true });
});

async function baseUrl() {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const match = /http (http:\/\/[0-9.:]+)\/v1\//.exec(log);
    if (match) return match[1];
    if (daemon.exitCode !== null) throw new Error(`reflectd exited: ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`reflectd did not get ready: ${log}`);
}

const base = await baseUrl();
const mcpUrl = new URL(`${base}/mcp`);
const connect = async (token) => {
  const transport = new StreamableHTTPClientTransport(mcpUrl, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'reflectd-http-test', version: '1.0.0' });
  await client.connect(transport, RPC);
  return { client, transport };
};

let session = null;
await step('initialize over Streamable HTTP opens a session', async () => {
  session = await connect(TOKEN);
  check(/^[0-9a-f]{32}$/.test(session.transport.sessionId ?? ''), `session id ${session.transport.sessionId}`);
  check(session.client.getServerVersion()?.name === 'reflectd', 'server name');
});

await step('tools/list names the tools of reflectctl mcp', async () => {
  const { tools } = await session.client.listTools(undefined, RPC);
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(['context', 'forget', 'get', 'medallion', 'recall', 'remember', 'revise']), names.join(','));
});

await step('remember stores an event as the token\'s agent', async () => {
  const result = await session.client.callTool(
    { name: 'remember', arguments: { content: 'The lighthouse keeper repaints the lamp room every May.', namespace: NAMESPACE, id: 'mcp-http-1' } },
    undefined,
    RPC,
  );
  check(!result.isError, JSON.stringify(result));
  check(result.structuredContent?.status === 'stored', JSON.stringify(result.structuredContent));
  const got = await session.client.callTool({ name: 'get', arguments: { ids: ['mcp-http-1'] } }, undefined, RPC);
  check(got.structuredContent?.events?.[0]?.agent_id === 'planner', JSON.stringify(got.structuredContent));
});

await step('recall finds it', async () => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const result = await session.client.callTool(
      { name: 'recall', arguments: { query: 'lighthouse lamp room', namespace: NAMESPACE } },
      undefined,
      RPC,
    );
    check(!result.isError, JSON.stringify(result));
    if (JSON.stringify(result.structuredContent ?? {}).includes('mcp-http-1')) return;
    check(Date.now() < deadline, 'not recalled within 20 s');
    await new Promise((r) => setTimeout(r, 200)); // the search index trails the commit
  }
});

await step('a namespace outside the token\'s is refused as a tool error', async () => {
  const result = await session.client.callTool(
    { name: 'remember', arguments: { content: 'elsewhere', namespace: 'other-ns' } },
    undefined,
    RPC,
  );
  check(result.isError && /namespace/.test(result.content?.[0]?.text ?? ''), JSON.stringify(result));
});

await step('another token cannot use the session', async () => {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${OTHER_TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': session.transport.sessionId,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  check(response.status === 404, `status ${response.status}`);
});

await step('without a token: 401; a cross-site Origin: 403', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const anonymous = await fetch(mcpUrl, { method: 'POST', headers, body: JSON.stringify(init) });
  check(anonymous.status === 401, `no token: ${anonymous.status}`);
  const crossSite = await fetch(mcpUrl, {
    method: 'POST',
    headers: { ...headers, Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example' },
    body: JSON.stringify(init),
  });
  check(crossSite.status === 403, `cross-site: ${crossSite.status}`);
});

await step('terminateSession ends it; the id is then unknown', async () => {
  const id = session.transport.sessionId;
  await session.transport.terminateSession();
  await session.client.close();
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': id },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  check(response.status === 404, `status ${response.status}`);
});

await step('SIGTERM stops the daemon cleanly', async () => {
  const exited = new Promise((resolve) => daemon.once('exit', (code, signal) => resolve({ code, signal })));
  daemon.kill('SIGTERM');
  const { code } = await exited;
  check(code === 0, `exit ${code}: ${log.slice(-2000)}`);
});

console.log(`${passed} passed, ${failed} failed`);
if (failed > 0) console.log(log.slice(-4000));
process.exit(failed === 0 ? 0 : 1);
