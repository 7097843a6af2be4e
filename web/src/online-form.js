// /online/new and /online/{id}/edit: an online rule's form (online/rule-form.js).
// /online/new?copy=ID starts from a copy of rule ID (another user's "Copy as mine").
import { get } from './common/api.js';
import { params, t } from './common/boot.js';
import { errorState, loading, mount } from './common/dom.js';
import { guardUnsaved } from './common/unsaved.js';
import { NEW_RULE, ruleForm } from './online/rule-form.js';

const root = document.getElementById('app');
const ruleId = params.id || null;
let form = null;

async function load() {
  const facts = await get('/pages/api/form-facts');
  if (ruleId) return { rule: await get(`/api/v1/online-rules/${ruleId}`), facts };
  const from = new URLSearchParams(window.location.search).get('copy');
  if (!from) return { rule: NEW_RULE, facts };
  const copied = await get(`/api/v1/online-rules/${encodeURIComponent(from)}`);
  return { rule: { ...copied, name: t('owned.copyName', { name: copied.name }) }, facts };
}

async function start() {
  mount(root, loading());
  try {
    const { rule, facts } = await load();
    form = ruleForm({ rule, ruleId, facts,
      onCopy: () => { window.location.href = `/online/new?copy=${encodeURIComponent(ruleId)}`; } });
    mount(root, form.el);
  } catch (err) {
    mount(root, errorState(err, start));
  }
}

guardUnsaved(root, () => Boolean(form && form.isDirty()));
start();
