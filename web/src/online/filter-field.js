// A rule's filter field: checked as it is typed against the server's own validator (POST
// /api/v1/online-rules/filter-check), its mistake and position said at the field in the page's
// language, and the caller's recent spans it takes listed under it (a count and a few rows).
import { api } from '../common/api.js';
import { t } from '../common/boot.js';
import { fmtDate, h, mount } from '../common/dom.js';
import { say } from '../common/phrase.js';
import { labelled } from '../editor/fields.js';

const CHECK_DELAY_MS = 250;
const ROWS_SHOWN = 5;

function previewList(matches) {
  if (!matches.length) return null;
  return h('ul', { class: 'preview' }, matches.slice(0, ROWS_SHOWN).map((m) => h('li', { dataset: { trace: m.traceId } },
    h('a', { href: `/traces/${m.traceId}` }, h('code', {}, m.name)), ' ', m.model || '', ' · ', fmtDate(m.start))),
  matches.length > ROWS_SHOWN ? h('li', { class: 'hint', id: 'filter-preview-more' },
    t('online.previewMore', { n: matches.length - ROWS_SHOWN })) : null);
}

/** The field, starting from `text`; `value()` is what is typed, `problem()` the last check's
 * message (null when valid or not yet checked). */
export function filterField(text = '') {
  const input = h('textarea', { id: 'filter', rows: 2, maxlength: 2000, spellcheck: false, value: text,
    placeholder: 'gen_ai.operation.name == "chat"' });
  const field = labelled('filter', 'online.filter', input, { hint: 'online.filterHint' });
  const status = h('p', { class: 'hint', id: 'filter-status', 'aria-live': 'polite' });
  const preview = h('div', { id: 'filter-preview' });
  let timer = null;
  let asked = 0;
  let problem = null;
  async function check() {
    const mine = ++asked;
    try {
      const got = await api('POST', '/api/v1/online-rules/filter-check', { filter: input.value, preview: true });
      if (mine !== asked) return;
      problem = got.valid ? null : say(got.messageCode, got.messageArgs, got.message);
      field.report(problem);
      status.textContent = got.valid ? t('online.matches', { count: got.matches.length, scanned: got.scanned }) : '';
      mount(preview, got.valid ? previewList(got.matches) : null);
    } catch (err) {
      status.textContent = t('common.error', { message: err.message });
    }
  }
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(check, CHECK_DELAY_MS); });
  check();
  return {
    el: h('div', {}, field.el, status, preview),
    value: () => input.value.trim(),
    /** The last check's problem at the field, listed with the form's others (null: none). */
    validate: () => (problem ? { label: field.label, message: problem, focus: () => input.focus() } : null),
  };
}
