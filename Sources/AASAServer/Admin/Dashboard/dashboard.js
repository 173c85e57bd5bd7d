'use strict';
// aasa-server's admin dashboard: renders the admin listener's JSON (/status, /fetches, /traffic, /match),
// POSTs /acme/retry for a domain's "Retry now" button, and edits a domain's site.json through the tenant API
// (/api/v1/).
// Everything shown comes from tenants' configs or clients' requests, so it is only ever inserted as text
// (createElement, textContent), never parsed as HTML.

// --- Settings ---

const PAGE_SIZE = 50;
const SOON_DAYS = 14;
const DAY_MS = 86400000;
const TOKEN_KEY = 'aasa-admin-token';
const POLL_MS = { status: 5000, fetches: 3000, traffic: 15000 };
const CLIENT_CLASSES = ['apple-cdn', 'device', 'google', 'browser', 'other'];
const SERVICE_ORDER = ['applinks', 'webcredentials', 'appclips', 'authsrv', 'android'];
// The order a column starts in when first chosen: names A–Z, expiry soonest first, times newest first.
const FIRST_ORDER = { name: 'asc', state: 'asc', loaded: 'desc', expiry: 'asc', changed: 'desc' };
const SORT_NAMES = { name: 'name', state: 'state', loaded: 'load time', expiry: 'certificate expiry', changed: 'last change' };
// Badge colours by value; a badge always shows the value's text too.
const TONES = {
  published: 'ok', ok: 'ok', valid: 'ok', 'in-sync': 'ok', match: 'ok',
  stale: 'warn', errors: 'warn', unreachable: 'warn', excluded: 'warn',
  failed: 'bad', 'invalid-url': 'bad', reconnecting: 'bad', connecting: 'warn', connected: 'ok',
  'serving snapshot': 'warn',
  removing: 'info', pending: 'info', renewing: 'info', manifest: 'info', queued: 'info', 'in-progress': 'info',
};
const STATE_ICONS = { published: '✓', stale: '!', failed: '✕', removing: '–' };

// --- State: each table's query, and what was rendered last (unchanged data is not re-rendered) ---

const view = {
  domains: { offset: 0, q: '', state: '', sort: 'name', order: 'asc' },
  fetches: { domain: '', client: '' },
  matching: 0,
  rows: new Map(), // domain → { key, rows } of the page shown
  openDetails: new Map(), // a row's <details> key → open or closed by the user
  keys: {}, // section → JSON of the data it shows
  traffic: null,
  retries: new Map(), // domain → { text, tone, busy } of its last "Retry now"
};
const connection = { updated: null, failures: new Map(), mode: '' };
const auth = { needed: false, memoryToken: '' };

// --- DOM helpers: attributes are set one by one (never `style`), children are nodes or text ---

const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** An HTML element; props are `class`, `text`, `data` (dataset) or attributes. */
function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'data') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...children.flat(Infinity).filter((child) => child != null && child !== false));
  return node;
}

/** An SVG element. */
function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  node.append(...children.flat(Infinity).filter((child) => child != null));
  return node;
}

function badge(value, icon = '') {
  return h('span', { class: `badge tone-${TONES[value] || 'neutral'}` },
    icon && h('span', { class: 'badge-icon', 'aria-hidden': 'true', text: icon }), value);
}

const muted = (text) => h('span', { class: 'muted', text });

/** Text with each `quoted` part as <code>, as the server quotes paths and keys. */
const withCode = (text) => String(text).split(/`([^`\n]+)`/).map((part, i) => (i % 2 ? h('code', { text: part }) : part));

/** Text that may wrap after its dots (app IDs), where CSS lets <wbr> count. */
const breakAtDots = (text) => String(text).split(/(?<=\.)/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));

const joinNodes = (nodes) => nodes.flatMap((node, i) => (i ? [', ', node] : [node]));

/** Makes `parent`'s children exactly `nodes`, moving only what is out of place, so unchanged rows keep focus. */
function syncChildren(parent, nodes) {
  nodes.forEach((node, i) => {
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
  });
  while (parent.children.length > nodes.length) parent.lastElementChild.remove();
}

/** Runs `update`; if that removed the focused element, focuses its replacement (same data-focus-key). */
function keepingFocus(container, update) {
  const key = container.contains(document.activeElement) ? document.activeElement.dataset.focusKey : undefined;
  update();
  if (key && !container.contains(document.activeElement)) $(`[data-focus-key="${CSS.escape(key)}"]`, container)?.focus({ preventScroll: true });
}

/** Whether `data` differs from what `section` last rendered (and remembers it). */
function changed(section, data) {
  const key = JSON.stringify(data);
  if (view.keys[section] === key) return false;
  view.keys[section] = key;
  return true;
}

const scrollBehavior = () => (matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth');

// --- Formatting ---

const numberFormat = new Intl.NumberFormat();
const rateFormat = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 2 });
const clockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const minuteFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

const num = (n) => numberFormat.format(n);
const plural = (n, one) => `${num(n)} ${n === 1 ? one : `${one}s`}`;
const clock = (iso) => clockFormat.format(new Date(iso));
const rateText = (rate) => (rate === 0 ? '0' : rateFormat.format(rate));
const rank = (list, value) => (list.includes(value) ? list.indexOf(value) : list.length);

/** "45 s", "12 min", "3 h", "5 days". */
function duration(ms) {
  const seconds = Math.abs(ms) / 1000;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 129600) return `${Math.round(seconds / 3600)} h`;
  return plural(Math.round(seconds / 86400), 'day');
}

/** "just now", "3 min ago", "in 2 days". */
function relative(iso, now = Date.now()) {
  const delta = Date.parse(iso) - now;
  if (Math.abs(delta) < 5000) return 'just now';
  return delta < 0 ? `${duration(delta)} ago` : `in ${duration(delta)}`;
}

/** A relative <time>, kept current by refreshTimes; its title is the ISO time. */
function timeAgo(iso, fallback = '—') {
  if (!iso) return muted(fallback);
  return h('time', { datetime: iso, title: iso, data: { relative: '' }, text: relative(iso) });
}

function refreshTimes() {
  const now = Date.now();
  for (const node of $$('time[data-relative]')) node.textContent = relative(node.dateTime, now);
}

/** "expires in 9 days", "expires in 5 h", "expired 3 days ago". */
function expiryText(ms) {
  if (ms < 0) return `expired ${duration(ms)} ago`;
  return `expires in ${ms < DAY_MS ? duration(ms) : plural(Math.floor(ms / DAY_MS), 'day')}`;
}

/** A wait in words: "under a minute", "about 12 minutes", "about 3 hours", "about 4 days". */
function aboutText(seconds) {
  if (seconds < 60) return 'under a minute';
  if (seconds < 5400) return `about ${plural(Math.round(seconds / 60), 'minute')}`;
  if (seconds < 129600) return `about ${plural(Math.round(seconds / 3600), 'hour')}`;
  return `about ${plural(Math.round(seconds / 86400), 'day')}`;
}

const bytesText = (bytes) => (bytes < 1000 ? `${num(bytes)} B` : `${(bytes / 1000).toFixed(1)} kB`);

// --- Requests: same origin, never cached, with the admin token when there is one ---

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function readToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || auth.memoryToken;
  } catch {
    return auth.memoryToken; // storage disabled: the token lives as long as the page
  }
}

function storeToken(token) {
  auth.memoryToken = token;
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage disabled: memoryToken serves
  }
  $('#token-forget').hidden = !token;
}

/** A request to this origin with the token: `{ status, ok, text, json, etag }` (`json` null when the body is none).
 * A 401 asks for the token and throws, as does a failure to reach the server. */
async function request(path, { method = 'GET', headers = {}, body, signal } = {}) {
  const token = readToken();
  let response;
  try {
    response = await fetch(path, { method, body, signal, cache: 'no-store', headers: token ? { ...headers, Authorization: `Bearer ${token}` } : headers });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, 'the server does not answer');
  }
  if (response.status === 401) {
    requireToken(Boolean(token));
    throw new ApiError(401, 'the admin token is missing or was refused');
  }
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: `text` serves
  }
  return { status: response.status, ok: response.ok, text, json, etag: response.headers.get('ETag') };
}

/** GETs a JSON endpoint. A 401 asks for the token; other failures throw the server's `error` text. */
async function api(path, signal) {
  const answer = await request(path, { signal });
  if (!answer.ok) throw new ApiError(answer.status, answer.json?.error || `the server answered HTTP ${answer.status}`);
  if (answer.json === null) throw new ApiError(answer.status, 'the answer is not JSON');
  return answer.json;
}

// --- Token form: shown on the first 401; polling waits until a token is given ---

function requireToken(refused) {
  if (auth.needed) return;
  auth.needed = true;
  Object.values(pollers).forEach((poller) => poller.stop());
  $('#token-error').hidden = !refused;
  $('#token-form').hidden = false;
  $('#token').focus();
  renderConnection();
}

function onTokenSubmit(event) {
  event.preventDefault();
  const token = $('#token').value.trim();
  if (!token) return;
  storeToken(token);
  $('#token').value = '';
  $('#token-form').hidden = true;
  auth.needed = false;
  runAllPollers();
  if ($('#try-result').dataset.needsToken) runTry($('#try-url').value);
  if (editor.name && !isDirty()) {
    editor.caller = null; // another token, maybe another scope
    openEditor(editor.name);
  }
}

// --- Polling: one timer per endpoint, paused while the tab is hidden. A run never overlaps the previous
// one; asking for a run during one makes another follow it at once (a filter changed meanwhile). ---

function poller(name, interval, load) {
  let timer = 0;
  let running = false;
  let again = false;
  async function run() {
    clearTimeout(timer);
    if (running) {
      again = true;
      return;
    }
    if (document.hidden || auth.needed) return;
    running = true;
    try {
      await load();
      connection.failures.delete(name);
      connection.updated = new Date();
    } catch (error) {
      if (error.status !== 401) connection.failures.set(name, error.message);
    }
    running = false;
    renderConnection();
    if (again) {
      again = false;
      run();
    } else if (!document.hidden && !auth.needed) {
      timer = setTimeout(run, interval);
    }
  }
  return { run, stop: () => clearTimeout(timer) };
}

const pollers = {
  status: poller('status', POLL_MS.status, loadStatus),
  fetches: poller('fetches', POLL_MS.fetches, loadFetches),
  traffic: poller('traffic', POLL_MS.traffic, loadTraffic),
};

const runAllPollers = () => Object.values(pollers).forEach((poller) => poller.run());

function onVisibilityChange() {
  if (document.hidden) Object.values(pollers).forEach((poller) => poller.stop());
  else runAllPollers();
  renderConnection();
}

/** The header's line: when data last came, or why it does not. Only changes of mode are announced. */
function renderConnection() {
  const updated = connection.updated ? `updated ${clockFormat.format(connection.updated)}` : 'no data yet';
  let [mode, text] = ['', 'Connecting…'];
  if (auth.needed) [mode, text] = ['paused', 'Waiting for the admin token'];
  else if (connection.failures.size) {
    [mode, text] = ['error', `Cannot refresh: ${connection.failures.values().next().value}. Retrying… (${updated})`];
  } else if (document.hidden) [mode, text] = ['paused', `Paused while hidden (${updated})`];
  else if (connection.updated) [mode, text] = ['ok', `Live, ${updated}`];
  $('#live').className = `live is-${mode}`;
  $('#live-text').textContent = text;
  if (mode !== connection.mode) {
    if (mode === 'error') $('#live-alert').textContent = text;
    else if (connection.mode === 'error') $('#live-alert').textContent = 'Refreshing again.';
    connection.mode = mode;
  }
}

// --- /status: summary, the page of domains, reloads ---

function statusPath() {
  const { offset, q, state, sort, order } = view.domains;
  const params = new URLSearchParams({ offset, limit: PAGE_SIZE, sort, order });
  if (q) params.set('q', q);
  if (state) params.set('state', state);
  return `/status?${params}`;
}

async function loadStatus() {
  const path = statusPath();
  const status = await api(path);
  if (path !== statusPath()) return; // the query changed meanwhile; the run that follows renders
  const count = Object.keys(status.domains).length;
  const page = status.page || { matching: count, total: count };
  if (page.matching > 0 && view.domains.offset >= page.matching) {
    // The list shrank under this page: show its last page.
    view.domains.offset = Math.floor((page.matching - 1) / PAGE_SIZE) * PAGE_SIZE;
    pollers.status.run();
  }
  renderSummary(status);
  renderStore(status.store);
  renderQueue(status.acme);
  renderDomains(status, page);
  renderReloads(status);
  refreshTimes();
}

// Summary: counts by state (each a filter), certificates, start and last reload.
function renderSummary({ summary = {}, started, lastReload: reload }) {
  const counts = {
    domains: summary.domains, ...summary.states,
    expiring: summary.certificatesExpiringSoon, 'cert-errors': summary.certificateErrors,
  };
  for (const [name, value] of Object.entries(counts)) {
    const node = $(`#stat-${name}`);
    if (!node) continue;
    node.textContent = num(value ?? 0);
    node.parentElement.classList.toggle('is-zero', !value);
  }
  if (!changed('facts', [started, reload])) return;
  $('#started').replaceChildren(dateFormat.format(new Date(started)), ' ', h('span', { class: 'muted' }, '(', timeAgo(started), ')'));
  $('#last-reload').replaceChildren(...(reload ? [
    h('span', { title: reload.time, text: clock(reload.time) }), ' ', h('span', { class: 'muted' }, '(', timeAgo(reload.time), ')'),
    ' by ', h('span', { class: 'trigger', text: reload.trigger }), ' ', badge(reload.result),
    reload.errors?.length ? h('a', { href: '#reloads', text: plural(reload.errors.length, 'error') }) : null,
  ].filter(Boolean) : ['–']));
}

