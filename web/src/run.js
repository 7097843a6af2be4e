// /runs/{id}: live progress while the run goes on; then pass rate and mean score per
// evaluator, the score histogram, and a filterable table of the samples that did not pass.
import { api, get } from './common/api.js';
import { lang, params, t } from './common/boot.js';
import { histogram } from './common/charts.js';
import { confirmDialog, errorState, fmtDate, fmtPct, fmtScore, h, loading, mount, statusBadge, toast, withColon }
  from './common/dom.js';
import { fmtCi, fmtScoreCi } from './common/intervals.js';
import { errorName, reasonOf } from './common/phrase.js';
import { mayChange, refusal } from './common/owned.js';

const root = document.getElementById('app');
const ACTIVE = ['queued', 'running'];
const POLL_MS = 500; // live figures at least once a second
const PAGE = 50;
const runId = params.id;
const ui = {};

function progressView(run) {
  const share = run.total ? run.done / run.total : 1;
  return [
    h('span', { class: `badge run-${run.status}`, id: 'run-status' }, t(`run.status.${run.status}`)),
    h('progress', { max: run.total || 1, value: run.done, id: 'run-progress', 'aria-label': t('run.progress') }),
    h('span', { class: 'num', id: 'run-done' }, t('run.doneOf', { done: run.done, total: run.total,
      pct: (share * 100).toFixed(0) })),
    ACTIVE.includes(run.status) ? h('button', { type: 'button', class: 'secondary', onclick: cancel },
      t('run.cancel')) : null,
    !ACTIVE.includes(run.status) && mayChange(run) ? h('button', { type: 'button', class: 'secondary',
      id: 'delete-run', onclick: () => removeRun(run) }, t('run.delete')) : null,
    run.error ? h('p', { class: 'alert error' }, t('run.runError', { message: run.error })) : null,
    pausedView(run),
  ];
}

/** Evaluators paused in the run after timing out on sample after sample: what happened, and
 * Resume (grade their remaining samples) or Cancel (the run). */
function pausedView(run) {
  if (!run.paused?.length || !ACTIVE.includes(run.status)) return null;
  const changeable = mayChange(run);
  return h('div', { class: 'alert warn', id: 'run-paused', role: 'status' },
    run.paused.map((p) => h('p', { class: 'paused-evaluator' },
      t('run.paused', { name: p.name, n: p.timeouts }))),
    h('p', { class: 'hint' }, t(changeable ? 'run.pausedHint' : 'run.pausedNotYours')),
    changeable ? h('div', { class: 'form-actions' },
      h('button', { type: 'button', id: 'resume-run', onclick: resume }, t('run.resume')),
      h('button', { type: 'button', class: 'secondary', id: 'cancel-paused', onclick: cancel }, t('run.cancel')))
      : null);
}

async function resume() {
  try {
    await api('POST', `/api/v1/runs/${runId}/resume`);
    toast(t('run.resumed'));
  } catch (err) {
    toast(t('common.error', { message: err.message }), 'error');
  }
}

/** A cell labelled with its column's name (a phone shows a table's rows as labelled cards). */
const labelledCell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`run.col.${key}`) } },
  ...children);

/** Says what a pass rate counts, beside every pass rate shown: one definition, errors apart. */
function explainRates(container, summary) {
  const text = t('run.passRateDefinition', { n: summary.leftOut ?? ((summary.samplesErrored ?? 0)
    + (summary.samplesPending ?? 0)) });
  for (const el of container.querySelectorAll('#pass-rate, #per-evaluator thead th:nth-child(6)')) {
    el.title = text;
    const label = el.id === 'pass-rate' ? el.previousElementSibling : el;
    label?.append(h('span', { class: 'info-mark', title: text, 'aria-hidden': 'true' }, ' ⓘ'));
  }
  container.append(h('p', { class: 'hint', id: 'pass-rate-definition' }, text));
}

/** The dataset version the run graded: its name (to its page, at that version), number, rows. */
function gradedDataset(dataset) {
  if (!dataset) return h('p', { class: 'meta', id: 'run-dataset' }, withColon(t('task.dataset')), t('common.none'));
  return h('p', { class: 'meta', id: 'run-dataset' }, withColon(t('task.dataset')),
    h('a', { href: `/datasets/${dataset.id}?version=${dataset.version}` }, dataset.name ?? dataset.id),
    ` · ${t('dataset.versionLabel', { number: dataset.version })} · ${t('run.datasetRows', { rows: dataset.rows })}`,
    dataset.file ? ` · ${dataset.file}` : '');
}

