// reflectd's web console: every view is one or two calls of the HTTP API (docs/HTTP.md) with
// the bearer token typed into the header (kept in sessionStorage, sent as Authorization).
// Text from the daemon is only ever set as textContent, never parsed as HTML.
'use strict';

// route: the number of the newest navigation. A route that an older navigation (the page's
// first load, say, overtaken by the token form) is still awaiting must neither draw nor start
// the overview's refresh: its interval would outlive every later page and redraw over it.
const state = { token: sessionStorage.getItem('reflectd-token') || '', caller: null, timer: null, route: 0 };
const history = { t: [], stored: [], rate: [] };
window.reflectdHistory = history;  // what the chart draws, for tests

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'onclick' || key === 'onsubmit' || key === 'onchange') node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function showError(text) {
  document.getElementById('error').textContent = text || '';
}

async function api(path, body) {
  const headers = { Accept: 'application/json' };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  const init = { headers };
  if (body !== undefined) {
    init.method = 'POST';
    init.body = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(path, init);
  const reply = await response.json().catch(() => ({ ok: false, error: `HTTP ${response.status}` }));
  if (!response.ok || reply.ok === false) {
    throw new Error(`${path}: ${reply.error || `HTTP ${response.status}`}`);
  }
  return reply;
}

const query = (params) =>
  new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v !== undefined)).toString();
const date = (us) => (us ? new Date(us / 1000).toISOString().replace('T', ' ').slice(0, 19) : '');
const number = (x, digits = 3) => (typeof x === 'number' ? x.toFixed(digits) : x ?? '');

function table(columns, rows) {
  return el('table', {},
    el('thead', {}, el('tr', {}, columns.map(([title]) => el('th', {}, title)))),
    el('tbody', {}, rows.map((row) => el('tr', {}, columns.map(([, cell]) => el('td', {}, cell(row)))))));
}

// ---------------------------------------------------------------------------------- overview

function card(label, value, id) {
  return el('div', { class: 'card' }, el('div', { class: 'value', id }, value), el('div', { class: 'label' }, label));
}

async function overview(page) {
  const status = await api('/v1/status');
  const jobs = await api('/v1/jobs?limit=200');
  const now = Date.now() / 1000;
  if (history.t.length && now - history.t.at(-1) > 0) {
    history.rate.push((status.events.stored - history.stored.at(-1)) / (now - history.t.at(-1)));
  } else {
    history.rate.push(0);
  }
  history.t.push(now);
  history.stored.push(status.events.stored);
  for (const series of Object.values(history)) if (series.length > 300) series.shift();
  const lag = status.search_index?.lag_events ?? '';
  page.replaceChildren(
    el('h1', {}, 'Overview'),
    el('div', { class: 'cards' },
      card('events stored', status.events.stored, 'stat-stored'),
      card('events rejected', status.events.rejected, 'stat-rejected'),
      card('duplicates', status.events.duplicate, 'stat-duplicate'),
      card('dead letters', status.dead_letters, 'stat-dead-letters'),
      card('writer queue (events)', status.writer_queue_events, 'stat-queue'),
      card('search-index lag (events)', lag, 'stat-lag'),
      card('ingest rate (events/s)', number(history.rate.at(-1), 0), 'stat-rate'),
      card('uptime (s)', Math.round(status.uptime_s), 'stat-uptime')),
    el('h2', {}, 'Events stored and ingest rate'),
    el('div', { id: 'chart' }),
    el('h2', {}, 'Job run durations (ms, the last 200 runs)'),
    el('div', { id: 'job-chart' }),
    el('h2', {}, 'Job runs'),
    table([
      ['job', (r) => r.job], ['namespace', (r) => r.namespace], ['trigger', (r) => r.trigger],
      ['status', (r) => r.status], ['started', (r) => date(r.started_us)],
      ['ms', (r) => (r.finished_us ? ((r.finished_us - r.started_us) / 1000).toFixed(1) : 'running')],
    ], (jobs.runs || []).slice(0, 20)));
  new uPlot({
    width: Math.min(1100, page.clientWidth), height: 220,
    series: [{}, { label: 'stored', stroke: '#2f6fdd' }, { label: 'events/s', stroke: '#c2410c', scale: 'rate' }],
    axes: [{}, { size: 70 }, { scale: 'rate', side: 1, size: 60 }],
  }, [history.t, history.stored, history.rate], document.getElementById('chart'));
  jobChart(jobs.runs || [], page);
}

