// /traces/{id}: one trace's spans in the order they started, indented by their depth in the
// tree, each with its model, duration and status, its attributes (folded), and the verdicts
// online rules gave on it, each naming its rule (a trace rule's on the root span).
import { get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, fmtScore, h, loading, mount } from './common/dom.js';

const root = document.getElementById('app');
const MAX_INDENT = 8;

function verdicts(list) {
  if (!list.length) return h('span', { class: 'hint' }, t('common.none'));
  return h('ul', { class: 'verdicts' }, list.map((v) => h('li', { dataset: { rule: v.ruleId, scope: v.scope } },
    h('span', { class: `badge status-${v.status}` }, t(`online.status.${v.status}`)), ' ',
    h('a', { href: `/online/${v.ruleId}` }, v.ruleName), ' · ', v.evaluatorName,
    v.scope !== 'span' ? h('span', { class: 'hint' }, ` (${t(`online.scope.${v.scope}`)})`) : '',
    v.generation > 1 ? ` #${v.generation}` : '',
    v.score !== null ? ` · ${fmtScore(v.score)}` : '', v.reason ? h('span', { class: 'reason' }, ` ${v.reason}`) : '')));
}

/** The span's attributes, folded: the messages the conventions recorded are among them. */
function attributes(span) {
  const names = Object.keys(span.attributes).sort();
  if (!names.length) return null;
  return h('details', { class: 'span-attributes' }, h('summary', {}, t('trace.attributes', { n: names.length })),
    h('dl', {}, names.flatMap((name) => [h('dt', {}, h('code', {}, name)),
      h('dd', {}, h('pre', { tabindex: 0 }, typeof span.attributes[name] === 'string' ? span.attributes[name]
        : JSON.stringify(span.attributes[name], null, 1)))])));
}

async function start() {
  mount(root, loading());
  try {
    const spans = await get(`/api/v1/traces/${encodeURIComponent(params.id)}`);
    const cell = (key, ...children) => h('td', { dataset: { label: t(`trace.col.${key}`) } }, ...children);
    mount(root, h('div', { class: 'page-head' }, h('a', { href: '/traces', class: 'button secondary' },
      `← ${t('traces.title')}`), h('h1', {}, h('code', { class: 'id' }, params.id))),
    h('section', { class: 'card' }, h('table', { class: 'table', id: 'spans' },
      h('thead', {}, h('tr', {}, ['name', 'model', 'duration', 'status', 'verdicts'].map((k) => h('th', { scope: 'col' },
        t(`trace.col.${k}`))))),
      h('tbody', {}, spans.map((s) => h('tr', { dataset: { id: s.spanId, depth: String(s.depth) } },
        cell('name', h('span', { class: 'span-name', style: `padding-inline-start: ${Math.min(s.depth, MAX_INDENT)}em` },
          s.name), attributes(s)),
        cell('model', s.model || t('common.none')), cell('duration', `${s.durationMs.toFixed(1)} ms`),
        cell('status', t(`trace.status.${s.status}`)), cell('verdicts', verdicts(s.verdicts))))))));
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

start();
