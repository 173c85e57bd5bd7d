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
