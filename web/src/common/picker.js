// A searchable list to pick from: a search box and the first matches, each with a button that
// picks it. The evaluator picker (composite and task forms) and the dataset picker are both this.
import { t } from './boot.js';
import { h, mount } from './dom.js';

/**
 * `find(words)` resolves to the matches (`none` says there are none); `describe(item)` is the hint
 * beside an item's name;
 * `onPick(item)` is called with the item picked. The list is searched again after each pick
 * (so that `find` may leave out what is picked already). Enter in the search box picks the
 * first match of what is typed (never submits the form around it).
 */
export function searchPicker({ id, placeholder, find, none, describe = () => '', onPick, prefix = '+ ' }) {
  const input = h('input', { type: 'search', id: `${id}-search`, placeholder, 'aria-label': placeholder,
    maxlength: 200 });
  const results = h('ul', { class: 'pick-results', id: `${id}-results` });
  let timer;
  let asked = 0;
  async function search() {
    const mine = ++asked; // an older, slower answer never overwrites a newer one
    try {
      const found = await find(input.value.trim());
      if (mine !== asked) return false;
      mount(results, found.length ? found.map((item) => h('li', {},
        h('button', { type: 'button', class: 'link pick', dataset: { id: item.id }, onclick: async () => {
          await onPick(item);
          search();
        } }, `${prefix}${item.name}`),
        h('span', { class: 'hint' }, ` ${describe(item)}`))) : h('li', { class: 'hint' }, none));
      return true;
    } catch (err) {
      if (mine === asked) mount(results, h('li', { class: 'bad' }, err.message));
      return false;
    }
  }
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(search, 200); });
  input.addEventListener('keydown', async (event) => {
    if (event.key !== 'Enter' || event.isComposing) return; // isComposing: Enter ends an IME's word
    event.preventDefault();
    clearTimeout(timer);
    if (await search()) results.querySelector('button.pick')?.click();
  });
  search();
  return h('div', { class: 'picker' }, input, results);
}