// One series a job: each finished run's duration at the time it started.
const JOB_COLOURS = ['#2f6fdd', '#c2410c', '#15803d', '#7c3aed', '#b45309', '#0e7490', '#be185d', '#4d7c0f'];
function jobChart(runs, page) {
  const finished = runs.filter((r) => r.finished_us && r.started_us);
  const names = [...new Set(finished.map((r) => r.job))].sort();
  const times = [...new Set(finished.map((r) => r.started_us / 1e6))].sort((a, b) => a - b);
  const column = new Map(times.map((t, i) => [t, i]));
  const series = names.map(() => times.map(() => null));
  for (const r of finished) {
    series[names.indexOf(r.job)][column.get(r.started_us / 1e6)] = (r.finished_us - r.started_us) / 1000;
  }
  window.reflectdJobChart = { names, times, series };
  new uPlot({
    width: Math.min(1100, page.clientWidth), height: 220,
    series: [{}, ...names.map((name, i) => ({
      label: name, stroke: JOB_COLOURS[i % JOB_COLOURS.length], spanGaps: true, points: { show: true, size: 7 } }))],
    scales: { y: { distr: 3 } },
    axes: [{}, { size: 70, label: 'ms' }],
  }, [times, ...series], document.getElementById('job-chart'));
}

// --------------------------------------------------------------------------------- namespace

const TABS = ['timeline', 'recall', 'medallion', 'knowledge', 'facts', 'graph'];

async function namespacePage(page, ns, tab, arg) {
  const body = el('div', { id: 'tab' });
  page.replaceChildren(
    el('h1', {}, ns),
    el('div', { class: 'tabs' }, TABS.map((t) =>
      el('a', { href: `#/ns/${encodeURIComponent(ns)}/${t}`, class: t === tab ? 'active' : '' }, t))),
    body);
  const views = { timeline, recall, medallion, knowledge, facts, graph };
  await views[tab](body, ns, arg);
}

async function memoryAction(cmd, id, after) {
  const verbs = { forget: 'Archive (forget) event', restore: 'Restore event', pin: 'Pin event' };
  if (!window.confirm(`${verbs[cmd]} ${id}?`)) return;
  try {
    await api(`/v1/${cmd}`, { ids: [id] });
    after();
  } catch (error) {
    showError(error.message);
  }
}

async function timeline(body, ns) {
  const form = el('form', {},
    el('input', { name: 'kind', placeholder: 'kind' }),
    el('input', { name: 'agent', placeholder: 'agent' }),
    el('input', { name: 'episode', placeholder: 'episode' }),
    el('button', { type: 'submit' }, 'Filter'));
  const list = el('div', { id: 'timeline' });
  // A page is the 50 latest events (page: {}), the 50 before a seq or the 50 after one.
  let page = {};
  const load = async () => {
    const f = new FormData(form);
    const reply = await api(`/v1/events?${query({
      namespace: ns, kind: f.get('kind'), agent_id: f.get('agent'), episode_id: f.get('episode'), limit: 50,
      before_seq: page.before, after_seq: page.after })}`);
    const rows = reply.events;
    const admin = state.caller?.admin;
    const older = el('button', { id: 'older', onclick: () => { page = { before: rows[0]?.seq }; load(); } }, '‹ Older');
    const newer = el('button', { id: 'newer', onclick: () => { page = { after: rows.at(-1)?.seq }; load(); } }, 'Newer ›');
    if (!rows.length) older.disabled = newer.disabled = true;
    list.replaceChildren(table([
      ['seq', (e) => e.seq], ['time', (e) => date(e.ts_us)], ['kind', (e) => e.kind],
      ['agent', (e) => e.agent_id ?? ''], ['episode', (e) => e.episode_id ?? ''], ['status', (e) => e.status],
      ['event', (e) => e.preview],
      ['', (e) => (admin ? [
        el('button', { class: 'danger', onclick: () => memoryAction('forget', e.id, load) }, 'forget'),
        el('button', { onclick: () => memoryAction('pin', e.id, load) }, 'pin'),
        el('button', { onclick: () => memoryAction('restore', e.id, load) }, 'restore')] : '')],
    ], rows), el('div', { class: 'pager' }, older, newer));
  };
  form.onsubmit = (event) => { event.preventDefault(); page = {}; load().catch((e) => showError(e.message)); };
  body.replaceChildren(form, list);
  await load();
}

async function recall(body, ns) {
  const input = el('input', { type: 'search', id: 'recall-query', placeholder: 'Ask the memory a question' });
  const results = el('div', { id: 'recall-results' });
  const form = el('form', { id: 'recall-form' }, input, el('button', { type: 'submit' }, 'Recall'));
  form.onsubmit = async (event) => {
    event.preventDefault();
    try {
      const reply = await api(`/v1/recall?${query({ q: input.value, namespace: ns, limit: 10 })}`);
      results.replaceChildren(...reply.results.map((r) => el('div', { class: 'result', 'data-id': r.id },
        el('div', { class: 'meta' }, `${r.id} · ${r.date} · ${r.agent_id ?? ''} · score ${number(r.score)}`),
        el('div', {}, r.content),
        el('div', { class: 'components' }, Object.entries(r.components || {})
          .map(([k, v]) => `${k} ${number(v, 2)}`).join('  ')),
        el('div', { class: 'muted' }, `matched: ${(r.why?.terms || []).join(', ')}` +
          ((r.why?.entities || []).length ? `; entities: ${r.why.entities.join(', ')}` : '')))));
      if (!reply.results.length) results.replaceChildren(el('p', {}, 'Nothing recalled.'));
    } catch (error) {
      showError(error.message);
    }
  };
  body.replaceChildren(form, results);
}

