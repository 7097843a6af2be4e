// Small DOM helpers shared by the pages: element building, formatting, states, dialogs.
import { lang, t } from './boot.js';

/** h('a', {href: '/x', class: 'y', onclick: fn}, 'text', child, [more]) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value') el.value = value;
    else if (key in el && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const dateFormat = new Intl.DateTimeFormat(lang === 'zh' ? 'zh-CN' : 'en', {
  year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
});

/** `label` followed by the language's colon ("数据集：", "Dataset: "). */
export const withColon = (label) => t('common.labelled', { label });
export const fmtDate = (iso) => (iso ? dateFormat.format(new Date(iso)) : t('common.none'));
export const fmtPct = (x) => (x === null || x === undefined ? t('common.none') : `${(x * 100).toFixed(1)}%`);
export const fmtScore = (x) => (x === null || x === undefined ? t('common.none') : Number(x).toFixed(3));

export const loading = () => h('p', { class: 'state loading' }, t('common.loading'));

/** Where "back" leads from the page at `path`: the list its first segment names. */
export function listOf(path = window.location.pathname) {
  return ['/evaluators', '/datasets'].find((list) => path.startsWith(list)) || '/tasks';
}

/** A friendly "not found" (an unknown or deleted id): what is missing and a way back, no retry. */
export function notFoundState() {
  const back = listOf();
  return h('div', { class: 'state empty not-found', role: 'alert' },
    h('h1', {}, t('notfound.item')), h('p', {}, t('notfound.itemHint')),
    h('a', { href: back, class: 'button primary', id: 'back-to-list' }, t(`notfound.back${back.slice(1)}`)));
}

/** An error state, with a retry button when `retry` is given; a 404 is a not-found state. */
export function errorState(err, retry) {
  if (err.status === 404) return notFoundState();
  return h('div', { class: 'state alert error', role: 'alert' },
    h('span', {}, t('common.error', { message: err.message || String(err) })),
    retry ? h('button', { type: 'button', class: 'secondary', onclick: retry }, t('common.retry')) : null);
}

export const statusBadge = (status) => h('span', { class: `badge status-${status}` }, t(`status.${status}`));

/** A modal question; resolves true when confirmed. */
export function confirmDialog(title, text, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm' },
      h('h2', {}, title), h('p', {}, text),
      h('form', { method: 'dialog', class: 'actions' },
        h('button', { value: 'cancel', class: 'secondary' }, t('common.cancel')),
        h('button', { value: 'ok', class: 'danger' }, confirmLabel)));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** A short message at the top of the page. */
/** A short message for 4 s, in a strip above the page's content: in the flow, so it moves the page
 * down while it shows and never covers a control (a fixed overlay did, under the top bar). */
export function toast(text, kind = 'info') {
  let strip = document.getElementById('toasts');
  if (!strip) {
    strip = h('div', { id: 'toasts', class: 'toasts', role: 'status', 'aria-live': 'polite' });
    (document.getElementById('app') ?? document.body.lastChild).before(strip);
  }
  const el = h('div', { class: `toast ${kind}` }, text);
  strip.append(el);
  setTimeout(() => el.remove(), 4000);
}
