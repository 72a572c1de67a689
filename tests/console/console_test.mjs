#!/usr/bin/env node
// The web console in a real browser: Playwright (playwright-core) driving Debian's Chromium,
// headless, against a reflectd holding ../shared/data's streams and the LoCoMo development
// set, fed over POST /v1/events, with the jobs run once.
//
// Usage: node console_test.mjs REFLECTD_BIN CONSOLE_DIR DATA_DIR SCREENSHOT_DIR
//
// Prints "ok <step>" or "FAIL <step>: <detail>" per step, then "N passed, N failed"; keeps a
// screenshot of each page in SCREENSHOT_DIR. Exit 0 when every step passed.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [reflectdBin, consoleDir, dataDir, shots] = process.argv.slice(2);
const TOKEN = 'console-admin-token';
const NS = 'locomo-conv-26';
mkdirSync(shots, { recursive: true });

const tmp = mkdtempSync('/tmp/rd-console-');
const q = (s) => JSON.stringify(s);
writeFileSync(path.join(tmp, 'tokens.yaml'),
  `tokens:\n  - {sha256: ${createHash('sha256').update(TOKEN).digest('hex')}, agent_id: operator, ` +
  'namespaces: ["*"], max_sensitivity: hyper, admin: true}\n');
const never = '{interval_s: 604800, after_events: 0, idle_s: 0}';
const cfg = path.join(tmp, 'reflectd.yaml');
writeFileSync(cfg, [
  'bus:',
  ...['ingest', 'push', 'notify', 'control'].map((r) => `  ${r}: [${q(`ipc://${tmp}/${r[0]}`)}]`),
  `store: {path: ${q(path.join(tmp, 'reflectd.db'))}}`,
  'daemon: {metrics_listen: ""}',
  `http: {listen: "127.0.0.1:0", console_dir: ${q(consoleDir)}, rate_per_s: 0}`,
  `security: {http_tokens_file: ${q(path.join(tmp, 'tokens.yaml'))}, insecure: true}`,
  'recall: {wordnet_dir: ""}',
  'jobs:',
  ...['consolidate', 'decay', 'cluster', 'importance', 'medallion', 'facts'].map((j) => `  ${j}: ${never}`),
  '',
].join('\n'));

let passed = 0;
let failed = 0;
async function step(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${String(error?.message ?? error).split('\n')[0]}`);
  }
}
const check = (cond, message) => { if (!cond) throw new Error(message); };

let log = '';
const daemon = spawn(reflectdBin, ['--config', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
daemon.stderr.on('data', (d) => { log += d; });
let browser = null;
process.on('exit', () => {
  if (daemon.exitCode === null) daemon.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

let base = '';
for (const deadline = Date.now() + 20_000; !base && Date.now() < deadline;) {
  const match = /http (http:\/\/[0-9.:]+)\/v1\//.exec(log);
  if (match) base = match[1];
  else await new Promise((r) => setTimeout(r, 50));
}
if (!base) {
  console.log(`FAIL reflectd did not get ready: ${log}`);
  process.exit(1);
}

// `token` false: as a loopback client without one, the local operator (security.insecure), which
// keeps each event's agent_id (a token's principal stamps its own on every event it sends).
async function api(route, body, token = true) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${TOKEN}`;
  const response = await fetch(base + route, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
  });
  return { status: response.status, body: await response.json() };
}

const lines = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
await step('the streams and the LoCoMo development set are stored over POST /v1/events', async () => {
  const files = ['libzmq-commits.jsonl', 'fmt-commits.jsonl', 'swe-agent-trajectories.jsonl',
    'locomo-dev/events.jsonl'].map((f) => path.join(dataDir, f));
  let sent = 0;
  for (const file of files) {
    const events = lines(file);
    for (let i = 0; i < events.length; i += 1000) {
      const batch = events.slice(i, i + 1000);
      const reply = await api('/v1/events', `[${batch.join(',')}]`, false);
      check(reply.status === 200, `${file}: ${JSON.stringify(reply.body).slice(0, 300)}`);
      sent += batch.length;
    }
  }
  const status = await api('/v1/status');
  check(status.body.events.stored === sent, `${status.body.events.stored} stored of ${sent}`);
});

