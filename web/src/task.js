// /tasks/{id}: the task, its runs (newest first) and the trend of their pass rates.
import { api, get } from './common/api.js';
import { params, t } from './common/boot.js';
import { trend } from './common/charts.js';
import { errorState, fmtDate, fmtPct, fmtScore, h, loading, mount, toast } from './common/dom.js';

const root = document.getElementById('app');
const ACTIVE = ['queued', 'running'];
const POLL_MS = 1500;

function runRow(run) {
  const summary = run.summary || {};
  return h('tr', { dataset: { id: run.id } },
    h('td', {}, h('a', { href: `/runs/${run.id}` }, run.id.slice(0, 8))),
    h('td', {}, h('span', { class: `badge run-${run.status}` }, t(`run.status.${run.status}`))),
    h('td', {}, h('progress', { max: run.total || 1, value: run.done }), ` ${run.done}/${run.total}`),
    h('td', { class: 'num' }, fmtPct(summary.passRate)),
    h('td', { class: 'num' }, fmtScore(summary.meanScore)),
    h('td', {}, fmtDate(run.createdAt)));
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
  let task;
  let runs;
  try {
    [task, runs] = await Promise.all([get(`/api/v1/tasks/${params.id}`), get(`/api/v1/tasks/${params.id}/runs`)]);
  } catch (err) {
    mount(root, errorState(err, () => render()));
    return;
  }
  document.title = `${task.name} · ${t('app.title')}`;
  const button = h('button', { type: 'button', class: 'primary', id: 'start-run' }, t('task.startRun'));
  button.addEventListener('click', () => startRun(button));
  const finished = runs.filter((r) => r.status === 'completed' && r.summary && r.summary.passRate !== null)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  runs.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const points = finished.map((r) => ({ label: fmtDate(r.createdAt), value: r.summary.passRate }));
  mount(root,
    h('div', { class: 'page-head' }, h('a', { href: '/tasks', class: 'button secondary' }, `← ${t('editor.back')}`),
      h('h1', {}, task.name), h('div', { class: 'spacer' }), button),
    task.description ? h('p', { class: 'lead' }, task.description) : null,
    h('p', { class: 'meta' }, `${t('tasks.col.samples')}: ${task.sampleCount} · ${t('tasks.col.evaluators')}: `,
      task.evaluators.map((e, i) => [i ? ', ' : '', h('a', { href: `/evaluators/${e.evaluatorId}` }, e.name)])),
    h('section', { class: 'card' }, h('h2', {}, t('task.trend')),
      points.length ? trend(points, t('task.trend')) : h('p', { class: 'state empty' }, t('task.noRuns'))),
    h('section', { class: 'card' }, h('h2', {}, t('task.runs')),
      runs.length === 0 ? h('p', { class: 'state empty' }, t('task.noRuns'))
        : h('table', { class: 'table' },
          h('thead', {}, h('tr', {}, ['run', 'status', 'progress', 'passRate', 'meanScore', 'createdAt']
            .map((k) => h('th', {}, t(`task.col.${k}`))))),
          h('tbody', {}, runs.map(runRow)))));
  if (runs.some((r) => ACTIVE.includes(r.status))) setTimeout(() => render(false), POLL_MS);
}

render();
