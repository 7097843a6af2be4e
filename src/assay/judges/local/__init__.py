"""The local judge: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server on
127.0.0.1, for trying assay's LLM evaluators without a key and for the tests.

It is a toy judge: a 135-million-parameter model answers in the right shape but is wrong
about as often as a coin (see README, "A local judge"). Never grade anything that matters with it.

- ``find``: where the model file and the server package are, or why they are missing;
- ``serve``: run the server in this process until told to stop (``assay judge serve-local``);
- ``LocalJudge``: that command as a child process, its address read off its first line and
  stopped by its pid (the demo, the tests, the benchmark).
"""

from assay.judges.local.find import INSTALL_HINT, MODEL_NAME, MODEL_WHEEL, LocalJudgeMissing, model_path
from assay.judges.local.process import LocalJudge
from assay.judges.local.serve import LocalOptions, serve

__all__ = ["INSTALL_HINT", "MODEL_NAME", "MODEL_WHEEL", "LocalJudge", "LocalJudgeMissing", "LocalOptions",
           "model_path", "serve"]
