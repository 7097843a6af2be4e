"""The Node.js code-evaluator sandbox: persistent, OS-confined workers, each running one
evaluation at a time in a Compartment of its own, in an isolated-vm isolate locked down by SES.

One module per job, as in :mod:`assay.sandbox.python`:
``pool`` (``NodePool``: hand workers out, replace them), ``batch`` (a batch's chunks on the
workers: each sample's deadline, the watchdog, the rest of a chunk to a fresh worker),
``handle`` (one worker process: start it confined, lines in and out, kill), ``session`` (the
line protocol: hello, numbered requests, a batch's answers), ``outcome`` (a response into a
``CodeOutcome`` or a check's problem) and ``runtime`` (the ``node`` executable, the worker's
files, the libraries, ``probe`` for ``assay doctor``). ``worker.js`` (the protocol),
``evaluation.js`` (evaluations in an isolate), ``bootstrap.js`` (the harness of the isolate's
SES realm: what is shared and why it is safe) and ``libraries.js`` are the worker itself.
"""

from assay.sandbox.node.pool import NodePool
from assay.sandbox.node.runtime import LIBRARIES, NODE_DIR, find_node, probe

__all__ = ["LIBRARIES", "NODE_DIR", "NodePool", "find_node", "probe"]
