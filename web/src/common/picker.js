// A searchable list to pick from: a search box and the first matches, each with a button that
// picks it. The evaluator picker (composite and task forms) and the dataset picker are both this.
// What this browser picked lately comes first, the rest in pinyin order (Chinese names by their
// reading, not by code point), and a line says how many more a search would find.
import { lang, t } from './boot.js';
import { h, mount } from './dom.js';

const SHOWN = 8;
const RECENT_KEPT = 20;
const collator = new Intl.Collator(lang === 'zh' ? 'zh-CN-u-co-pinyin' : 'en', { numeric: true });

/** The ids picked lately under `key`, the latest first (this browser's, from localStorage). */
function recentIds(key) {
  try {
    const ids = JSON.parse(window.localStorage.getItem(`assay_recent_${key}`) || '[]');
    return Array.isArray(ids) ? ids.filter((id) => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

function remember(key, id) {
  try {
    const ids = [id, ...recentIds(key).filter((x) => x !== id)].slice(0, RECENT_KEPT);
    window.localStorage.setItem(`assay_recent_${key}`, JSON.stringify(ids));
  } catch {
    // storage full or disabled: the order is only a convenience
  }
}

/** The items picked lately first (latest first), then the others by name in pinyin order. */
export function ordered(items, recent) {
  const rank = new Map(recent.map((id, i) => [id, i]));
  return [...items].sort((a, b) => (rank.get(a.id) ?? Infinity) - (rank.get(b.id) ?? Infinity)
    || collator.compare(a.name, b.name));
}

/**
 * `find(words, limit)` resolves to `{items, total}`: up to `limit` matches and how many there are
 * in all (`none` says there are none); `recent` names the list of picks remembered (the kind of
 * item); `describe(item)` is the hint beside an item's name;
 * `onPick(item)` is called with the item picked. The list is searched again after each pick
 * (so that `find` may leave out what is picked already). Enter in the search box picks the
 * first match of what is typed (never submits the form around it).
 */
export function searchPicker({ id, placeholder, find, none, recent, describe = () => '', onPick, prefix = '+ ' }) {
  const input = h('input', { type: 'search', id: `${id}-search`, placeholder, 'aria-label': placeholder,
    maxlength: 200 });
  const results = h('ul', { class: 'pick-results', id: `${id}-results` });
  let timer;
  let asked = 0;
  async function search() {
    const mine = ++asked; // an older, slower answer never overwrites a newer one
    try {
      const { items, total } = await find(input.value.trim(), RECENT_KEPT);
      if (mine !== asked) return false;
      const found = ordered(items, recentIds(recent)).slice(0, SHOWN);
      const more = total - found.length;
      mount(results, found.length ? found.map((item) => h('li', {},
        h('button', { type: 'button', class: 'link pick', dataset: { id: item.id }, onclick: async () => {
          remember(recent, item.id);
          await onPick(item);
          search();
        } }, `${prefix}${item.name}`),
        h('span', { class: 'hint' }, ` ${describe(item)}`))) : h('li', { class: 'hint' }, none),
      more > 0 ? h('li', { class: 'hint pick-more', id: `${id}-more` }, t('picker.more', { n: more })) : null);
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
