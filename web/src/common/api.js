// The JSON API as the pages call it: the session cookie authenticates, every change carries
// the CSRF token, and a failure becomes an ApiError with the server's {code, message}, the
// message said in the page's language when the server named its phrase (messageCode).
import { csrf, t } from './boot.js';
import { say } from './phrase.js';

export class ApiError extends Error {
  constructor(status, code, message, text = message, blocking = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.text = text; // the server's own (English) words, which name lines and fields
    this.blocking = blocking; // the rows that stand in the way of a refused delete: [{kind, id, name}]
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
  let text = '';
  try {
    text = await response.text();
  } catch {
    throw new ApiError(0, 0, t('common.network'));
  }
  return { data: answered(response.status, response.statusText, text), response };
}

/** The envelope's data of an answer, or the ApiError it reports; a 401 goes to sign in. */
function answered(status, statusText, text) {
  if (status === 401) window.location.href = `/signin?next=${encodeURIComponent(window.location.pathname)}`;
  let payload = null;
  try {
    payload = JSON.parse(text);
  } catch {
    throw new ApiError(status, status, statusText);
  }
  if (status < 200 || status > 299 || payload.code !== 200) {
    const said = payload.message || statusText;
    throw new ApiError(status, payload.code, say(payload.messageCode, payload.messageArgs, said), said,
      payload.blocking || null);
  }
  return payload.data;
}

/** POST a file as the raw request body (as the upload routes read it), calling
 * `onProgress(sent, total)` as it goes: fetch() cannot tell upload progress, XMLHttpRequest can. */
export function upload(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.setRequestHeader('X-CSRF-Token', csrf || '');
    xhr.upload.addEventListener('progress', (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size));
    xhr.addEventListener('load', () => {
      try {
        resolve(answered(xhr.status, xhr.statusText, xhr.responseText));
      } catch (err) {
        reject(err);
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 0, t('common.network'))));
    xhr.send(file);
  });
}

export const get = (path) => api('GET', path);
