// A page of a dataset version's rows as a table: one column per key the rows have (the sample's
// id, input, output, expected first, then the rest), long cells cut short with the whole in a
// tooltip. Every value is put in as text, never as markup.
import { get } from '../common/api.js';
import { t } from '../common/boot.js';
import { errorState, h, loading, mount } from '../common/dom.js';
import { PAGE_SIZE, pager } from '../common/listing.js';
import { cellText } from './format.js';

const FIRST = ['id', 'input', 'output', 'expected'];

function columnsOf(rows) {
  const seen = new Set();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...FIRST.filter((k) => seen.has(k)), ...[...seen].filter((k) => !FIRST.includes(k))];
}

function cell(column, value) {
  const { whole, shown } = cellText(value);
  return h('td', { dataset: { label: column }, title: whole !== shown ? whole.slice(0, 2000) : null }, shown);
}

/** Draws page `state.page` of version `state.version` into `box`; `onPage(page)` turns pages. */
export async function drawPreview(box, datasetId, state, onPage) {
  mount(box, loading());
  const query = new URLSearchParams({ version: String(state.version), limit: String(PAGE_SIZE),
    offset: String((state.page - 1) * PAGE_SIZE) });
  let page;
  try {
    page = await get(`/api/v1/datasets/${datasetId}/rows?${query}`);
  } catch (err) {
    mount(box, errorState(err, () => drawPreview(box, datasetId, state, onPage)));
    return;
  }
  if (page.total === 0) {
    mount(box, h('p', { class: 'state empty' }, t('dataset.noRows')));
    return;
  }
  const rows = page.items.map((item) => item.row);
  const columns = columnsOf(rows);
  mount(box,
    h('div', { class: 'table-box', tabindex: 0, role: 'region', 'aria-label': t('dataset.previewOf',
      { number: page.version }) },
    h('table', { class: 'table preview', id: 'preview' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), columns.map((c) => h('th', {}, c)))),
      h('tbody', {}, page.items.map((item) => h('tr', {},
        h('td', { class: 'num' }, item.position + 1), columns.map((c) => cell(c, item.row[c]))))))),
    pager(state, page.total, onPage));
}
