// The test-run panel: a sample (input, output, expected, metadata as JSON), a button, and the
// result: passed, score, reason, latency, and the error with the line it points at.
import { t } from '../common/boot.js';
import { errorName, reasonOf } from '../common/phrase.js';
import { fmtScore, h, mount } from '../common/dom.js';
import { parseJson } from '../common/json.js';

function area(name, label, rows = 2, value = '') {
  return h('label', { class: 'field' }, label, h('textarea', { name, rows, value, spellcheck: false }));
}

/** `run(sample)` grades the sample and returns the API's test result (or throws). */
export function testPanel({ run, note }) {
  const result = h('div', { class: 'test-result', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'primary', id: 'run-test' }, t('editor.runTest'));
  const form = h('div', { class: 'test-inputs' },
    ...['input', 'output', 'expected'].map((name) => area(name, h('span', {}, h('code', {}, name), ' ',
      h('span', { class: 'hint' }, t(`editor.param.${name}`))))),
    area('metadata', t('editor.metadataJson'), 2, '{}'));
  const value = (name) => form.querySelector(`[name=${name}]`).value;

  button.addEventListener('click', async () => {
    let metadata;
    try {
      metadata = value('metadata').trim() ? parseJson(value('metadata')) : {};
    } catch (err) {
      mount(result, h('p', { class: 'alert error' }, t('editor.badJson', { field: 'metadata', message: err.message })));
      return;
    }
    button.disabled = true;
    button.textContent = t('editor.running');
    try {
      const sample = { input: value('input'), output: value('output'), expected: value('expected'), metadata };
      const { data, line } = await run(sample);
      show(data, line);
    } catch (err) {
      mount(result, h('p', { class: 'alert error', role: 'alert' }, err.message,
        err.line ? h('span', { class: 'error-line' }, ` (${t('editor.errorLine', { line: err.line })})`) : null));
    } finally {
      button.disabled = false;
      button.textContent = t('editor.runTest');
    }
  });

  function show(data, line) {
    const verdict = data.error ? 'errored' : data.passed ? 'passed' : 'failed';
    const symbol = { passed: '✓', failed: '✗', errored: '!' }[verdict];
    mount(result,
      h('div', { class: `verdict ${verdict}`, id: 'verdict' }, `${symbol} ${t(`editor.${verdict}`)}`),
      h('dl', { class: 'facts' },
        h('dt', {}, t('editor.passedField')),
        h('dd', { id: 'result-passed' }, t(data.passed ? 'common.yes' : 'common.no')),
        h('dt', {}, t('editor.score')), h('dd', { id: 'result-score' }, fmtScore(data.score)),
        h('dt', {}, t('editor.reason')), h('dd', { id: 'result-reason' }, reasonOf(data) ?? t('common.none')),
        h('dt', {}, t('editor.latency')), h('dd', { id: 'result-latency' }, `${Number(data.latencyMs).toFixed(1)} ms`),
        // time spent waiting (for a sandbox worker, behind others' code) is said apart from the
        // evaluation's own, once it is long enough to notice
        data.waitMs >= 10 ? [h('dt', {}, t('editor.waited')),
          h('dd', { id: 'result-waited' }, `${Number(data.waitMs).toFixed(0)} ms`)] : null,
        data.error ? [h('dt', {}, t('editor.errorCode')), h('dd', { id: 'result-error', title: data.error }, errorName(data.error),
          line ? h('span', { class: 'error-line' }, ` (${t('editor.errorLine', { line })})`) : null)] : null),
      Object.keys(data.details || {}).length ? h('details', {}, h('summary', {}, t('editor.details')),
        h('pre', {}, JSON.stringify(data.details, null, 2))) : null);
  }

  return h('section', { class: 'card test-panel' }, h('h2', {}, t('editor.test')), form,
    h('div', { class: 'row' }, button, note ? h('span', { class: 'hint' }, note) : null), result);
}
