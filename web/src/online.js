// /online: the caller's online rules, each with a link to its dashboard and to its form, and
// a way to a new rule's form (/online/new) and to the traces.
import { get } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';

const root = document.getElementById('app');

function rulesTable(rules) {
  if (!rules.length) return h('p', { class: 'state empty' }, t('online.empty'));
  const cell = (key, ...children) => h('td', { dataset: { label: t(`online.col.${key}`) } }, ...children);
  return h('table', { class: 'table', id: 'rules' },
    h('thead', {}, h('tr', {}, ['name', 'scope', 'rate', 'enabled', 'updatedAt']
      .map((k) => h('th', { scope: 'col' }, t(`online.col.${k}`))))),
    h('tbody', {}, rules.map((r) => h('tr', { dataset: { id: r.id } },
      cell('name', h('a', { href: `/online/${r.id}` }, r.name)), cell('scope', t(`online.scope.${r.scope}`)),
      cell('rate', `${(r.sampleRate * 100).toFixed(0)}%`), cell('enabled', t(r.enabled ? 'online.on' : 'online.off')),
      cell('updatedAt', fmtDate(r.updatedAt))))));
}

async function start() {
  mount(root, loading());
  try {
    const rules = await get('/api/v1/online-rules');
    mount(root, h('div', { class: 'page-head' }, h('h1', {}, t('online.title')), h('div', { class: 'spacer' }),
      h('a', { href: '/traces', class: 'button secondary', id: 'to-traces' }, t('traces.title')),
      h('a', { href: '/online/new', class: 'button primary', id: 'new-rule' }, t('online.new'))),
    h('p', { class: 'hint' }, t('online.intro')), h('section', { class: 'card' }, rulesTable(rules)));
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

start();
