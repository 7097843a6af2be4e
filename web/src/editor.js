// /evaluators/new and /evaluators/{id}: header (back, name, save), basic info, the input
// parameters, the code editor or the config form, and the test-run panel.
import { api, get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount, toast } from './common/dom.js';
import { guardUnsaved } from './common/unsaved.js';
import { createEditor, errorLine } from './editor/codemirror.js';
import { compositeForm } from './editor/composite-form.js';
import { labelled, problemsAlert } from './editor/fields.js';
import { llmForm } from './editor/llm-form.js';
import { presetForm } from './editor/preset-form.js';
import { testPanel } from './editor/test-panel.js';
import { versionsCard } from './editor/versions.js';
import { mayChange, ownerBanner } from './common/owned.js';

const root = document.getElementById('app');
const PARAMETERS = [['input', 'string'], ['output', 'string'], ['expected', 'string | null'], ['metadata', 'object']];
const NEW_TYPES = ['code', 'preset', 'llm', 'composite'];
const QUERY = new URLSearchParams(window.location.search);
const FROM_PRESET = QUERY.get('preset');
const COPY_OF = QUERY.get('copy');
const VERSION = Number(QUERY.get('version')) || null; // viewing an earlier save, read-only
const RESTORED = Number(QUERY.get('restored')) || null; // just restored from the versions card
const LANGUAGES = ['python', 'nodejs'];
const template = (language) => t(`editor.template.${language}`);

const page = { id: params.id || null, saved: '', saving: false };

function blank() {
  return { name: '', description: '', type: 'code', isPreset: false,
    config: { language: 'python', code: template('python'), timeout: 5000 } };
}

const presetLabel = (config) => t(`preset.${config.presetType}.name`);

/** A new evaluator made from a built-in preset: its rule and parameters, to change and save. */
async function fromPreset(id) {
  const preset = await get(`/api/v1/evaluators/${id}`);
  return { name: t('editor.presetCopyName', { name: presetLabel(preset.config) }), description: '', type: 'preset',
    isPreset: false, config: structuredClone(preset.config) };
}

/** A new evaluator copied from one the visitor may read (a colleague's): to change and save as theirs. */
async function copyOf(id) {
  const source = await get(`/api/v1/evaluators/${id}`);
  return { name: t('owned.copyName', { name: source.name }), description: source.description || '', type: source.type,
    isPreset: false, config: structuredClone(source.config) };
}

/** The evaluator as version `number` had it (its fields over the row's). */
async function atVersion(id, number) {
  const [evaluator, version] = await Promise.all([get(`/api/v1/evaluators/${id}`),
    get(`/api/v1/evaluators/${id}/versions/${number}`)]);
  return { ...evaluator, name: version.name, description: version.description, type: version.type,
    config: version.config, shownVersion: version };
}

function parameterTable() {
  return h('table', { class: 'table params' },
    h('thead', {}, h('tr', {}, ['name', 'type', 'meaning'].map((k) => h('th', {}, t(`editor.param.${k}`))))),
    h('tbody', {}, PARAMETERS.map(([name, type]) => h('tr', {},
      h('td', {}, h('code', {}, name)), h('td', {}, h('code', {}, type)), h('td', {}, t(`editor.param.${name}`))))));
}

function select(id, options, current, disabled) {
  return h('select', { id, disabled }, options.map(([value, label]) => h('option', { value, selected: value === current },
    label)));
}

