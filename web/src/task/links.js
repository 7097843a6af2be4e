// The task form's two pickers: the dataset (one, picked from a searchable list of /datasets)
// and the evaluators (picked from a searchable list, each with a weight, in order).
import { get, getPage } from '../common/api.js';
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { searchPicker } from '../common/picker.js';
import { evaluatorPicker } from '../editor/composite-form.js';

const versionText = (d) => (d.latest ? t('taskForm.datasetRows', { number: d.latest.number,
  rows: d.latest.rowCount.toLocaleString() }) : t('datasets.noVersion'));

/** A required group of controls with its legend, hint and error; `report(message)` shows the
 * error (or clears it with null) and returns the problem to list, which focuses `focusEl()`. */
function group(id, legendKey, hintKey, focusEl, ...children) {
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  const el = h('fieldset', { class: 'group', id: `${id}-group`, 'aria-describedby': `${id}-hint` },
    h('legend', { class: 'required' }, t(legendKey)), h('p', { class: 'hint', id: `${id}-hint` }, t(hintKey)),
    ...children, error);
  const report = (message) => {
    error.hidden = !message;
    error.textContent = message || '';
    return message ? { label: t(legendKey), message, focus: () => focusEl().focus() } : null;
  };
  return { el, report };
}

/** The version a task's runs grade: the newest when each starts (null), or one pinned. */
function versionSelect(pinned) {
  let pin = pinned;
  const select = h('select', { id: 'dataset-version', onchange: () => { pin = select.value ? Number(select.value) : null; } });
  const fill = (dataset) => mount(select, h('option', { value: '' }, t('taskForm.newestVersion')),
    [...(dataset?.versions || [])].reverse().map((v) => h('option', { value: v.number, selected: v.number === pin },
      t('taskForm.datasetRows', { number: v.number, rows: v.rowCount.toLocaleString() }))));
  const el = h('p', { class: 'version-pick' }, h('label', { class: 'inline', for: 'dataset-version' },
    t('taskForm.version')), select);
  return {
    el,
    /** The versions of `dataset` (a dataset with its versions; null: none) to pick from. */
    show: async (dataset, keep) => {
      if (!keep) pin = null;
      fill(dataset);
      if (dataset && !dataset.versions) fill(await get(`/api/v1/datasets/${dataset.id}`));
    },
    value: () => pin,
  };
}

/** The dataset field: what is picked (or nothing yet), the version its runs grade, and the
 * list to pick from. `picked` is a dataset with its versions; `pinned` a version number or null. */
export function datasetField(picked, pinned = null) {
  let chosen = picked;
  const version = versionSelect(pinned);
  version.show(picked, true);
  const shown = h('p', { class: 'picked-dataset', id: 'dataset' });
  const draw = () => mount(shown, chosen ? [h('a', { href: `/datasets/${chosen.id}`, class: 'name',
    id: 'dataset-link' }, chosen.name), h('span', { class: 'hint' }, ` ${versionText(chosen)}`)]
    : h('span', { class: 'hint' }, t('taskForm.noDataset')));
  draw();
  const picker = searchPicker({
    id: 'dataset-picker',
    placeholder: t('taskForm.datasetSearch'),
    none: t('taskForm.datasetNone'),
    prefix: '',
    recent: 'dataset',
    find: async (q, limit) => {
      const { items, total } = await getPage(`/api/v1/datasets?${new URLSearchParams({ q, sort: 'updatedAt',
        order: 'desc', limit: String(limit + 1) })}`);
      const others = items.filter((d) => d.id !== chosen?.id); // the picked one is shown above
      return { items: others.slice(0, limit), total: total - (items.length - others.length) };
    },
    describe: versionText,
    onPick: (d) => {
      chosen = d;
      draw();
      version.show(d, false);
      field.report(null);
      shown.dispatchEvent(new Event('input', { bubbles: true }));
    },
  });
  const field = group('dataset', 'taskForm.dataset', 'taskForm.datasetHint',
    () => picker.querySelector('input'), shown, version.el, picker);
  return {
    el: field.el,
    value: () => chosen?.id ?? null,
    pinned: () => version.value(),
    validate: () => [field.report(chosen ? null : t('taskForm.pickDataset'))].filter(Boolean),
  };
}

/** The evaluators with their weights: [{evaluatorId, name, type, weight}] to start from. */
export function evaluatorLinks(links, maxWeight) {
  const picked = links.map((l) => ({ ...l }));
  const list = h('ul', { class: 'picked', id: 'picked' });
  let reports = [];

  function draw() {
    reports = [];
    mount(list, picked.length ? picked.map((link, i) => {
      const weight = h('input', { type: 'number', min: 0, max: maxWeight, step: 'any', class: 'weight',
        id: `weight-${i}`, value: link.weight, 'aria-label': t('form.weightOf', { name: link.name }),
        oninput: (event) => {
          link.weight = event.target.value;
          reports[i](null);
        } });
      const error = h('span', { class: 'field-error', id: `weight-${i}-error`, hidden: true });
      reports.push((message) => {
        error.hidden = !message;
        error.textContent = message || '';
        if (message) weight.setAttribute('aria-invalid', 'true');
        else weight.removeAttribute('aria-invalid');
        return message ? { label: t('form.weightOf', { name: link.name }), message, focus: () => weight.focus() }
          : null;
      });
      return h('li', { class: 'picked-row', dataset: { id: link.evaluatorId } },
        h('a', { class: 'name', href: `/evaluators/${link.evaluatorId}` }, link.name),
        h('span', { class: 'hint' }, t(`type.${link.type}`)),
        h('label', { class: 'inline', for: `weight-${i}` }, t('form.weight')), weight,
        h('button', { type: 'button', class: 'link danger remove', 'aria-label': t('form.removeOf', { name: link.name }),
          onclick: () => {
            picked.splice(i, 1);
            draw();
            list.dispatchEvent(new Event('input', { bubbles: true }));
          } }, t('schema.remove')), error);
    }) : h('li', { class: 'hint' }, t('form.noChildren')));
  }
  draw();
  const picker = evaluatorPicker((e) => {
    picked.push({ evaluatorId: e.id, name: e.name, type: e.type, weight: 1 });
    draw();
    box.report(null);
    list.dispatchEvent(new Event('input', { bubbles: true }));
  }, { id: 'evaluator-picker', exclude: (e) => picked.some((p) => p.evaluatorId === e.id) });
  const box = group('evaluators', 'taskForm.evaluators', 'taskForm.evaluatorsHint',
    () => picker.querySelector('input'), list, picker);
  const bad = (w) => (w === '' || !Number.isFinite(Number(w)) || Number(w) < 0 || Number(w) > maxWeight);
  return {
    el: box.el,
    value: () => picked.map((l) => ({ evaluatorId: l.evaluatorId, weight: Number(l.weight) })),
    validate() {
      const problems = [box.report(picked.length ? null : t('form.pickAtLeastOne'))];
      picked.forEach((link, i) => problems.push(reports[i](bad(link.weight)
        ? t('form.range', { min: 0, max: maxWeight.toLocaleString() }) : null)));
      return problems.filter(Boolean);
    },
  };
}