async function medallion(body, ns) {
  const reply = await api(`/v1/medallion?${query({ action: 'get', id: `med:${ns}` })}`);
  const m = reply.medallion;
  const list = (items, text) => el('ul', {}, (items || []).map((i) => el('li', {}, text(i))));
  body.replaceChildren(el('div', { id: 'medallion' },
    el('p', {}, m.high_level ?? ''),
    el('h2', {}, 'Decisions'), list(m.decisions, (d) => `${d.title ?? d.id}: ${d.rationale ?? ''}`),
    el('h2', {}, 'Open questions'), list(m.open_questions, (q) => q.question),
    el('h2', {}, 'Avoid repeating'), list(m.affordances?.avoid_repeating, (a) => (typeof a === 'string' ? a : JSON.stringify(a))),
    el('h2', {}, 'Entry points'), list(m.affordances?.recommended_entry_points, (e) => e),
    el('p', { class: 'muted' }, `updated ${m.meta?.updated_at ?? ''}`)));
}

async function knowledge(body, ns) {
  const reply = await api(`/v1/knowledge?${query({ namespace: ns, limit: 100 })}`);
  const detail = el('div', { id: 'knowledge-history' });
  const show = async (k) => {
    const audit = await api(`/v1/audit?${query({ record_id: k.decision_id, limit: 50 })}`);
    const evidence = k.evidence_event_ids || [];
    const events = [
      [k.first_seen_us, `first seen (${k.provenance ?? ''})`],
      [k.last_seen_us, `last seen; ${k.frequency ?? 0} occurrences in ${k.unique_contexts ?? 0} contexts`],
      // The audit log comes newest first; oldest first here, so that ties keep their order.
      ...audit.audit.slice().reverse().map((a) =>
        [a.at_us, `${a.action} by ${a.actor}${a.rationale ? `: ${a.rationale}` : ''}`]),
      [k.updated_us, `last updated: phase ${k.phase}, vitality ${k.vitality}, status ${k.status}`],
    ].filter(([us]) => us).sort((a, b) => a[0] - b[0]);
    detail.replaceChildren(...[
      el('h2', {}, k.title ?? k.decision_id),
      el('p', {}, k.rationale ?? ''),
      el('ul', {}, events.map(([us, text]) => el('li', {}, `${date(us)} · ${text}`))),
      (k.supersedes || []).length ? el('p', {}, `supersedes ${k.supersedes.join(', ')}`) : null,
      k.superseded_by ? el('p', {}, `superseded by ${k.superseded_by}`) : null,
      el('p', { class: 'muted' }, `evidence: ${evidence.slice(0, 20).join(', ')}${evidence.length > 20 ? ' …' : ''}`),
    ].filter(Boolean));
    detail.scrollIntoView();
  };
  const open = (k) => el('a', { href: '#', onclick: (event) => {
    event.preventDefault();
    show(k).catch((e) => showError(e.message));
  } }, k.title ?? k.target ?? k.decision_id);
  body.replaceChildren(detail, reply.knowledge.length ? table([
    ['kind', (k) => k.kind], ['title', open], ['phase', (k) => k.phase ?? ''],
    ['status', (k) => k.status ?? ''], ['vitality', (k) => k.vitality ?? ''], ['confidence', (k) => number(k.confidence, 2)],
    ['last seen', (k) => date(k.last_seen_us)],
  ], reply.knowledge) : el('p', {}, 'No decisions or knowledge streams in this namespace yet.'));
}

async function facts(body, ns, person) {
  const people = await api(`/v1/entities?${query({ namespace: ns, type: 'person', top: 50 })}`);
  const select = el('select', { id: 'person', onchange: () => {
    location.hash = `#/ns/${encodeURIComponent(ns)}/facts/${encodeURIComponent(select.value)}`;
  } }, el('option', { value: '' }, 'a person…'),
  people.entities.map((p) => el('option', { value: p.canonical_key }, p.display_name ?? p.canonical_key)));
  const list = el('div', { id: 'facts' });
  body.replaceChildren(select, list);
  if (!person) return;
  select.value = person;
  const reply = await api(`/v1/facts?${query({ namespace: ns, entity: person, limit: 500 })}`);
  const sorted = reply.facts.slice().sort((a, b) => String(a.valid_from).localeCompare(String(b.valid_from)));
  list.replaceChildren(...sorted.map((f) => el('div', { class: 'fact' },
    el('div', { class: 'meta' }, `${f.valid_from ?? ''}${f.valid_to && f.valid_to !== f.valid_from ? ` – ${f.valid_to}` : ''}` +
      `${f.attribute ? ` · ${f.attribute}` : ''}${f.is_stale ? ' · stale' : ''}`),
    el('div', {}, f.statement))));
  if (!sorted.length) list.replaceChildren(el('p', {}, 'No facts about this person.'));
}