/** The evaluators the run graded, as it snapshotted them: version (its number, linking to it; a hash of the
 * config for runs older than versions), weight, and
 * the config itself, every field with the value it graded with (defaults included). */
function gradedWith(evaluators) {
  return h('section', { class: 'card', id: 'graded-with' }, h('h2', {}, t('run.gradedWith')),
    h('div', { class: 'table-box' }, h('table', { class: 'table cards' },
      h('thead', {}, h('tr', {}, ['evaluator', 'version', 'weight', 'config'].map((k) =>
        h('th', {}, t(`run.col.${k}`))))),
      h('tbody', {}, evaluators.map((e) => h('tr', {},
        h('td', { dataset: { label: t('run.col.evaluator') } }, h('a', { href: `/evaluators/${e.evaluatorId}` },
          e.name)),
        h('td', { dataset: { label: t('run.col.version') } }, e.versionNumber
          ? h('a', { class: 'version-link', href: `/evaluators/${e.evaluatorId}?version=${e.versionNumber}`,
            title: e.matchedByConfig ? t('run.matchedByConfig') : null },
          t('versions.label', { number: e.versionNumber }))
          : h('code', { class: 'version' }, e.version),
          e.predatesHistory ? h('span', { class: 'hint predates-history' }, ` ${t('run.predatesHistory')}`) : null,
          e.changedSince ? h('span', { class: 'badge warn', title: t('run.changedSinceHint') },
            t('run.changedSince')) : null),
        h('td', { class: 'num', dataset: { label: t('run.col.weight') } }, e.weight),
        h('td', { dataset: { label: t('run.col.config') } }, h('details', { class: 'graded-config' },
          h('summary', {}, t('run.showConfig')), h('pre', {}, JSON.stringify(e.config, null, 2))))))))));
}

async function removeRun(run) {
  if (!await confirmDialog(t('run.delete'), t('run.deleteConfirm', { run: run.id.slice(0, 8), results: run.done }),
    t('common.delete'))) return;
  try {
    await api('DELETE', `/api/v1/runs/${runId}`);
    window.location.href = `/tasks/${run.taskId}`;
  } catch (err) {
    root.prepend(refusal(err));
  }
}

async function cancel() {
  try {
    await api('POST', `/api/v1/runs/${runId}/cancel`);
  } catch (err) {
    toast(t('common.error', { message: err.message }), 'error');
  }
}

/** "95% CI [61.2, 74.6]", and how many samples errors and pending results left out. */
function ciNote(summary) {
  const parts = summary.passRateCi ? [t('run.ci', { ci: fmtCi(summary.passRateCi) })] : [];
  if (summary.leftOut) parts.push(t('run.leftOut', { n: summary.leftOut }));
  return parts.join(' · ');
}

function summaryView(summary) {
  const card = (label, value, id) => h('div', { class: 'stat' }, h('div', { class: 'label' }, label),
    h('div', { class: 'value', id }, value));
  const rate = (e) => {
    const graded = e.passed + e.failed;
    return graded ? e.passed / graded : null;
  };
  return [
    h('div', { class: 'stats' }, card(t('run.samples'), String(summary.samples)),
      h('div', { class: 'stat' }, h('div', { class: 'label' }, t('run.passRate')),
        h('div', { class: 'value', id: 'pass-rate' }, fmtPct(summary.passRate)),
        h('div', { class: 'ci', id: 'pass-rate-ci' }, ciNote(summary))),
      h('div', { class: 'stat' }, h('div', { class: 'label' }, t('run.meanScore')),
        h('div', { class: 'value', id: 'mean-score' }, fmtScore(summary.meanScore)),
        h('div', { class: 'ci', id: 'mean-score-ci' },
          summary.meanScoreCi ? t('run.ci', { ci: fmtScoreCi(summary.meanScoreCi) }) : ''))),
    h('h2', {}, t('run.perEvaluator')),
    h('table', { class: 'table cards', id: 'per-evaluator' },
      h('thead', {}, h('tr', {}, ['evaluator', 'passed', 'failed', 'error', 'pending', 'passRate', 'meanScore']
        .map((k) => h('th', {}, t(`run.col.${k}`))))),
      h('tbody', {}, summary.evaluators.map((e) => h('tr', {},
        labelledCell('evaluator', {}, h('a', { href: `/evaluators/${e.evaluatorId}` }, e.name)),
        labelledCell('passed', { class: 'num' }, e.passed), labelledCell('failed', { class: 'num' }, e.failed),
        labelledCell('error', { class: 'num' }, e.error), labelledCell('pending', { class: 'num' }, e.pending),
        labelledCell('passRate', { class: 'num' }, fmtPct(rate(e)),
          h('span', { class: 'ci' }, ` ${fmtCi(e.passRateCi)}`)),
        labelledCell('meanScore', { class: 'num' }, fmtScore(e.meanScore),
          h('span', { class: 'ci' }, e.meanScoreCi ? ` ${fmtScoreCi(e.meanScoreCi)}` : ''),
        ))))),
  ];
}

