// The JSON API as the pages call it: the session cookie authenticates, every change carries
// the CSRF token, and a failure becomes an ApiError with the server's {code, message}.
import { csrf, t } from './boot.js';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body) {
  return (await call(method, path, body)).data;
}

/** A page of a list: its rows and how many match in all (the X-Total-Count header). */
export async function getPage(path) {
  const { data, response } = await call('GET', path);
  return { items: data, total: Number(response.headers.get('X-Total-Count') ?? data.length) };
}

async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf || '';
  let response;
  try {
    response = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store', // never a stale list after Back
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 0, t('common.network'));
  }
  if (response.status === 401) {
    window.location.href = `/signin?next=${encodeURIComponent(window.location.pathname)}`;
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    throw new ApiError(response.status, response.status, response.statusText);
  }
  if (!response.ok || payload.code !== 200) {
    throw new ApiError(response.status, payload.code, payload.message || response.statusText);
  }
  return { data: payload.data, response };
}

export const get = (path) => api('GET', path);
