"""Python client for the Identity Verification and Wallet API (standard library only, Python 3.9+)."""

from .client import Client, Response
from .errors import ApiError
from .webhooks import standard_webhooks_key, verify_idverify_signature, verify_standard_webhook, verify_webhook

__all__ = [
    "ApiError",
    "Client",
    "Response",
    "standard_webhooks_key",
    "verify_idverify_signature",
    "verify_standard_webhook",
    "verify_webhook",
]
