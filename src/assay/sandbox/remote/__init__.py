"""The sandbox as a service, client side: ``RemoteCodeRunner`` runs code evaluators in the
sandbox service (``assay sandbox serve``, package ``assay.sandbox_service``) instead of the local
pool, and ``wire`` holds the HTTP shapes both sides share."""

from assay.sandbox.remote.client import RemoteCodeRunner

__all__ = ["RemoteCodeRunner"]
