// The upload box of the dataset page: a file dropped on it or chosen with the picker is checked
// (its suffix names a format the server reads, its size is within the server's limit), then
// sent as the dataset's next version with its progress shown. A refusal shows the server's
// message, which names the file's line (the row) and the field. A CSV or TSV file's header is
// read first (with the encoding it is in): without an `input` column, a mapping step comes first.
import { upload } from '../common/api.js';
import { t } from '../common/boot.js';
import { h, mount } from '../common/dom.js';
import { fmtBytes } from './format.js';
import { headerOf, mappingStep, needsMapping } from './mapping.js';

const MAPPED_SUFFIXES = ['.csv', '.tsv'];

/** "Version 2 saved: 300 rows. (read as GB18030 text)" */
export const uploadedText = (version) => t('dataset.uploaded', { number: version.number,
  rows: version.rowCount.toLocaleString() }) + (version.encoding ? ` ${t('dataset.readAs', { encoding: version.encoding })}` : '');

/** The drop zone; `onDone(version)` after an accepted upload. */
export function uploadBox(datasetId, facts, onDone) {
  const suffixes = facts.datasetSuffixes;
  const input = h('input', { type: 'file', id: 'file-input', class: 'visually-hidden', accept: suffixes.join(',') });
  const status = h('div', { class: 'upload-status', id: 'upload-status', 'aria-live': 'polite' });
  const zone = h('div', { class: 'dropzone', id: 'dropzone' },
    h('p', {}, t('dataset.dropHere')),
    h('label', { for: 'file-input', class: 'button secondary', id: 'choose-file' }, t('dataset.chooseFile')),
    input,
    h('p', { class: 'hint' }, t('dataset.formats', { suffixes: suffixes.join(' ') })),
    h('p', { class: 'hint', id: 'columns-hint' }, t('dataset.columnsHint')));
  let busy = false;

  function refuse(title, message) {
    mount(status, h('div', { class: 'alert error upload-error', role: 'alert', id: 'upload-error' },
      h('strong', {}, title), h('p', { class: 'mono' }, message)));
  }

  async function send(file) {
    if (busy) return;
    const dot = file.name.lastIndexOf('.');
    const suffix = dot >= 0 ? file.name.slice(dot).toLowerCase() : '';
    if (!suffixes.includes(suffix)) {
      refuse(t('dataset.uploadRefused', { name: file.name }), t('dataset.badSuffix', { suffixes: suffixes.join(' ') }));
      return;
    }
    if (file.size > facts.maxUploadBytes) {
      refuse(t('dataset.uploadRefused', { name: file.name }), t('dataset.tooLarge',
        { size: fmtBytes(file.size), limit: fmtBytes(facts.maxUploadBytes) }));
      return;
    }
    busy = true;
    zone.classList.add('busy');
    if (MAPPED_SUFFIXES.includes(suffix)) {
      let head;
      try {
        head = await headerOf(file);
      } catch (err) {
        refuse(t('dataset.uploadRefused', { name: file.name }), err.message);
        done();
        return;
      }
      if (needsMapping(head.columns)) {
        zone.classList.remove('busy'); // (dimmed while sending; the form is the next step, not a wait)
        mount(status, mappingStep(file, head, (params) => sendAs(file, params), () => {
          mount(status);
          done();
        }));
        return;
      }
    }
    await sendAs(file, '');
  }

  function done() {
    busy = false;
    zone.classList.remove('busy');
    input.value = '';
  }

  async function sendAs(file, mapping) {
    zone.classList.add('busy');
    const bar = h('progress', { id: 'upload-progress', max: 100, value: 0, 'aria-label': t('dataset.uploading',
      { name: file.name }) });
    const words = h('span', { id: 'upload-words' }, t('dataset.uploading', { name: file.name }));
    mount(status, h('div', { class: 'progress-row' }, bar, words));
    try {
      const query = `filename=${encodeURIComponent(file.name)}${mapping ? `&${mapping}` : ''}`;
      const version = await upload(`/api/v1/datasets/${datasetId}/versions?${query}`,
        file, (sent, total) => {
          const share = total ? sent / total : 1;
          bar.value = Math.round(share * 100);
          words.textContent = share < 1 ? t('dataset.uploadProgress', { name: file.name, pct: bar.value,
            sent: fmtBytes(sent), total: fmtBytes(total) }) : t('dataset.reading', { name: file.name });
        });
      mount(status, h('p', { class: 'upload-done', id: 'upload-done', role: 'status' }, uploadedText(version)));
      onDone(version);
    } catch (err) {
      refuse(t('dataset.uploadRefused', { name: file.name }), err.message);
    } finally {
      done();
    }
  }

  input.addEventListener('change', () => input.files[0] && send(input.files[0]));
  zone.addEventListener('dragover', (event) => {
    event.preventDefault(); // without it the browser opens the dropped file instead
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    const file = event.dataTransfer?.files?.[0];
    if (file) send(file);
  });
  return h('div', { class: 'upload' }, zone, status);
}
