// A composite evaluator: existing evaluators picked from a searchable list, each with a weight,
// and the rule that combines them (all, any, or the weighted mean against a threshold). The
// stored config holds each pick as a child spec {type, name, config, weight}, as the engine runs it.
import { get, getPage } from '../common/api.js';
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { searchPicker } from '../common/picker.js';
import { labelled } from './fields.js';
import { outOfRange } from './schema-form.js';

const RULES = ['all', 'any', 'weighted'];

/** The child spec of a stored evaluator (the inverse of the server's store.translate.to_spec). */
export function childSpec(evaluator, weight) {
  const { type, config, name } = evaluator;
  if (type === 'preset') return { type: config.presetType, name, config: config.params || {}, weight };
  return { type, name, config, weight };
}

/** A search box over the evaluators with "add" buttons; `onPick(evaluator)` with its config. */
export function evaluatorPicker(onPick, { exclude = () => false, id = 'picker' } = {}) {
  return searchPicker({
    id,
    placeholder: t('form.pickSearch'),
    none: t('form.pickNone'),
    recent: 'evaluator',
    find: async (q, limit) => {
      const query = new URLSearchParams({ q, sort: 'updatedAt', order: 'desc', limit: String(limit) });
      const { items, total } = await getPage(`/api/v1/evaluators?${query}`);
      const kept = items.filter((e) => !exclude(e));
      return { items: kept, total: total - (items.length - kept.length) };
    },
    describe: (e) => t(`type.${e.type}`),
    onPick: async (e) => onPick(await get(`/api/v1/evaluators/${e.id}`)),
  });
}

export function compositeForm(config, { readOnly, onChange }) {
  const children = (config.graders || []).map((g) => ({ ...g, weight: g.weight ?? 1 }));
  const list = h('ul', { class: 'picked', id: 'picked' });
  const listBox = labelled('picked', 'form.children', list, { required: true, hint: 'form.childrenHint' });
  const rule = h('select', { id: 'cfg-rule', disabled: readOnly },
    RULES.map((r) => h('option', { value: r, selected: r === (config.rule || 'all') }, t(`form.rule.${r}`))));
  const threshold = h('input', { id: 'cfg-threshold', type: 'number', step: 'any', min: 0, max: 1,
    value: config.threshold ?? 0.5, readOnly });
  const thresholdBox = labelled('cfg-threshold', 'schema.composite.threshold', threshold,
    { hint: 'schema.composite.threshold.hint' });
  const showThreshold = () => { thresholdBox.el.hidden = rule.value !== 'weighted'; };
  rule.addEventListener('change', showThreshold);
  showThreshold();

  function draw() {
    mount(list, children.length ? children.map((child, i) => h('li', { class: 'picked-row' },
      h('span', { class: 'name' }, child.name), h('span', { class: 'hint' }, child.type),
      h('label', { class: 'inline' }, t('form.weight'), h('input', { type: 'number', min: 0, step: 'any',
        class: 'weight', value: child.weight, readOnly, 'aria-label': t('form.weightOf', { name: child.name }),
        oninput: (event) => { child.weight = event.target.value === '' ? NaN : Number(event.target.value); } })),
      readOnly ? null : h('button', { type: 'button', class: 'link danger', 'aria-label': t('form.removeOf',
        { name: child.name }), onclick: () => { children.splice(i, 1); draw(); onChange?.(); } },
      t('schema.remove')))) : h('li', { class: 'hint' }, t('form.noChildren')));
  }
  draw();
  const unique = (name) => {
    let candidate = name;
    for (let n = 2; children.some((c) => c.name === candidate); n += 1) candidate = `${name} (${n})`;
    return candidate;
  };
  const picker = readOnly ? null : evaluatorPicker((evaluator) => {
    children.push({ ...childSpec(evaluator, 1), name: unique(evaluator.name) });
    draw();
    onChange?.();
  }, { id: 'composite-picker' });
  const el = h('div', { class: 'composite-form', oninput: () => onChange?.(), onchange: () => onChange?.() },
    listBox.el, picker, labelled('cfg-rule', 'schema.composite.rule', rule, { hint: 'schema.composite.rule.hint' }).el,
    thresholdBox.el);
  return {
    el,
    getValue: () => ({ graders: children.map((c) => ({ ...c })), rule: rule.value,
      ...(rule.value === 'weighted' ? { threshold: Number(threshold.value) } : {}) }),
    validate() {
      const problems = [listBox.report(children.length ? (children.some((c) => !(c.weight >= 0))
        ? t('form.badWeight') : null) : t('form.pickAtLeastOne'))];
      if (rule.value === 'weighted') {
        problems.push(thresholdBox.report(outOfRange(Number(threshold.value), { minimum: 0, maximum: 1 })));
      }
      return problems.filter(Boolean);
    },
  };
}
