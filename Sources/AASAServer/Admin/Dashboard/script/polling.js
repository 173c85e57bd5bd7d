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
