// A form drawn from a config's JSON Schema (the grader's own config model): booleans are
// check boxes, enums are selects, numbers and strings are inputs, anything else is JSON.
// Read-only for presets. getValue() returns the config, leaving out fields left empty.
import { t } from '../common/boot.js';
import { h } from '../common/dom.js';

const LONG_TEXT = /^(rubric|prompt|instructions|template|system_prompt)$/i;

/** The schema of a field without its `null` alternative (pydantic's Optional). */
function plain(schema) {
  const options = schema.anyOf || schema.oneOf;
  if (!options) return schema;
  const real = options.filter((s) => s.type !== 'null');
  return real.length === 1 ? { ...real[0], description: schema.description, default: schema.default } : schema;
}

function kind(schema) {
  if (schema.enum) return 'enum';
  if (['boolean', 'integer', 'number', 'string'].includes(schema.type)) return schema.type;
  if (schema.const !== undefined) return 'string';
  return 'json';
}

function field(name, rawSchema, value, { readOnly, required }) {
  const schema = plain(rawSchema);
  const type = kind(schema);
  const id = `cfg-${name}`;
  const shown = value === undefined ? schema.default : value;
  let input;
  if (type === 'boolean') {
    input = h('input', { id, type: 'checkbox', checked: Boolean(shown), disabled: readOnly });
  } else if (type === 'enum') {
    input = h('select', { id, disabled: readOnly },
      required ? null : h('option', { value: '' }, ''),
      schema.enum.map((option) => h('option', { value: String(option), selected: option === shown }, String(option))));
  } else if (type === 'integer' || type === 'number') {
    input = h('input', { id, type: 'number', step: type === 'integer' ? '1' : 'any', value: shown ?? '',
      min: schema.minimum, max: schema.maximum, readOnly });
  } else if (type === 'string') {
    const long = LONG_TEXT.test(name);
    input = h(long ? 'textarea' : 'input', { id, value: shown ?? '', readOnly, rows: long ? 4 : undefined });
  } else {
    input = h('textarea', { id, class: 'json', rows: 4, readOnly,
      value: shown === undefined || shown === null ? '' : JSON.stringify(shown, null, 2) });
  }
  const read = () => {
    if (type === 'boolean') return input.checked;
    const text = input.value;
    if (text.trim() === '') return undefined;
    if (type === 'integer' || type === 'number') return Number(text);
    if (type === 'enum') return schema.enum.find((option) => String(option) === text);
    if (type === 'string') return text;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(t('editor.badJson', { field: name, message: err.message }));
    }
  };
  const label = h('label', { for: id, class: required ? 'required' : '' }, name);
  const hint = schema.description ? h('p', { class: 'hint' }, schema.description) : null;
  return { el: h('div', { class: `field field-${type}` }, label, input, hint), read, name };
}

/** A form for `schema` showing `value`; `onChange()` after each edit. */
export function schemaForm(schema, value = {}, { readOnly = false, onChange } = {}) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, sub]) => field(name, sub, value[name],
    { readOnly, required: required.has(name) }));
  const el = h('div', { class: `schema-form${readOnly ? ' readonly' : ''}`, oninput: () => onChange?.(),
    onchange: () => onChange?.() }, fields.map((f) => f.el));
  return {
    el,
    getValue() {
      const out = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) out[f.name] = v;
      }
      return out;
    },
  };
}
