// /traces: your latest traces (over your last 5,000 spans), searched with an online rule's
// filter language and by verdict; each opens its spans. The search lives in the URL (?filter=&verdict=).
import { get } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';

const root = document.getElementById('app');
const VERDICTS = ['', 'passed', 'failed', 'error', 'not_applicable', 'skipped'];

function badges(verdicts) {
  return Object.entries(verdicts).map(([status, count]) => h('span', { class: `badge status-${status}` },
    `${t(`online.status.${status}`)} ${count}`));
}

function table(found) {
  if (!found.traces.length) return h('p', { class: 'state empty' }, t('traces.none', { scanned: found.scanned }));
  const cell = (key, ...children) => h('td', { dataset: { label: t(`traces.col.${key}`) } }, ...children);
  return h('div', {}, h('p', { class: 'hint' }, t('traces.scanned', { scanned: found.scanned })),
    h('table', { class: 'table', id: 'traces' },
      h('thead', {}, h('tr', {}, ['name', 'start', 'spans', 'verdicts'].map((k) => h('th', { scope: 'col' },
        t(`traces.col.${k}`))))),
      h('tbody', {}, found.traces.map((tr) => h('tr', { dataset: { id: tr.traceId } },
        cell('name', h('a', { href: `/traces/${tr.traceId}` }, tr.name)), cell('start', fmtDate(tr.start)),
        cell('spans', tr.spans), cell('verdicts', badges(tr.verdicts)))))));
}

async function render() {
  const query = new URLSearchParams(window.location.search);
  const filter = h('input', { id: 'trace-filter', type: 'search', value: query.get('filter') || '', maxlength: 2000,
    placeholder: 'gen_ai.request.model == "gpt-4o"', 'aria-label': t('traces.filter'), spellcheck: false });
  const verdict = h('select', { id: 'trace-verdict', 'aria-label': t('online.verdict') }, VERDICTS.map((v) =>
    h('option', { value: v, selected: v === (query.get('verdict') || '') },
      v ? t(`online.status.${v}`) : t('online.allVerdicts'))));
  const body = h('section', { class: 'card' }, loading());
  const search = (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ ...(filter.value ? { filter: filter.value } : {}),
      ...(verdict.value ? { verdict: verdict.value } : {}) });
    window.history.pushState(null, '', `/traces${next.toString() ? `?${next}` : ''}`);
    render();
  };
  mount(root, h('div', { class: 'page-head' }, h('h1', {}, t('traces.title')), h('div', { class: 'spacer' }),
    h('a', { href: '/online', class: 'button secondary' }, t('online.title'))),
  h('form', { class: 'toolbar', id: 'trace-search', onsubmit: search }, filter, verdict,
    h('button', { type: 'submit', class: 'primary' }, t('traces.search'))), body);
  const api = new URLSearchParams({ limit: '100', ...(query.get('filter') ? { filter: query.get('filter') } : {}),
    ...(query.get('verdict') ? { verdict: query.get('verdict') } : {}) });
  try {
    mount(body, table(await get(`/api/v1/traces?${api}`)));
  } catch (err) {
    mount(body, err.status === 422 ? h('p', { class: 'alert error', role: 'alert', id: 'filter-problem' },
      err.message) : errorState(err, render)); // said in the page's language, its position included
  }
}

window.addEventListener('popstate', render);
render();
