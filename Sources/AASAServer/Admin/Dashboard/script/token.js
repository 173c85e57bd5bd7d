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
