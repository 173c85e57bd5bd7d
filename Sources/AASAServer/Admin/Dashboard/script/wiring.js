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
