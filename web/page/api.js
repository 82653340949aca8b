// The REST API as the page uses it: every call sends the token as a Bearer header (no cookies),
// and a failed call throws an ApiError with the server's problem detail.

const STORE_KEY = "orchestrate.token";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(STORE_KEY) || localStorage.getItem(STORE_KEY) || "";
}

export function setToken(value, remember) {
  sessionStorage.setItem(STORE_KEY, value);
  if (remember) localStorage.setItem(STORE_KEY, value);
  else localStorage.removeItem(STORE_KEY);
}

export function clearToken() {
  sessionStorage.removeItem(STORE_KEY);
  localStorage.removeItem(STORE_KEY);
}

async function send(method, path, body) {
  const headers = { Authorization: "Bearer " + token(), Accept: "application/json" };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "the server does not answer (" + e.message + ")");
  }
  if (!response.ok) {
    let detail = response.status + " " + response.statusText;
    try {
      const problem = await response.json();
      if (problem && problem.detail) detail = problem.detail;
    } catch (e) {
      // not a problem+json body: the status line says enough
    }
    throw new ApiError(response.status, detail);
  }
  return response;
}

export async function get(path) {
  return (await send("GET", path)).json();
}

export async function post(path, body) {
  return (await send("POST", path, body ?? {})).json();
}

// An attempt's log from byte offset: {text, next}.
export async function logText(jobId, attempt, offset) {
  const r = await send("GET", `/api/v1/jobs/${jobId}/logs?attempt=${attempt}&offset=${offset}`);
  return { text: await r.text(), next: Number(r.headers.get("X-Next-Offset") || offset) };
}
