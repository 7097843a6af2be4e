// /runs/{run}/samples/{sample}: one sample's dataset row and every evaluator's full result.
import { get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, fmtScore, h, loading, mount, statusBadge } from './common/dom.js';
import { errorName, reasonOf } from './common/phrase.js';

const root = document.getElementById('app');
const FIELDS = ['input', 'output', 'expected', 'metadata'];

const shown = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

function rowView(row) {
  if (!row) return h('p', { class: 'state empty' }, t('sample.missing'));
  return h('dl', { class: 'sample-row' }, FIELDS.filter((k) => row[k] !== undefined).map((k) => [
    h('dt', {}, k), h('dd', {}, h('pre', {}, shown(row[k])))]));
}

function resultView(r) {
  return h('article', { class: 'result' },
    h('h3', {}, r.evaluatorName, ' ', statusBadge(r.status)),
    h('dl', { class: 'facts' },
      h('dt', {}, t('editor.score')), h('dd', {}, fmtScore(r.score)),
      h('dt', {}, t('editor.reason')), h('dd', {}, reasonOf(r) ?? t('common.none')),
      h('dt', {}, t('editor.latency')), h('dd', {}, `${Number(r.latencyMs).toFixed(1)} ms`),
      r.error ? [h('dt', {}, t('editor.errorCode')), h('dd', { title: r.error }, errorName(r.error))] : null),
    Object.keys(r.details || {}).length ? h('details', { open: true }, h('summary', {}, t('editor.details')),
      h('pre', {}, JSON.stringify(r.details, null, 2))) : null);
}

async function render() {
  mount(root, loading());
  const sample = encodeURIComponent(params.id);
  try {
    const [row, results] = await Promise.all([get(`/pages/api/runs/${params.run}/samples/${sample}`),
      get(`/api/v1/runs/${params.run}/results?sampleId=${sample}&limit=1000`)]);
    mount(root,
      h('div', { class: 'page-head' }, h('a', { href: `/runs/${params.run}`, class: 'button secondary' },
        `← ${t('sample.backToRun')}`), h('h1', {}, t('sample.title', { id: params.id }))),
      h('section', { class: 'card' }, h('h2', {}, t('sample.row')), rowView(row.row)),
      h('section', { class: 'card' }, h('h2', {}, t('sample.results')), results.items.map(resultView)));
  } catch (err) {
    mount(root, errorState(err, render));
  }
}

render();
