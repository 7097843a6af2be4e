// /tasks/new and /tasks/{id}/edit: a task's name, description, dataset (picked from a searchable
// list) and evaluators (picked from a searchable list, each with a weight). Checked before
// saving, each problem named at its field; saved through POST /api/v1/tasks or PUT /tasks/{id}.
// /tasks/new?dataset=ID (the dataset page's "new task") starts with that dataset picked.
import { api, get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, h, loading, mount } from './common/dom.js';
import { guardUnsaved } from './common/unsaved.js';
import { labelled, problemsAlert } from './editor/fields.js';
import { datasetField, evaluatorLinks } from './task/links.js';
import { mayChange, ownerBanner, refusal } from './common/owned.js';
import { copyTask } from './task/copy.js';

const root = document.getElementById('app');
const taskId = params.id || null;
const form = { saved: null, state: null, saving: false };

async function load() {
  const facts = await get('/pages/api/form-facts');
  if (!taskId) { // from a dataset's page, ?dataset=ID: that dataset is picked already
    const from = new URLSearchParams(window.location.search).get('dataset');
    const dataset = from ? await get(`/api/v1/datasets/${encodeURIComponent(from)}`).catch(() => null) : null;
    return { task: { name: '', description: '', evaluators: [] }, dataset, facts };
  }
  const task = await get(`/api/v1/tasks/${taskId}`);
  const dataset = task.datasetId ? await get(`/api/v1/datasets/${task.datasetId}`) : null;
  return { task, dataset, facts };
}

function draw({ task, dataset, facts }) {
  const foreign = Boolean(taskId) && !mayChange(task);
  const back = taskId ? `/tasks/${taskId}` : '/tasks';
  const name = h('input', { id: 'name', value: task.name, maxlength: 200, autocomplete: 'off' });
  const nameField = labelled('name', 'taskForm.name', name, { required: true });
  const description = h('textarea', { id: 'description', rows: 2, maxlength: 2000, value: task.description || '' });
  const datasetPick = datasetField(dataset, task.pinnedVersion ?? null);
  const links = evaluatorLinks(task.evaluators.map((e) => ({ evaluatorId: e.evaluatorId, name: e.name, type: e.type,
    weight: e.weight })), facts.maxWeight);
  const alert = h('div', { class: 'save-alert', id: 'save-alert' });
  const dirty = h('span', { class: 'badge warn', hidden: true, id: 'dirty' }, t('editor.unsaved'));
  const save = h('button', { type: 'submit', class: 'primary', id: 'save' }, t('editor.save'));
  form.state = () => ({ name: name.value.trim(), description: description.value.trim() || null,
    datasetId: datasetPick.value(), pinnedVersion: datasetPick.pinned(), evaluators: links.value() });
  form.saved = JSON.stringify(form.state());
  const el = h('form', { id: 'task-form', novalidate: true,
    oninput: () => { dirty.hidden = !isDirty(); },
    onsubmit: async (event) => {
      event.preventDefault();
      const problems = [nameField.report(name.value.trim() ? null : t('form.required')), ...datasetPick.validate(),
        ...links.validate()].filter(Boolean);
      mount(alert, problems.length ? problemsAlert(problems) : null);
      if (problems.length) {
        problems[0].focus();
        return;
      }
      await submit(save, alert);
    } },
  h('div', { class: 'page-head' }, h('a', { href: back, class: 'button secondary' }, `← ${t('editor.back')}`),
    h('h1', {}, taskId ? t('taskForm.editTitle') : t('taskForm.newTitle')), dirty, h('div', { class: 'spacer' }),
    save),
  alert,
  h('fieldset', { class: 'group', disabled: foreign }, // a colleague's task: shown, not editable
    h('section', { class: 'card' }, nameField.el, labelled('description', 'taskForm.description', description).el),
    h('section', { class: 'card' }, datasetPick.el),
    h('section', { class: 'card' }, links.el)));
  if (foreign) {
    save.remove();
    el.insertBefore(ownerBanner(task, 'task', () => copyTask(task).catch((err) => mount(alert, refusal(err)))),
      alert);
  }
  mount(root, el);
}

const isDirty = () => form.state !== null && JSON.stringify(form.state()) !== form.saved;

async function submit(button, alert) {
  if (form.saving) return;
  form.saving = true;
  button.disabled = true;
  const body = form.state();
  try {
    const saved = taskId ? await api('PUT', `/api/v1/tasks/${taskId}`, body) : await api('POST', '/api/v1/tasks', body);
    form.saved = JSON.stringify(body);
    window.location.href = `/tasks/${saved.id}`;
  } catch (err) {
    mount(alert, h('p', { class: 'alert error', role: 'alert', id: 'server-problem' },
      t('common.error', { message: err.message })));
    button.disabled = false;
  } finally {
    form.saving = false;
  }
}

async function start() {
  mount(root, loading());
  try {
    draw(await load());
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

guardUnsaved(root, isDirty);
start();
