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
    if (info.challenge) cell.append(challengeLine(info));
    if (waiting || info.state === 'failed' || info.state === 'pending') cell.append(retryControl(name));
  } else if (info?.state === 'failed') {
    cell.append(h('div', { class: 'cell-sub' }, badge('failed')));
  }
  return cell;
}


/** How the CA validates the name (http-01, dns-01, the wildcard that covers it) and, for dns-01, its delegation:
 * the record the tenant adds while it is missing. */
function challengeLine(info) {
  const delegation = info.delegation;
  const line = h('div', { class: 'cell-sub challenge', title: delegation?.message || '' },
    h('span', { class: 'mono', text: info.challenge }),
    info.wildcard && [' via ', h('span', { class: 'mono', text: info.wildcard })],
    delegation && [' ', badge(delegation.state)]);
  if (delegation?.state !== 'missing' || !delegation.record) return line;
  return h('div', {}, line, h('div', { class: 'cell-sub delegation-record' }, 'add ', h('code', { text: delegation.record })));
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
