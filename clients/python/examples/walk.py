"""The five-minute walk: sign in, read the balance, verify the fixture NIN, verify a live NIN
asynchronously and requery it until it ended, then check webhook deliveries' signatures.

    IDVERIFY_BASE_URL=http://localhost:8080/v1 IDVERIFY_USERNAME=demo-admin IDVERIFY_PASSWORD=... \
      python3 clients/python/examples/walk.py

Prints one JSON object per line. IDVERIFY_WEBHOOK_FILES (optional, comma-separated) names JSON files
{"secret", "headers", "body"}, each a delivery as received. A delivery's timestamp must be within
IDVERIFY_WEBHOOK_TOLERANCE seconds of the clock (unset: 300, the verifier's replay window; 0: no
timestamp check, for deliveries saved earlier and verified now).
"""

import json
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from idverify import ApiError, Client, verify_webhook  # noqa: E402


def emit(line):
    print(json.dumps(line), flush=True)


def main():
    client = Client(os.environ.get("IDVERIFY_BASE_URL", "http://localhost:8080/v1"))
    client.login(os.environ["IDVERIFY_USERNAME"], os.environ["IDVERIFY_PASSWORD"])

    me = client.get_me()
    emit({"step": "me", "units": me["organisation"]["units"]})

    # A fixture NIN: a full sample record, nothing charged. The Idempotency-Key makes a retry safe.
    answer = client.verify_nin({"nin": "12345678901", "reason": "corporate"}, idempotency_key=str(uuid.uuid4()))
    emit({"step": "verify_nin", "answer": answer})

    # A live (simulated) NIN, asked without waiting: 202 pending at once, then requeried until it ended.
    pending = client.verify_nin({"nin": "23456789012", "reason": "corporate"}, idempotency_key=str(uuid.uuid4()), respond_async=True)
    try:
        final = client.requery_until_done(pending["reference_id"], interval=0.5, timeout=120)
    except ApiError as err:
        final = err.body  # an ended failure (not found, failed at the authority) is an answer too
    emit({"step": "requery", "answer": final})

    seconds = int(os.environ.get("IDVERIFY_WEBHOOK_TOLERANCE") or 300)
    tolerance = seconds if seconds > 0 else 2**62  # 0: a window wider than any clock, so no timestamp check
    for name in filter(None, (f.strip() for f in os.environ.get("IDVERIFY_WEBHOOK_FILES", "").split(","))):
        with open(name, encoding="utf-8") as f:
            delivery = json.load(f)
        emit({"step": "webhook", "valid": verify_webhook(delivery["body"], delivery["headers"], delivery["secret"], tolerance)})


if __name__ == "__main__":
    try:
        main()
    except ApiError as err:
        print("API error %d: %s (code %s, request id %s)" % (err.status, err.detail, err.code, err.request_id), file=sys.stderr)
        sys.exit(1)