async function start() {
  mount(root, loading());
  try {
    const [evaluator, schemas, facts] = await Promise.all([page.id ? (VERSION ? atVersion(page.id, VERSION)
      : get(`/api/v1/evaluators/${page.id}`))
      : FROM_PRESET ? fromPreset(FROM_PRESET) : COPY_OF ? copyOf(COPY_OF) : blank(),
    get('/pages/api/schemas'), get('/pages/api/form-facts')]);
    draw(evaluator, schemas, facts);
    if (RESTORED) {
      toast(t('versions.restored', { number: RESTORED, version: evaluator.version }));
      window.history.replaceState(null, '', `/evaluators/${evaluator.id}`);
    }
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

function draw(evaluator, schemas, facts) {
  const foreign = Boolean(page.id) && !evaluator.isPreset && !mayChange(evaluator);
  const old = evaluator.shownVersion && !evaluator.shownVersion.current ? evaluator.shownVersion : null;
  const readOnly = evaluator.isPreset || foreign || Boolean(old);
  const copy = () => { window.location.href = `/evaluators/new?copy=${evaluator.id}`; };
  const ui = {};
  const changed = () => markDirty();
  ui.title = h('h1', { id: 'title' }, (evaluator.isPreset ? presetLabel(evaluator.config) : evaluator.name)
    || t('editor.newTitle'));
  ui.dirty = h('span', { class: 'badge warn', hidden: true, id: 'dirty' }, t('editor.unsaved'));
  ui.alert = h('div', { class: 'save-alert' });
  ui.save = evaluator.isPreset ? [h('span', { class: 'badge' }, t('editor.readonly')),
    h('a', { class: 'button primary', id: 'use-preset', href: `/evaluators/new?preset=${evaluator.id}` },
      t('editor.usePreset'))]
    : readOnly ? h('span', { class: 'badge', id: 'read-only' }, t('owned.readonly'))
    : h('button', { type: 'button', class: 'primary', id: 'save', title: t('editor.shortcut'), onclick: save },
      t('editor.save'));
  ui.name = h('input', { id: 'name', value: evaluator.isPreset ? presetLabel(evaluator.config) : evaluator.name,
    readOnly, maxlength: 200, oninput: () => { // the heading says what is being written
      ui.title.textContent = ui.name.value.trim() || t('editor.newTitle');
      changed();
    } });
  const nameField = labelled('name', 'editor.name', ui.name, { required: !readOnly });
  ui.description = h('textarea', { id: 'description', value: evaluator.description || '', readOnly, rows: 2,
    oninput: changed });
  const types = evaluator.isPreset ? ['preset'] : page.id ? [evaluator.type] : NEW_TYPES;
  ui.type = select('type', types.map((v) => [v, t(`type.${v}`)]), evaluator.type, types.length === 1);
  ui.language = select('language', LANGUAGES.map((v) => [v, t(`language.${v}`)]), evaluator.config.language || 'python',
    readOnly);
  ui.languageField = h('label', { class: 'field' }, t('editor.language'), ui.language);
  ui.configCard = h('section', { class: 'card config' });

  const back = h('a', { href: `/evaluators?tab=${evaluator.isPreset ? 'presets' : 'custom'}`, class: 'button secondary',
    id: 'back' }, `← ${t('editor.back')}`);
  mount(root,
    h('div', { class: 'editor-head' }, back, ui.title, ui.dirty, h('div', { class: 'spacer' }), ui.save),
    foreign ? ownerBanner(evaluator, 'evaluator', copy) : null,
    old ? h('div', { class: 'alert info', id: 'old-version', role: 'note' }, t('versions.viewing', {
      number: old.number, author: old.author || t('owned.nobody'), time: fmtDate(old.createdAt) }), ' ',
    h('a', { href: `/evaluators/${evaluator.id}` }, t('versions.toCurrent'))) : null,
    ui.alert,
    h('section', { class: 'card basic' }, h('h2', {}, t('editor.basic')),
      h('div', { class: 'grid' },
        nameField.el,
        h('label', { class: 'field' }, t('editor.type'), ui.type), ui.languageField),
      h('label', { class: 'field wide' }, t('editor.description'), ui.description)),
    h('div', { class: 'workbench' }, ui.configCard, testPanel({ run: (sample) => runTest(sample) })),
    h('section', { class: 'card' }, h('h2', {}, t('editor.params')), parameterTable()),
    ui.versions = h('div', { id: 'versions-holder' }, page.id && !evaluator.isPreset
      ? versionsCard(page.id, old ? old.number : evaluator.version, mayChange(evaluator)) : null));

  let current = null; // the shown config's form: getValue() and validate()
  function drawConfig(type, config) {
    ui.languageField.hidden = type !== 'code';
    if (type === 'code') {
      const holder = h('div', { class: 'code-editor', id: 'code' });
      ui.timeout = h('input', { id: 'timeout', type: 'number', min: 1, step: 1, value: config.timeout ?? 5000,
        readOnly, oninput: changed });
      const timeoutField = labelled('timeout', 'editor.timeout', ui.timeout);
      mount(ui.configCard, h('h2', {}, t('editor.code')), holder, timeoutField.el);
      ui.editor = createEditor(holder, { doc: config.code || '', language: ui.language.value, readOnly,
        onChange: changed });
      holder.querySelector('.cm-content')?.setAttribute('aria-label', t('editor.code'));
      current = {
        getValue: () => ({ language: ui.language.value, code: ui.editor.getCode(), timeout: Number(ui.timeout.value) }),
        validate: () => [
          ui.editor.getCode().trim() ? null : { label: t('editor.code'), message: t('form.required'),
            focus: () => ui.editor.view.focus() },
          timeoutField.report(Number.isInteger(Number(ui.timeout.value)) && Number(ui.timeout.value) >= 1
            ? null : t('form.atLeastInteger', { min: 1 })),
        ].filter(Boolean),
      };
      return;
    }
    ui.editor = null;
    const options = { readOnly, onChange: changed, schemas, facts };
    const form = type === 'preset' ? presetForm(config.presetType ? config : { presetType: 'regex', params: {} },
      options)
      : type === 'llm' ? llmForm(config, { ...options, schema: schemas.llm || { properties: {} } })
        : compositeForm(config, options);
    mount(ui.configCard, h('h2', {}, t('editor.config')), form.el);
    current = form;
  }

  ui.type.addEventListener('change', () => {
    const type = ui.type.value;
    drawConfig(type, type === 'code' ? blank().config : {});
    changed();
  });
  ui.language.addEventListener('change', () => {
    const other = LANGUAGES.find((l) => l !== ui.language.value);
    if (ui.editor.getCode().trim() === template(other).trim()) ui.editor.setCode(template(ui.language.value));
    ui.editor.setLanguage(ui.language.value);
    changed();
  });

  drawConfig(evaluator.type, evaluator.config);
  page.ui = ui;
  page.readOnly = readOnly;
  page.old = Boolean(old); // an earlier version: tested as shown, not as stored now
  page.state = () => ({ name: ui.name.value.trim(), description: ui.description.value, type: ui.type.value,
    config: current.getValue() });
  page.validate = () => [nameField.report(ui.name.value.trim() ? null : t('form.required')), ...current.validate()]
    .filter(Boolean);
  page.saved = snapshot();
}

function snapshot() {
  try {
    return JSON.stringify(page.state());
  } catch {
    return null; // a field holds JSON that does not parse: not what was saved
  }
}

const isDirty = () => !page.readOnly && snapshot() !== page.saved;

function markDirty() {
  page.ui.dirty.hidden = !isDirty();
  page.ui.editor?.clearError();
}

/** `message` in the save alert; `text`, the server's own words, points at the line. */
function showProblem(message, text = message) {
  const line = page.ui.editor ? errorLine(text) : null;
  if (line) page.ui.editor.showErrorLine(line);
  mount(page.ui.alert, h('p', { class: 'alert error', role: 'alert' }, message,
    line ? h('span', { class: 'error-line' }, ` (${t('editor.errorLine', { line })})`) : null));
}

async function save() {
  if (page.readOnly || page.saving) return;
  mount(page.ui.alert);
  const problems = page.validate();
  if (problems.length) {
    mount(page.ui.alert, problemsAlert(problems));
    problems[0].focus();
    return;
  }
  let body;
  try {
    body = page.state();
  } catch (err) {
    showProblem(err.message);
    return;
  }
  page.saving = true;
  page.ui.save.disabled = true;
  page.ui.save.textContent = t('editor.saving');
  try {
    const saved = page.id ? await api('PUT', `/api/v1/evaluators/${page.id}`, body)
      : await api('POST', '/api/v1/evaluators', body);
    page.id = saved.id;
    page.saved = JSON.stringify(body);
    window.history.replaceState(null, '', `/evaluators/${saved.id}`);
    page.ui.title.textContent = saved.name;
    document.title = `${saved.name} · ${t('app.title')}`;
    markDirty();
    mount(page.ui.versions, versionsCard(saved.id, saved.version, true));
    toast(t('editor.saved'));
  } catch (err) {
    showProblem(err.message, err.text);
  } finally {
    page.saving = false;
    page.ui.save.disabled = false;
    page.ui.save.textContent = t('editor.save');
  }
}

async function runTest(sample) {
  page.ui.editor?.clearError();
  let data;
  try {
    if (page.id && !isDirty() && !page.old) {
      data = await api('POST', `/api/v1/evaluators/${page.id}/test`, sample);
    } else {
      const { name, type, config } = page.state();
      data = await api('POST', '/pages/api/evaluators/test', { name: name || 'draft', type, config, ...sample });
    }
  } catch (err) {
    err.line = page.ui.editor ? errorLine(err.text ?? err.message) : null;
    if (err.line) page.ui.editor.showErrorLine(err.line);
    throw err;
  }
  const line = page.ui.editor && data.error ? errorLine(data.details?.traceback, data.reason) : null;
  if (line) page.ui.editor.showErrorLine(line);
  return { data, line };
}

document.addEventListener('keydown', (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
    event.preventDefault();
    if (page.ui) save();
  }
});
guardUnsaved(root, () => Boolean(page.ui) && isDirty());
start();
