// /tasks: every task, with its dataset size and evaluators.
import { get } from './common/api.js';
import { t } from './common/boot.js';
import { errorState, fmtDate, h, loading, mount } from './common/dom.js';

const root = document.getElementById('app');

async function render() {
  const body = h('section', {}, loading());
  mount(root, h('div', { class: 'page-head' }, h('h1', {}, t('tasks.title'))), body);
  try {
    const tasks = await get('/api/v1/tasks');
    if (tasks.length === 0) {
      mount(body, h('div', { class: 'state empty' }, h('p', {}, t('tasks.empty'))));
      return;
    }
    mount(body, h('table', { class: 'table' },
      h('thead', {}, h('tr', {}, ['name', 'samples', 'evaluators', 'updatedAt'].map((k) => h('th', {},
        t(`tasks.col.${k}`))))),
      h('tbody', {}, tasks.map((task) => h('tr', {},
        h('td', {}, h('a', { href: `/tasks/${task.id}` }, task.name)),
        h('td', { class: 'num' }, task.sampleCount),
        h('td', {}, task.evaluators.map((e) => e.name).join(', ')),
        h('td', {}, fmtDate(task.updatedAt)))))));
  } catch (err) {
    mount(body, errorState(err, render));
  }
}

render();