await step('the jobs run once', async () => {
  for (const job of ['consolidate', 'cluster', 'importance', 'facts', 'medallion']) {
    const reply = await api('/v1/run', { job, wait: true });
    check(reply.status === 200, `${job}: ${JSON.stringify(reply.body).slice(0, 300)}`);
  }
});

browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const pageErrors = [];
page.on('pageerror', (error) => pageErrors.push(error.message));
page.on('dialog', (dialog) => dialog.accept());
const visit = async (hash) => {
  await page.evaluate((h) => { document.getElementById('page').removeAttribute('data-ready'); location.hash = h; }, hash);
  await page.waitForSelector(`#page[data-ready="${hash}"]`, { timeout: 20_000 });
};

await step('the overview\'s counts equal status', async () => {
  await page.goto(`${base}/`);
  await page.fill('#token', TOKEN);
  await page.click('#token-form button');
  await page.waitForSelector('#page[data-ready]', { timeout: 20_000 });
  const shown = Number(await page.textContent('#stat-stored'));
  const status = (await api('/v1/status')).body;
  check(shown === status.events.stored, `shown ${shown}, status ${status.events.stored}`);
  check(Number(await page.textContent('#stat-rejected')) === status.events.rejected, 'rejected');
  check((await page.locator('table tbody tr').count()) > 0, 'no job runs listed');
  // Three refreshes of the chart (every 2 s) before its picture is kept.
  await page.waitForFunction(() => window.reflectdHistory.t.length >= 3, null, { timeout: 20_000 });
  // The duration chart has a series for each job that ran, one point a finished run.
  const jobs = await page.evaluate(() => window.reflectdJobChart);
  for (const job of ['consolidate', 'cluster', 'importance', 'facts', 'medallion']) {
    const i = jobs.names.indexOf(job);
    check(i >= 0 && jobs.series[i].some((ms) => ms > 0), `no duration drawn for ${job}`);
  }
  await page.screenshot({ path: path.join(shots, 'overview.png'), fullPage: true });
});

await step('a question in the recall box shows its evidence turn with its components', async () => {
  // The first question of the conversation whose evidence recall ranks in its top 10.
  const questions = lines(path.join(dataDir, 'locomo-dev/questions.jsonl')).map((l) => JSON.parse(l))
    .filter((x) => x.namespace === NS && x.category !== 'adversarial');
  let chosen = null;
  for (const question of questions.slice(0, 30)) {
    const reply = await api(`/v1/recall?${new URLSearchParams({ q: question.question, namespace: NS, limit: 10 })}`);
    const hit = reply.body.results.find((r) => question.evidence_ids.includes(r.id));
    if (hit) { chosen = { question, id: hit.id }; break; }
  }
  check(chosen, 'no question of the first 30 is answered in the top 10');
  await visit(`#/ns/${NS}/recall`);
  await page.fill('#recall-query', chosen.question.question);
  await page.click('#recall-form button');
  const result = page.locator(`.result[data-id="${chosen.id}"]`);
  await result.waitFor({ timeout: 20_000 });
  const components = await result.locator('.components').textContent();
  check(/lexical \d/.test(components) && /salience \d/.test(components), components);
  await page.screenshot({ path: path.join(shots, 'recall.png'), fullPage: true });
});

await step('the medallion renders', async () => {
  await visit(`#/ns/${NS}/medallion`);
  const text = await page.textContent('#medallion');
  check(!text.includes('operator'), 'the speakers were kept');
  check(text.includes('Caroline') && text.includes('Melanie'), text.slice(0, 200));
  await page.screenshot({ path: path.join(shots, 'medallion.png'), fullPage: true });
});

await step('a person\'s facts render as a timeline', async () => {
  await visit(`#/ns/${NS}/facts/person:caroline`);
  const count = await page.locator('#facts .fact').count();
  const first = await page.locator('#facts .fact .meta').first().textContent();
  check(count > 10 && /^\d{4}-\d{2}-\d{2}/.test(first), `${count} facts, first dated ${first}`);
  await page.screenshot({ path: path.join(shots, 'facts.png'), fullPage: true });
});

