// /account: who is signed in, their role, and their own API tokens (issue, revoke); an admin
// finds the users page from here.
import { t } from './common/boot.js';
import { h, mount } from './common/dom.js';
import { me } from './common/owned.js';
import { tokensPanel } from './common/tokens.js';

const root = document.getElementById('app');
mount(root,
  h('div', { class: 'page-head' }, h('h1', {}, t('account.title')), h('div', { class: 'spacer' }),
    me.isAdmin ? h('a', { href: '/users', class: 'button secondary', id: 'manage-users' }, t('users.title')) : null),
  h('p', { class: 'meta', id: 'who' }, t('account.who', { name: me.name }), ' · ',
    t(me.isAdmin ? 'users.role.admin' : 'users.role.user')),
  h('section', { class: 'card' }, h('h2', {}, t('tokens.title')), h('p', { class: 'hint' }, t('tokens.hint')),
    tokensPanel({ id: me.id, name: me.name })));
