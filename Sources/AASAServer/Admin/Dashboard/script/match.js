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
