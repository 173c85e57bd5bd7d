// --- ACME: the queue of new orders, and a domain's "Retry now" ---

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
