"""``assay doctor``: which isolation layers this machine offers and whether code evaluators can run."""

from __future__ import annotations

from typing import Any

from assay.sandbox.confine import REQUIRED_LAYERS, probe_layers
from assay.sandbox.python.allowlist import ALLOWED_MODULES

_WEAK_HINT = "ASSAY_SANDBOX_ALLOW_WEAK=1"


def diagnose(weak: bool = False, node: str | None = None) -> dict[str, Any]:
    """``{layers, python: {can_run, detail}, nodejs: {can_run, detail}, weak_mode}`` for a
    sandbox opened with ``weak`` and the Node.js executable ``node`` (the settings'
    ``sandbox_allow_weak`` and ``node_binary``; None looks for ``node`` on ``PATH``)."""
    layers = probe_layers()
    missing = [name for name in REQUIRED_LAYERS if not layers.get(name, {}).get("available")]
    py: dict[str, Any]
    if not missing:
        py = {"can_run": True, "detail": "every required layer is available; imports allowed: "
              + ", ".join(ALLOWED_MODULES)}
    elif weak:
        py = {"can_run": True, "detail": f"WEAK MODE ({_WEAK_HINT}): running without " + ", ".join(missing)}
    else:
        py = {"can_run": False, "detail": "missing required layers: " + ", ".join(missing)
              + f"; set {_WEAK_HINT} to run anyway (not for untrusted code)"}
    return {"layers": layers, "python": py, "nodejs": _node(py["can_run"], node), "weak_mode": weak}


def _node(layers_ok: bool, node: str | None) -> dict[str, Any]:
    try:
        from assay.sandbox.node import probe
    except ImportError as exc:
        return {"can_run": False, "detail": f"the Node.js sandbox is not installed ({exc})"}
    info = probe(node)
    if not info.get("node"):
        return {"can_run": False, "detail": f"the configured Node.js executable {node!r} (ASSAY_NODE) was not "
                "found or did not run" if node else "`node` was not found on PATH"}
    absent = [name for name, version in info.get("modules", {}).items() if not version]
    if not info.get("isolated_vm") or absent:
        return {"can_run": False, "detail": f"node {info['node']}; missing: "
                + ", ".join((["isolated-vm"] if not info.get("isolated_vm") else []) + absent)
                + " (run `assay sandbox setup`, or `make node-deps` in a checkout)"}
    state = "" if layers_ok else "; but required OS layers are missing"
    return {"can_run": layers_ok, "detail": f"node {info['node']}, isolated-vm and "
            + ", ".join(info.get("modules", {})) + f" from {info.get('modules_dir')}" + state}