// The store a replica reads (serve --store): whether it is connected, which replica this is, the last change.
function renderStore(store) {
  $('#store-fact').hidden = !store;
  if (!store || !changed('store', store)) return;
  const applied = store.lastChangeAppliedAt;
  $('#store').replaceChildren(...[
    badge(store.state), ' ', h('span', { class: 'mono', text: store.server }),
    ' · replica ', h('strong', { class: 'replica', text: store.replica }),
    ' · change ', h('span', { class: 'last-change', text: num(store.lastChange) }),
    applied ? h('span', { class: 'muted', title: applied }, ' applied ', timeAgo(applied)) : null,
    store.servingSnapshot ? [' ', badge('serving snapshot')] : null,
    store.problem ? h('span', { class: 'muted store-problem', text: ` (${store.problem})` }) : null,
  ].flat().filter(Boolean));
}

// ACME's queue of new orders (serve --acme): how many wait, the rate, when the last one is placed, the CA's pause.
function renderQueue(acme) {
  $('#acme-queue').hidden = !acme;
  // Re-rendered each minute too: the pause's "in …" counts down.
  if (!acme || !changed('queue', [acme, Math.floor(Date.now() / 60000)])) return;
  const queue = acme.queue || {};
  const pending = queue.pending ?? 0;
  $('#queue-pending').textContent = plural(pending, 'order');
  $('#queue-rate').textContent = queue.ratePerHour == null ? 'not paced' : `${rateText(queue.ratePerHour)} new orders per hour`;
  $('#queue-eta').textContent = !pending ? 'nothing waiting' : queue.etaSeconds == null ? 'not known yet' : aboutText(queue.etaSeconds);
  const orders = acme.orders || {};
  $('#queue-orders').textContent = `${num(orders.valid ?? 0)} issued, ${num(orders.failed ?? 0)} failed`;
  const pause = $('#queue-pause');
  pause.hidden = !queue.pausedUntil;
  if (!queue.pausedUntil) return pause.replaceChildren();
  const left = (Date.parse(queue.pausedUntil) - Date.now()) / 1000;
  pause.replaceChildren(h('strong', { text: 'Paused. ' }),
    'Every new order waits until ', h('time', { datetime: queue.pausedUntil, title: queue.pausedUntil, text: dateFormat.format(new Date(queue.pausedUntil)) }),
    ` (${left > 0 ? `in ${aboutText(left)}` : 'now'})`,
    ...(queue.pauseReason ? [': ', h('span', { class: 'pause-reason', text: queue.pauseReason })] : ['.']));
}

function markPressedStats() {
  const { state, sort, order } = view.domains;
  for (const button of $$('[data-state-filter]')) button.setAttribute('aria-pressed', button.dataset.stateFilter === state);
  $('#stat-expiring-button').setAttribute('aria-pressed', sort === 'expiry' && order === 'asc');
}

// Domains: a row per domain of the page, and a problems row under each that has problems. A row is rebuilt
// only when its data changed, so focus, open details and scroll position survive the refreshes.
function renderDomains(status, page) {
  view.matching = page.matching;
  const table = $('#domains');
  const hour = Math.floor(Date.now() / 3600000); // expiry texts are rebuilt hourly
  const rows = [];
  const cache = new Map();
  for (const [name, domain] of Object.entries(status.domains)) {
    const certificate = status.certificates?.[domain.certificateFolder];
    const key = JSON.stringify([domain, certificate, hour, view.retries.get(name)]);
    const cached = view.rows.get(name);
    const entry = cached?.key === key ? cached : { key, rows: domainRows(name, domain, certificate) };
    cache.set(name, entry);
    rows.push(...entry.rows);
  }
  view.rows = cache;
  if (!rows.length) rows.push(emptyDomainsRow());
  // Without the background CDN check, the CDN column is hidden.
  table.classList.toggle('no-cdn', !Object.values(status.domains).some((domain) => domain.cdn));
  keepingFocus(table.tBodies[0], () => syncChildren(table.tBodies[0], rows));
  renderPager(page);
}

function emptyRow(columns, ...content) {
  return h('tr', { class: 'empty-row' }, h('td', { colspan: columns }, content));
}

function emptyDomainsRow() {
  const { q, state } = view.domains;
  if (!q && !state) return emptyRow(8, 'No domain folders are configured.');
  return emptyRow(8, `No ${state ? `${state} ` : ''}domains${q ? ` whose name contains “${q}”` : ''}. `,
    h('button', { type: 'button', class: 'btn btn-small', data: { clearFilters: '', focusKey: 'clear' }, text: 'Clear filters' }));
}

