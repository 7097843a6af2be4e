// /datasets/{id}: the dataset, a box to upload its next version (drag and drop or the file
// picker), its versions, and a paged preview of one version's rows (?version=&page= in the URL).
import { api, get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount, toast } from './common/dom.js';
import { readState, writeState } from './common/listing.js';
import { fmtBytes } from './dataset/format.js';
import { detailsEditor } from './dataset/details.js';
import { drawPreview } from './dataset/preview.js';
import { askThenDelete, mayChange, ownerBanner, refusal } from './common/owned.js';
import { uploadBox } from './dataset/upload.js';

const root = document.getElementById('app');
const DEFAULTS = { version: '', page: 1 };
const VERSION_COLUMNS = ['number', 'file', 'format', 'rows', 'size', 'columns', 'createdAt', 'actions'];
const problem = h('div', { id: 'dataset-problem' });

/** Deletes after asking (the server refuses what other rows still need, 409: shown with links to them). */
const remove = (path, title, text, done) => askThenDelete(path, title, text, done, problem);


/** "Copy as mine": a dataset of the visitor's holding this one's newest version. */
async function copyDataset(dataset) {
  try {
    const made = await api('POST', `/api/v1/datasets/${dataset.id}/copy`,
      { name: t('owned.copyName', { name: dataset.name }).slice(0, 200) });
    window.location.href = `/datasets/${made.id}`;
  } catch (err) {
    mount(problem, refusal(err));
  }
}

function versionsTable(dataset, shown, onShow) {
  const cell = (key, attrs, ...children) => h('td', { ...attrs, dataset: { label: t(`dataset.col.${key}`) } },
    ...children);
  return h('div', { class: 'table-box' }, h('table', { class: 'table cards', id: 'versions' },
    h('thead', {}, h('tr', {}, VERSION_COLUMNS.map((k) => h('th', {}, t(`dataset.col.${k}`))))),
    h('tbody', {}, [...dataset.versions].reverse().map((v) => h('tr', { class: v.number === shown ? 'selected' : null,
      dataset: { number: v.number } },
    cell('number', {}, h('button', { type: 'button', class: 'link show-version', 'aria-pressed': String(
      v.number === shown), onclick: () => onShow(v.number) }, t('dataset.versionLabel', { number: v.number }))),
    cell('file', { class: 'file' }, v.sourceName || t('common.none')),
    cell('format', {}, v.format),
    cell('rows', { class: 'num' }, v.rowCount.toLocaleString()),
    cell('size', { class: 'num' }, fmtBytes(v.sizeBytes)),
    cell('columns', { class: 'columns' }, v.columns.join(', ')),
    cell('createdAt', {}, fmtDate(v.createdAt)),
    cell('actions', {}, mayChange(dataset) && h('button', { type: 'button', class: 'link danger delete-version',
      'aria-label': t('dataset.deleteVersionOf', { number: v.number }),
      onclick: () => remove(`/api/v1/datasets/${dataset.id}/versions/${v.number}`, t('dataset.deleteVersion'),
        t('dataset.deleteVersionConfirm', { number: v.number }), () => {
          toast(t('dataset.versionDeleted', { number: v.number }));
          onShow(null);
        }) }, t('common.delete'))))))));
}

/** A version without an `output` column grades empty outputs: said before anyone runs it. */
function noOutput(dataset, number) {
  const { columns } = dataset.versions.find((v) => v.number === number);
  return columns.includes('output') ? null : h('p', { class: 'alert warn', id: 'no-output' },
    t('dataset.noOutput', { columns: columns.join(t('common.listSep')) }));
}

async function render() {
  const current = readState(DEFAULTS);
  let dataset;
  let facts;
  try {
    [dataset, facts] = await Promise.all([get(`/api/v1/datasets/${params.id}`), get('/pages/api/form-facts')]);
  } catch (err) {
    mount(root, errorState(err, render));
    return;
  }
  document.title = `${dataset.name} · ${t('app.title')}`;
  const numbers = dataset.versions.map((v) => v.number);
  const shown = numbers.includes(Number(current.version)) ? Number(current.version) : numbers[numbers.length - 1];
  const show = (number, page = 1) => { // null: the newest
    writeState({ version: number === null || number === numbers[numbers.length - 1] ? '' : number, page }, DEFAULTS);
    render();
  };
  const preview = h('div', { id: 'preview-box' });
  const details = detailsEditor(dataset, (saved) => {
    toast(t('dataset.saved', { name: saved.name }));
    render();
  });
  const mine = mayChange(dataset);
  mount(root,
    h('div', { class: 'page-head' }, h('a', { href: '/datasets', class: 'button secondary' }, `← ${t('editor.back')}`),
      h('h1', { id: 'dataset-name' }, dataset.name), h('div', { class: 'spacer' }),
      numbers.length ? h('a', { href: `/tasks/new?dataset=${dataset.id}`, class: 'button secondary', id: 'new-task' },
        t('dataset.newTask')) : null,
      mine ? [details.open,
        h('button', { type: 'button', class: 'danger', id: 'delete-dataset', onclick: () => remove(
          `/api/v1/datasets/${dataset.id}`, t('dataset.deleteTitle'), t('evaluators.deleteConfirm',
            { name: dataset.name }), () => { window.location.href = '/datasets'; }) }, t('dataset.delete'))] : null),
    mine ? null : ownerBanner(dataset, 'dataset', () => copyDataset(dataset)),
    problem,
    details.form,
    dataset.description ? h('p', { class: 'lead', id: 'dataset-description' }, dataset.description) : null,
    h('p', { class: 'meta' }, dataset.taskNames.length
      ? t('dataset.usedBy', { tasks: dataset.taskNames.join(t('common.listSep')) }) : t('dataset.unused')),
    mine ? h('section', { class: 'card' }, h('h2', {}, t(numbers.length ? 'dataset.uploadNext'
      : 'dataset.uploadFirst')),
    uploadBox(dataset.id, facts, (version) => {
      toast(t('dataset.uploaded', { number: version.number, rows: version.rowCount.toLocaleString() }));
      show(version.number);
    })) : null,
    numbers.length ? [
      h('section', { class: 'card' }, h('h2', {}, t('dataset.versions')),
        versionsTable(dataset, shown, (number) => show(number))),
      h('section', { class: 'card' }, h('h2', { id: 'preview-title' }, t('dataset.preview', { number: shown })),
        noOutput(dataset, shown), preview),
    ] : null);
  if (numbers.length) {
    const { columns } = dataset.versions.find((v) => v.number === shown);
    drawPreview(preview, dataset.id, { version: shown, page: current.page, columns }, (page) => show(shown, page));
  }
}

window.addEventListener('popstate', render);
mount(root, loading());
render();
