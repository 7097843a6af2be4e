"""The sandbox service (``assay sandbox serve``): the local sandbox behind HTTP, so that untrusted
evaluator code runs on its own machines and the API servers only send it requests.

An edge, like ``assay.server``: ``app`` (routes), ``guard`` (the bearer secret and the body
limit, before anything is parsed), ``admission`` (the bounded queue, off the event loop) and
``evaluate`` (the product spec's ``/execute``, graded by the ``code`` grader). The wire shapes
and the client, ``RemoteCodeRunner``, are in ``assay.sandbox.remote``.
"""

from assay.sandbox_service.app import ServiceOptions, create_app

__all__ = ["ServiceOptions", "create_app"]
