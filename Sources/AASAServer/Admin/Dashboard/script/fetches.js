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
