// A form drawn from a config's JSON Schema (the grader's own config model): booleans are
// check boxes, enums are selects, numbers and strings are inputs, anything else is JSON. Labels
// and hints come from the catalogue (schema.<type>.<field> and .hint), never the schema's
// English. getValue() returns the config (fields not drawn keep their value); validate() lists
// the problems, each naming its field, before anything is sent.
import { t } from '../common/boot.js';
import { h } from '../common/dom.js';
import { parseJson } from '../common/json.js';
import { labelled } from './fields.js';

const LONG_TEXT = /^(rubric|prompt|instructions|template|system_prompt)$/i;

/** The schema of a field without its `null` alternative (pydantic's Optional). */
function plain(schema) {
  const options = schema.anyOf || schema.oneOf;
  if (!options) return schema;
  const real = options.filter((s) => s.type !== 'null');
  return real.length === 1 ? { ...real[0], default: schema.default } : schema;
}

function kind(schema) {
  if (schema.enum) return 'enum';
  if (['boolean', 'integer', 'number', 'string'].includes(schema.type)) return schema.type;
  if (schema.const !== undefined) return 'string';
  return 'json';
}

/** Problems of a number against its schema's bounds, as a message or null. */
export function outOfRange(value, schema) {
  if (!Number.isFinite(value)) return t('form.notNumber');
  if (schema.type === 'integer' && !Number.isInteger(value)) return t('form.notInteger');
  const min = schema.minimum ?? schema.exclusiveMinimum;
  const max = schema.maximum ?? schema.exclusiveMaximum;
  const below = schema.minimum !== undefined ? value < min : schema.exclusiveMinimum !== undefined && value <= min;
  const above = schema.maximum !== undefined ? value > max : schema.exclusiveMaximum !== undefined && value >= max;
  if (below || above) {
    if (min !== undefined && max !== undefined) return t('form.range', { min, max });
    return min !== undefined ? t('form.atLeast', { min }) : t('form.atMost', { max });
  }
  return null;
}

/** An enum option as the page's language names it (`schema.llm.scale.option.binary`: 二元…). */
function optionLabel(type, name, option) {
  const key = `schema.${type}.${name}.option.${option}`;
  const label = t(key);
  return label === key ? String(option) : label;
}

function field(type, name, rawSchema, value, { readOnly, required }) {
  const schema = plain(rawSchema);
  const shape = kind(schema);
  const id = `cfg-${name}`;
  const shown = value === undefined ? schema.default : value;
  let input;
  if (shape === 'boolean') {
    input = h('input', { id, type: 'checkbox', checked: Boolean(shown), disabled: readOnly });
  } else if (shape === 'enum') {
    input = h('select', { id, disabled: readOnly },
      required ? null : h('option', { value: '' }, ''),
      schema.enum.map((option) => h('option', { value: String(option), selected: option === shown },
        optionLabel(type, name, option))));
  } else if (shape === 'integer' || shape === 'number') {
    input = h('input', { id, type: 'number', step: shape === 'integer' ? '1' : 'any', value: shown ?? '',
      min: schema.minimum, max: schema.maximum, readOnly });
  } else if (shape === 'string') {
    const long = LONG_TEXT.test(name);
    input = h(long ? 'textarea' : 'input', { id, value: shown ?? '', readOnly, rows: long ? 4 : undefined });
  } else {
    input = h('textarea', { id, class: 'json', rows: 4, readOnly,
      value: shown === undefined || shown === null ? '' : JSON.stringify(shown, null, 2) });
  }
  const box = labelled(id, `schema.${type}.${name}`, input, { required, hint: `schema.${type}.${name}.hint` });
  box.el.classList.add(`field-${shape}`);
  const read = () => {
    if (shape === 'boolean') return input.checked;
    const text = input.value;
    if (text.trim() === '') return undefined;
    if (shape === 'integer' || shape === 'number') return Number(text);
    if (shape === 'enum') return schema.enum.find((option) => String(option) === text);
    if (shape === 'string') return text;
    return parseJson(text);
  };
  const check = () => {
    let v;
    try {
      v = read();
    } catch (err) {
      return t('form.badJson', { message: err.message });
    }
    if (v === undefined) return required ? t('form.required') : null;
    if (shape === 'integer' || shape === 'number') return outOfRange(v, schema);
    if (shape === 'string' && schema.minLength && v.length < schema.minLength) return t('form.required');
    return null;
  };
  return { ...box, read, check, name };
}

/** A form for `schema` (grader `type`) showing `value`; only `fields` when given. */
export function schemaForm(schema, value = {}, { readOnly = false, onChange, type = '', fields = null } = {}) {
  const required = new Set(schema.required || []);
  const names = Object.keys(schema.properties || {}).filter((name) => !fields || fields.includes(name));
  const drawn = names.map((name) => field(type, name, schema.properties[name], value[name],
    { readOnly, required: required.has(name) }));
  const el = h('div', { class: `schema-form${readOnly ? ' readonly' : ''}`, oninput: () => onChange?.(),
    onchange: () => onChange?.() }, drawn.map((f) => f.el));
  return {
    el,
    getValue() {
      const out = { ...value };
      for (const f of drawn) {
        let v;
        try {
          v = f.read();
        } catch (err) {
          throw new Error(`${f.label}: ${t('form.badJson', { message: err.message })}`);
        }
        if (v === undefined) delete out[f.name];
        else out[f.name] = v;
      }
      return out;
    },
    validate: () => drawn.map((f) => f.report(f.check())).filter(Boolean),
  };
}
