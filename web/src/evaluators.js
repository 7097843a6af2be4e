// /evaluators: tabs of preset (read-only) and custom evaluators; the tab and the type filter
// live in the URL (?tab=custom&type=code), so a reload or a shared link opens the same view.
import { api, get } from './common/api.js';
import { t } from './common/boot.js';
import { confirmDialog, errorState, fmtDate, h, loading, mount, toast } from './common/dom.js';

const TABS = ['presets', 'custom'];
const TYPES = ['code', 'llm', 'composite', 'preset'];
const COLUMNS = [['name', 200], ['type', 100], ['language', 100], ['updatedAt', 180], ['actions', 120]];

const root = document.getElementById('app');

function state() {
  const query = new URLSearchParams(window.location.search);
  const tab = TABS.includes(query.get('tab')) ? query.get('tab') : 'presets';
  const type = TYPES.includes(query.get('type')) ? query.get('type') : '';
  return { tab, type };
}

function go(next) {
  const query = new URLSearchParams();
  query.set('tab', next.tab);
  if (next.tab === 'custom' && next.type) query.set('type', next.type);
  window.history.pushState(null, '', `/evaluators?${query}`);
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
    toast(t('common.error', { message: err.message }), 'error');
  }
}

function customRow(e) {
  return h('tr', { dataset: { id: e.id } },
    h('td', { class: 'name' }, h('a', { href: `/evaluators/${e.id}`, title: e.name }, e.name)),
    h('td', {}, t(`type.${e.type}`)),
    h('td', {}, e.language ? t(`language.${e.language}`) : t('common.none')),
    h('td', {}, fmtDate(e.updatedAt)),
    h('td', { class: 'actions' },
      h('a', { href: `/evaluators/${e.id}`, class: 'action' }, t('common.edit')),
      h('button', { type: 'button', class: 'link danger', onclick: () => remove(e) }, t('common.delete'))));
}

async function customTable(body, type) {
  const all = await get(`/api/v1/evaluators${type ? `?type=${type}` : ''}`);
  const custom = all.filter((e) => !e.isPreset);
  if (custom.length === 0) {
    mount(body, h('div', { class: 'state empty' },
      h('p', {}, t(type ? 'evaluators.emptyFiltered' : 'evaluators.empty')),
      type ? null : h('p', { class: 'hint' }, t('evaluators.emptyHint'))));
    return;
  }
  mount(body, h('table', { class: 'table custom fixed' },
    h('colgroup', {}, COLUMNS.map(([, width]) => h('col', { style: `width:${width}px` }))),
    h('thead', {}, h('tr', {}, COLUMNS.map(([key]) => h('th', {}, t(`evaluators.col.${key}`))))),
    h('tbody', {}, custom.map(customRow))));
}

function typeFilter(current) {
  const select = h('select', { id: 'type-filter', 'aria-label': t('evaluators.filter.type'),
    onchange: () => go({ tab: 'custom', type: select.value }) },
  h('option', { value: '' }, t('evaluators.filter.all')),
  TYPES.map((type) => h('option', { value: type, selected: type === current }, t(`type.${type}`))));
  return h('label', { class: 'filter' }, t('evaluators.filter.type'), select);
}

function render() {
  const { tab, type } = state();
  const body = h('section', { class: 'tab-body' }, loading());
  mount(root,
    h('div', { class: 'page-head' }, h('h1', {}, t('evaluators.title')), h('div', { class: 'spacer' }),
      h('a', { href: '/evaluators/new', class: 'button primary', id: 'create' }, t('evaluators.create'))),
    h('div', { class: 'tabs', role: 'tablist' }, TABS.map((name) => h('button', {
      type: 'button', role: 'tab', class: name === tab ? 'tab active' : 'tab', 'aria-selected': String(name === tab),
      dataset: { tab: name }, onclick: () => go({ tab: name, type: '' }),
    }, t(`evaluators.tab.${name}`)))),
    tab === 'custom' ? h('div', { class: 'toolbar' }, typeFilter(type)) : null,
    body);
  const load = tab === 'presets' ? () => presetsTable(body) : () => customTable(body, type);
  const attempt = () => load().catch((err) => mount(body, errorState(err, () => { mount(body, loading()); attempt(); })));
  attempt();
}

window.addEventListener('popstate', render);
render();
