// /datasets: the datasets, searched, filtered by owner, sorted and paged on the server (the state
// lives in the URL: ?q=&owner=&sort=&order=&page=), and a form that makes a new one, whose page
// then takes its first upload.
import { api, getPage } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';
import { apiQuery, listTable, ownerFilter, readState, searchBox, writeState } from './common/listing.js';
import { detailsForm } from './dataset/details.js';
import { fmtBytes } from './dataset/format.js';

const root = document.getElementById('app');
const DEFAULTS = { q: '', owner: '', sort: 'updatedAt', order: 'desc', page: 1 };
const COLUMNS = ['name', 'version', 'rows', 'size', 'updatedAt'];
const SORTABLE = ['name', 'updatedAt'];

function go(next, replace = false) {
  writeState(next, DEFAULTS, replace);
  render();
}

function row(dataset) {
  const latest = dataset.latest;
  const cell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`datasets.col.${key}`) } },
    ...children);
  return h('tr', { dataset: { id: dataset.id } },
    cell('name', { class: 'name' }, h('a', { href: `/datasets/${dataset.id}` }, dataset.name)),
    cell('version', {}, latest ? t('dataset.versionLabel', { number: latest.number }) : t('datasets.noVersion')),
    cell('rows', { class: 'num' }, latest ? latest.rowCount.toLocaleString() : '0'),
    cell('size', { class: 'num' }, latest ? fmtBytes(latest.sizeBytes) : t('common.none')),
    cell('updatedAt', {}, fmtDate(dataset.updatedAt)));
}

/** The new-dataset form: a name (required) and a description; creating opens its page. */
const newForm = () => detailsForm({ prefix: 'new', id: 'new-dataset', title: t('datasets.new'),
  submitId: 'create-dataset', submitLabel: t('datasets.create'),
  send: (fields) => api('POST', '/api/v1/datasets', fields),
  onDone: (made) => { window.location.href = `/datasets/${made.id}`; } }).form;

async function render() {
  const current = readState(DEFAULTS);
  const focused = document.activeElement?.id === 'search';
  const body = h('section', {}, loading());
  const form = newForm();
  mount(root,
    h('div', { class: 'page-head' }, h('h1', {}, t('datasets.title')), h('div', { class: 'spacer' }),
      h('button', { type: 'button', class: 'primary', id: 'new-dataset-open', onclick: () => {
        form.hidden = false;
        form.querySelector('#new-name').focus();
      } }, t('datasets.new'))),
    form,
    h('div', { class: 'toolbar' }, searchBox(current.q, (q) => go({ ...current, q, page: 1 }, true)),
      ownerFilter(current, go)),
    body);
  if (focused) document.getElementById('search').focus();
  try {
    const { items, total } = await getPage(`/api/v1/datasets?${apiQuery(current, ['owner'])}`);
    if (items.length === 0) {
      const filtered = current.q || current.owner;
      mount(body, h('div', { class: 'state empty' },
        h('p', {}, t(filtered ? 'datasets.emptyFiltered' : 'datasets.empty'))));
      return;
    }
    mount(body, listTable(current, { id: 'datasets', columns: COLUMNS, sortable: SORTABLE,
      label: (k) => t(`datasets.col.${k}`) }, { items, total }, row, go));
  } catch (err) {
    mount(body, errorState(err, render));
  }
}

window.addEventListener('popstate', render);
render();
