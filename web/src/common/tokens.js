// A user's API tokens as the account and users pages show them: listed (prefix, label, when,
// revoked or live), revoked after a question, and issued with a label; a token just issued is
// shown once, to copy, and never again.
import { api, get } from './api.js';
import { t } from './boot.js';
import { confirmDialog, fmtDate, h, mount, toast } from './dom.js';

export function tokensPanel(user) {
  const panel = h('div', { class: 'tokens', dataset: { user: user.name } });
  const list = h('div', { class: 'table-box' });
  const shown = h('div', { class: 'issued', 'aria-live': 'polite' });
  const label = h('input', { class: 'token-label', maxlength: 200, 'aria-label': t('tokens.label'),
    placeholder: t('tokens.label') });
  const issue = h('button', { type: 'button', class: 'secondary issue-token' }, t('tokens.issue'));

  async function draw() {
    const tokens = await get(`/api/v1/users/${user.id}/tokens`);
    mount(list, tokens.length ? h('table', { class: 'table cards token-list' },
      h('thead', {}, h('tr', {}, ['prefix', 'label', 'createdAt', 'state', 'actions'].map((k) =>
        h('th', {}, t(`tokens.col.${k}`))))),
      h('tbody', {}, tokens.map((token) => h('tr', { dataset: { id: token.id } },
        h('td', { dataset: { label: t('tokens.col.prefix') } }, h('code', {}, `${token.prefix}…`)),
        h('td', { dataset: { label: t('tokens.col.label') } }, token.label || t('common.none')),
        h('td', { dataset: { label: t('tokens.col.createdAt') } }, fmtDate(token.createdAt)),
        h('td', { dataset: { label: t('tokens.col.state') } }, token.revokedAt
          ? t('tokens.revokedAt', { time: fmtDate(token.revokedAt) }) : t('tokens.live')),
        h('td', { dataset: { label: t('tokens.col.actions') } }, token.revokedAt ? null : h('button', {
          type: 'button', class: 'link danger revoke-token', onclick: () => revoke(token) }, t('tokens.revoke')))))))
      : h('p', { class: 'state empty' }, t('tokens.none')));
  }

  async function revoke(token) {
    if (!await confirmDialog(t('tokens.revoke'), t('tokens.revokeConfirm', { prefix: token.prefix, user: user.name }),
      t('tokens.revoke'))) return;
    try {
      await api('DELETE', `/api/v1/tokens/${token.id}`);
      await draw();
    } catch (err) {
      toast(t('common.error', { message: err.message }), 'error');
    }
  }

  issue.addEventListener('click', async () => {
    issue.disabled = true;
    try {
      const made = await api('POST', `/api/v1/users/${user.id}/tokens`, { label: label.value.trim() });
      label.value = '';
      const secret = h('input', { class: 'new-token mono', readOnly: true, value: made.token,
        'aria-label': t('tokens.newToken', { user: made.user }) });
      mount(shown, h('div', { class: 'alert warn', role: 'status' },
        h('p', {}, t('tokens.shownOnce', { user: made.user })), secret,
        h('button', { type: 'button', class: 'secondary', onclick: () => {
          secret.select();
          navigator.clipboard?.writeText(made.token).catch(() => {});
        } }, t('tokens.copy'))));
      await draw();
    } catch (err) {
      toast(t('common.error', { message: err.message }), 'error');
    } finally {
      issue.disabled = false;
    }
  });

  draw().catch((err) => mount(list, h('p', { class: 'alert error' }, t('common.error', { message: err.message }))));
  return mount(panel, shown, h('div', { class: 'toolbar' }, label, issue), list);
}
