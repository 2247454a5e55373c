"""The one error type every failed call raises."""

from typing import Any, Optional


class ApiError(Exception):
    """A non-2xx answer.

    ``status`` is the HTTP status, ``detail`` the service's message (every error body carries one),
    ``code`` its machine-readable code where the API gives one (``vnin_expired``, ``mfa_required``,
    ``insufficient_scope``...; None otherwise), ``body`` the parsed body as it came (for the token
    endpoint's OAuth ``error``, or a failed verification's ``reference_id``), ``request_id`` the
    ``X-Request-Id`` to quote to support.
    """

    def __init__(self, status: int, body: Any, request_id: Optional[str] = None, operation: str = "") -> None:
        self.status = status
        self.body = body
        self.request_id = request_id
        self.operation = operation
        detail = body.get("detail") if isinstance(body, dict) else None
        self.detail = detail if isinstance(detail, str) else "HTTP %d" % status
        code = body.get("code") if isinstance(body, dict) else None
        self.code = code if isinstance(code, str) else None
        super().__init__("%s: %d %s" % (operation or "request", status, self.detail))

    @property
    def reference_id(self) -> Optional[str]:
        """A verification whose outcome is unknown (502/504) names its reference: requery it later."""
        ref = self.body.get("reference_id") if isinstance(self.body, dict) else None
        return ref if isinstance(ref, str) else None
