// /runs/{base}/compare/{new}: did the new run do better, or is it noise? Per evaluator and for
// the samples' verdicts: both pass rates, the paired difference with its 95% interval, the exact
// McNemar p-value, the mean-score difference; the samples that flipped, both reasons side by side
// (in the page's language where the product wrote them: common/phrase.js).
import { get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, fmtPct, h, loading, mount } from './common/dom.js';
import { fmtDelta, fmtP } from './common/intervals.js';
import { say } from './common/phrase.js';

const root = document.getElementById('app');
const ALPHA = 0.05;
const COLUMNS = ['evaluator', 'pairs', 'base', 'new', 'delta', 'p', 'toFail', 'toPass', 'scoreDelta'];
const ui = {};

function row(g) {
  const significant = g.pValue !== null && g.pValue < ALPHA;
  const name = g.grader === 'overall' ? h('strong', {}, t('compare.overall'))
    : h('a', { href: `/evaluators/${g.evaluatorId}` }, g.grader);
  const cls = significant ? (g.delta < 0 ? 'worse' : 'better') : '';
  return h('tr', { class: cls, dataset: { grader: g.grader } },
    h('td', {}, name), h('td', { class: 'num' }, g.pairs),
    h('td', { class: 'num' }, fmtPct(g.basePassRate)), h('td', { class: 'num' }, fmtPct(g.newPassRate)),
    h('td', { class: 'num delta' }, fmtDelta(g.delta, g.deltaCi)),
    h('td', { class: 'num p-value' }, fmtP(g.pValue) + (significant ? ' *' : '')),
    h('td', { class: 'num' }, g.toFail.length), h('td', { class: 'num' }, g.toPass.length),
    h('td', { class: 'num' }, fmtDelta(g.scoreDelta, g.scoreDeltaCi, false)));
}

function flipsTable(g) {
  if (!g.flips.length) return h('p', { class: 'state empty' }, t('compare.noFlips'));
  const sample = (id) => h('a', { href: `/runs/${params.new}/samples/${encodeURIComponent(id)}` }, id);
  const reason = (text, code, args) => (text === null ? h('span', { class: 'badge status-passed' }, t('status.passed'))
    : h('span', { class: 'reason' }, say(code, args, text)));
  return h('table', { class: 'table', id: 'flips' },
    h('thead', {}, h('tr', {}, ['sample', 'direction', 'baseReason', 'newReason']
      .map((k) => h('th', {}, t(`compare.col.${k}`))))),
    h('tbody', {}, g.flips.map((f) => h('tr', { class: f.direction === 'to_fail' ? 'worse' : 'better' },
      h('td', {}, sample(f.id)), h('td', {}, t(`compare.${f.direction}`)),
      h('td', { class: 'reason' }, reason(f.baseReason, f.baseReasonCode, f.baseReasonArgs)),
      h('td', { class: 'reason' }, reason(f.newReason, f.newReasonCode, f.newReasonArgs))))));
}

function flipsCard(doc) {
  const all = [doc.overall, ...doc.graders];
  const select = h('select', { id: 'flips-of' }, all.map((g, i) => h('option', { value: String(i) },
    g.grader === 'overall' ? t('compare.overall') : g.grader)));
  const body = h('div', {}, flipsTable(doc.overall));
  select.addEventListener('change', () => mount(body, flipsTable(all[Number(select.value)])));
  return h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, t('compare.flips')),
    h('label', { class: 'filter' }, t('compare.of'), select)), body);
}

function unpairedCard(doc) {
  const { baseOnly, newOnly } = doc.unpaired;
  if (!baseOnly.length && !newOnly.length) return null;
  const list = (key, ids) => (ids.length ? h('p', { id: `unpaired-${key}` },
    `${t(`compare.${key}`)} (${ids.length}): ${ids.slice(0, 50).join(', ')}${ids.length > 50 ? ' …' : ''}`) : null);
  return h('section', { class: 'card' }, h('h2', {}, t('compare.unpaired')), list('baseOnly', baseOnly),
    list('newOnly', newOnly));
}

async function render() {
  mount(root, loading());
  let doc;
  let base;
  try {
    [doc, base] = await Promise.all([get(`/api/v1/runs/${params.base}/compare/${params.new}`),
      get(`/api/v1/runs/${params.base}`)]);
  } catch (err) {
    mount(root, errorState(err, render));
    return;
  }
  const short = (id) => id.slice(0, 8);
  document.title = `${t('compare.title', { base: short(params.base), new: short(params.new) })} · ${t('app.title')}`;
  ui.table = h('table', { class: 'table', id: 'comparison' },
    h('thead', {}, h('tr', {}, COLUMNS.map((k) => h('th', {}, t(`compare.col.${k}`))))),
    h('tbody', {}, [...doc.graders, doc.overall].map(row)));
  mount(root,
    h('div', { class: 'page-head' }, h('a', { href: `/tasks/${base.taskId}`, class: 'button secondary' },
      `← ${t('run.task')}`), h('h1', {}, t('compare.title', { base: short(params.base), new: short(params.new) }))),
    h('p', { class: 'meta' }, h('a', { href: `/runs/${params.base}` }, short(params.base)), ' → ',
      h('a', { href: `/runs/${params.new}` }, short(params.new))),
    h('section', { class: 'card' }, h('div', { class: 'table-box' }, ui.table),
      h('p', { class: 'hint', id: 'compare-meaning' }, t('compare.meaning'))),
    flipsCard(doc), unpairedCard(doc));
}

render();
