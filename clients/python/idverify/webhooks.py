"""Checks a webhook delivery's signatures: Standard Webhooks and Idverify-Signature.

Pass the body exactly as received (bytes or str), before any JSON parsing, and the headers as a
mapping (any case: names are looked up lower-cased).
"""

import base64
import binascii
import hashlib
import hmac
import time
from typing import Mapping, Optional, Union

DEFAULT_TOLERANCE_SECONDS = 300

Body = Union[bytes, str]


def _bytes(body: Body) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def _lower(headers: Mapping[str, str]) -> dict:
    return {str(k).lower(): v for k, v in headers.items()}


def _fresh(timestamp: str, tolerance: int, now: Optional[float]) -> bool:
    # Digits only: "+1e9" or " 12" are not a Unix time a sender writes.
    if not timestamp.isdigit() or len(timestamp) > 12:
        return False
    current = time.time() if now is None else now
    return abs(current - int(timestamp)) <= tolerance


def standard_webhooks_key(secret: str) -> bytes:
    """The HMAC key Standard Webhooks uses: the bytes the base64 after ``whsec_`` encodes.

    Secrets are shown as standard padded base64; an endpoint's secret made before that form is URL-safe
    base64 without padding, and the service decodes both alphabets, padded or not, so this does too.
    A secret that is not base64 at all is used as its UTF-8 bytes."""
    if secret.startswith("whsec_"):
        tail = secret[len("whsec_"):].translate(str.maketrans("-_", "+/"))
        try:
            return base64.b64decode(tail + "=" * (-len(tail) % 4), validate=True)
        except (binascii.Error, ValueError):
            pass
    return secret.encode("utf-8")


def verify_standard_webhook(
    body: Body, headers: Mapping[str, str], secret: str, tolerance: int = DEFAULT_TOLERANCE_SECONDS, now: Optional[float] = None
) -> bool:
    """True when one ``v1,<base64>`` of ``webhook-signature`` is the HMAC-SHA256 of
    ``{webhook-id}.{webhook-timestamp}.{body}`` keyed with the secret's decoded bytes, and the
    timestamp is within ``tolerance`` seconds of ``now`` (default: the clock)."""
    h = _lower(headers)
    msg_id, timestamp, signature = h.get("webhook-id"), h.get("webhook-timestamp"), h.get("webhook-signature")
    if not msg_id or not timestamp or not signature or not _fresh(timestamp, tolerance, now):
        return False
    signed = ("%s.%s." % (msg_id, timestamp)).encode("utf-8") + _bytes(body)
    expected = base64.b64encode(hmac.new(standard_webhooks_key(secret), signed, hashlib.sha256).digest()).decode("ascii")
    ok = False
    for entry in signature.split(" "):
        version, _, value = entry.partition(",")
        # Every entry is compared, in constant time: no early exit tells which one matched.
        if version == "v1" and hmac.compare_digest(value.encode("ascii", "replace"), expected.encode("ascii")):
            ok = True
    return ok


def verify_idverify_signature(
    body: Body, header: str, secret: str, tolerance: int = DEFAULT_TOLERANCE_SECONDS, now: Optional[float] = None
) -> bool:
    """True when one ``v1=`` of ``Idverify-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`` is the
    HMAC-SHA256 of ``"<t>.<body>"`` keyed with the whole secret string (``whsec_`` included), and
    ``t`` is within ``tolerance`` seconds of ``now``."""
    parts = [p.strip().partition("=") for p in (header or "").split(",")]
    timestamps = [v for k, _, v in parts if k == "t"]
    if len(timestamps) != 1 or not _fresh(timestamps[0], tolerance, now):
        return False
    signed = ("%s." % timestamps[0]).encode("utf-8") + _bytes(body)
    expected = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    ok = False
    for k, _, v in parts:
        if k == "v1" and hmac.compare_digest(v.encode("ascii", "replace"), expected.encode("ascii")):
            ok = True
    return ok


def verify_webhook(
    body: Body, headers: Mapping[str, str], secret: str, tolerance: int = DEFAULT_TOLERANCE_SECONDS, now: Optional[float] = None
) -> bool:
    """A delivery is valid when every scheme it carries verifies (``webhook-signature`` and/or
    ``idverify-signature``), and it carries at least one: a delivery whose two signatures disagree
    was altered, whichever one a receiver happens to check."""
    h = _lower(headers)
    present = 0
    if "webhook-signature" in h:
        present += 1
        if not verify_standard_webhook(body, h, secret, tolerance, now):
            return False
    if "idverify-signature" in h:
        present += 1
        if not verify_idverify_signature(body, h["idverify-signature"], secret, tolerance, now):
            return False
    return present > 0
