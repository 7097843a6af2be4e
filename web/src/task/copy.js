// "Copy as mine" of a colleague's task: a task of the visitor's with the same dataset (and
// pinned version) and the same weighted evaluators, opened in the task form to change.
import { api } from '../common/api.js';
import { t } from '../common/boot.js';

export async function copyTask(task) {
  const made = await api('POST', '/api/v1/tasks', { name: t('owned.copyName', { name: task.name }),
    description: task.description, datasetId: task.datasetId, pinnedVersion: task.pinnedVersion,
    evaluators: task.evaluators.map((e) => ({ evaluatorId: e.evaluatorId, weight: e.weight })) });
  window.location.href = `/tasks/${made.id}/edit`;
}
