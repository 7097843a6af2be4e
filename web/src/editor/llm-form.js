// The LLM judge's form: model, rubric, scale and threshold, labelled in the page's language;
// the model is required when the server has no default judge model (ASSAY_JUDGE_MODEL); the
// sampling and safety settings fold away; an endpoint and a key variable are offered only when
// the operator allows some (rubric_file, which the API refuses, never is).
import { t } from '../common/boot.js';
import { h } from '../common/dom.js';
import { labelled } from './fields.js';
import { schemaForm } from './schema-form.js';

const MAIN = ['model', 'rubric', 'scale', 'threshold'];
const ADVANCED = ['temperature', 'max_tokens', 'timeout_s', 'seed', 'on_injection'];
const ALLOWED_LISTS = [['base_url', 'judgeBaseUrls'], ['api_key_env', 'judgeKeyEnvs']];

function choice(name, options, current, readOnly) {
  const id = `cfg-${name}`;
  const select = h('select', { id, disabled: readOnly }, h('option', { value: '' }, t('form.serverDefault')),
    options.map((o) => h('option', { value: o, selected: o === current }, o)));
  const box = labelled(id, `schema.llm.${name}`, select, { hint: `schema.llm.${name}.hint` });
  return { ...box, name, read: () => select.value || undefined };
}

export function llmForm(config, { readOnly, onChange, schema, facts }) {
  const required = ['rubric', ...(facts.judgeModel ? [] : ['model'])];
  const value = { ...config };
  delete value.rubric_file;
  const main = schemaForm({ ...schema, required }, value, { readOnly, onChange, type: 'llm', fields: MAIN });
  const model = main.el.querySelector('#cfg-model');
  if (model && facts.judgeModel) model.placeholder = t('form.defaultModel', { model: facts.judgeModel });
  const advanced = schemaForm(schema, value, { readOnly, onChange, type: 'llm', fields: ADVANCED });
  const choices = ALLOWED_LISTS.filter(([, key]) => facts[key]?.length)
    .map(([name, key]) => choice(name, facts[key], value[name], readOnly));
  const el = h('div', { class: 'llm-form', onchange: () => onChange?.() }, main.el,
    h('details', { class: 'advanced' }, h('summary', {}, t('form.advanced')), advanced.el, choices.map((c) => c.el)));
  return {
    el,
    getValue() {
      const out = { ...value, ...main.getValue(), ...advanced.getValue() };
      for (const c of choices) {
        const v = c.read();
        if (v === undefined) delete out[c.name];
        else out[c.name] = v;
      }
      return out;
    },
    validate() {
      const problems = [...main.validate(), ...advanced.validate()];
      if (problems.some((p) => ADVANCED.some((name) => p.label === t(`schema.llm.${name}`)))) {
        el.querySelector('details.advanced').open = true;
      }
      return problems;
    },
  };
}
