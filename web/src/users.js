// /users (admins): create users, set their roles, issue and revoke their tokens (a token is
// shown once). A plain user is told it is an admin's page and sent to their own tokens.
import { api, get } from './common/api.js';
import { t } from './common/boot.js';
import { confirmDialog, errorState, fmtDate, h, loading, mount, toast } from './common/dom.js';
import { me } from './common/owned.js';
import { tokensPanel } from './common/tokens.js';

const root = document.getElementById('app');
const problem = h('div', { id: 'users-problem' });

function createForm() {
  const name = h('input', { id: 'new-user-name', maxlength: 200, required: true });
  const admin = h('input', { id: 'new-user-admin', type: 'checkbox' });
  const form = h('form', { class: 'toolbar', id: 'new-user' },
    h('label', { class: 'inline', for: 'new-user-name' }, t('users.name')), name,
    h('label', { class: 'inline' }, admin, t('users.role.admin')),
    h('button', { type: 'submit', class: 'primary' }, t('users.create')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const made = await api('POST', '/api/v1/users', { name: name.value.trim(), isAdmin: admin.checked });
      toast(t('users.created', { name: made.name }));
      render(made.id);
    } catch (err) {
      mount(problem, h('p', { class: 'alert error', role: 'alert' }, t('common.error', { message: err.message })));
    }
  });
  return form;
}

function userRow(user, open) {
  const role = h('select', { class: 'role', 'aria-label': t('users.roleOf', { name: user.name }) },
    ['user', 'admin'].map((r) => h('option', { value: r, selected: (r === 'admin') === user.isAdmin },
      t(`users.role.${r}`))));
  role.addEventListener('change', async () => {
    try {
      await api('PATCH', `/api/v1/users/${user.id}`, { isAdmin: role.value === 'admin' });
      toast(t('users.roleSet', { name: user.name }));
    } catch (err) {
      role.value = user.isAdmin ? 'admin' : 'user';
      mount(problem, h('p', { class: 'alert error', role: 'alert' }, t('common.error', { message: err.message })));
    }
  });
  const tokens = h('details', { class: 'user-tokens', open }, h('summary', {}, t('users.tokens', {
    count: user.liveTokens ?? 0 })));
  tokens.addEventListener('toggle', () => {
    if (tokens.open && tokens.childElementCount === 1) tokens.append(tokensPanel(user));
  });
  if (open) tokens.append(tokensPanel(user));
  return h('tr', { dataset: { name: user.name }, class: user.active ? null : 'deactivated' },
    h('td', { class: 'name', dataset: { label: t('users.col.name') } }, user.name),
    h('td', { dataset: { label: t('users.col.role') } }, role),
    h('td', { dataset: { label: t('users.col.createdAt') } }, fmtDate(user.createdAt)),
    h('td', { dataset: { label: t('users.col.tokens') } }, user.active ? tokens : t('users.noTokens')),
    h('td', { dataset: { label: t('users.col.state') } }, activeCell(user)));
}

/** Active, or deactivated since when; an admin's button to deactivate (after saying what it
 * does) or activate again. */
function activeCell(user) {
  if (user.id === me.id) return t('users.active');
  const action = user.active ? 'deactivate' : 'activate';
  const button = h('button', { type: 'button', class: `secondary ${action}-user` }, t(`users.${action}`));
  button.addEventListener('click', async () => {
    if (user.active && !await confirmDialog(t('users.deactivate'), t('users.deactivateConfirm', { name: user.name }),
      t('users.deactivate'))) return;
    try {
      await api('POST', `/api/v1/users/${user.id}/${action}`);
      toast(t(`users.${action}d`, { name: user.name }));
      render();
    } catch (err) {
      mount(problem, h('p', { class: 'alert error', role: 'alert' }, t('common.error', { message: err.message })));
    }
  });
  return [user.active ? t('users.active') : t('users.deactivatedSince', { when: fmtDate(user.deactivatedAt) }),
    ' ', button];
}

async function render(openId = null) {
  if (!me.isAdmin) {
    mount(root, h('div', { class: 'state empty', role: 'alert' }, h('p', {}, t('users.adminsOnly')),
      h('a', { href: '/account', class: 'button primary' }, t('account.title'))));
    return;
  }
  let users;
  try {
    users = await get('/api/v1/users');
  } catch (err) {
    mount(root, errorState(err, () => render()));
    return;
  }
  mount(root, h('div', { class: 'page-head' }, h('h1', {}, t('users.title'))), problem,
    h('section', { class: 'card' }, h('h2', {}, t('users.create')), createForm()),
    h('section', { class: 'card' }, h('div', { class: 'table-box' }, h('table', { class: 'table cards', id: 'users' },
      h('thead', {}, h('tr', {}, ['name', 'role', 'createdAt', 'tokens', 'state'].map((k) => h('th', {},
        t(`users.col.${k}`))))),
      h('tbody', {}, users.map((u) => userRow(u, u.id === openId)))))));
}

mount(root, loading());
render();
