// A labelled form field with its hint and a place for its error, and the problem list a form's
// validate() returns: [{label, message, focus}], shown beside each field and above the form.
import { t } from '../common/boot.js';
import { h } from '../common/dom.js';

/** `control` with the catalogue's label `labelKey` (and hint `hint` when the catalogue has it). */
export function labelled(id, labelKey, control, { required = false, hint = null } = {}) {
  const label = t(labelKey);
  const hintText = hint && t(hint) !== hint ? t(hint) : null;
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  const el = h('div', { class: 'field', dataset: { field: id } },
    h('label', { for: id, class: required ? 'required' : '' }, label), control,
    hintText ? h('p', { class: 'hint', id: `${id}-hint` }, hintText) : null, error);
  if (hintText) control.setAttribute('aria-describedby', `${id}-hint`);
  if (required) control.setAttribute('aria-required', 'true');
  /** Show `message` at the field (or clear it with null); the problem to list, or null. */
  const report = (message) => {
    error.hidden = !message;
    error.textContent = message || '';
    if (message) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
    return message ? { label, message, focus: () => control.focus() } : null;
  };
  return { el, control, label, report };
}

/** The problems as one line each, "Field: message". */
export const problemText = (problems) => problems.map((p) => t('form.problem', { field: p.label,
  message: p.message })).join('\n');

/** The problems a form's check found, listed above it ("Fix these before saving:"). */
export const problemsAlert = (problems) => h('div', { class: 'alert error', role: 'alert', id: 'form-problems' },
  h('p', {}, t('form.fix')), h('ul', {}, problemText(problems).split('\n').map((line) => h('li', {}, line))));
