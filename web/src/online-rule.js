// /online/{id}: one online rule's dashboard: its pass rate over time (the last day by the hour,
// the last week or month by the day), each point's 95% interval drawn as a bar and the points'
// as a band, one chart per model (gen_ai.request.model of the graded span), on a time axis;
// then its results, newest first, filtered by verdict, a page at a time. Its creator (or an
// admin) turns it on or off, grades the spans stored over the last day, week or month with it
// (a backfill: what it graded already is skipped), edits (/online/{id}/edit) or deletes it;
// others read it under a banner naming its owner.
import { api, get } from './common/api.js';
import { params, t } from './common/boot.js';
import { trend } from './common/charts.js';
import { confirmDialog, errorState, fmtDate, fmtScore, h, loading, mount, toast } from './common/dom.js';
import { mayChange, ownerBanner } from './common/owned.js';

const root = document.getElementById('app');
const STATUSES = ['', 'passed', 'failed', 'error', 'not_applicable', 'skipped'];
const SPLIT = 'gen_ai.request.model';

// The windows the dashboard shows: the last day by the hour, the last week or month by the day.
const WINDOWS = { day: { days: 1, by: 'hour' }, week: { days: 7, by: 'day' }, month: { days: 30, by: 'day' } };
const BUCKET_MS = { hour: 3600e3, day: 86400e3 };

function charts(entries, from, to, by) {
  if (!entries.length) return h('p', { class: 'state empty', id: 'no-numbers' }, t('online.noNumbers'));
  const byValue = new Map();
  for (const e of entries) {
    if (!byValue.has(e.value)) byValue.set(e.value, []);
    byValue.get(e.value).push(e);
  }
  // a bucket's point stands at its middle, kept inside the window (its first and last buckets overhang it)
  const when = (p) => Math.min(to, Math.max(from, Date.parse(p.start) + BUCKET_MS[by] / 2));
  const axis = { domain: [from, to], ends: [fmtDate(from), fmtDate(to)], band: true };
  return h('div', { class: 'charts' }, [...byValue].map(([value, points]) => {
    const decided = points.filter((p) => p.passRate !== null);
    return h('figure', { class: 'chart-card', dataset: { value } },
      h('figcaption', {}, `${value} · ${t('online.graded', { count: decided.reduce((n, p) => n + p.graded, 0) })}`),
      decided.length ? trend(decided.map((p) => ({ label: fmtDate(p.start), value: p.passRate, ci: p.passRateCi,
        at: when(p) })), t('online.chartLabel', { value }), axis) : h('p', { class: 'hint' }, t('online.noneDecided')));
  }));
}

/** The pass rate by model over a window picked from WINDOWS, each bucket with its interval. */
function numbers(rule) {
  const windowPick = h('select', { id: 'window' }, Object.keys(WINDOWS).map((w) => h('option', { value: w },
    t(`online.window.${w}`))));
  const hint = h('p', { class: 'hint' });
  const body = h('div', {}, loading());
  async function load() {
    const { days, by } = WINDOWS[windowPick.value];
    const to = Date.now();
    const from = to - days * 86400e3;
    hint.textContent = t(`online.passRateHint.${by}`);
    mount(body, loading());
    const query = new URLSearchParams({ by, split: SPLIT, from: new Date(from).toISOString(),
      to: new Date(to).toISOString() });
    try {
      mount(body, charts(await get(`/api/v1/online-rules/${rule.id}/summary?${query}`), from, to, by));
    } catch (err) {
      mount(body, errorState(err, load));
    }
  }
  windowPick.addEventListener('change', load);
  load();
  return h('section', { class: 'card', id: 'numbers' }, h('div', { class: 'card-head' }, h('h2', {}, t('online.passRate')),
    h('label', { for: 'window', class: 'inline' }, t('online.window')), windowPick), hint, body);
}

function resultsTable(results) {
  const cell = (key, ...children) => h('td', { dataset: { label: t(`online.result.${key}`) } }, ...children);
  return h('table', { class: 'table', id: 'results' },
    h('thead', {}, h('tr', {}, ['trace', 'evaluator', 'status', 'score', 'reason', 'at']
      .map((k) => h('th', { scope: 'col' }, t(`online.result.${k}`))))),
    h('tbody', {}, results.map((r) => h('tr', { dataset: { id: r.id } },
      cell('trace', h('code', { class: 'id' }, `${r.traceId.slice(0, 8)}…/${r.spanId.slice(0, 8)}`),
        r.generation > 1 ? ` #${r.generation}` : ''),
      cell('evaluator', r.evaluatorName),
      cell('status', h('span', { class: `badge status-${r.status}` }, t(`online.status.${r.status}`))),
      cell('score', fmtScore(r.score)), cell('reason', h('span', { class: 'reason' }, r.reason || '')),
      cell('at', fmtDate(r.at))))));
}