async function drawHistogram(evaluatorId) {
  const query = evaluatorId ? `?evaluatorId=${encodeURIComponent(evaluatorId)}` : '';
  try {
    const data = await get(`/pages/api/runs/${runId}/histogram${query}`);
    const total = data.bins.reduce((n, b) => n + b.count, 0);
    mount(ui.histogram, total ? histogram(data.bins, t('run.histogram')) : h('p', { class: 'state empty' },
      t('run.histogramEmpty')));
  } catch (err) {
    mount(ui.histogram, errorState(err, () => drawHistogram(evaluatorId)));
  }
}

/** The table's filters as the results API and the export take them. */
function filters() {
  const query = new URLSearchParams();
  const status = ui.statusFilter.value;
  if (status) query.set('status', status);
  else query.set('failedOnly', 'true');
  if (ui.evaluatorFilter.value) query.set('evaluatorId', ui.evaluatorFilter.value);
  return query;
}

function filterQuery(offset) {
  const query = filters();
  query.set('limit', String(PAGE));
  query.set('offset', String(offset));
  return query;
}

/** The export of what the table shows: its filters, reasons in the page's language, and a line
 * that says what the file holds ("12 results: failed or error, evaluator X"). */
function exportView(total) {
  const chosen = (select) => select.options[select.selectedIndex].textContent;
  const what = [chosen(ui.statusFilter), ui.evaluatorFilter.value ? chosen(ui.evaluatorFilter)
    : t('run.filter.allEvaluators')].join(' · ');
  const link = (format) => {
    const query = filters();
    query.set('format', format);
    query.set('lang', lang);
    return h('a', { href: `/api/v1/runs/${runId}/export?${query}`, class: 'action', download: '',
      id: `export-${format}` }, format.toUpperCase());
  };
  return [h('span', { class: 'hint', id: 'export-what' }, withColon(t('run.exportWhat', { n: total, what }))),
    link('jsonl'), link('csv')];
}

async function drawFailures(offset = 0) {
  if (offset === 0) mount(ui.failures, loading());
  let page;
  try {
    page = await get(`/api/v1/runs/${runId}/results?${filterQuery(offset)}`);
  } catch (err) {
    mount(ui.failures, errorState(err, () => drawFailures(offset)));
    return;
  }
  const rows = page.items.map((r) => h('tr', {},
    labelledCell('sample', {}, h('a', { href: `/runs/${runId}/samples/${encodeURIComponent(r.sampleId)}` },
      r.sampleId)),
    labelledCell('evaluator', {}, r.evaluatorName), labelledCell('status', {}, statusBadge(r.status)),
    labelledCell('score', { class: 'num' }, fmtScore(r.score)),
    labelledCell('reason', { class: 'reason' }, reasonOf(r) || (r.error && errorName(r.error)) || t('common.none'))));
  if (offset === 0) {
    mount(ui.exports, page.total ? exportView(page.total) : null);
    if (page.total === 0) {
      mount(ui.failures, h('p', { class: 'state empty' }, t('run.noFailures')));
      return;
    }
    ui.failureBody = h('tbody', {});
    mount(ui.failures, h('table', { class: 'table cards', id: 'failures' },
      h('thead', {}, h('tr', {}, ['sample', 'evaluator', 'status', 'score', 'reason'].map((k) => h('th', {},
        t(`run.col.${k}`))))), ui.failureBody), ui.more = h('div', {}));
  }
  ui.failureBody.append(...rows);
  const shown = offset + page.items.length;
  mount(ui.more, shown < page.total ? h('button', { type: 'button', class: 'secondary',
    onclick: () => drawFailures(shown) }, `${t('run.more')} (${shown}/${page.total})`) : null);
}

