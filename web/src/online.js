// /online: the caller's online rules, and a new rule's form: its filter checked as it is typed
// (the position of a mistake said at the field) with the recent spans it would take listed
// beside it; scope, sample rate, quiet window, evaluators with weights, daily judge budget.
import { api, get } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';
import { say } from './common/phrase.js';
import { labelled, problemsAlert } from './editor/fields.js';
import { evaluatorLinks } from './task/links.js';

const root = document.getElementById('app');
const CHECK_DELAY_MS = 250;

function rulesTable(rules) {
  if (!rules.length) return h('p', { class: 'state empty' }, t('online.empty'));
  const cell = (key, ...children) => h('td', { dataset: { label: t(`online.col.${key}`) } }, ...children);
  return h('table', { class: 'table', id: 'rules' },
    h('thead', {}, h('tr', {}, ['name', 'scope', 'rate', 'enabled', 'updatedAt']
      .map((k) => h('th', { scope: 'col' }, t(`online.col.${k}`))))),
    h('tbody', {}, rules.map((r) => h('tr', { dataset: { id: r.id } },
      cell('name', h('a', { href: `/online/${r.id}` }, r.name)), cell('scope', t(`online.scope.${r.scope}`)),
      cell('rate', `${(r.sampleRate * 100).toFixed(0)}%`), cell('enabled', t(r.enabled ? 'online.on' : 'online.off')),
      cell('updatedAt', fmtDate(r.updatedAt))))));
}

function filterField() {
  const input = h('textarea', { id: 'filter', rows: 2, maxlength: 2000, spellcheck: false,
    placeholder: 'gen_ai.operation.name == "chat"' });
  const field = labelled('filter', 'online.filter', input, { hint: 'online.filterHint' });
  const status = h('p', { class: 'hint', id: 'filter-status', 'aria-live': 'polite' });
  const preview = h('div', { id: 'filter-preview' });
  let timer = null;
  let asked = 0;
  async function check() {
    const mine = ++asked;
    try {
      const got = await api('POST', '/api/v1/online-rules/filter-check', { filter: input.value, preview: true });
      if (mine !== asked) return;
      field.report(got.valid ? null : say(got.messageCode, got.messageArgs, got.message));
      status.textContent = got.valid ? t('online.matches', { count: got.matches.length, scanned: got.scanned }) : '';
      mount(preview, got.valid && got.matches.length ? h('ul', { class: 'preview' }, got.matches.map((m) => h('li', {},
        h('code', {}, m.name), ' ', m.model || '', ' · ', fmtDate(m.start)))) : null);
    } catch (err) {
      status.textContent = t('common.error', { message: err.message });
    }
  }
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(check, CHECK_DELAY_MS); });
  check();
  return { el: h('div', {}, field.el, status, preview), value: () => input.value.trim(), report: field.report };
}

function ruleForm(facts) {
  const name = h('input', { id: 'rule-name', maxlength: 200, autocomplete: 'off' });
  const nameField = labelled('rule-name', 'online.name', name, { required: true });
  const filter = filterField();
  const scope = h('select', { id: 'scope' }, ['span', 'trace', 'conversation']
    .map((s) => h('option', { value: s }, t(`online.scope.${s}`))));
  const rate = h('input', { id: 'rate', type: 'number', min: 0, max: 100, step: 'any', value: 100 });
  const quiet = h('input', { id: 'quiet', type: 'number', min: 0, max: 86400, step: 1, value: 30 });
  const budget = h('input', { id: 'budget', type: 'number', min: 0, step: 1, placeholder: t('online.noLimit') });
  const links = evaluatorLinks([], facts.maxWeight);
  const alert = h('div', { class: 'save-alert', id: 'rule-alert' });
  return h('form', { id: 'rule-form', novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    const problems = [nameField.report(name.value.trim() ? null : t('form.required')), ...links.validate()]
      .filter(Boolean);
    mount(alert, problems.length ? problemsAlert(problems) : null);
    if (problems.length) return problems[0].focus();
    const body = { name: name.value.trim(), filter: filter.value(), scope: scope.value,
      sampleRate: Math.min(1, Math.max(0, Number(rate.value) / 100)), quietS: Number(quiet.value) || 0,
      evaluators: links.value(), judgeBudgetPerDay: budget.value === '' ? null : Number(budget.value) };
    try {
      const made = await api('POST', '/api/v1/online-rules', body);
      window.location.href = `/online/${made.id}`;
    } catch (err) {
      mount(alert, h('p', { class: 'alert error', role: 'alert', id: 'server-problem' },
        t('common.error', { message: err.message })));
    }
  } },
  h('section', { class: 'card' }, h('h2', {}, t('online.new')), alert, nameField.el, filter.el,
    labelled('scope', 'online.scopeLabel', scope, { hint: 'online.scopeHint' }).el,
    labelled('rate', 'online.rate', rate).el, labelled('quiet', 'online.quiet', quiet).el,
    labelled('budget', 'online.budget', budget).el),
  h('section', { class: 'card' }, links.el),
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'create-rule' }, t('online.create'))));
}

async function start() {
  mount(root, loading());
  try {
    const [rules, facts] = await Promise.all([get('/api/v1/online-rules'), get('/pages/api/form-facts')]);
    mount(root, h('div', { class: 'page-head' }, h('h1', {}, t('online.title')), h('div', { class: 'spacer' }),
      h('a', { href: '/traces', class: 'button secondary', id: 'to-traces' }, t('traces.title'))),
      h('p', { class: 'hint' }, t('online.intro')), h('section', { class: 'card' }, rulesTable(rules)), ruleForm(facts));
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

start();