async function graph(body, ns) {
  const reply = await api(`/v1/entities?${query({ namespace: ns, top: 40, edges: true })}`);
  const observations = await api(`/v1/observations?${query({ namespace: ns, type: 'community', limit: 500 })}`);
  const title = new Map(observations.observations.map((o) => [o.observation_id, o.title]));
  const container = el('div', { id: 'graph' });
  body.replaceChildren(container);
  const max = Math.max(...reply.entities.map((e) => e.importance_score), 1e-9);
  const keys = new Set(reply.entities.map((e) => e.canonical_key));
  // Louvain gives each entity one community; the first listed is kept should a run leave two.
  const community = new Map();
  for (const c of reply.communities || []) if (!community.has(c.canonical_key)) community.set(c.canonical_key, c.community);
  const groups = [...new Set(community.values())];
  window.reflectdGraph = cytoscape({
    container,
    elements: [
      ...groups.map((id) => ({ data: { id: `community-${id}`, label: title.get(id) ?? `community ${id}`, community: true } })),
      ...reply.entities.filter((e) => e.canonical_key).map((e) => ({ data: {
        id: e.canonical_key, label: e.display_name ?? e.canonical_key, type: e.entity_type,
        size: 16 + 44 * (e.importance_score / max),
        parent: community.has(e.canonical_key) ? `community-${community.get(e.canonical_key)}` : undefined } })),
      ...(reply.edges || []).filter((r) => keys.has(r.source) && keys.has(r.target)).map((r, i) => ({ data: {
        id: `edge-${i}`, source: r.source, target: r.target, width: 1 + 5 * r.strength } })),
    ],
    style: [
      { selector: 'node', style: { label: 'data(label)', width: 'data(size)', height: 'data(size)',
        'background-color': '#2f6fdd', 'font-size': 10 } },
      { selector: 'node[type = "person"]', style: { 'background-color': '#c2410c' } },
      { selector: ':parent', style: { 'background-color': '#eef2f7', 'background-opacity': 0.6, 'border-color': '#b6c2cf',
        'border-width': 1, shape: 'round-rectangle', 'text-valign': 'top', 'font-size': 9, color: '#5d6b78' } },
      { selector: 'edge', style: { width: 'data(width)', 'line-color': '#b6c2cf', 'curve-style': 'haystack' } },
    ],
    layout: { name: 'cose', animate: false, randomize: false },
  });
}

// ------------------------------------------------------------------------------------ router

async function namespaces() {
  const nav = document.getElementById('namespaces');
  try {
    const reply = await api('/v1/medallion?action=list&limit=1000');
    const ids = reply.medallions.map((m) => m.id).filter((id) => id.startsWith('med:')).map((id) => id.slice(4));
    nav.replaceChildren(...ids.map((ns) => el('a', { href: `#/ns/${encodeURIComponent(ns)}/timeline` }, ns)));
  } catch (error) {
    nav.replaceChildren();
  }
}

async function route() {
  const current = ++state.route;
  const stale = () => current !== state.route;
  clearInterval(state.timer);
  showError('');
  const page = document.getElementById('page');
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  try {
    const status = await api('/v1/status');
    if (stale()) return;
    state.caller = status.caller;
    document.getElementById('who').textContent =
      `${status.caller?.agent_id || 'operator'}${status.caller?.admin ? ' (admin)' : ''}`;
    await namespaces();
    if (stale()) return;
    if (parts[0] === 'ns' && parts[1]) {
      await namespacePage(page, parts[1], TABS.includes(parts[2]) ? parts[2] : 'timeline', parts[3]);
    } else {
      await overview(page);
      if (stale()) return;
      state.timer = setInterval(() => overview(page).catch((e) => showError(e.message)), 2000);
    }
    if (stale()) return;
    page.setAttribute('data-ready', location.hash || '#/');
  } catch (error) {
    if (stale()) return;
    showError(error.message);
    page.replaceChildren(el('p', {}, 'Enter a bearer token of security.http_tokens_file above.'));
  }
}

document.getElementById('token').value = state.token;
document.getElementById('token-form').onsubmit = (event) => {
  event.preventDefault();
  state.token = document.getElementById('token').value.trim();
  sessionStorage.setItem('reflectd-token', state.token);
  route();
};
window.addEventListener('hashchange', route);
route();
