// A list page's state in the URL (?q=&sort=&order=&page= and the page's filters), the same
// state as the API's query parameters, and the controls that change it: a search box, sortable
// column headers and a pager. Back and forward and a shared link all show the same view.
import { t } from './boot.js';
import { h } from './dom.js';

export const PAGE_SIZE = 20;

/** The state in the URL; `defaults` gives every key (and the filters) its value when absent. */
export function readState(defaults) {
  const query = new URLSearchParams(window.location.search);
  const state = { ...defaults };
  for (const key of Object.keys(defaults)) if (query.get(key)) state[key] = query.get(key);
  state.page = Math.max(1, Number.parseInt(state.page, 10) || 1);
  return state;
}

/** Puts `state` in the URL (leaving out what equals `defaults`); `replace` for typing. */
export function writeState(state, defaults, replace = false) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) {
    if (value !== '' && value !== undefined && String(value) !== String(defaults[key] ?? '')) query.set(key, value);
  }
  const url = `${window.location.pathname}${query.size ? `?${query}` : ''}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
}

/** The API's query string for `state`: its filters (the keys in `filters`), search, sort, page. */
export function apiQuery(state, filters, extra = {}) {
  const query = new URLSearchParams(extra);
  for (const key of filters) if (state[key]) query.set(key, state[key]);
  if (state.q) query.set('q', state.q);
  query.set('sort', state.sort);
  query.set('order', state.order);
  query.set('limit', String(PAGE_SIZE));
  query.set('offset', String((state.page - 1) * PAGE_SIZE));
  return query.toString();
}

/** A search box that calls `onSearch(text)` once typing pauses. */
export function searchBox(value, onSearch) {
  let timer;
  const input = h('input', { type: 'search', id: 'search', value, placeholder: t('list.searchPlaceholder'),
    'aria-label': t('list.search'), maxlength: 200 });
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => onSearch(input.value.trim()), 250);
  });
  return input;
}

/** A column header that sorts by `key` (a second click reverses), with aria-sort. */
export function sortHeader(key, label, state, onSort) {
  const active = state.sort === key;
  const sorted = active ? (state.order === 'asc' ? 'ascending' : 'descending') : 'none';
  const arrow = active ? (state.order === 'asc' ? ' ▲' : ' ▼') : '';
  return h('th', { 'aria-sort': sorted },
    h('button', { type: 'button', class: 'sort', dataset: { sort: key }, title: t('list.sortBy', { column: label }),
      onclick: () => onSort(key, active && state.order === 'desc' ? 'asc' : active ? 'desc'
        : key === 'name' ? 'asc' : 'desc') }, label, arrow));
}

/** "Page x of y · n in all" with previous and next buttons. */
export function pager(state, total, onPage) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return h('nav', { class: 'pager', 'aria-label': t('list.pages') },
    h('button', { type: 'button', class: 'secondary', id: 'page-prev', disabled: state.page <= 1,
      onclick: () => onPage(state.page - 1) }, `‹ ${t('list.prev')}`),
    h('span', { class: 'page-info', id: 'page-info' }, t('list.pageOf', { page: state.page, pages, total })),
    h('button', { type: 'button', class: 'secondary', id: 'page-next', disabled: state.page >= pages,
      onclick: () => onPage(state.page + 1) }, `${t('list.next')} ›`));
}

/** A list's table (sortable headers for the keys in `sortable`, one row per item, cards on a
 * phone) and its pager; `go(state)` shows another sort or page. */
export function listTable(state, { id, columns, sortable, label }, { items, total }, row, go) {
  const onSort = (sort, order) => go({ ...state, sort, order, page: 1 });
  return [h('div', { class: 'table-box' }, h('table', { class: 'table cards', id },
    h('thead', {}, h('tr', {}, columns.map((k) => (sortable.includes(k) ? sortHeader(k, label(k), state, onSort)
      : h('th', {}, label(k)))))),
    h('tbody', {}, items.map(row)))),
  pager(state, total, (page) => go({ ...state, page }))];
}

/** The owner filter (everyone, or only mine), labelled. */
export function ownerFilter(state, go) {
  const select = h('select', { id: 'owner-filter', onchange: () => go({ ...state, owner: select.value, page: 1 }) },
    h('option', { value: '' }, t('evaluators.filter.everyone')),
    h('option', { value: 'me', selected: state.owner === 'me' }, t('evaluators.filter.mine')));
  return h('label', { class: 'filter' }, t('evaluators.filter.owner'), select);
}
