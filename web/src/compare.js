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

/** A cell labelled with its column's name (a phone shows the rows as labelled cards). */
const cell = (prefix, key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`${prefix}.${key}`) } },
  ...children);

function row(g) {
  const significant = g.pValue !== null && g.pValue < ALPHA;
  const name = g.grader === 'overall' ? h('strong', {}, t('compare.overall'))
    : h('a', { href: `/evaluators/${g.evaluatorId}` }, g.grader);
  const cls = significant ? (g.delta < 0 ? 'worse' : 'better') : '';
  const c = (key, attrs, ...children) => cell('compare.col', key, attrs, ...children);
  return h('tr', { class: cls, dataset: { grader: g.grader } },
    c('evaluator', {}, name), c('pairs', { class: 'num' }, g.pairs),
    c('base', { class: 'num' }, fmtPct(g.basePassRate)), c('new', { class: 'num' }, fmtPct(g.newPassRate)),
    c('delta', { class: 'num delta' }, fmtDelta(g.delta, g.deltaCi)),
    c('p', { class: 'num p-value' }, fmtP(g.pValue) + (significant ? ' *' : '')),
    c('toFail', { class: 'num' }, g.toFail.length), c('toPass', { class: 'num' }, g.toPass.length),
    c('scoreDelta', { class: 'num' }, fmtDelta(g.scoreDelta, g.scoreDeltaCi, false)));
}

function flipsTable(g) {
  if (!g.flips.length) return h('p', { class: 'state empty' }, t('compare.noFlips'));
  const sample = (id) => h('a', { href: `/runs/${params.new}/samples/${encodeURIComponent(id)}` }, id);
  const reason = (text, code, args) => (text === null ? h('span', { class: 'badge status-passed' }, t('status.passed'))
    : h('span', { class: 'reason' }, say(code, args, text)));
  const c = (key, attrs, ...children) => cell('compare.col', key, attrs, ...children);
  return h('table', { class: 'table cards', id: 'flips' },
    h('thead', {}, h('tr', {}, ['sample', 'direction', 'baseReason', 'newReason']
      .map((k) => h('th', {}, t(`compare.col.${k}`))))),
    h('tbody', {}, g.flips.map((f) => h('tr', { class: f.direction === 'to_fail' ? 'worse' : 'better' },
      c('sample', {}, sample(f.id)), c('direction', {}, t(`compare.${f.direction}`)),
      c('baseReason', { class: 'reason' }, reason(f.baseReason, f.baseReasonCode, f.baseReasonArgs)),
      c('newReason', { class: 'reason' }, reason(f.newReason, f.newReasonCode, f.newReasonArgs))))));
}

const scopeKey = (g) => (g.grader === 'overall' ? 'overall' : g.evaluatorId);

/** The scope shown first: the one the address names (?scope=overall or an evaluator's id), else the
 * verdicts when samples flipped there, else the evaluator with the most flips: never "no sample
 * changed" while some did. */
function firstScope(all) {
  const named = new URLSearchParams(window.location.search).get('scope');
  const found = all.find((g) => scopeKey(g) === named);
  if (found) return found;
  if (all[0].flips.length) return all[0];
  return all.reduce((most, g) => (g.flips.length > most.flips.length ? g : most), all[0]);
}

function flipsCard(doc) {
  const all = [doc.overall, ...doc.graders];
  const shown = firstScope(all);
  const select = h('select', { id: 'flips-of' }, all.map((g) => h('option', { value: scopeKey(g),
    selected: g === shown }, `${g.grader === 'overall' ? t('compare.overall') : g.grader} (${g.flips.length})`)));
  const body = h('div', {}, flipsTable(shown));
  select.addEventListener('change', () => {
    const url = new URL(window.location.href);
    url.searchParams.set('scope', select.value);
    window.history.replaceState(null, '', url);
    mount(body, flipsTable(all.find((g) => scopeKey(g) === select.value)));
  });
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
  ui.table = h('table', { class: 'table cards', id: 'comparison' },
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
