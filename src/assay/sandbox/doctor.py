"""``assay doctor``: which isolation layers this machine offers and whether code evaluators can run."""

from __future__ import annotations

from typing import Any

from assay.sandbox.confine import REQUIRED_LAYERS, probe_layers
from assay.sandbox.python.allowlist import ALLOWED_MODULES
from assay.sandbox.python.pool import WEAK_ENV, allow_weak_from_env


def diagnose() -> dict[str, Any]:
    """``{layers, python: {can_run, detail}, nodejs: {can_run, detail}, weak_mode}``."""
    layers = probe_layers()
    weak = allow_weak_from_env()
    missing = [name for name in REQUIRED_LAYERS if not layers.get(name, {}).get("available")]
    if not missing:
        py = {"can_run": True, "detail": "every required layer is available; imports allowed: "
              + ", ".join(ALLOWED_MODULES)}
    elif weak:
        py = {"can_run": True, "detail": f"WEAK MODE ({WEAK_ENV}=1): running without " + ", ".join(missing)}
    else:
        py = {"can_run": False, "detail": "missing required layers: " + ", ".join(missing)
              + f"; set {WEAK_ENV}=1 to run anyway (not for untrusted code)"}
    return {"layers": layers, "python": py, "nodejs": _node(py["can_run"]), "weak_mode": weak}


def _node(layers_ok: bool) -> dict[str, Any]:
    try:
        from assay.sandbox import node
    except ImportError as exc:
        return {"can_run": False, "detail": f"the Node.js sandbox is not installed ({exc})"}
    probe = getattr(node, "probe", None)
    if probe is None:
        return {"can_run": False, "detail": "the Node.js sandbox offers no probe"}
    info = probe()
    if not info.get("node"):
        return {"can_run": False, "detail": "`node` was not found on PATH (or ASSAY_NODE)"}
    absent = [name for name, version in info.get("modules", {}).items() if not version]
    if not info.get("isolated_vm") or absent:
        return {"can_run": False, "detail": f"node {info['node']}; missing: "
                + ", ".join((["isolated-vm"] if not info.get("isolated_vm") else []) + absent)
                + " (run `make node-deps`)"}
    state = "" if layers_ok else "; but required OS layers are missing"
    return {"can_run": layers_ok, "detail": f"node {info['node']}, isolated-vm and "
            + ", ".join(info.get("modules", {})) + state}