function resultsView(run) {
  const evaluators = run.summary ? run.summary.evaluators : [];
  ui.evaluatorFilter = h('select', { id: 'filter-evaluator' }, h('option', { value: '' }, t('run.filter.allEvaluators')),
    evaluators.map((e) => h('option', { value: e.evaluatorId }, e.name)));
  ui.statusFilter = h('select', { id: 'filter-status' }, [['', 'notPassed'], ['failed', 'failed'], ['error', 'error']]
    .map(([value, key]) => h('option', { value }, t(`run.filter.${key}`))));
  ui.histogram = h('div', { class: 'histogram', id: 'histogram' });
  ui.failures = h('div', {});
  const refilter = () => {
    drawHistogram(ui.evaluatorFilter.value);
    drawFailures(0);
  };
  ui.evaluatorFilter.addEventListener('change', refilter);
  ui.statusFilter.addEventListener('change', () => drawFailures(0));
  ui.exports = h('div', { class: 'exports', id: 'exports' });
  const view = [
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, t('run.histogram')),
      h('label', { class: 'filter' }, t('run.filter.evaluator'), ui.evaluatorFilter)), ui.histogram),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, t('run.failures')),
      h('label', { class: 'filter' }, t('run.filter.status'), ui.statusFilter), h('div', { class: 'spacer' }), ui.exports),
      ui.failures),
  ];
  refilter();
  return view;
}

async function poll() {
  let run;
  try {
    run = await get(`/pages/api/runs/${runId}/live`);
  } catch (err) {
    mount(ui.progress, errorState(err, poll));
    return;
  }
  mount(ui.progress, progressView(run));
  if (!ui.versions) {
    ui.versions = gradedWith(run.evaluators);
    ui.summary.after(ui.versions);
    ui.head.after(gradedDataset(run.dataset));
  }
  // Live figures: the same summary as the finished run's, of what is graded so far.
  mount(ui.summary, run.summary ? summaryView(run.summary) : null);
  if (run.summary) explainRates(ui.summary, run.summary);
  if (ACTIVE.includes(run.status)) {
    setTimeout(poll, POLL_MS);
    return;
  }
  mount(ui.results, resultsView(run));
  showTimes(await get(`/api/v1/runs/${runId}`).catch(() => null));
}

/** When the run started and, once it ended, how long it took. */
function showTimes(run) {
  if (!run?.startedAt) return;
  const took = run.finishedAt ? (new Date(run.finishedAt) - new Date(run.startedAt)) / 1000 : null;
  mount(ui.times, t('run.startedAt', { when: fmtDate(run.startedAt) }),
    took === null ? null : ` · ${t('run.took', { seconds: took < 10 ? took.toFixed(1) : Math.round(took) })}`);
}

async function start() {
  mount(root, loading());
  let run;
  try {
    run = await get(`/api/v1/runs/${runId}`);
  } catch (err) {
    mount(root, errorState(err, start));
    return;
  }
  ui.progress = h('div', { class: 'progress-row' });
  ui.summary = h('section', { class: 'card summary' });
  ui.results = h('div', {});
  const back = h('a', { href: `/tasks/${run.taskId}`, class: 'button secondary', id: 'back-to-task' },
    `← ${t('run.task')}`);
  ui.head = h('div', { class: 'page-head' }, back, h('h1', {}, t('run.title', { id: run.id.slice(0, 8) })));
  ui.times = h('p', { class: 'hint', id: 'run-times' });
  mount(root, ui.head,
    h('section', { class: 'card' }, h('h2', {}, t('run.progress')), ui.progress, ui.times),
    ui.summary, ui.results);
  showTimes(run);
  poll();
  get(`/api/v1/tasks/${run.taskId}`).then((task) => { back.textContent = `← ${task.name}`; }, () => {});
}

start();
