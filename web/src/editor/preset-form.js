// "Use this preset": a preset rule with your own parameters. Regex: the pattern and its flags,
// with a live preview of the match on the test panel's output; JSON Schema: the schema in a
// JSON editor that checks it as you type; similarity and the others: their fields. A built-in
// preset shows the same form read-only.
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { parseJson } from '../common/json.js';
import { createEditor } from './codemirror.js';
import { labelled } from './fields.js';
import { schemaForm } from './schema-form.js';

export const PRESET_TYPES = ['exact_match', 'contains', 'regex', 'json_schema', 'similarity'];
const FLAGS = ['i', 'm', 's', 'u'];
const SHOWN = { exact_match: ['trim', 'ignore_case'], contains: ['ignore_case'],
  similarity: ['algorithm', 'threshold', 'ignore_case', 'normalize'] };

/** The test panel's output, where the regex preview looks. */
const sampleOutput = () => document.querySelector('.test-inputs [name=output]')?.value ?? '';

function regexParams(params, { readOnly, onChange }) {
  const pattern = h('input', { id: 'cfg-pattern', value: params.pattern ?? '', readOnly, spellcheck: false,
    class: 'mono' });
  const flags = FLAGS.map((flag) => h('label', { class: 'flag' },
    h('input', { type: 'checkbox', value: flag, checked: (params.flags || '').includes(flag), disabled: readOnly }),
    ` ${flag} `, h('span', { class: 'hint' }, t(`preset.regex.flag.${flag}`))));
  const preview = h('div', { class: 'regex-preview', id: 'regex-preview', 'aria-live': 'polite' });
  const patternField = labelled('cfg-pattern', 'schema.regex.pattern', pattern,
    { required: true, hint: 'schema.regex.pattern.hint' });
  const readFlags = () => flags.map((f) => f.querySelector('input')).filter((i) => i.checked).map((i) => i.value)
    .join('');

  function update() {
    const text = sampleOutput();
    if (!pattern.value) {
      mount(preview, h('span', { class: 'hint' }, t('preset.regex.previewEmpty')));
      return;
    }
    let found;
    try {
      found = new RegExp(pattern.value, readFlags()).exec(text);
    } catch (err) {
      mount(preview, h('span', { class: 'bad' }, t('preset.regex.invalid', { message: err.message })));
      return;
    }
    if (!text) { // nothing to match yet: say what to fill in
      mount(preview, h('span', { class: 'hint' }, t('preset.regex.previewNoOutput')));
      return;
    }
    if (!found) {
      mount(preview, h('span', { class: 'bad', id: 'regex-verdict' }, t('preset.regex.noMatch')));
      return;
    }
    const end = found.index + found[0].length;
    mount(preview, h('span', { class: 'good', id: 'regex-verdict' }, t('preset.regex.match')), ' ',
      h('code', { class: 'sample' }, text.slice(0, found.index), h('mark', {}, text.slice(found.index, end)),
        text.slice(end)));
  }
  pattern.addEventListener('input', update);
  flags.forEach((f) => f.addEventListener('change', update));
  document.addEventListener('input', (event) => { if (event.target.name === 'output') update(); });
  setTimeout(update);
  const el = h('div', {}, patternField.el,
    h('fieldset', { class: 'flags' }, h('legend', {}, t('schema.regex.flags')), flags),
    h('div', { class: 'field' }, h('span', { class: 'label' }, t('preset.regex.preview')), preview));
  el.addEventListener('input', () => onChange?.());
  el.addEventListener('change', () => onChange?.());
  return {
    el,
    getValue: () => {
      const out = { ...params, pattern: pattern.value, flags: readFlags() };
      if (!out.flags) delete out.flags;
      return out;
    },
    validate() {
      let problem = pattern.value ? null : t('form.required');
      if (!problem) {
        try {
          new RegExp(pattern.value, readFlags()); // eslint-disable-line no-new
        } catch (err) {
          problem = t('preset.regex.invalid', { message: err.message });
        }
      }
      return [patternField.report(problem)].filter(Boolean);
    },
  };
}

function jsonSchemaParams(params, { readOnly, onChange }) {
  const holder = h('div', { class: 'code-editor json-editor', id: 'cfg-schema' });
  const text = JSON.stringify(params.schema ?? { type: 'object', properties: {}, required: [] }, null, 2);
  const editor = createEditor(holder, { doc: text, language: 'json', readOnly, onChange });
  holder.querySelector('.cm-content')?.setAttribute('aria-label', t('schema.json_schema.schema'));
  const box = labelled('cfg-schema-box', 'schema.json_schema.schema', holder,
    { required: true, hint: 'schema.json_schema.schema.hint' });
  const parse = () => parseJson(editor.getCode());
  return {
    el: box.el,
    getValue: () => ({ ...params, schema: parse() }),
    validate() {
      let problem = null;
      try {
        const schema = parse();
        if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
          problem = t('preset.json_schema.notObject');
        }
      } catch (err) {
        problem = t('form.badJson', { message: err.message });
      }
      return [box.report(problem)].filter(Boolean);
    },
  };
}

function paramsForm(presetType, params, options) {
  if (presetType === 'regex') return regexParams(params, options);
  if (presetType === 'json_schema') return jsonSchemaParams(params, options);
  return schemaForm(options.schemas[presetType] || { properties: {} }, params,
    { ...options, type: presetType, fields: SHOWN[presetType] });
}

/** The preset config {presetType, params}; the preset type can be changed unless read-only. */
export function presetForm(config, { readOnly, onChange, schemas }) {
  const type = h('select', { id: 'cfg-presetType', disabled: readOnly },
    PRESET_TYPES.map((p) => h('option', { value: p, selected: p === config.presetType }, t(`preset.${p}.name`))));
  const described = h('p', { class: 'hint', id: 'preset-description' });
  const body = h('div', { class: 'preset-params' });
  let form;
  const draw = (params) => {
    described.textContent = t(`preset.${type.value}.description`);
    form = paramsForm(type.value, params, { readOnly, onChange, schemas });
    mount(body, form.el);
  };
  type.addEventListener('change', () => { draw({}); onChange?.(); });
  draw(config.params || {});
  const typeField = labelled('cfg-presetType', 'form.presetType', type, { required: true });
  return {
    el: h('div', { class: 'preset-form' }, typeField.el, described, body),
    getValue: () => ({ presetType: type.value, params: form.getValue() }),
    validate: () => form.validate(),
  };
}