await step('the entity graph draws nodes and edges', async () => {
  await visit(`#/ns/${NS}/graph`);
  const drawn = await page.evaluate(() => ({
    nodes: window.reflectdGraph.nodes().length, edges: window.reflectdGraph.edges().length }));
  check(drawn.nodes >= 10 && drawn.edges >= 1, JSON.stringify(drawn));
  // Communities are compound nodes around their entities, titled by their observation.
  const groups = await page.evaluate(() => window.reflectdGraph.nodes(':parent').map((n) => ({
    label: n.data('label'), children: n.children().length })));
  check(groups.length >= 1 && groups.every((g) => g.children >= 1 && !g.label.startsWith('community ')),
    JSON.stringify(groups).slice(0, 300));
  await page.screenshot({ path: path.join(shots, 'graph.png'), fullPage: true });
});

await step('the timeline pages back and forth and filters by agent and episode', async () => {
  const seqs = async () => page.locator('#timeline tbody tr td:first-child').allTextContents();
  await visit(`#/ns/${NS}/timeline`);
  const latest = await seqs();
  await page.click('#older');
  await page.waitForFunction((first) => document.querySelector('#timeline tbody td')?.textContent !== first,
    latest[0], { timeout: 10_000 });
  const older = await seqs();
  check(older.length === 50 && Number(older.at(-1)) < Number(latest[0]), `${older.at(-1)} then ${latest[0]}`);
  await page.click('#newer');
  await page.waitForFunction((first) => document.querySelector('#timeline tbody td')?.textContent === first,
    latest[0], { timeout: 10_000 });
  await page.fill('input[name=agent]', 'Melanie');
  await page.fill('input[name=episode]', 'conv-26-session-2');
  await page.click('#tab form button');
  await page.waitForFunction(() => [...document.querySelectorAll('#timeline tbody tr')]
    .every((tr) => tr.children[3].textContent === 'Melanie'), null, { timeout: 10_000 });
  const cells = await page.locator('#timeline tbody tr td:nth-child(5)').allTextContents();
  const expected = (await api(`/v1/events?namespace=${NS}&agent_id=Melanie&episode_id=conv-26-session-2&limit=50`))
    .body.events.length;
  check(cells.length === expected && expected > 0 && cells.every((c) => c === 'conv-26-session-2'),
    `${cells.length} rows shown, ${expected} expected`);
});

await step('a decision opens its history', async () => {
  await visit('#/ns/libzmq/knowledge');
  await page.locator('#tab table tbody tr td:nth-child(2) a').first().click();
  await page.waitForSelector('#knowledge-history li', { timeout: 10_000 });
  const items = await page.locator('#knowledge-history li').allTextContents();
  check(items.some((t) => t.includes('first seen')) && items.some((t) => t.includes('last updated')),
    items.join(' | ').slice(0, 300));
  const whole = await page.textContent('#knowledge-history');
  check(!/\bnull\b|undefined/.test(whole), whole.slice(0, 300));
  await page.locator('#knowledge-history').screenshot({ path: path.join(shots, 'knowledge.png') });
});

await step('an admin forgets an event from the timeline, after confirming', async () => {
  await visit(`#/ns/${NS}/timeline`);
  await page.screenshot({ path: path.join(shots, 'timeline.png'), fullPage: true });
  const firstId = (await api(`/v1/events?namespace=${NS}&limit=50`)).body.events[0].id;
  await page.locator('#timeline button.danger').first().click();
  for (const deadline = Date.now() + 10_000; ;) {
    const got = (await api('/v1/get', { ids: [firstId] })).body;
    if (got.events?.[0]?.status === 'archived') break;
    check(Date.now() < deadline, `status ${got.events?.[0]?.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

await step('no script error on any page', async () => {
  check(pageErrors.length === 0, pageErrors.join('; '));
});

await browser.close();
daemon.kill('SIGTERM');
const code = await new Promise((resolve) => daemon.once('exit', resolve));
await step('SIGTERM stops the daemon cleanly', async () => check(code === 0, `exit ${code}`));
console.log(`${passed} passed, ${failed} failed`);
if (failed) console.log(log.slice(-3000));
process.exit(failed ? 1 : 0);
