// /evaluators: tabs of preset (read-only) and custom evaluators. The custom tab is searched,
// filtered (type, language, owner), sorted and paged on the server; all of it lives in the URL
// (?tab=custom&q=&type=&language=&owner=&sort=&order=&page=), so a reload or a shared link
// opens the same view.
import { api, get, getPage } from './common/api.js';
import { t } from './common/boot.js';
import { confirmDialog, errorState, fmtDate, h, loading, mount, toast } from './common/dom.js';
import { apiQuery, pager, readState, searchBox, sortHeader, writeState } from './common/listing.js';
import { me, refusal } from './common/owned.js';

const TABS = ['presets', 'custom'];
const TYPES = ['code', 'llm', 'composite', 'preset'];
const LANGUAGES = ['python', 'nodejs'];
const FILTERS = ['type', 'language', 'owner'];
const DEFAULTS = { tab: 'presets', q: '', type: '', language: '', owner: '', sort: 'updatedAt', order: 'desc', page: 1 };
const COLUMNS = [['name', 200], ['type', 100], ['language', 100], ['owner', 120], ['updatedAt', 180], ['actions', 120]];
const SORTABLE = ['name', 'type', 'updatedAt'];

const root = document.getElementById('app');

function state() {
  const current = readState(DEFAULTS);
  if (!TABS.includes(current.tab)) current.tab = 'presets';
  return current;
}

function go(next, replace = false) {
  writeState(next.tab === 'custom' ? next : { tab: next.tab }, DEFAULTS, replace);
  render();
}

const known = (key, fallback) => (t(key) === key ? fallback : t(key));
const presetName = (e) => known(`preset.${e.config.presetType}.name`, e.name);
const presetText = (e) => known(`preset.${e.config.presetType}.description`, e.description);

async function presetsTable(body) {
  const presets = await get('/api/v1/evaluators/presets');
  mount(body, h('table', { class: 'table presets' },
    h('thead', {}, h('tr', {}, h('th', {}, t('evaluators.col.name')), h('th', {}, t('evaluators.col.description')))),
    h('tbody', {}, presets.map((e) => h('tr', { dataset: { id: e.id } },
      h('td', {}, h('a', { href: `/evaluators/${e.id}` }, presetName(e))),
      h('td', {}, presetText(e)))))));
}

async function remove(evaluator) {
  const ok = await confirmDialog(t('evaluators.deleteTitle'), t('evaluators.deleteConfirm', { name: evaluator.name }),
    t('common.delete'));
  if (!ok) return;
  try {
    await api('DELETE', `/api/v1/evaluators/${evaluator.id}`);
    toast(t('evaluators.deleted', { name: evaluator.name }));
    render();
  } catch (err) {
    document.getElementById('refusal')?.remove();
    root.prepend(refusal(err)); // with a link to each task in the way
  }
}

function customRow(e) {
  const cell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`evaluators.col.${key}`) } },
    ...children);
  return h('tr', { dataset: { id: e.id } },
    cell('name', { class: 'name' }, h('a', { href: `/evaluators/${e.id}`, title: e.name }, e.name)),
    cell('type', {}, t(`type.${e.type}`)),
    cell('language', {}, e.language ? t(`language.${e.language}`) : t('common.none')),
    cell('owner', {}, e.owner ?? t('common.none')),
    cell('updatedAt', {}, fmtDate(e.updatedAt)),
    cell('actions', { class: 'actions' }, me.isAdmin || e.owner === me.name // user names are unique
      ? [h('a', { href: `/evaluators/${e.id}`, class: 'action' }, t('common.edit')),
        h('button', { type: 'button', class: 'link danger', onclick: () => remove(e) }, t('common.delete'))]
      : h('a', { href: `/evaluators/${e.id}`, class: 'action' }, t('common.view'))));
}

async function customTable(body, current) {
  const query = apiQuery(current, FILTERS, { isPreset: 'false' });
  const { items, total } = await getPage(`/api/v1/evaluators?${query}`);
  if (items.length === 0 && current.page > 1 && total > 0) {
    go({ ...current, page: 1 }, true);
    return;
  }
  if (items.length === 0) {
    const filtered = FILTERS.some((key) => current[key]) || current.q;
    mount(body, h('div', { class: 'state empty' },
      h('p', {}, t(filtered ? 'evaluators.emptyFiltered' : 'evaluators.empty')),
      filtered ? null : h('p', { class: 'hint' }, t('evaluators.emptyHint'))));
    return;
  }
  const onSort = (sort, order) => go({ ...current, sort, order, page: 1 });
  mount(body, h('div', { class: 'table-box' }, h('table', { class: 'table custom fixed cards' },
    h('colgroup', {}, COLUMNS.map(([, width]) => h('col', { style: `width:${width}px` }))),
    h('thead', {}, h('tr', {}, COLUMNS.map(([key]) => (SORTABLE.includes(key)
      ? sortHeader(key, t(`evaluators.col.${key}`), current, onSort) : h('th', {}, t(`evaluators.col.${key}`)))))),
    h('tbody', {}, items.map(customRow)))),
  pager(current, total, (page) => go({ ...current, page })));
}

function filterSelect(id, label, current, options, onPick) {
  const select = h('select', { id, 'aria-label': label, onchange: () => onPick(select.value) },
    options.map(([value, text]) => h('option', { value, selected: value === current }, text)));
  return h('label', { class: 'filter' }, label, select);
}

function toolbar(current) {
  const pick = (key) => (value) => go({ ...current, [key]: value, page: 1 });
  return h('div', { class: 'toolbar' },
    searchBox(current.q, (q) => go({ ...current, q, page: 1 }, true)),
    filterSelect('type-filter', t('evaluators.filter.type'), current.type,
      [['', t('evaluators.filter.all')], ...TYPES.map((type) => [type, t(`type.${type}`)])], pick('type')),
    filterSelect('language-filter', t('evaluators.filter.language'), current.language,
      [['', t('evaluators.filter.allLanguages')], ...LANGUAGES.map((l) => [l, t(`language.${l}`)])],
      pick('language')),
    filterSelect('owner-filter', t('evaluators.filter.owner'), current.owner,
      [['', t('evaluators.filter.everyone')], ['me', t('evaluators.filter.mine')]], pick('owner')));
}

function render() {
  const current = state();
  const { tab } = current;
  const body = h('section', { class: 'tab-body' }, loading());
  const focused = document.activeElement?.id === 'search';
  mount(root,
    h('div', { class: 'page-head' }, h('h1', {}, t('evaluators.title')), h('div', { class: 'spacer' }),
      h('a', { href: '/evaluators/new', class: 'button primary', id: 'create' }, t('evaluators.create'))),
    h('div', { class: 'tabs', role: 'tablist' }, TABS.map((name) => h('button', {
      type: 'button', role: 'tab', class: name === tab ? 'tab active' : 'tab', 'aria-selected': String(name === tab),
      dataset: { tab: name }, onclick: () => go({ ...DEFAULTS, tab: name }),
    }, t(`evaluators.tab.${name}`)))),
    tab === 'custom' ? toolbar(current) : null,
    body);
  if (focused) {
    const search = document.getElementById('search');
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }
  const load = tab === 'presets' ? () => presetsTable(body) : () => customTable(body, current);
  const attempt = () => load().catch((err) => mount(body, errorState(err, () => { mount(body, loading()); attempt(); })));
  attempt();
}

window.addEventListener('popstate', render);
render();