function domainRows(name, domain, certificate) {
  const row = h('tr', { data: { domain: name, state: domain.state } },
    h('th', { scope: 'row', class: 'cell-name', text: name }),
    h('td', { class: 'cell-state', 'data-label': 'State' }, badge(domain.state, STATE_ICONS[domain.state]),
      domain.removedSince && h('div', { class: 'cell-sub' }, 'folder gone ', timeAgo(domain.removedSince))),
    h('td', { 'data-label': 'Loaded' }, timeAgo(domain.lastGoodLoad, 'never')),
    h('td', { 'data-label': 'Services' }, servicesList(domain.services, domain.endpoints)),
    certificateCell(name, domain, certificate),
    h('td', { class: 'col-cdn', 'data-label': 'CDN' }, cdnList(domain.cdn)),
    h('td', { class: 'cell-change', 'data-label': 'Last change' }, lastChange(name, domain.lastChange)),
    h('td', { class: 'cell-actions' }, h('div', { class: 'row-actions' }, h('button', {
      type: 'button', class: 'btn btn-small', 'aria-label': `Try a URL of ${name}`, data: { try: name, focusKey: `try:${name}` }, text: 'Try',
    }), h('button', {
      type: 'button', class: 'btn btn-small', 'aria-label': `Edit the site.json of ${name}`, data: { edit: name, focusKey: `edit:${name}` }, text: 'Edit',
    }))));
  const problems = problemsRow(name, domain, certificate);
  if (!problems) return [row];
  row.classList.add('has-problems');
  return [row, problems];
}

/** Each service the domain's files serve with its apps (two shown, all in the title), then the credential
 * endpoints it serves: its passkey endpoints and its change-password page. */
function servicesList(services = {}, endpoints = {}) {
  const names = Object.keys(services).filter((name) => services[name]?.length);
  const passkeys = endpoints.passkeyEndpoints && Object.entries(endpoints.passkeyEndpoints);
  if (!names.length && !passkeys && !endpoints.changePassword) return muted('none');
  names.sort((a, b) => rank(SERVICE_ORDER, a) - rank(SERVICE_ORDER, b));
  return h('ul', { class: 'services' }, names.map((name) => {
    const apps = services[name];
    return h('li', { title: `${name}: ${apps.join(', ')}` }, h('span', { class: 'service', text: name }), ' ',
      h('span', { class: 'mono' }, breakAtDots(apps.slice(0, 2).join(', '))), apps.length > 2 && muted(` +${apps.length - 2}`));
  }), passkeys && h('li', {
    class: 'endpoint', data: { endpoint: 'passkeys' },
    title: passkeys.length ? passkeys.map(([key, url]) => `${key}: ${url}`).join('\n') : 'passkey-endpoints: {} (passkeys supported)',
  }, h('span', { class: 'service', text: 'passkeys' }), ' ', passkeys.length ? passkeys.map(([key]) => key).join(', ') : muted('supported')),
  endpoints.changePassword && h('li', {
    class: 'endpoint', data: { endpoint: 'change-password' }, title: `change-password → ${endpoints.changePassword}`,
  }, h('span', { class: 'service', text: 'change-password' }), ' ', h('span', { class: 'mono' }, breakAtDots(hostName(endpoints.changePassword)))));
}

/** Expiry as text, the certificate's names, and for ACME its state, next order, place in the queue, issuer and
 * "Retry now" while it waits or failed. */
function certificateCell(name, domain, certificate) {
  const info = domain.certificate;
  if (!info && !certificate) return h('td', { 'data-label': 'Certificate' }, muted('no HTTPS'));
  const cell = h('td', { class: 'cell-cert', 'data-label': 'Certificate' });
  const expiry = info ? info.expiry : certificate.notAfter;
  const left = expiry ? Date.parse(expiry) - Date.now() : null;
  const bad = info?.state === 'failed' || (left !== null && left < 0);
  const soon = !bad && left !== null && left < SOON_DAYS * DAY_MS;
  cell.classList.toggle('cert-bad', bad);
  cell.classList.toggle('cert-soon', soon);
  cell.append(h('div', { class: 'cert-expiry' },
    (bad || soon) && h('span', { 'aria-hidden': 'true', text: bad ? '✕ ' : '⚠ ' }),
    expiry ? h('time', { datetime: expiry, title: expiry, text: expiryText(left) })
      : (info?.state === 'pending' ? 'no certificate yet' : 'no certificate covers it')));
  const names = certificate?.names || [];
  if (names.length) {
    cell.append(h('div', { class: 'cell-sub mono', title: names.join(', ') },
      names.slice(0, 2).join(', '), names.length > 2 && ` +${names.length - 2}`));
  }
  if (info?.source === 'acme') {
    const next = { failed: ' retry ', pending: ' order ' }[info.state] || ' renewal ';
    const waiting = info.queuePosition != null;
    cell.append(h('div', { class: 'cell-sub' }, h('span', { class: 'source', text: 'ACME' }), ' ', badge(info.state),
      !waiting && info.nextRenewal && [next, timeAgo(info.nextRenewal)]));
    if (waiting) cell.append(queuePlace(info));
    if (info.issuer) cell.append(h('div', { class: 'cell-sub issuer', title: info.issuer, text: `issued by ${hostName(info.issuer)}` }));
    if (waiting || info.state === 'failed' || info.state === 'pending') cell.append(retryControl(name));
  } else if (info?.state === 'failed') {
    cell.append(h('div', { class: 'cell-sub' }, badge('failed')));
  }
  return cell;
}

/** A waiting order's place in the queue and when it is expected to be placed. */
function queuePlace(info) {
  const left = info.eta ? (Date.parse(info.eta) - Date.now()) / 1000 : null;
  return h('div', { class: 'cell-sub queue-place' }, `#${num(info.queuePosition)} in the queue`,
    info.eta && [', expected ', h('time', { datetime: info.eta, title: info.eta, text: left > 0 ? `in ${aboutText(left)}` : 'now' })]);
}

