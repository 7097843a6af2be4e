// /tasks: the tasks, searched, filtered by owner, sorted and paged on the server; the state
// lives in the URL (?q=&owner=&sort=&order=&page=).
import { getPage } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';
import { apiQuery, listTable, ownerFilter, readState, searchBox, writeState } from './common/listing.js';

const root = document.getElementById('app');
const DEFAULTS = { q: '', owner: '', sort: 'updatedAt', order: 'desc', page: 1 };
const COLUMNS = ['name', 'samples', 'evaluators', 'updatedAt'];
const SORTABLE = ['name', 'updatedAt'];

function go(next, replace = false) {
  writeState(next, DEFAULTS, replace);
  render();
}

function row(task) {
  const cell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`tasks.col.${key}`) } },
    ...children);
  return h('tr', { dataset: { id: task.id } },
    cell('name', { class: 'name' }, h('a', { href: `/tasks/${task.id}` }, task.name)),
    cell('samples', { class: 'num' }, task.sampleCount),
    cell('evaluators', {}, task.evaluators.map((e) => e.name).join(t('common.listSep'))),
    cell('updatedAt', {}, fmtDate(task.updatedAt)));
}

async function render() {
  const current = readState(DEFAULTS);
  const focused = document.activeElement?.id === 'search';
  const body = h('section', {}, loading());
  mount(root,
    h('div', { class: 'page-head' }, h('h1', {}, t('tasks.title')), h('div', { class: 'spacer' }),
      h('a', { href: '/tasks/new', class: 'button primary', id: 'new-task' }, t('tasks.new'))),
    h('div', { class: 'toolbar' }, searchBox(current.q, (q) => go({ ...current, q, page: 1 }, true)),
      ownerFilter(current, go)),
    body);
  if (focused) document.getElementById('search').focus();
  try {
    const { items, total } = await getPage(`/api/v1/tasks?${apiQuery(current, ['owner'])}`);
    if (items.length === 0) {
      const filtered = current.q || current.owner;
      mount(body, h('div', { class: 'state empty' }, h('p', {}, t(filtered ? 'tasks.emptyFiltered' : 'tasks.empty'))));
      return;
    }
    mount(body, listTable(current, { id: 'tasks', columns: COLUMNS, sortable: SORTABLE,
      label: (k) => t(`tasks.col.${k}`) }, { items, total }, row, go));
  } catch (err) {
    mount(body, errorState(err, render));
  }
}

window.addEventListener('popstate', render);
render();
