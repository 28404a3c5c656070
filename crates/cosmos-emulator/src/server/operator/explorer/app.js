// The emulator explorer: calls the emulator's admin API (Authorization: Bearer <key>) and its
// data API (master-key signatures made here with WebCrypto). Everything shown that comes from
// the emulator is set as text (textContent), never parsed as HTML.
'use strict';

const WELL_KNOWN_KEY =
  'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==';
const MAX_QUERY_PAGES = 20;

const $ = (id) => document.getElementById(id);
const state = { key: '', hmac: null, regions: [], db: null, coll: null, refreshing: false, timer: null };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function button(text, cls, onClick) {
  const b = el('button', text, cls);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

// A failed call's message: the service's own `message` when its body has one.
async function failure(response, what) {
  let detail = '';
  try {
    const text = await response.text();
    try {
      const body = JSON.parse(text);
      detail = body && typeof body.message === 'string' ? body.message : text;
    } catch (_) {
      detail = text;
    }
  } catch (_) {
    detail = '';
  }
  return new Error(`${what} answered ${response.status}${detail ? ': ' + detail : ''}`);
}

async function admin(method, path, body) {
  const headers = { Authorization: 'Bearer ' + state.key };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response, `${method} ${path}`);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

async function importKey(key) {
  if (!window.crypto || !window.crypto.subtle) {
    throw new Error('This page needs WebCrypto, which browsers offer only in a secure context: open it through localhost or 127.0.0.1, or serve the emulator with --tls.');
  }
  let raw;
  try {
    raw = Uint8Array.from(atob(key.trim()), (c) => c.charCodeAt(0));
  } catch (_) {
    throw new Error('The key is not base64.');
  }
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

// The resource type and link a path of (unencoded) names is signed with.
function signingParts(names) {
  if (names.length === 0) return ['', ''];
  if (names.length % 2 === 1) {
    return [names[names.length - 1], names.slice(0, -1).join('/')];
  }
  return [names[names.length - 2], names.join('/')];
}

async function authorization(verb, names, date) {
  const [type, link] = signingParts(names);
  const text = `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = await crypto.subtle.sign('HMAC', state.hmac, new TextEncoder().encode(text));
  let binary = '';
  for (const b of new Uint8Array(sig)) binary += String.fromCharCode(b);
  return encodeURIComponent(`type=master&ver=1.0&sig=${btoa(binary)}`);
}

// A data-plane request to the resource path `names` (e.g. ['dbs', 'db', 'colls']).
async function data(method, names, extraHeaders, body) {
  const date = new Date().toUTCString();
  const headers = Object.assign(
    {
      'x-ms-date': date,
      'x-ms-version': '2020-07-15',
      authorization: await authorization(method, names, date),
    },
    extraHeaders || {},
  );
  const path = '/' + names.map(encodeURIComponent).join('/');
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response, `${method} ${path}`);
  const charge = Number(response.headers.get('x-ms-request-charge') || 0);
  const continuation = response.headers.get('x-ms-continuation');
  const text = await response.text();
  return { body: text ? JSON.parse(text) : null, charge, continuation };
}

function fillSelect(select, values, keepFirst) {
  const current = select.value;
  while (select.options.length > (keepFirst ? 1 : 0)) select.remove(keepFirst ? 1 : 0);
  for (const v of values) {
    const option = el('option', v);
    option.value = v;
    select.appendChild(option);
  }
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}

function renderRegions(status, counters) {
  const body = $('regions');
  body.replaceChildren();
  for (const r of status.regions) {
    const row = el('tr');
    row.dataset.region = r.name;
    row.appendChild(el('td', r.name, 'name'));
    row.appendChild(el('td', r.role, 'role role-' + r.role));
    row.appendChild(el('td', r.lag, 'lag num'));
    row.appendChild(el('td', r.writesBehind, 'behind num'));
    row.appendChild(el('td', r.outage || '-', 'outage'));
    const kinds = counters[r.name] || {};
    const parts = Object.keys(kinds)
      .sort()
      .filter((k) => kinds[k] > 0)
      .map((k) => `${k} ${kinds[k]}`);
    row.appendChild(el('td', parts.length ? parts.join(' · ') : 'none', 'counters'));
    body.appendChild(row);
  }
  $('write-region').textContent = status.writeRegion;
  $('active-profile').textContent = status.profile;
  const names = status.regions.map((r) => r.name);
  if (names.join('\n') !== state.regions.join('\n')) {
    state.regions = names;
    fillSelect($('failover-region'), names, false);
    fillSelect($('outage-region'), names, false);
    fillSelect($('fault-region'), names, true);
  }
}

function describeCondition(rule) {
  const parts = [];
  if (rule.regions && rule.regions.length) parts.push('regions ' + rule.regions.join(', '));
  if (rule.ops && rule.ops.length) parts.push('ops ' + rule.ops.join(', '));
  if (rule.path) parts.push('path ' + rule.path);
  if (rule.probability !== undefined && rule.probability !== 1) parts.push('p=' + rule.probability);
  if (rule.first !== undefined && rule.first !== null) parts.push('first ' + rule.first);
  if (rule.after) parts.push('after ' + rule.after);
  return parts.length ? parts.join('; ') : 'every request';
}

function renderFaults(listing) {
  const body = $('faults');
  body.replaceChildren();
  for (const rule of listing.rules || []) {
    const row = el('tr', null, rule.enabled === false ? 'disabled' : '');
    row.dataset.ruleId = String(rule.id);
    row.appendChild(el('td', rule.id, 'id'));
    row.appendChild(el('td', rule.name || '', 'name'));
    row.appendChild(el('td', describeCondition(rule), 'condition'));
    row.appendChild(el('td', JSON.stringify(rule.reaction), 'reaction'));
    row.appendChild(el('td', rule.hits, 'hits num'));
    row.appendChild(el('td', rule.enabled === false ? 'disabled' : 'enabled', 'state'));
    const actions = el('td');
    const enabled = rule.enabled !== false;
    actions.appendChild(
      button(enabled ? 'Disable' : 'Enable', 'toggle', () =>
        act(() => admin('PATCH', `/_emulator/faults/${encodeURIComponent(rule.id)}`, { enabled: !enabled })),
      ),
    );
    actions.appendChild(
      button('Delete', 'delete', () =>
        act(() => admin('DELETE', `/_emulator/faults/${encodeURIComponent(rule.id)}`)),
      ),
    );
    row.appendChild(actions);
    body.appendChild(row);
  }
}

function faultTemplate(name, region) {
  const regions = region ? [region] : [];
  switch (name) {
    case 'throttle':
      return { name: 'throttle-reads', regions, ops: ['read'], reaction: { respond: { status: 429, sub_status: 3200, retry_after_ms: 50 } } };
    case 'unavailable':
      return { name: 'unavailable', regions, reaction: { respond: { status: 503, sub_status: 0 } } };
    case 'slow':
      return { name: 'slow-reads', regions, ops: ['read'], reaction: { delay: { fixed_ms: 200 } } };
    case 'close':
      return { name: 'close-writes', regions, ops: ['create', 'upsert', 'replace', 'delete', 'patch'], reaction: 'close' };
    case 'timeout':
      return { name: 'timeout-after-write', regions, ops: ['create', 'upsert', 'replace'], reaction: { execute_then_respond: { status: 408 } } };
    default:
      throw new Error('unknown template ' + name);
  }
}

async function refresh() {
  if (state.refreshing || !state.hmac) return;
  state.refreshing = true;
  try {
    const [status, counters, faults] = await Promise.all([
      admin('GET', '/_emulator/status'),
      admin('GET', '/_emulator/counters'),
      admin('GET', '/_emulator/faults'),
    ]);
    renderRegions(status, counters || {});
    renderFaults(faults || {});
    $('conn-state').textContent = 'connected, refreshed ' + new Date().toLocaleTimeString();
  } catch (e) {
    $('conn-state').textContent = 'refresh failed';
    showError(e.message);
  } finally {
    state.refreshing = false;
  }
}

// Runs an action, shows its error if it fails, then refreshes.
async function act(action) {
  try {
    await action();
    showError('');
  } catch (e) {
    showError(e.message);
  }
  await refresh();
}

function picker(list, values, selected, onPick) {
  list.replaceChildren();
  for (const v of values) {
    const item = el('li');
    item.appendChild(button(v, v === selected ? 'selected' : '', () => onPick(v)));
    list.appendChild(item);
  }
  if (!values.length) list.appendChild(el('li', 'none', 'muted'));
}

async function loadDatabases() {
  const { body } = await data('GET', ['dbs']);
  const ids = (body.Databases || []).map((d) => d.id);
  picker($('databases'), ids, state.db, (id) => act(() => pickDatabase(id)));
}

async function pickDatabase(id) {
  state.db = id;
  state.coll = null;
  $('items').replaceChildren();
  await loadDatabases();
  const { body } = await data('GET', ['dbs', id, 'colls']);
  const ids = (body.DocumentCollections || []).map((c) => c.id);
  picker($('containers'), ids, state.coll, (c) => act(() => pickContainer(c)));
}

async function pickContainer(id) {
  state.coll = id;
  const { body: colls } = await data('GET', ['dbs', state.db, 'colls']);
  picker($('containers'), (colls.DocumentCollections || []).map((c) => c.id), id, (c) => act(() => pickContainer(c)));
  const { body, charge } = await data('GET', ['dbs', state.db, 'colls', id, 'docs'], { 'x-ms-max-item-count': '50' });
  const list = $('items');
  list.replaceChildren();
  for (const doc of body.Documents || []) list.appendChild(el('li', JSON.stringify(doc)));
  $('items-where').textContent = `in ${state.db}/${id} (first page, ${charge} RU)`;
}

async function runQuery() {
  const errorBox = $('query-error');
  errorBox.hidden = true;
  $('query-results').textContent = '';
  $('query-plan').textContent = '';
  $('query-charge').textContent = '-';
  $('query-count').textContent = '-';
  if (!state.db || !state.coll) throw new Error('Pick a database and a container first.');
  const body = { query: $('query').value, parameters: [] };
  const names = ['dbs', state.db, 'colls', state.coll, 'docs'];
  const base = {
    'content-type': 'application/query+json',
    'x-ms-documentdb-isquery': 'True',
    'x-ms-documentdb-query-enablecrosspartition': 'True',
  };
  const pk = $('query-pk').value.trim();
  if (pk) {
    let value;
    try {
      value = JSON.parse(pk);
    } catch (_) {
      throw new Error('The partition key is not JSON (a string needs quotes).');
    }
    base['x-ms-documentdb-partitionkey'] = JSON.stringify(Array.isArray(value) ? value : [value]);
  }
  let planError = null;
  try {
    const plan = await data('POST', names, Object.assign({ 'x-ms-cosmos-is-query-plan-request': 'True' }, base), body);
    $('query-plan').textContent = JSON.stringify(plan.body, null, 2);
  } catch (e) {
    planError = e;
    $('query-plan').textContent = e.message;
  }
  const rows = [];
  let charge = 0;
  let continuation = null;
  try {
    for (let page = 0; page < MAX_QUERY_PAGES; page++) {
      const headers = Object.assign({}, base);
      if (continuation) headers['x-ms-continuation'] = continuation;
      const answer = await data('POST', names, headers, body);
      charge += answer.charge;
      rows.push(...((answer.body && answer.body.Documents) || []));
      continuation = answer.continuation;
      if (!continuation) break;
    }
  } catch (e) {
    errorBox.textContent = e.message;
    errorBox.hidden = false;
    if (planError) throw planError;
    return;
  } finally {
    $('query-charge').textContent = charge.toFixed(2);
  }
  $('query-count').textContent = String(rows.length) + (continuation ? ` (first ${MAX_QUERY_PAGES} pages)` : '');
  $('query-results').textContent = JSON.stringify(rows, null, 2);
}

async function connect() {
  try {
    state.key = $('key').value.trim();
    state.hmac = await importKey(state.key);
    showError('');
    await refresh();
    await loadDatabases();
    if (!state.timer) state.timer = setInterval(refresh, 1000);
  } catch (e) {
    showError(e.message);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('key').value = WELL_KNOWN_KEY;
  $('connect').addEventListener('click', connect);
  $('failover').addEventListener('click', () =>
    act(() => admin('POST', '/_emulator/failover', { writeRegion: $('failover-region').value })),
  );
  $('profile-apply').addEventListener('click', () =>
    act(() => admin('PUT', '/_emulator/profile', { name: $('profile').value })),
  );
  $('counters-reset').addEventListener('click', () => act(() => admin('DELETE', '/_emulator/counters')));
  $('outage-apply').addEventListener('click', () =>
    act(() => admin('PUT', '/_emulator/outages', { region: $('outage-region').value, mode: $('outage-mode').value })),
  );
  $('outage-end-all').addEventListener('click', () => act(() => admin('DELETE', '/_emulator/outages')));
  $('fault-add').addEventListener('click', () =>
    act(() => admin('POST', '/_emulator/faults', { rules: [faultTemplate($('fault-template').value, $('fault-region').value)] })),
  );
  $('fault-clear').addEventListener('click', () => act(() => admin('DELETE', '/_emulator/faults')));
  $('query-run').addEventListener('click', () => runQuery().catch((e) => showError(e.message)));
  connect();
});
