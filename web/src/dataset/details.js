// A dataset's name and description in a form, for a new dataset (/datasets) and for renaming
// one (its page, PATCH /api/v1/datasets/{id}): checked before sending, the name required; the
// server's refusal (a name too long, another user's dataset) is shown above the buttons.
import { api } from '../common/api.js';
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { labelled, problemsAlert } from '../editor/fields.js';

/**
 * The form (hidden until shown), its fields' ids starting with `prefix`: `dataset` fills them
 * (null: empty); `send(fields)` stores {name, description} and resolves to what is passed to
 * `onDone`; `buttons` follow the submit button.
 */
export function detailsForm({ prefix, id, title, submitId, submitLabel, dataset = null, send, onDone,
  buttons = [] }) {
  const name = h('input', { id: `${prefix}-name`, value: dataset?.name ?? '', maxlength: 200, autocomplete: 'off' });
  const description = h('textarea', { id: `${prefix}-description`, rows: 2, maxlength: 4000,
    value: dataset?.description ?? '' });
  const nameField = labelled(`${prefix}-name`, 'datasets.name', name, { required: true });
  const alert = h('div', { class: 'save-alert' });
  const submit = h('button', { type: 'submit', class: 'primary', id: submitId }, submitLabel);
  const form = h('form', { class: 'card', id, hidden: true, novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    const problem = nameField.report(name.value.trim() ? null : t('form.required'));
    mount(alert, problem ? problemsAlert([problem]) : null);
    if (problem) {
      problem.focus();
      return;
    }
    submit.disabled = true;
    try {
      onDone(await send({ name: name.value.trim(), description: description.value.trim() || null }));
    } catch (err) {
      mount(alert, h('p', { class: 'alert error', role: 'alert', id: `${prefix}-problem` },
        t('common.error', { message: err.message })));
      submit.disabled = false;
    }
  } }, h('h2', {}, title), nameField.el, labelled(`${prefix}-description`, 'datasets.description', description).el,
  alert, h('div', { class: 'form-actions' }, submit, ...buttons));
  /** Back to what `dataset` holds, no problem shown. */
  const reset = () => {
    name.value = dataset?.name ?? '';
    description.value = dataset?.description ?? '';
    nameField.report(null);
    mount(alert);
  };
  return { form, reset, focus: () => name.focus() };
}

/** The dataset page's "rename or describe" button and its form; `onSaved(dataset)` after a save. */
export function detailsEditor(dataset, onSaved) {
  const open = h('button', { type: 'button', class: 'secondary', id: 'edit-details', 'aria-expanded': 'false' },
    t('dataset.edit'));
  const cancel = h('button', { type: 'button', class: 'secondary', id: 'cancel-details' }, t('common.cancel'));
  const editor = detailsForm({ prefix: 'edit', id: 'details-form', title: t('dataset.edit'), submitId: 'save-details',
    submitLabel: t('editor.save'), dataset, buttons: [cancel], onDone: onSaved,
    send: (fields) => api('PATCH', `/api/v1/datasets/${dataset.id}`, fields) });
  const show = (shown) => {
    editor.form.hidden = !shown;
    open.setAttribute('aria-expanded', String(shown));
    if (shown) editor.focus();
  };
  open.addEventListener('click', () => show(editor.form.hidden));
  cancel.addEventListener('click', () => {
    editor.reset();
    show(false);
  });
  return { open, form: editor.form };
}