function results(rule) {
  const status = h('select', { id: 'verdict' }, STATUSES.map((s) => h('option', { value: s },
    s ? t(`online.status.${s}`) : t('online.allVerdicts'))));
  const body = h('div', {}, loading());
  const more = h('button', { type: 'button', class: 'secondary', id: 'more', hidden: true }, t('online.more'));
  let cursor = null;
  let shown = [];
  async function load(reset) {
    if (reset) { cursor = null; shown = []; mount(body, loading()); }
    const query = new URLSearchParams({ limit: '50', order: 'newest', ...(status.value ? { status: status.value } : {}),
      ...(cursor ? { cursor } : {}) });
    try {
      const page = await get(`/api/v1/online-rules/${rule.id}/results?${query}`);
      shown = shown.concat(page.results);
      cursor = page.nextCursor;
      more.hidden = !cursor;
      mount(body, shown.length ? resultsTable(shown) : h('p', { class: 'state empty' }, t('online.noResults')));
    } catch (err) {
      mount(body, errorState(err, () => load(true)));
    }
  }
  status.addEventListener('change', () => load(true));
  more.addEventListener('click', () => load(false));
  load(true);
  return h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, t('online.results')),
    h('label', { for: 'verdict', class: 'inline' }, t('online.verdict')), status), body, more);
}

// A backfill's windows: the stored spans that started in the last day, week or 30 days.
const BACKFILL_DAYS = { day: 1, week: 7, month: 30 };

// The rule over spans already stored; only a rule that is on backfills (the API says 409).
function backfill(rule, isOn) {
  const period = h('select', { id: 'backfill-window' },
    Object.keys(BACKFILL_DAYS).map((key) => h('option', { value: key }, t(`online.backfill.${key}`))));
  const go = h('button', { type: 'button', class: 'secondary', id: 'backfill', disabled: !isOn() }, t('online.backfill'));
  go.addEventListener('click', async () => {
    go.disabled = true;
    const to = Date.now();
    const from = to - BACKFILL_DAYS[period.value] * 86400e3;
    try {
      const done = await api('POST', `/api/v1/online-rules/${rule.id}/backfill`,
        { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      toast(t('online.backfilled', { jobs: done.jobsAdded, spans: done.spansRead }));
    } catch (err) {
      toast(t('common.error', { message: err.message }), 'error');
    } finally {
      go.disabled = !isOn();
    }
  });
  const row = h('div', { class: 'actions rule-actions', id: 'backfill-row' },
    h('label', { for: 'backfill-window', class: 'inline' }, t('online.backfillWindow')), period, go,
    h('p', { class: 'hint' }, t('online.backfillHint')));
  return { row, sync: () => { go.disabled = !isOn(); } };
}

function controls(rule) {
  const enabled = h('input', { type: 'checkbox', id: 'rule-enabled', checked: rule.enabled });
  const stored = backfill(rule, () => enabled.checked && !enabled.disabled);
  enabled.addEventListener('change', async () => {
    enabled.disabled = true;
    stored.sync();
    try {
      await api('PATCH', `/api/v1/online-rules/${rule.id}`, { enabled: enabled.checked });
      toast(t(enabled.checked ? 'online.turnedOn' : 'online.turnedOff'));
    } catch (err) {
      enabled.checked = !enabled.checked;
      toast(t('common.error', { message: err.message }), 'error');
    } finally {
      enabled.disabled = false;
      stored.sync();
    }
  });
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-rule', onclick: async () => {
    if (!await confirmDialog(t('online.deleteTitle'), t('online.deleteConfirm', { name: rule.name }),
      t('common.delete'))) return;
    try {
      await api('DELETE', `/api/v1/online-rules/${rule.id}`);
      window.location.href = '/online';
    } catch (err) {
      toast(t('common.error', { message: err.message }), 'error');
    }
  } }, t('common.delete'));
  return [h('div', { class: 'actions rule-actions' }, h('label', { class: 'inline', for: 'rule-enabled' }, enabled, ' ',
    t('online.enabled')), h('a', { href: `/online/${rule.id}/edit`, class: 'button secondary', id: 'edit-rule' },
    t('online.edit')), remove), stored.row];
}

function settings(rule) {
  const mine = mayChange(rule);
  const budget = rule.judgeBudgetPerDay === null ? t('online.noLimit') : rule.judgeBudgetPerDay.toLocaleString();
  return h('section', { class: 'card' },
    mine ? null : ownerBanner(rule, 'rule', () => { window.location.href = `/online/new?copy=${rule.id}`; }),
    h('p', {}, `${t('online.scopeLabel')}: ${t(`online.scope.${rule.scope}`)} · `
      + `${(rule.sampleRate * 100).toFixed(0)}% · ${t(rule.enabled ? 'online.on' : 'online.off')} · `
      + `${t('online.quiet')}: ${rule.quietS} · ${t('online.budget')}: ${budget}`),
    h('p', {}, h('code', { id: 'rule-filter' }, rule.filter || t('online.everySpan'))),
    h('ul', { class: 'rule-evaluators', id: 'rule-evaluators' }, rule.evaluators.map((e) => h('li', {},
      h('a', { href: `/evaluators/${e.evaluatorId}` }, e.name), h('span', { class: 'hint' }, ` × ${e.weight}`)))),
    mine ? controls(rule) : h('div', { class: 'actions' }, h('a', { href: `/online/${rule.id}/edit`,
      class: 'button secondary', id: 'view-rule' }, t('online.viewSettings'))));
}

async function start() {
  mount(root, loading());
  try {
    const rule = await get(`/api/v1/online-rules/${params.id}`);
    mount(root,
      h('div', { class: 'page-head' }, h('a', { href: '/online', class: 'button secondary' }, `← ${t('online.title')}`),
        h('h1', {}, rule.name)),
      settings(rule),
      numbers(rule),
      results(rule));
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

start();
