// /tasks/{id}: the task, its runs (newest first, paged on the server: ?page=) and the trend of
// the pass rates of its last finished runs.
import { api, get, getPage } from './common/api.js';
import { params, t } from './common/boot.js';
import { trend } from './common/charts.js';
import { errorState, fmtDate, fmtPct, fmtScore, h, loading, mount, toast, withColon }
  from './common/dom.js';
import { askThenDelete, mayChange, ownerBanner, refusal } from './common/owned.js';
import { copyTask } from './task/copy.js';
import { fmtCi } from './common/intervals.js';
import { PAGE_SIZE, pager, readState, writeState } from './common/listing.js';

const root = document.getElementById('app');
const ACTIVE = ['queued', 'running'];
const POLL_MS = 1000;
const TREND_RUNS = 50;
const DEFAULTS = { page: 1 };

const RUN_COLUMNS = ['run', 'status', 'startedBy', 'progress', 'passRate', 'meanScore', 'createdAt', 'actions'];
const problem = h('div', { id: 'task-problem' });

/** Deletes after asking (the server refuses what other rows still need, 409: shown with links to them). */
const remove = (path, title, text, done) => askThenDelete(path, title, text, done, problem);

function deleteRun(run) {
  remove(`/api/v1/runs/${run.id}`, t('run.delete'), t('run.deleteConfirm', { run: run.id.slice(0, 8),
    results: run.done }), () => { toast(t('run.deleted')); render(false); });
}

const copy = (task) => copyTask(task).catch((err) => mount(problem, refusal(err)));

function runRow(run) {
  const summary = run.summary || {};
  const cell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`task.col.${key}`) } },
    ...children);
  return h('tr', { dataset: { id: run.id } },
    cell('run', {}, h('a', { href: `/runs/${run.id}` }, run.id.slice(0, 8))),
    cell('status', {}, h('span', { class: `badge run-${run.status}` }, t(`run.status.${run.status}`))),
    cell('startedBy', { class: 'started-by' }, run.startedBy ?? t('owned.nobody')),
    cell('progress', {}, h('progress', { max: run.total || 1, value: run.done, 'aria-label': t('task.col.progress') }),
      ` ${run.done}/${run.total}`),
    cell('passRate', { class: 'num' }, fmtPct(summary.passRate), h('span', { class: 'ci' }, ` ${fmtCi(summary.passRateCi)}`)),
    cell('meanScore', { class: 'num' }, fmtScore(summary.meanScore)),
    cell('createdAt', {}, fmtDate(run.createdAt)),
    cell('actions', {}, mayChange(run) && !ACTIVE.includes(run.status) ? h('button', { type: 'button',
      class: 'link danger delete-run', 'aria-label': t('run.deleteOf', { run: run.id.slice(0, 8) }),
      onclick: () => deleteRun(run) }, t('common.delete')) : null));
}

/** Two finished runs to compare (newest against the one before, unless chosen): opens the compare page. */
function compareForm(finished) {
  if (finished.length < 2) return null;
  const options = (chosen) => finished.map((r, i) => h('option', { value: r.id, selected: i === chosen },
    `${r.id.slice(0, 8)} · ${fmtDate(r.createdAt)}`));
  const base = h('select', { id: 'compare-base' }, options(1));
  const next = h('select', { id: 'compare-new' }, options(0));
  const go = h('button', { type: 'button', class: 'secondary', id: 'compare-runs' }, t('task.compare'));
  go.addEventListener('click', () => { window.location.href = `/runs/${base.value}/compare/${next.value}`; });
  return h('div', { class: 'compare-form' }, h('label', {}, t('task.compareBase'), base),
    h('label', {}, t('task.compareNew'), next), go);
}

async function startRun(button) {
  button.disabled = true;
  try {
    const run = await api('POST', `/api/v1/tasks/${params.id}/runs`);
    window.location.href = `/runs/${run.id}`;
  } catch (err) {
    toast(t('common.error', { message: err.message }), 'error');
    button.disabled = false;
  }
}

