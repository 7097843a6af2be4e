// Unsaved changes are not lost by accident: leaving the page (a link in it, a reload, closing
// the tab) while `isDirty()` asks first.
import { t } from './boot.js';

export function guardUnsaved(root, isDirty) {
  let leaving = false;
  window.addEventListener('beforeunload', (event) => {
    if (!leaving && isDirty()) {
      event.preventDefault();
      event.returnValue = '';
    }
  });
  root.addEventListener('click', (event) => {
    const link = event.target.closest('a[href]');
    if (!link || !isDirty()) return;
    if (window.confirm(t('editor.leaveWarning'))) leaving = true;
    else event.preventDefault();
  });
}
