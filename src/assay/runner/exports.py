"""Results in the shapes waza and Vally read, one module per peer:

- ``export_waza``: waza's ``EvaluationOutcome`` (Go edition), results as each run's
  ``validations`` (``validation`` is one result as waza's ``GraderResults``);
- ``export_vally``: Vally trial results, with ``result_to_vally`` / ``verdict_to_vally``.

Both export the runs as well as the verdicts, so ``assay run --results`` grades them again.
Neither tool has ``error`` or ``pending`` results, so those export with ``passed: false``,
``score: 0`` and assay's ``status`` and ``error`` code kept in ``details`` / ``metadata``:
a consumer that reads only ``passed`` sees them as not passed, and nothing is lost.
"""

from __future__ import annotations

from assay.runner.export_vally import export_vally, result_to_vally, verdict_to_vally
from assay.runner.export_waza import export_waza, validation

__all__ = ["export_vally", "export_waza", "result_to_vally", "validation", "verdict_to_vally"]
