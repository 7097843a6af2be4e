// A page of a dataset version's rows as a table: one column per column of the uploaded file (the
// sample's id, input, output, expected first), long cells cut short with the whole in a tooltip.
// Every value is put in as text, never as markup.
import { get } from '../common/api.js';
import { t } from '../common/boot.js';
import { errorState, h, loading, mount } from '../common/dom.js';
import { PAGE_SIZE, pager } from '../common/listing.js';
import { cellText } from './format.js';

const FIRST = ['id', 'input', 'output', 'expected'];

/** The file's own columns (a column the sample does not know was kept in its metadata), the
 * sample's fields first; then any other key the rows have (metadata itself only when some of
 * it is not shown in a column already). */
function columnsOf(rows, fileColumns) {
  const seen = (key) => fileColumns.includes(key) || rows.some((row) => key in row);
  const columns = [...new Set([...FIRST.filter(seen), ...fileColumns])];
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (columns.includes(key)) continue;
      if (key === 'metadata' && Object.keys(row.metadata || {}).every((k) => columns.includes(k))) continue;
      columns.push(key);
    }
  }
  return columns;
}

const valueOf = (row, column) => (column in row ? row[column] : row.metadata?.[column]);

function cell(value) {
  const { whole, shown } = cellText(value);
  return h('td', { title: whole !== shown ? whole.slice(0, 2000) : null }, h('div', { class: 'cell' }, shown));
}

/** Draws page `state.page` of version `state.version` (whose file had `state.columns`) into
 * `box`; `onPage(page)` turns pages. */
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
  const columns = columnsOf(rows, state.columns || []);
  mount(box,
    h('div', { class: 'table-box', tabindex: 0, role: 'region', 'aria-label': t('dataset.previewOf',
      { number: page.version }) },
    h('table', { class: 'table preview', id: 'preview' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), columns.map((c) => h('th', {}, c)))),
      h('tbody', {}, page.items.map((item) => h('tr', {},
        h('td', { class: 'num' }, item.position + 1), columns.map((c) => cell(valueOf(item.row, c)))))))),
    pager(state, page.total, onPage));
}
