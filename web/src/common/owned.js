// Shared work, one rule (server/ownership.py): everyone reads everything and runs any task;
// a row's creator and the admins change and delete it. A row the visitor may not change opens
// read-only under a banner naming its owner, with "Copy as mine".
import { api } from './api.js';
import { me, t } from './boot.js';
import { confirmDialog, h, mount } from './dom.js';

export { me };

/** Whether the visitor may change (and delete) `row` ({createdById}). */
export const mayChange = (row) => me.isAdmin || (row.createdById != null && row.createdById === me.id);

/** The banner over another user's row (`kind`: evaluator, task or dataset); `copy` makes the
 * visitor's own copy (omitted: no copy offered). */
export function ownerBanner(row, kind, copy) {
  return h('div', { class: 'alert info owner-banner', id: 'owner-banner', role: 'note' },
    h('span', {}, t(`owned.banner.${kind}`, { owner: row.owner || t('owned.nobody') })),
    copy ? h('button', { type: 'button', class: 'secondary', id: 'copy-as-mine', onclick: copy }, t('owned.copy'))
      : null);
}

const PLACES = { task: '/tasks/', run: '/runs/', evaluator: '/evaluators/', dataset: '/datasets/' };

/** An API refusal as the page shows it: the message, and each row in its way as a link. */
export function refusal(err) {
  const blocking = err.blocking || [];
  return h('div', { class: 'alert error refusal', role: 'alert', id: 'refusal' },
    h('p', {}, t('common.error', { message: err.message })),
    blocking.length ? h('ul', { class: 'blocking' }, blocking.map((row) => h('li', {},
      h('a', { href: `${PLACES[row.kind] || '/'}${row.id}` }, `${t(`owned.kind.${row.kind}`)} · ${row.name}`))))
      : null);
}

/** Asks (`text` says what goes with the row), then deletes; a refusal is shown in `holder`
 * with a link to each row in its way. `done` runs once the row is gone. */
export async function askThenDelete(path, title, text, done, holder) {
  if (!await confirmDialog(title, text, t('common.delete'))) return;
  try {
    await api('DELETE', path);
    done();
  } catch (err) {
    mount(holder, refusal(err));
  }
}