/** A URL's host name (a CA's name: its directory URL's host), or the URL when it does not parse. */
function hostName(url) {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** "Retry now" and the answer of the last retry of the domain. */
function retryControl(name) {
  const last = view.retries.get(name);
  return h('div', { class: 'retry' },
    h('button', {
      type: 'button', class: 'btn btn-small', 'aria-label': `Retry the certificate order of ${name} now`,
      disabled: Boolean(last?.busy), data: { retry: name, focusKey: `retry:${name}` }, text: last?.busy ? 'Retrying…' : 'Retry now',
    }),
    last && h('p', { class: `cell-sub retry-result text-${last.tone}`, role: 'status', data: { retryResult: name }, text: last.text }));
}

/** POSTs /acme/retry for the row's domain and shows the answer under the button. */
async function onRetryClick(event) {
  const name = event.target.closest('[data-retry]')?.dataset.retry;
  if (!name || view.retries.get(name)?.busy) return;
  view.retries.set(name, { busy: true, tone: 'info', text: 'Asking the server…' });
  pollers.status.run();
  view.retries.set(name, await retryAnswer(name));
  pollers.status.run();
}

/** The server's answer to a retry, in words. */
async function retryAnswer(name) {
  const token = readToken();
  let response;
  try {
    response = await fetch(`/acme/retry?domain=${encodeURIComponent(name)}`, {
      method: 'POST', cache: 'no-store', headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
  } catch {
    return { tone: 'bad', text: 'Not retried: the server does not answer.' };
  }
  if (response.status === 401) {
    requireToken(Boolean(token));
    return { tone: 'bad', text: 'Not retried: the admin token is missing or was refused.' };
  }
  const body = (await response.json().catch(() => null)) || {};
  if (response.status === 202 && body.state === 'in-progress') return { tone: 'ok', text: 'An order is running now.' };
  if (response.status === 202) {
    return { tone: 'ok', text: body.queuePosition ? `Queued: #${num(body.queuePosition)} in the queue.` : 'Queued: it is placed now.' };
  }
  if (response.status === 429 && body.retryAfter) {
    const left = (Date.parse(body.retryAfter) - Date.now()) / 1000;
    return {
      tone: 'warn',
      text: `Not now: it failed validation as often this hour as the CA allows; retry after ${dateFormat.format(new Date(body.retryAfter))}`
        + ` (in ${aboutText(Math.max(0, left))}).`,
    };
  }
  return { tone: 'bad', text: `Not retried (${response.status}): ${body.error || 'the server gave no reason'}` };
}

/** What Apple's CDN and Google hold, a line each; the reason and hint in the title. */
function cdnList(cdn) {
  if (!cdn) return muted('—');
  const lines = [['Apple', cdn.apple], ['Google', cdn.google]].filter(([, entry]) => entry !== undefined);
  return h('ul', { class: 'cdn' }, lines.map(([label, entry]) => h('li', {
    title: entry && [...cdnProblem(entry), entry.checked && `checked ${relative(entry.checked)}`].filter(Boolean).join('\n'),
  }, h('span', { class: 'cdn-name', text: label }), ' ', entry ? badge(entry.state) : muted('not checked'))));
}

/** Why a CDN does not hold what is served, and what to do: reason, error, hint. */
function cdnProblem(entry) {
  return [entry.failureReason && `reason: ${entry.failureReason}`, entry.error, entry.hint && `hint: ${entry.hint}`].filter(Boolean);
}

/** When the domain last changed and what that did to URLs; the details unfold. */
function lastChange(name, change) {
  if (!change) return muted('none since start');
  const summary = h('span', { class: 'change-summary', title: change.summary }, withCode(change.summary));
  const items = [
    ...(change.changes || []).map(changeItem),
    ...[...(change.services || []), ...(change.settings || []), ...(change.notes || [])].map((entry) => h('li', {}, withCode(describe(entry)))),
  ];
  return [h('div', { class: 'cell-sub' }, timeAgo(change.time)),
    items.length ? rowDetails(`change:${name}`, 'change', false, h('summary', {}, summary), h('ul', { class: 'changes' }, items)) : summary];
}

/** One class of URLs whose answer changed: kind, platform, which URLs, examples, the rules before and after. */
function changeItem(change) {
  const rules = [['before', change.oldRule], ['after', change.newRule]].filter(([, rule]) => rule);
  return h('li', {}, h('strong', { text: change.kind }), ' ', muted(change.platform), ': ', withCode(change.description || ''),
    change.examples?.length > 0 && h('div', { class: 'cell-sub' }, 'e.g. ', joinNodes(change.examples.map((url) => h('span', { class: 'mono', text: url })))),
    rules.map(([label, rule]) => h('div', { class: 'cell-sub' }, `${label}: `, h('span', { class: 'mono', text: `${rule.location} ${rule.rule}` }))));
}

/** A service or setting that changed, as `diff` prints it: `webcredentials +ID -ID`, `cacheControl A → B`. */
function describe(entry) {
  if (typeof entry !== 'object' || entry === null) return String(entry);
  if ('service' in entry) return [entry.service, ...(entry.added || []).map((id) => `+${id}`), ...(entry.removed || []).map((id) => `-${id}`)].join(' ');
  if ('setting' in entry) return `${entry.setting} ${entry.old ?? '(none)'} → ${entry.new ?? '(none)'}`;
  return JSON.stringify(entry);
}

/** A <details> in a row: as the user last left it, else open if `openFirst`. */
function rowDetails(key, className, openFirst, ...children) {
  return h('details', { class: className, open: view.openDetails.get(key) ?? openFirst, data: { detailsKey: key } }, children);
}

function onRowDetailsToggle(event) {
  const key = event.target.dataset?.detailsKey;
  if (key) view.openDetails.set(key, event.target.open);
}

/** The domain's errors, its certificate's and the CDN's, under its row; open at first when nothing is served. */
function problemsRow(name, domain, certificate) {
  const errors = domain.errors || [];
  const certificateLines = [domain.certificate?.lastError && `certificate: ${domain.certificate.lastError}`,
    ...(certificate?.errors || []), ...(certificate?.warnings || [])].filter(Boolean);
  const cdnLines = Object.entries(domain.cdn || {})
    .filter(([, entry]) => entry && entry.state !== 'in-sync' && cdnProblem(entry).length)
    .map(([source, entry]) => `${source === 'apple' ? 'Apple CDN' : 'Google'} ${entry.state}: ${cdnProblem(entry).join('; ')}`);
  if (!errors.length && !certificateLines.length && !cdnLines.length) return null;
  const parts = [errors.length && plural(errors.length, 'error'), certificateLines.length && 'certificate problem',
    cdnLines.length && 'CDN problem'].filter(Boolean).join(', ');
  const lead = { failed: 'Not served: ', stale: 'Serving its last good version: ', removing: 'Folder removed: ' }[domain.state] || '';
  const text = lead + (lead ? parts : parts[0].toUpperCase() + parts.slice(1));
  const tone = domain.state === 'failed' || domain.certificate?.state === 'failed' ? 'bad' : 'warn';
  const details = rowDetails(`problems:${name}`, `problems tone-${tone}`, domain.state === 'failed',
    h('summary', { data: { focusKey: `problems:${name}` }, text }),
    domain.state === 'stale' && h('p', { class: 'cell-sub', text: 'Its newest config failed; the version loaded before is served until it is fixed.' }),
    diagnosticsBlock([...errors, ...certificateLines, ...cdnLines]));
  return h('tr', { class: 'problems-row', data: { problemsFor: name } }, h('td', { colspan: 8 }, details));
}

/** Compiler-style lines (`file:line:col: error: [rule] message; fix: …`) in a monospace block, parts marked. */
function diagnosticsBlock(lines) {
  return h('pre', { class: 'diagnostics' }, lines.map(diagnosticLine));
}

function diagnosticLine(text) {
  const [first, ...hints] = String(text).split('\n');
  const line = h('span', {});
  let message = first;
  const found = /(^|\s)(error|warning|note): /.exec(first);
  if (found) {
    const location = first.slice(0, found.index + found[1].length).trim();
    if (location) line.append(h('span', { class: 'diag-location', text: location }), ' ');
    line.append(h('span', { class: `diag-${found[2]}`, text: `${found[2]}:` }), ' ');
    message = first.slice(found.index + found[0].length);
  }
  const fixAt = message.indexOf('; fix: ');
  const [body, fix] = fixAt < 0 ? [message, ''] : [message.slice(0, fixAt), message.slice(fixAt + 7)];
  // Rule ids ([app-id-format]) marked; key paths' [0] are not.
  line.append(...body.split(/(\[[a-z][a-z0-9-]*\])/).map((part, i) => (i % 2 ? h('span', { class: 'diag-rule', text: part }) : part)));
  if (fix) line.append('\n    ', h('span', { class: 'diag-fix', text: `fix: ${fix}` }));
  for (const hint of hints) line.append('\n    ', h('span', { class: 'muted', text: hint.trim() }));
  line.append('\n');
  return line;
}

// Filters, sorting and paging: each change asks for the page at once.
function changeDomainsQuery(changes) {
  Object.assign(view.domains, { offset: 0 }, changes);
  $('#domain-filter').value = view.domains.q;
  $('#state-filter').value = view.domains.state;
  $('#domains-clear').hidden = !view.domains.q && !view.domains.state;
  renderSortHeaders();
  markPressedStats();
  pollers.status.run();
}

function debounce(fn, ms) {
  let timer = 0;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

function renderSortHeaders() {
  const { sort, order } = view.domains;
  const direction = order === 'asc' ? 'ascending' : 'descending';
  for (const th of $$('#domains th[data-sort]')) th.setAttribute('aria-sort', th.dataset.sort === sort ? direction : 'none');
  $('#domains-caption').textContent = `Domains, sorted by ${SORT_NAMES[sort]}, ${direction}`;
}

function onSortClick(event) {
  const sort = event.target.closest('th[data-sort]')?.dataset.sort;
  if (!sort) return;
  const order = sort !== view.domains.sort ? FIRST_ORDER[sort] : view.domains.order === 'asc' ? 'desc' : 'asc';
  changeDomainsQuery({ sort, order });
}

function onPageClick(event) {
  const button = event.target.closest('[data-page]');
  if (!button) return;
  const offset = view.domains.offset + (button.dataset.page === 'next' ? PAGE_SIZE : -PAGE_SIZE);
  if (offset < 0 || offset >= view.matching) return;
  view.domains.offset = offset;
  pollers.status.run();
  if (button.closest('.pager-bottom')) $('#domains-section').scrollIntoView();
}

function renderPager({ matching, total = matching }) {
  const { offset } = view.domains;
  const to = Math.min(offset + PAGE_SIZE, matching);
  const text = matching
    ? `${num(offset + 1)}–${num(to)} of ${num(matching)}${matching !== total ? ` matching (${num(total)} in all)` : ''}`
    : `0 of ${num(total)}`;
  for (const node of $$('.page-range')) node.textContent = text;
  for (const button of $$('[data-page="prev"]')) button.disabled = offset === 0;
  for (const button of $$('[data-page="next"]')) button.disabled = to >= matching;
}

/** A summary count filters the table by its state; the certificates count sorts by expiry, soonest first. */
function onStatClick(event) {
  const button = event.target.closest('[data-state-filter], #stat-expiring-button');
  if (!button) return;
  if (button.id === 'stat-expiring-button') changeDomainsQuery({ q: '', state: '', sort: 'expiry', order: 'asc' });
  else changeDomainsQuery({ q: '', state: button.dataset.stateFilter });
  $('#domains-section').scrollIntoView({ behavior: scrollBehavior() });
}

// Reloads: the history, newest first, and the errors and warnings of the last one.
function renderReloads(status) {
  const reloads = status.reloads || [];
  const lastReload = status.lastReload || {};
  if (!changed('reloads', [reloads, lastReload])) return;
  const tbody = $('#reloads-table').tBodies[0];
  keepingFocus(tbody, () => tbody.replaceChildren(...(reloads.length ? reloads.map(reloadRow) : [emptyRow(7, 'No reload yet.')])));
  const { errors = [], warnings = [] } = lastReload;
  $('#reload-errors-title').textContent = `Errors of the last reload${errors.length ? ` (${num(errors.length)})` : ''}`;
  $('#reload-errors').replaceChildren(
    errors.length ? diagnosticsBlock(errors) : h('p', { class: 'muted', text: 'The last reload found no errors.' }),
    warnings.length ? h('details', { class: 'warnings' }, h('summary', { text: plural(warnings.length, 'warning') }), diagnosticsBlock(warnings)) : '');
}

function reloadRow(reload) {
  const changedDomains = reload.changed || [];
  return h('tr', {},
    h('td', { class: 'nowrap' }, h('time', { datetime: reload.time, title: reload.time, text: clock(reload.time) })),
    h('td', { class: 'trigger', text: reload.trigger }),
    h('td', {}, badge(reload.result)),
    h('td', { class: 'num', text: `${(reload.seconds ?? 0).toFixed(2)} s` }),
    h('td', { class: `num${reload.errors ? ' text-bad' : ''}`, text: num(reload.errors ?? 0) }),
    h('td', { class: `num${reload.warnings ? ' text-warn' : ''}`, text: num(reload.warnings ?? 0) }),
    h('td', {}, changedDomains.length ? [
      changedDomains.slice(0, 3).map((name) => h('button', {
        type: 'button', class: 'link-button', title: `Show ${name} in Domains`, data: { showDomain: name, focusKey: `show:${reload.time}:${name}` }, text: name,
      })),
      changedDomains.length > 3 && muted(`+${num(changedDomains.length - 3)} more`),
    ] : muted('none')));
}

function onShowDomainClick(event) {
  const name = event.target.closest('[data-show-domain]')?.dataset.showDomain;
  if (!name) return;
  changeDomainsQuery({ q: name, state: '' });
  $('#domains-section').scrollIntoView({ behavior: scrollBehavior() });
}

// --- /fetches: the latest association-file fetches, newest first ---

function fetchesPath() {
  const params = new URLSearchParams({ limit: 100 });
  if (view.fetches.domain) params.set('domain', view.fetches.domain);
  if (view.fetches.client) params.set('client', view.fetches.client);
  return `/fetches?${params}`;
}

async function loadFetches() {
  const path = fetchesPath();
  const fetches = await api(path);
  if (path !== fetchesPath() || !changed('fetches', fetches)) return;
  const filtered = view.fetches.domain || view.fetches.client;
  $('#fetches').tBodies[0].replaceChildren(...(fetches.length ? fetches.map(fetchRow) : [emptyRow(8, filtered
    ? 'No fetches match these filters.'
    : 'No fetches since the start. Apple’s CDN fetches a domain’s file when an app claiming it is installed or updated.')]));
}

function fetchRow(entry) {
  const tone = entry.status < 300 || entry.status === 304 ? 'ok' : entry.status < 500 ? 'warn' : 'bad';
  return h('tr', { data: { domain: entry.domain, client: entry.client } },
    h('td', { class: 'nowrap' }, h('time', { datetime: entry.time, title: entry.time, text: clock(entry.time) })),
    h('td', { class: 'nowrap', text: entry.domain }),
    h('td', { class: 'mono muted nowrap', text: entry.path }),
    h('td', {}, h('span', { class: `client series-${rank(CLIENT_CLASSES, entry.client) % 5}`, text: entry.client })),
    h('td', { class: `num text-${tone}`, text: entry.status }),
    h('td', { class: 'num', text: bytesText(entry.bytes ?? 0) }),
    h('td', { class: 'user-agent', title: entry.userAgent, text: entry.userAgent || '—' }),
    h('td', { class: 'mono nowrap', text: entry.remoteAddress }));
}

function onFetchFilterChange() {
  view.fetches = { domain: $('#fetch-domain').value.trim().toLowerCase(), client: $('#fetch-client').value };
  pollers.fetches.run();
}

// --- /traffic: requests per second by client class over the last hour, as stacked areas ---

async function loadTraffic() {
  view.traffic = await api('/traffic');
  drawTraffic();
}

/** Per minute, each class's rate: the count / 60, or for the current, partial minute / the seconds elapsed. */
function trafficSeries({ classes, now, minutes = [] }) {
  const names = classes?.length ? classes : CLIENT_CLASSES;
  return {
    names,
    minutes: minutes.map((minute, i) => {
      const start = Date.parse(minute.start);
      const seconds = i === minutes.length - 1 ? Math.min(60, Math.max(1, (Date.parse(now) - start) / 1000)) : 60;
      const counts = names.map((name) => minute.counts?.[name] || 0);
      const rates = counts.map((count) => count / seconds);
      return { start, seconds, counts, rates, total: rates.reduce((a, b) => a + b, 0) };
    }),
  };
}

/** The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10ⁿ at or above `value`: the y-axis maximum. */
function niceCeiling(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((step) => step * power).find((step) => step >= value * 0.999);
}

function drawTraffic() {
  const box = $('#traffic-chart');
  const width = Math.round(box.clientWidth);
  if (!view.traffic || !width) return;
  const { names, minutes } = trafficSeries(view.traffic);
  const height = width < 480 ? 180 : 220;
  const pad = { top: 14, right: 10, bottom: 24, left: 44 };
  const plotHeight = height - pad.top - pad.bottom;
  const peak = minutes.reduce((best, minute) => (minute.total > best.total ? minute : best), { total: 0 });
  const max = niceCeiling(peak.total);
  const x = (i) => pad.left + (i / Math.max(1, minutes.length - 1)) * (width - pad.left - pad.right);
  const y = (rate) => pad.top + plotHeight * (1 - rate / max);
  const description = trafficDescription(minutes, peak);
  box.replaceChildren(svg('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'chart-title chart-desc' },
    svg('title', { id: 'chart-title' }, 'Requests per second by client class, last hour'),
    svg('desc', { id: 'chart-desc' }, description),
    // Grid lines at 0, half and the maximum, labelled on the y axis.
    [0, max / 2, max].map((rate) => [
      svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: y(rate), y2: y(rate) }),
      svg('text', { x: pad.left - 6, y: y(rate) + 4, 'text-anchor': 'end' }, `${rateText(rate)}${rate === max ? '/s' : ''}`),
    ]),
    stackedAreas(names, minutes, x, y),
    timeLabels(minutes, x, height),
    // A dashed line over the current minute: its rate is over the seconds elapsed so far.
    svg('line', { class: 'partial', x1: x(minutes.length - 1), x2: x(minutes.length - 1), y1: pad.top, y2: pad.top + plotHeight }),
    minuteTooltips(names, minutes, x, pad.top, plotHeight)));
  $('#traffic-note').textContent = description;
  renderLegend(names, minutes);
}

function trafficDescription(minutes, peak) {
  const total = minutes.reduce((sum, minute) => sum + minute.counts.reduce((a, b) => a + b, 0), 0);
  if (!total) return 'No association-file requests in the last hour.';
  const last = minutes[minutes.length - 1];
  return `${plural(total, 'request')} in the last hour; peak ${rateText(peak.total)}/s at ${minuteFormat.format(peak.start)}; `
    + `now ${rateText(last.total)}/s (this minute so far, ${Math.round(last.seconds)} s).`;
}

/** An area per class, stacked in the classes' order, its upper edge drawn as a line. */
function stackedAreas(names, minutes, x, y) {
  const base = minutes.map(() => 0);
  return names.map((name, series) => {
    const bottom = minutes.map((_, i) => `${x(i).toFixed(1)},${y(base[i]).toFixed(1)}`).reverse();
    minutes.forEach((minute, i) => { base[i] += minute.rates[series]; });
    const top = minutes.map((_, i) => `${x(i).toFixed(1)},${y(base[i]).toFixed(1)}`);
    return svg('g', { class: `series-${rank(CLIENT_CLASSES, name) % 5}` },
      svg('path', { class: 'area', d: `M${top.join('L')}L${bottom.join('L')}Z` }),
      svg('path', { class: 'line', d: `M${top.join('L')}` }));
  });
}

/** Clock times every quarter hour (every half hour when narrow), and "now" at the right. */
function timeLabels(minutes, x, height) {
  const step = x(15) - x(0) > 80 ? 15 : 30;
  return [
    [0, 15, 30, 45].filter((i) => i % step === 0 && i < minutes.length - 5).map((i) =>
      svg('text', { x: x(i), y: height - 6, 'text-anchor': i ? 'middle' : 'start' }, minuteFormat.format(minutes[i].start))),
    svg('text', { x: x(minutes.length - 1), y: height - 6, 'text-anchor': 'end' }, 'now'),
  ];
}

/** Invisible columns whose tooltips give each minute's figures. */
function minuteTooltips(names, minutes, x, top, plotHeight) {
  const step = x(1) - x(0);
  return svg('g', { class: 'hover' }, minutes.map((minute, i) => svg('rect', { x: x(i) - step / 2, y: top, width: step, height: plotHeight },
    svg('title', {}, `${minuteFormat.format(minute.start)}${i === minutes.length - 1 ? ' (so far)' : ''}: ${rateText(minute.total)}/s\n`
      + names.map((name, series) => `${name} ${rateText(minute.rates[series])}/s (${num(minute.counts[series])})`).join('\n')))));
}

function renderLegend(names, minutes) {
  const last = minutes[minutes.length - 1];
  $('#traffic-legend').replaceChildren(...names.map((name, series) => h('li', {},
    h('span', { class: `swatch series-${rank(CLIENT_CLASSES, name) % 5}`, 'aria-hidden': 'true' }),
    h('strong', { text: name }),
    muted(`${rateText(last ? last.rates[series] : 0)}/s now · ${num(minutes.reduce((sum, m) => sum + m.counts[series], 0))} in the hour`))));
}

// --- Try a URL: every platform's verdict from /match, with the deciding rule and the near misses.
// The URL is kept in the location hash (#try=…), so a result can be linked. ---

let tryController = null;

/** The URL as typed, https:// added when it has no scheme. */
function normalizeUrl(text) {
  const url = text.trim();
  return !url || /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url.replace(/^\/+/, '')}`;
}

async function runTry(text) {
  const url = normalizeUrl(text);
  const result = $('#try-result');
  delete result.dataset.needsToken;
  if (!url) return result.replaceChildren(h('p', { class: 'form-error', text: 'Enter a URL, e.g. https://shop.example/buy/shoes.' }));
  $('#try-url').value = url;
  history.replaceState(null, '', `#try=${encodeURIComponent(url)}`);
  tryController?.abort();
  const controller = new AbortController();
  tryController = controller;
  result.setAttribute('aria-busy', 'true');
  result.replaceChildren(h('p', { class: 'muted', text: `Matching ${url}…` }));
  try {
    result.replaceChildren(...matchResult(await api(`/match?url=${encodeURIComponent(url)}&platforms=all`, controller.signal), url));
  } catch (error) {
    if (error.name === 'AbortError') return;
    if (error.status === 401) result.dataset.needsToken = 'true';
    result.replaceChildren(h('p', { class: 'callout tone-bad', role: 'alert' },
      h('strong', { text: error.status === 401 ? 'Admin token needed. ' : `Cannot match${error.status ? ` (${error.status})` : ''}: ` }),
      error.status === 401 ? 'Enter it above; the URL is matched once it is accepted.' : error.message));
  } finally {
    if (tryController === controller) result.removeAttribute('aria-busy');
  }
}

function matchResult(answer, url) {
  let domain = answer.domain;
  try {
    domain = domain || new URL(answer.url || url).hostname;
  } catch {
    // no host to show
  }
  const legacyNote = answer.legacyEntries === false && answer.iosLegacy ? 'The file has no iOS 9–12 entries ("legacyFormat": false).' : null;
  return [
    answer.disagree && h('p', { class: 'callout tone-warn disagree', role: 'note' },
      h('strong', { text: 'The platforms disagree. ' }), 'One opens an app for this URL where another keeps it on the web.'),
    h('p', { class: 'try-url' }, muted('Matched '), h('span', { class: 'mono', text: answer.url || url }),
      domain && [muted(' against the files served for '), h('strong', { text: domain })]),
    h('div', { class: 'platforms' },
      platformBlock('ios', 'iOS 13+', answer.ios, 'No answer for iOS.'),
      platformBlock('ios-legacy', 'iOS 9–12', answer.iosLegacy,
        'The file has no iOS 9–12 entries ("legacyFormat": false): those versions open no app from it.', legacyNote),
      platformBlock('android', 'Android 15+', answer.android, 'This domain serves no assetlinks.json: no Android app is verified for it.',
        'Android 14 and earlier: manifest, the app’s intent filters decide.')),
  ].filter(Boolean);
}

/** What the verdict means for the user, in a sentence. */
function outcome(verdict, apps) {
  const list = joinNodes(apps.map((app) => h('code', { text: app })));
  switch (verdict) {
    case 'match': return ['Opens ', list];
    case 'manifest': return apps.length ? ['Left to the intent filters of ', list] : 'Left to the app’s intent filters.';
    case 'excluded': return 'Stays on the web: an exclusion matches first.';
    case 'no-match': return 'Stays on the web: no rule matches.';
    default: return 'Not a URL that can be matched.';
  }
}

/** One platform's verdict: the apps it opens, the deciding rule and where it is, why, notes, near misses. */
function platformBlock(platform, title, result, missing, footnote) {
  const verdict = result ? result.verdict : 'none';
  const block = h('article', { class: 'platform', data: { platform }, 'aria-label': title },
    h('header', {}, h('h3', { text: title }), h('span', { class: `verdict badge tone-${TONES[verdict] || 'neutral'}`, text: verdict })));
  if (!result) {
    block.append(h('p', { class: 'muted', text: missing }));
    if (footnote) block.append(h('p', { class: 'footnote', text: footnote }));
    return block;
  }
  block.append(h('p', { class: 'outcome' }, outcome(verdict, result.appIDs || result.packages || [])));
  block.append(h('dl', {},
    result.rule && [h('dt', { text: 'Rule' }), h('dd', {}, ruleWithPlace(result, platform))],
    h('dt', { text: 'Why' }), h('dd', {}, withCode(result.reason))));
  if (result.notes?.length) block.append(h('ul', { class: 'notes' }, result.notes.map((note) => h('li', {}, withCode(note)))));
  if (result.nearMisses?.length) {
    block.append(h('div', { class: 'near-misses' }, h('h4', { text: result.nearMisses.length === 1 ? 'Closest rule' : 'Closest rules' }),
      h('ol', {}, result.nearMisses.map((miss) => h('li', {}, h('div', {}, ruleWithPlace(miss, platform)),
        h('div', {}, withCode(miss.reason), miss.specifiedParts > 0 && muted(` (${miss.matchedParts} of ${miss.specifiedParts} parts matched)`)))))));
  }
  if (footnote) block.append(h('p', { class: 'footnote', text: footnote }));
  return block;
}

/** A rule and where it is: its site.json place, with the served file's key path after it; Android's by index. */
function ruleWithPlace(rule, platform) {
  const apple = rule.detailsIndex != null && rule.componentIndex != null
    ? `applinks.details[${rule.detailsIndex}].${rule.ruleKind || 'components'}[${rule.componentIndex}]` : null;
  const served = platform === 'android' ? rule.ruleIndex != null && `dynamic_app_link_components[${rule.ruleIndex}]` : apple;
  const place = rule.siteRule || served;
  return [h('code', { text: rule.rule }), place && [' at ', h('span', { class: 'mono', text: place }),
    rule.siteRule && served && muted(` (${served})`)]];
}

/** A #try=… hash (a shared link) fills the field and runs, unless it is what is shown already. */
function runTryFromHash() {
  if (!location.hash.startsWith('#try=')) return;
  let url = '';
  try {
    url = decodeURIComponent(location.hash.slice(5));
  } catch {
    return;
  }
  if (url && (normalizeUrl(url) !== $('#try-url').value || !$('#try-result').childElementCount)) runTry(url);
}

/** A row's Try button: the domain's root URL in the field, in view and focused, ready for a path. */
function onTryDomainClick(event) {
  const name = event.target.closest('[data-try]')?.dataset.try;
  if (!name) return;
  const input = $('#try-url');
  input.value = `https://${name}/`;
  input.scrollIntoView({ block: 'center', behavior: scrollBehavior() });
  input.focus({ preventScroll: true });
}

// --- Editor: a domain's site.json through the tenant API (/api/v1/, docs/api.md): checked as it is typed by a
// dry run (debounced, one in flight, answers for older text dropped), what the edit does to URLs, Save with
// If-Match (a conflict shows the other change and keeps the edit), and the history with restore. A token of the
// read scope gets it read-only: a dry run is a write. ---

const CHECK_DELAY_MS = 400;
const HISTORY_LIMIT = 20;
// A conflict's line diff compares at most this many pairs of lines (a 4 MB table); beyond, it shows the
// differing lines as removed and added whole.
const DIFF_CELLS = 1000000;

const editor = {
  name: '', // the domain shown
  etag: '', // "<revision>" of the version the text started from
  base: '', // that version's text
  caller: null, // { name, scope } of the token, from /api/v1/caller
  generation: 0, // bumped at each load: answers about an older version are dropped
  check: { timer: 0, running: false, again: false, checked: null, errors: 0 },
  diagnostics: [], // of the text last checked
  saving: false,
  ask: null, // answers the inline question shown, if any
};

const domainPath = (name, rest = '') => `/api/v1/domains/${encodeURIComponent(name)}${rest}`;
const revisionOf = (etag) => String(etag || '').replace(/^W\//, '').replace(/"/g, '');
const editorText = () => $('#editor-text');
const canWrite = () => editor.caller?.scope === 'write';
const isDirty = () => Boolean(editor.name) && editorText().value !== editor.base;
const answerError = (answer) => answer.json?.error || `the server answered HTTP ${answer.status}`;
const writeHeaders = () => ({ 'Content-Type': 'application/json', 'If-Match': editor.etag });

/** A write to the API; a failure to reach the server is an answer too (status 0). */
const send = (path, method, body) => request(path, { method, headers: writeHeaders(), body })
  .catch((error) => ({ status: error.status ?? 0, json: { error: error.message } }));

function setEditorState(text, tone = '') {
  $('#editor-state').textContent = text;
  $('#editor-state').className = `editor-state${tone && ` text-${tone}`}`;
}

function showEditorProblem(text = '') {
  $('#editor-problem').hidden = !text;
  $('#editor-problem').textContent = text;
}

/** An inline question: resolves true when confirmed, false when cancelled or replaced by another. */
function askInline(message, confirmLabel) {
  editor.ask?.(false);
  const box = $('#editor-ask');
  return new Promise((resolve) => {
    const done = (yes) => {
      editor.ask = null;
      box.hidden = true;
      resolve(yes);
    };
    editor.ask = done;
    const button = (label, yes) => {
      const node = h('button', { type: 'button', class: `btn btn-small${yes ? '' : ' btn-quiet'}`, data: { ask: yes ? 'yes' : 'no' }, text: label });
      node.addEventListener('click', () => editor.ask === done && done(yes));
      return node;
    };
    box.replaceChildren(h('p', { id: 'editor-ask-text', text: message }), h('div', { class: 'field-row' }, button(confirmLabel, true), button('Cancel', false)));
    box.hidden = false;
    box.querySelector('button').focus();
  });
}

const keepEdit = async (message, label = 'Drop my edit') => isDirty() && !(await askInline(message, label));

/** A row's Edit button: the domain in the editor (asking first when an edit of another would be dropped). */
async function onEditDomainClick(event) {
  const name = event.target.closest('[data-edit]')?.dataset.edit;
  if (name && !(name !== editor.name && await keepEdit(`Your edit of ${editor.name} is not saved. Open ${name} and drop it?`))) openEditor(name);
}

async function openEditor(name) {
  editor.name = name;
  $('#editor').hidden = false;
  $('#editor-domain').textContent = name;
  $('#editor-revision-view').hidden = true;
  showEditorProblem();
  $('#editor').scrollIntoView({ block: 'start', behavior: scrollBehavior() });
  try {
    if (!editor.caller) {
      const answer = await request('/api/v1/caller');
      if (answer.status !== 200) {
        return showEditorProblem(answer.status === 404 ? 'The tenant API is off: the server needs --admin-token-file.' : `Cannot ask who the token is: ${answerError(answer)}.`);
      }
      editor.caller = answer.json;
    }
    applyScope();
    if (await loadVersion()) editorText().focus({ preventScroll: true });
    await loadHistory();
  } catch (error) {
    showEditorProblem(`Cannot open ${name}: ${error.message}.`);
  }
}

function applyScope() {
  const writable = canWrite();
  editorText().readOnly = !writable;
  $('#editor-save').hidden = !writable;
  $('#editor-scope').hidden = writable;
  $('#editor-scope').textContent = `The token “${editor.caller?.name}” can read only: checking, saving and restoring need a token of the write scope.`;
}

/** Loads the stored site.json and its ETag into the editor, dropping the text shown; true when it loaded. */
async function loadVersion() {
  const generation = ++editor.generation;
  const name = editor.name;
  setEditorState(`Loading ${name}…`);
  const answer = await request(domainPath(name));
  if (generation !== editor.generation) return false;
  if (answer.status !== 200) {
    setEditorState('');
    showEditorProblem(`Cannot read ${name}: ${answerError(answer)}.`);
    return false;
  }
  Object.assign(editor, { etag: answer.etag || '', base: answer.text, diagnostics: [] });
  Object.assign(editor.check, { checked: null, errors: 0 });
  const area = editorText();
  area.value = answer.text;
  area.scrollTop = area.scrollLeft = 0;
  hideConflict();
  $('#editor-revision').textContent = `revision ${revisionOf(editor.etag)}`;
  renderGutter();
  renderFindings();
  renderEffect(null);
  setEditorState(canWrite() ? 'No unsaved edit.' : 'Read-only.');
  updateSave();
  if (canWrite()) runCheck(); // the stored version's own findings
  return true;
}

function onEditorInput() {
  renderGutter();
  updateSave();
  if (!canWrite()) return;
  clearTimeout(editor.check.timer);
  editor.check.timer = setTimeout(runCheck, CHECK_DELAY_MS);
  setEditorState('Checking…');
}

/** A dry run of the text: one at a time; an answer for text since edited is dropped (the next run follows). */
async function runCheck() {
  const check = editor.check;
  clearTimeout(check.timer);
  if (check.running) {
    check.again = true;
    return;
  }
  const text = editorText().value;
  const generation = editor.generation;
  check.running = true;
  const answer = await send(domainPath(editor.name, '?dryRun=true'), 'PUT', text);
  check.running = false;
  if (generation === editor.generation && text === editorText().value) showCheck(text, answer);
  if (check.again) {
    check.again = false;
    runCheck();
  }
}

/** What a dry run found: findings at their lines, the effect, and whether Save may run. */
function showCheck(text, answer) {
  const { status, json } = answer;
  const written = status === 200 || status === 201;
  const diagnostics = (written || status === 422) && json?.diagnostics || [];
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors ? `, ${plural(diagnostics.length - errors, 'warning')}` : '';
  if (status === 403) {
    editor.caller.scope = 'read';
    applyScope();
  }
  // Findings come before the precondition: a 412 means no errors, and that the domain moved on.
  const checked = written || status === 412 || (status === 422 && json?.diagnostics);
  Object.assign(editor.check, { checked: checked ? text : null, errors });
  editor.diagnostics = diagnostics;
  renderGutter();
  renderFindings();
  if (text !== editor.base || errors) renderEffect(written ? json : null, errors);
  if (status === 412) setEditorState(`${editor.name} changed on the server (revision ${json?.revision}) since it was loaded; Save shows that change.`, 'warn');
  else if (!checked) setEditorState(`Not checked: ${answerError(answer)}.`, 'bad');
  else if (errors) setEditorState(`${plural(errors, 'error')}${warnings}: Save is off until they are fixed.`, 'bad');
  else if (text !== editor.base) setEditorState(`Checked: no errors${warnings}. Save publishes it.`, 'ok');
  updateSave();
}

function updateSave() {
  const text = editorText().value;
  $('#editor-save').disabled = !canWrite() || editor.saving || !editor.etag || text === editor.base
    || editor.check.checked !== text || editor.check.errors > 0;
}

/** Line numbers beside the text; a line with a finding is marked, its messages in the title. */
function renderGutter() {
  const gutter = $('#editor-gutter');
  const lines = editorText().value.split('\n').length;
  while (gutter.childElementCount < lines) gutter.append(h('div', { class: 'gutter-line', data: { line: gutter.childElementCount + 1 }, text: gutter.childElementCount + 1 }));
  while (gutter.childElementCount > lines) gutter.lastElementChild.remove();
  for (const node of $$('[title]', gutter)) {
    node.className = 'gutter-line';
    node.removeAttribute('title');
  }
  for (const { line, severity, rule, message } of editor.diagnostics) {
    const node = gutter.children[line - 1];
    if (!node) continue;
    if (!node.classList.contains('has-error')) node.className = `gutter-line has-${severity === 'error' ? 'error' : 'warning'}`;
    node.title = `${node.title || ''}${severity}: [${rule}] ${message}\n`;
  }
  syncGutter();
}

function syncGutter() {
  $('#editor-gutter').scrollTop = editorText().scrollTop;
}

/** The findings, `line:column severity [rule] message (at key) fix: hint`; each moves the caret there. */
function renderFindings() {
  const box = $('#editor-findings');
  if (!canWrite()) return box.replaceChildren(muted('Checked with a token of the write scope (a check is a dry-run write).'));
  if (!editor.diagnostics.length) return box.replaceChildren(editor.check.checked === null ? muted('Not checked yet.') : h('p', { class: 'text-ok', text: 'No errors or warnings.' }));
  return box.replaceChildren(h('ol', { class: 'findings' }, editor.diagnostics.map((d) => h('li', {},
    h('button', { type: 'button', class: `finding finding-${d.severity}`, disabled: !d.line, data: { line: d.line ?? '', column: d.column ?? '' } },
      h('span', { class: 'muted', text: d.line ? `${d.line}:${d.column ?? 1} ` : '' }),
      h('span', { class: `diag-${d.severity}`, text: d.severity }), h('span', { class: 'diag-rule', text: ` [${d.rule}] ` }),
      h('span', { class: 'finding-message' }, withCode(d.message)), d.keyPath && muted(` (at ${d.keyPath})`),
      d.hint && h('span', { class: 'finding-hint diag-fix', text: `fix: ${d.hint}` }))))));
}

/** A finding's click: the caret to its line and column (1-based, in characters), scrolled into view. */
function onFindingClick(event) {
  const { line, column } = event.target.closest('[data-line]')?.dataset || {};
  if (!line) return;
  const area = editorText();
  const lines = area.value.split('\n');
  const index = Math.min(Number(line), lines.length) - 1;
  const offset = lines.slice(0, index).reduce((sum, text) => sum + text.length + 1, 0)
    + Array.from(lines[index]).slice(0, (Number(column) || 1) - 1).join('').length;
  area.focus({ preventScroll: true });
  area.setSelectionRange(offset, offset);
  area.scrollTop = Math.max(0, index * parseFloat(getComputedStyle(area).lineHeight) - area.clientHeight / 3);
  area.scrollIntoView({ block: 'nearest', behavior: scrollBehavior() });
}

/** What the edit does: the summary, each class of URLs that moves (with its checked examples), the services,
 * settings and notes. */
function renderEffect(answer, errors = 0) {
  const box = $('#editor-effect');
  if (!canWrite() || errors || !answer) {
    return box.replaceChildren(muted(!canWrite() ? 'Shown with a token of the write scope.' : errors ? 'Fix the errors to see what the edit does.'
      : isDirty() ? 'Not checked yet.' : 'No edit yet: this is the stored version.'));
  }
  const items = [...answer.changes || [], ...answer.services || [], ...answer.settings || [], ...answer.notes || []]
    .map((entry) => (entry.kind ? changeItem(entry) : h('li', {}, withCode(describe(entry)))));
  return box.replaceChildren(...[h('p', { class: 'effect-summary' }, withCode(answer.summary || '')),
    answer.complete === false && muted('Not every URL could be compared: the summary says which.'),
    items.length && h('ul', { class: 'changes' }, items)].filter(Boolean));
}

async function onSave() {
  if ($('#editor-save').disabled) return;
  const text = editorText().value;
  const generation = editor.generation;
  editor.saving = true;
  updateSave();
  setEditorState('Saving…');
  const answer = await send(domainPath(editor.name), 'PUT', text);
  editor.saving = false;
  if (generation !== editor.generation) return;
  const { status, json } = answer;
  if (status === 200 || status === 201) {
    Object.assign(editor, { etag: answer.etag || `"${json.revision}"`, base: text });
    $('#editor-revision').textContent = `revision ${json.revision}`;
    hideConflict();
    renderEffect(json);
    setEditorState(`Saved revision ${json.revision}.`, 'ok');
    loadHistory();
  } else if (status === 412) {
    setEditorState('Not saved: the domain changed on the server. Your edit is kept.', 'bad');
    await showConflict(json?.revision);
  } else {
    if (status === 422 || status === 403) showCheck(text, answer);
    setEditorState(`Not saved: ${answerError(answer)}.`, 'bad');
  }
  updateSave();
}

function hideConflict() {
  $('#editor-conflict').hidden = true;
}

/** The change that came first: who, when and what (from the history), and its site.json against the version
 * this edit started from. The edit stays in the editor; Reload takes the current version after a confirmation. */
async function showConflict(revision) {
  const { name, generation } = editor;
  const [current, history] = await Promise.all([request(domainPath(name)), request(domainPath(name, `/history?limit=${HISTORY_LIMIT}`))]);
  if (generation !== editor.generation) return;
  const now = current.status === 200 ? revisionOf(current.etag) : revision;
  const entry = history.json?.revisions?.find((item) => item.revision === now);
  const box = $('#editor-conflict');
  box.replaceChildren(...[
    h('p', {}, h('strong', { text: 'Someone saved first. ' }), current.status === 200
      ? [`${name} is now at revision `, h('code', { text: now }), entry && [' (', entry.actor, ', ', timeAgo(entry.time), ')'], '.']
      : `${name} was removed.`),
    entry && h('p', { class: 'conflict-summary' }, withCode(entry.summary)),
    current.status === 200 && [h('p', { class: 'muted', text: `Their version against revision ${revisionOf(editor.etag)}, which your edit started from (− removed, + added):` }),
      lineDiffBlock(editor.base, current.text)],
    h('p', { class: 'muted', text: 'Your edit is still in the editor, not saved.' }),
    h('div', { class: 'field-row' },
      current.status === 200 && h('button', { type: 'button', class: 'btn btn-small', data: { conflict: 'reload' }, text: `Reload revision ${now}` }),
      h('button', { type: 'button', class: 'btn btn-small btn-quiet', data: { conflict: 'dismiss' }, text: 'Keep my edit' })),
  ].flat().filter(Boolean));
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest', behavior: scrollBehavior() });
}

async function onConflictClick(event) {
  const action = event.target.closest('[data-conflict]')?.dataset.conflict;
  if (action === 'dismiss') hideConflict();
  if (action !== 'reload' || await keepEdit('Reload drops your edit and takes the version now on the server.', 'Drop my edit and reload')) return;
  if (await loadVersion()) await loadHistory();
}

/** The lines from `a` to `b` as [' ' | '-' | '+', line]: the longest common subsequence between the first and last
 * differing lines, with 3 lines of context either side. */
function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  let start = 0;
  let end = 0; // lines equal at both ends
  while (start < Math.min(x.length, y.length) && x[start] === y[start]) start++;
  while (end < Math.min(x.length, y.length) - start && x[x.length - 1 - end] === y[y.length - 1 - end]) end++;
  const mx = x.slice(start, x.length - end);
  const my = y.slice(start, y.length - end);
  const ops = x.slice(Math.max(0, start - 3), start).map((line) => [' ', line]);
  const w = my.length + 1;
  const table = new Uint32Array(mx.length * my.length > DIFF_CELLS ? 0 : (mx.length + 1) * w);
  if (table.length) {
    for (let i = mx.length - 1; i >= 0; i--) {
      for (let j = my.length - 1; j >= 0; j--) table[i * w + j] = mx[i] === my[j] ? table[(i + 1) * w + j + 1] + 1 : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
    }
  }
  let [i, j] = [0, 0];
  while (i < mx.length || j < my.length) {
    if (table.length && i < mx.length && j < my.length && mx[i] === my[j]) {
      ops.push([' ', mx[i++]]);
      j++;
    } else if (i < mx.length && (j === my.length || !table.length || table[(i + 1) * w + j] >= table[i * w + j + 1])) ops.push(['-', mx[i++]]);
    else ops.push(['+', my[j++]]);
  }
  return ops.concat(x.slice(x.length - end, x.length - end + 3).map((line) => [' ', line]));
}

function lineDiffBlock(a, b) {
  return h('pre', { class: 'line-diff', tabindex: '0' }, lineDiff(a, b).map(([op, line]) =>
    h('span', { class: { '+': 'diff-add', '-': 'diff-remove' }[op] || 'muted', text: `${op} ${line}\n` })));
}

/** The revisions, newest first: when, who, what; View shows one, Restore makes it current again. */
async function loadHistory() {
  const name = editor.name;
  const answer = await request(domainPath(name, `/history?limit=${HISTORY_LIMIT}`));
  if (name !== editor.name) return;
  const current = revisionOf(editor.etag);
  const revisions = answer.json?.revisions || [];
  $('#editor-history').replaceChildren(...(answer.status !== 200 ? [h('li', { class: 'muted', text: `Cannot read the history: ${answerError(answer)}.` })]
    : !revisions.length ? [h('li', { class: 'muted', text: 'No revisions yet: the history starts with the first write through the API.' })]
      : revisions.map((entry, index) => h('li', { class: 'history-entry', data: { revision: entry.revision } },
        h('div', {}, timeAgo(entry.time), ' by ', h('strong', { class: 'history-actor', text: entry.actor }), ' · ', h('code', { text: entry.revision }),
          index === 0 && entry.revision === current && [' ', badge('current')], entry.removed && [' ', badge('removed')]),
        h('p', { class: 'history-summary' }, withCode(entry.summary)),
        !entry.removed && h('div', { class: 'field-row' },
          h('button', { type: 'button', class: 'btn btn-small', data: { view: entry.revision }, 'aria-label': `View revision ${entry.revision}`, text: 'View' }),
          canWrite() && entry.revision !== current && h('button', {
            type: 'button', class: 'btn btn-small', data: { restore: entry.revision }, 'aria-label': `Restore revision ${entry.revision}`, text: 'Restore',
          }))))));
}

async function onHistoryClick(event) {
  const { view, restore } = event.target.closest('[data-view], [data-restore]')?.dataset || {};
  if (view) {
    const answer = await request(domainPath(editor.name, `/history/${encodeURIComponent(view)}`));
    const box = $('#editor-revision-view');
    box.replaceChildren(h('h4', { text: `Revision ${view}` }), answer.status === 200
      ? h('pre', { class: 'revision-text', tabindex: '0', text: answer.text }) : h('p', { class: 'form-error', text: answerError(answer) }));
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest', behavior: scrollBehavior() });
  }
  if (!restore || await keepEdit(`Restoring revision ${restore} drops your edit.`, 'Drop my edit and restore')) return;
  setEditorState(`Restoring revision ${restore}…`);
  const answer = await send(domainPath(editor.name, `/history/${encodeURIComponent(restore)}/restore`), 'POST');
  const { status, json } = answer;
  if (status === 200 || status === 201) {
    if (await loadVersion()) setEditorState(`Restored revision ${restore}${json.revision !== restore ? ` as revision ${json.revision}` : ''}.`, 'ok');
    await loadHistory();
  } else if (status === 412) {
    setEditorState('Not restored: the domain changed on the server.', 'bad');
    await showConflict(json?.revision);
  } else {
    const first = json?.diagnostics?.find((d) => d.severity === 'error');
    setEditorState(`Not restored: ${answerError(answer)}${first ? ` (${first.rule}: ${first.message})` : ''}.`, 'bad');
  }
}

async function onEditorClose() {
  if (await keepEdit(`Your edit of ${editor.name} is not saved. Close and drop it?`)) return;
  // A dry run still waiting for typing to stop would otherwise go out for no domain.
  clearTimeout(editor.check.timer);
  editor.generation++;
  editor.name = editor.base = editorText().value = '';
  $('#editor').hidden = true;
}

function startEditor() {
  // A request that could not be made (no server, no token) is said in the panel.
  const guarded = (handler) => (event) => handler(event).catch((error) => showEditorProblem(`${error.message}.`));
  $('#domains tbody').addEventListener('click', guarded(onEditDomainClick));
  editorText().addEventListener('input', onEditorInput);
  editorText().addEventListener('scroll', syncGutter);
  $('#editor-save').addEventListener('click', guarded(onSave));
  $('#editor-close').addEventListener('click', guarded(onEditorClose));
  $('#editor-findings').addEventListener('click', onFindingClick);
  $('#editor-conflict').addEventListener('click', guarded(onConflictClick));
  $('#editor-history').addEventListener('click', guarded(onHistoryClick));
  addEventListener('beforeunload', (event) => isDirty() && event.preventDefault());
}

// --- Wiring ---

function start() {
  $('#token-forget').hidden = !readToken();
  $('#token-form').addEventListener('submit', onTokenSubmit);
  $('#token-forget').addEventListener('click', () => {
    storeToken('');
    location.reload();
  });
  $('#try-form').addEventListener('submit', (event) => {
    event.preventDefault();
    runTry($('#try-url').value);
  });
  addEventListener('hashchange', runTryFromHash);

  $('#summary').addEventListener('click', onStatClick);
  $('#domains thead').addEventListener('click', onSortClick);
  $('#domains-section').addEventListener('click', (event) => {
    onPageClick(event);
    if (event.target.closest('[data-clear-filters], #domains-clear')) changeDomainsQuery({ q: '', state: '' });
  });
  $('#domains tbody').addEventListener('click', onTryDomainClick);
  $('#domains tbody').addEventListener('click', onRetryClick);
  $('#domains tbody').addEventListener('toggle', onRowDetailsToggle, true); // toggle does not bubble
  $('#domain-filter').addEventListener('input', debounce(() => changeDomainsQuery({ q: $('#domain-filter').value.trim().toLowerCase() }), 250));
  $('#state-filter').addEventListener('change', () => changeDomainsQuery({ state: $('#state-filter').value }));
  $('#reloads').addEventListener('click', onShowDomainClick);
  $('#fetch-domain').addEventListener('input', debounce(onFetchFilterChange, 300));
  $('#fetch-client').addEventListener('change', onFetchFilterChange);

  let frame = 0;
  new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(drawTraffic);
  }).observe($('#traffic-chart'));
  document.addEventListener('visibilitychange', onVisibilityChange);

  startEditor();
  renderSortHeaders();
  runTryFromHash();
  runAllPollers();
}

start();
