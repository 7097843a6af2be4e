// The upload's column-mapping step: a CSV or TSV file whose header has no `input` column
// (问题/回答/参考答案, as a team names its columns) is shown with its header and the encoding it was
// found in, and each field (id, input, output, expected) is given one of its columns, guessed
// from the usual names. The upload then reads those columns as those fields; the others go to
// metadata.
import { upload } from '../common/api.js';
import { t } from '../common/boot.js';
import { h } from '../common/dom.js';

const HEAD_BYTES = 64 * 1024; // what the server tells the encoding from (runner/dataset/_encoding.py)
const FIELDS = ['id', 'input', 'output', 'expected'];
const GUESSES = {
  id: ['id', 'ID', '编号', '序号', '样本id', '样本ID'],
  input: ['input', '问题', '输入', '提问', '题目', 'prompt', 'question', 'query'],
  output: ['output', '回答', '输出', '模型回答', '答复', 'response', 'answer'],
  expected: ['expected', '参考答案', '期望', '期望输出', '标准答案', '答案', 'reference', 'ground_truth'],
};

/** The encoding and header columns of a CSV/TSV `file`, read by the server from its first bytes. */
export const headerOf = (file) => upload(`/pages/api/datasets/header?filename=${encodeURIComponent(file.name)}`,
  file.slice(0, HEAD_BYTES), () => {});

/** Whether a header needs mapping: it has columns, and none of them is `input`. */
export const needsMapping = (columns) => columns.length > 0 && !columns.includes('input');

/** The mapping form; `onChosen(params)` with the upload's `column=FIELD:COLUMN` query parameters,
 * `onCancel()` to give up. */
export function mappingStep(file, head, onChosen, onCancel) {
  const taken = new Set();
  const selects = FIELDS.map((field) => {
    const guess = GUESSES[field].find((name) => head.columns.includes(name) && !taken.has(name)) ?? '';
    if (guess) taken.add(guess);
    const select = h('select', { id: `map-${field}`, name: field },
      h('option', { value: '' }, t('dataset.mapNone')),
      head.columns.map((c) => h('option', { value: c, selected: c === guess }, c)));
    return [field, select];
  });
  const problem = h('p', { class: 'alert error', id: 'map-problem', role: 'alert', hidden: true });
  const go = () => {
    const chosen = selects.filter(([, s]) => s.value).map(([field, s]) => [field, s.value]);
    const columns = chosen.map(([, c]) => c);
    if (!chosen.some(([field]) => field === 'input')) {
      problem.textContent = t('dataset.mapNeedsInput');
    } else if (new Set(columns).size < columns.length) {
      problem.textContent = t('dataset.mapTwice');
    } else {
      onChosen(chosen.map(([field, c]) => `column=${encodeURIComponent(`${field}:${c}`)}`).join('&'));
      return;
    }
    problem.hidden = false;
  };
  return h('form', { class: 'card mapping', id: 'column-mapping', onsubmit: (e) => { e.preventDefault(); go(); } },
    h('h3', {}, t('dataset.mapTitle', { name: file.name })),
    h('p', { class: 'hint', id: 'detected-encoding' }, t('dataset.detectedEncoding', { encoding: head.encoding })),
    h('p', { class: 'hint' }, t('dataset.mapHint')),
    h('div', { class: 'mapping-fields' }, selects.map(([field, select]) => h('label', { class: 'field' },
      h('span', {}, t(`dataset.field.${field}`)), select))),
    problem,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'map-upload' }, t('dataset.mapUpload')),
      h('button', { type: 'button', class: 'secondary', id: 'map-cancel', onclick: onCancel }, t('common.cancel'))));
}
