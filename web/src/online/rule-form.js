// An online rule's form, for a new rule and for changing one: name, filter (checked as typed,
// with its preview), scope, sample rate, quiet window, daily judge budget, and the evaluators
// with their weights (the task form's picker). Another user's rule opens read-only under a
// banner naming its owner, with "Copy as mine". Saved through POST or PATCH /api/v1/online-rules.
import { api } from '../common/api.js';
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { mayChange, ownerBanner } from '../common/owned.js';
import { labelled, problemsAlert } from '../editor/fields.js';
import { evaluatorLinks } from '../task/links.js';
import { filterField } from './filter-field.js';

export const SCOPES = ['span', 'trace', 'conversation'];
export const NEW_RULE = { name: '', filter: '', scope: 'span', sampleRate: 1, quietS: 30, judgeBudgetPerDay: null,
  enabled: true, evaluators: [] };

const percent = (rate) => String(Math.round(rate * 10000) / 100);

/** A number field's problem: `value` blank (when `optional`) or an integer-or-not in [min, max]. */
function outOfRange(value, min, max, { optional = false, integer = false } = {}) {
  if (value === '') return optional ? null : t('form.required');
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    return t(integer ? 'online.wholeRange' : 'form.range', { min, max: max.toLocaleString() });
  }
  return null;
}

/**
 * The form for `rule` (NEW_RULE for a new one; `ruleId` null) as a {el, isDirty} pair;
 * `facts` are the pages' form facts (maxWeight). `onCopy` makes the visitor's own copy of
 * another user's rule.
 */
export function ruleForm({ rule, ruleId, facts, onCopy }) {
  const foreign = Boolean(ruleId) && !mayChange(rule);
  const name = h('input', { id: 'rule-name', maxlength: 200, autocomplete: 'off', value: rule.name });
  const nameField = labelled('rule-name', 'online.name', name, { required: true });
  const filter = filterField(rule.filter);
  const scope = h('select', { id: 'scope' }, SCOPES.map((s) => h('option', { value: s, selected: s === rule.scope },
    t(`online.scope.${s}`))));
  const rate = h('input', { id: 'rate', type: 'number', min: 0, max: 100, step: 'any', value: percent(rule.sampleRate) });
  const quiet = h('input', { id: 'quiet', type: 'number', min: 0, max: 86400, step: 1, value: rule.quietS });
  const budget = h('input', { id: 'budget', type: 'number', min: 0, step: 1, placeholder: t('online.noLimit'),
    value: rule.judgeBudgetPerDay ?? '' });
  const fields = { rate: labelled('rate', 'online.rate', rate, { hint: 'online.rateHint' }),
    quiet: labelled('quiet', 'online.quiet', quiet, { hint: 'online.quietHint' }),
    budget: labelled('budget', 'online.budget', budget, { hint: 'online.budgetHint' }) };
  for (const field of [nameField, ...Object.values(fields)]) { // a problem shown goes once the field changes
    field.control.addEventListener('input', () => field.report(null));
  }
  const links = evaluatorLinks(rule.evaluators.map((e) => ({ ...e })), facts.maxWeight);
  const alert = h('div', { class: 'save-alert', id: 'rule-alert' });
  const state = () => ({ name: name.value.trim(), filter: filter.value(), scope: scope.value,
    sampleRate: Number(rate.value) / 100, quietS: Number(quiet.value),
    judgeBudgetPerDay: budget.value === '' ? null : Number(budget.value), evaluators: links.value() });
  let saved = JSON.stringify(state());
  const dirty = h('span', { class: 'badge warn', hidden: true, id: 'dirty' }, t('editor.unsaved'));
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-rule' },
    t(ruleId ? 'editor.save' : 'online.create'));
  const validate = () => [nameField.report(name.value.trim() ? null : t('form.required')), filter.validate(),
    fields.rate.report(outOfRange(rate.value, 0, 100)),
    fields.quiet.report(outOfRange(quiet.value, 0, 86400, { integer: true })),
    fields.budget.report(outOfRange(budget.value, 0, 10000000, { optional: true, integer: true })),
    ...links.validate()].filter(Boolean);
  const el = h('form', { id: 'rule-form', novalidate: true,
    oninput: () => { dirty.hidden = JSON.stringify(state()) === saved; },
    onchange: () => { dirty.hidden = JSON.stringify(state()) === saved; },
    onsubmit: async (event) => {
      event.preventDefault();
      const problems = validate();
      mount(alert, problems.length ? problemsAlert(problems) : null);
      if (problems.length) return problems[0].focus();
      save.disabled = true;
      const body = state();
      try {
        const made = ruleId ? await api('PATCH', `/api/v1/online-rules/${ruleId}`, body)
          : await api('POST', '/api/v1/online-rules', body);
        saved = JSON.stringify(body);
        window.location.href = `/online/${made.id}`;
      } catch (err) {
        save.disabled = false;
        mount(alert, h('p', { class: 'alert error', role: 'alert', id: 'server-problem' },
          t('common.error', { message: err.message })));
      }
    } },
  h('div', { class: 'page-head' },
    h('a', { href: ruleId ? `/online/${ruleId}` : '/online', class: 'button secondary' }, `← ${t('editor.back')}`),
    h('h1', {}, t(ruleId ? 'online.editTitle' : 'online.newTitle')), dirty, h('div', { class: 'spacer' }),
    foreign ? h('span', { class: 'badge', id: 'read-only' }, t('owned.readonly')) : save),
  foreign ? ownerBanner(rule, 'rule', onCopy) : null,
  alert,
  h('fieldset', { class: 'group', disabled: foreign },
    h('section', { class: 'card' }, nameField.el, filter.el,
      labelled('scope', 'online.scopeLabel', scope, { hint: 'online.scopeHint' }).el,
      fields.rate.el, fields.quiet.el, fields.budget.el),
    h('section', { class: 'card' }, links.el)));
  return { el, isDirty: () => !foreign && JSON.stringify(state()) !== saved };
}
