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