async function render(first = true) {
  if (first) mount(root, loading());
  const current = readState(DEFAULTS);
  const runsPath = `/api/v1/tasks/${params.id}/runs?sort=createdAt&order=desc`;
  let task;
  let runs;
  let finished;
  let dataset = null;
  try {
    [task, runs, finished] = await Promise.all([get(`/api/v1/tasks/${params.id}`),
      getPage(`${runsPath}&limit=${PAGE_SIZE}&offset=${(current.page - 1) * PAGE_SIZE}`),
      get(`${runsPath}&status=completed&limit=${TREND_RUNS}`)]);
    if (task.datasetId) dataset = await get(`/api/v1/datasets/${task.datasetId}`);
  } catch (err) {
    mount(root, errorState(err, () => render()));
    return;
  }
  document.title = `${task.name} · ${t('app.title')}`;
  const empty = task.sampleCount === 0; // a run would be refused: say what to do instead
  const button = h('button', { type: 'button', class: 'primary', id: 'start-run', disabled: empty,
    'aria-describedby': empty ? 'no-rows' : null }, t('task.startRun'));
  button.addEventListener('click', () => startRun(button));
  const points = finished.filter((r) => r.summary && r.summary.passRate !== null).reverse()
    .map((r) => ({ label: fmtDate(r.createdAt), value: r.summary.passRate, ci: r.summary.passRateCi }));
  const mine = mayChange(task);
  const removeTask = () => remove(`/api/v1/tasks/${task.id}`, t('task.delete'),
    t('task.deleteConfirm', { name: task.name, runs: runs.total }), () => { window.location.href = '/tasks'; });
  mount(root,
    h('div', { class: 'page-head' }, h('a', { href: '/tasks', class: 'button secondary' }, `← ${t('editor.back')}`),
      h('h1', {}, task.name), h('div', { class: 'spacer' }),
      mine ? [h('button', { type: 'button', class: 'secondary danger-text', id: 'delete-task', onclick: removeTask },
        t('task.delete')),
      h('a', { href: `/tasks/${task.id}/edit`, class: 'button secondary', id: 'edit-task' }, t('task.edit'))] : null,
      button),
    mine ? null : ownerBanner(task, 'task', () => copy(task)),
    problem,
    task.description ? h('p', { class: 'lead' }, task.description) : null,
    h('p', { class: 'meta', id: 'task-dataset' }, withColon(t('task.dataset')), dataset
      ? [h('a', { href: `/datasets/${dataset.id}` }, dataset.name), task.datasetVersion
        ? ` · ${t('dataset.versionLabel', { number: task.datasetVersion })}${task.pinnedVersion
          ? ` (${t('task.pinned')})` : ''}` : '']
      : t('task.noDataset'), ` · ${withColon(t('tasks.col.samples'))}${task.sampleCount}`),
    empty ? h('p', { class: 'alert warn', id: 'no-rows' }, t(dataset ? 'task.noRows' : 'task.noDatasetHint'), ' ',
      h('a', { href: dataset ? `/datasets/${dataset.id}` : `/tasks/${task.id}/edit` },
        t(dataset ? 'task.uploadRows' : 'task.edit'))) : null,
    h('p', { class: 'meta' }, withColon(t('tasks.col.evaluators')),
      task.evaluators.map((e, i) => [i ? t('common.listSep') : '',
        h('a', { href: `/evaluators/${e.evaluatorId}` }, e.name),
        ` ×${e.weight}`])),
    h('section', { class: 'card' }, h('h2', {}, t('task.trend')),
      points.length ? trend(points, t('task.trend')) : h('p', { class: 'state empty' }, t('task.noRuns')),
      compareForm(finished)),
    h('section', { class: 'card' }, h('h2', {}, t('task.runs')),
      runs.total === 0 ? h('p', { class: 'state empty' }, t('task.noRuns'))
        : [h('div', { class: 'table-box' }, h('table', { class: 'table cards' },
          h('thead', {}, h('tr', {}, RUN_COLUMNS.map((k) => h('th', {}, t(`task.col.${k}`))))),
          h('tbody', {}, runs.items.map(runRow)))),
        pager(current, runs.total, (page) => { writeState({ page }, DEFAULTS); render(); })]));
  if (runs.items.some((r) => ACTIVE.includes(r.status))) setTimeout(() => render(false), POLL_MS);
}

window.addEventListener('popstate', () => render());
render();
