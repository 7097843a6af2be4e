// The editor's versions card: every save of the evaluator (number, author, time), each to view
// (the editor at ?version=N, read-only), to diff against the version shown, and to restore
// (saved again as the next version; its owner or an admin only).
import { api, get } from '../common/api.js';
import { t } from '../common/boot.js';
import { confirmDialog, fmtDate, h, mount, toast } from '../common/dom.js';

/** An evaluator version as lines to compare: name, description, the code on its own lines, then
 * the rest of the config as JSON. */
export function versionText(v) {
  const { code, ...rest } = v.config || {};
  return [`name: ${v.name}`, `description: ${v.description ?? ''}`, `type: ${v.type}`,
    ...(code !== undefined ? ['code:', ...String(code).split('\n')] : []),
    ...JSON.stringify(rest, null, 2).split('\n')];
}

/** Lines of `before` and `after` as [' ' | '-' | '+', line], by their longest common subsequence. */
export function lineDiff(before, after) {
  const n = before.length;
  const m = after.length;
  const common = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      common[i][j] = before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push([' ', before[i]]); i += 1; j += 1;
    } else if (i < n && (j === m || common[i + 1][j] >= common[i][j + 1])) {
      out.push(['-', before[i]]); i += 1; // what went before what came, as diff tools show it
    } else {
      out.push(['+', after[j]]); j += 1;
    }
  }
  return out;
}

function diffView(from, to) {
  const lines = lineDiff(versionText(from), versionText(to));
  const changed = lines.filter(([mark]) => mark !== ' ').length;
  return h('div', { class: 'version-diff', id: 'version-diff' },
    h('h3', {}, t('versions.diffTitle', { from: from.number, to: to.number })),
    changed ? h('pre', { class: 'diff', tabindex: 0, 'aria-label': t('versions.diffTitle', { from: from.number,
      to: to.number }) }, lines.map(([mark, line]) => h('span', { class: mark === '+' ? 'add' : mark === '-' ? 'del'
      : 'same' }, `${mark} ${line}\n`)))
      : h('p', { class: 'state empty' }, t('versions.same')));
}

/** The card; `shown` is the number of the version the editor shows, `canRestore` whether the
 * visitor may save this evaluator. */
export function versionsCard(evaluatorId, shown, canRestore) {
  const card = h('section', { class: 'card versions', id: 'versions-card' }, h('h2', {}, t('versions.title')));
  const diff = h('div');
  const draw = (versions) => {
    const current = versions.find((v) => v.current) || versions[0];
    const base = versions.find((v) => v.number === shown) || current;
    const row = (v) => h('tr', { dataset: { number: v.number } },
      h('td', { dataset: { label: t('versions.col.number') } }, t('versions.label', { number: v.number }),
        v.current ? h('span', { class: 'badge' }, t('versions.current')) : null),
      h('td', { dataset: { label: t('versions.col.author') } }, v.author || t('owned.nobody')),
      h('td', { dataset: { label: t('versions.col.createdAt') } }, fmtDate(v.createdAt)),
      h('td', { class: 'actions', dataset: { label: t('versions.col.actions') } },
        h('a', { href: `/evaluators/${evaluatorId}?version=${v.number}`, class: 'view-version' }, t('versions.view')),
        v.number !== base.number ? h('button', { type: 'button', class: 'link diff-version',
          onclick: () => mount(diff, diffView(v, base)) }, t('versions.diff', { number: base.number })) : null,
        canRestore && !v.current ? h('button', { type: 'button', class: 'link restore-version',
          onclick: () => restore(v) }, t('versions.restore')) : null));
    mount(card, h('h2', {}, t('versions.title')), h('div', { class: 'table-box' }, h('table', { class: 'table cards',
      id: 'versions-list' }, h('thead', {}, h('tr', {}, ['number', 'author', 'createdAt', 'actions'].map((k) =>
      h('th', {}, t(`versions.col.${k}`))))), h('tbody', {}, versions.map(row)))), diff);
  };
  async function restore(v) {
    if (!await confirmDialog(t('versions.restore'), t('versions.restoreConfirm', { number: v.number }),
      t('versions.restore'))) return;
    try {
      await api('PUT', `/api/v1/evaluators/${evaluatorId}`, { name: v.name, description: v.description,
        type: v.type, config: v.config });
      window.location.href = `/evaluators/${evaluatorId}?restored=${v.number}`; // the editor then says so
    } catch (err) {
      toast(t('common.error', { message: err.message }), 'error');
    }
  }
  get(`/api/v1/evaluators/${evaluatorId}/versions`).then(draw,
    (err) => card.append(h('p', { class: 'alert error' }, t('common.error', { message: err.message }))));
  return card;
}
