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
  'in-place': 'ok', direct: 'ok', missing: 'bad', unknown: 'warn',
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
