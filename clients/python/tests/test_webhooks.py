import base64
import hashlib
import hmac
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from idverify import standard_webhooks_key, verify_idverify_signature, verify_standard_webhook, verify_webhook  # noqa: E402

NOW = 1_780_000_000
SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
OLD_SECRET = "whsec_" + base64.b64encode(bytes(range(100, 132))).decode()
BODY = '{"id":"evt_1","type":"ping","created_at":"2026-06-01T00:00:00Z","data":{"endpoint_id":"we_1"}}'


def std_sig(secret, msg_id, ts, body):
    key = base64.b64decode(secret[len("whsec_"):])
    mac = hmac.new(key, ("%s.%s.%s" % (msg_id, ts, body)).encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def our_sig(secret, ts, body):
    return hmac.new(secret.encode(), ("%s.%s" % (ts, body)).encode(), hashlib.sha256).hexdigest()


def delivery(secrets=(SECRET,), ts=NOW, body=BODY):
    return {
        "webhook-id": "evt_1",
        "webhook-timestamp": str(ts),
        "webhook-signature": " ".join(std_sig(s, "evt_1", ts, body) for s in secrets),
        "idverify-signature": "t=%d," % ts + ",".join("v1=" + our_sig(s, ts, body) for s in secrets),
    }


class StandardWebhooksTest(unittest.TestCase):
    def test_the_specifications_published_example_verifies(self):
        # The Standard Webhooks specification's test vector: what every library of that scheme checks.
        headers = {
            "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "webhook-timestamp": "1614265330",
            "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        }
        self.assertTrue(verify_standard_webhook('{"test": 2432232314}', headers, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now=1614265330))
        self.assertFalse(verify_standard_webhook('{"test": 2432232315}', headers, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now=1614265330))

    def test_a_signed_delivery_verifies(self):
        self.assertTrue(verify_standard_webhook(BODY, delivery(), SECRET, now=NOW))
        self.assertTrue(verify_standard_webhook(BODY.encode(), delivery(), SECRET, now=NOW))

    def test_header_names_are_case_insensitive(self):
        headers = {k.title(): v for k, v in delivery().items()}
        self.assertTrue(verify_standard_webhook(BODY, headers, SECRET, now=NOW))
        self.assertTrue(verify_webhook(BODY, headers, SECRET, now=NOW))

    def test_during_a_rotation_either_secret_verifies(self):
        headers = delivery(secrets=(SECRET, OLD_SECRET))
        self.assertEqual(len(headers["webhook-signature"].split(" ")), 2)
        self.assertTrue(verify_standard_webhook(BODY, headers, SECRET, now=NOW))
        self.assertTrue(verify_standard_webhook(BODY, headers, OLD_SECRET, now=NOW))
        self.assertFalse(verify_standard_webhook(BODY, delivery(), OLD_SECRET, now=NOW))

    def test_a_tampered_body_or_id_fails(self):
        self.assertFalse(verify_standard_webhook(BODY.replace("ping", "pong"), delivery(), SECRET, now=NOW))
        headers = dict(delivery(), **{"webhook-id": "evt_2"})
        self.assertFalse(verify_standard_webhook(BODY, headers, SECRET, now=NOW))

    def test_an_old_or_future_timestamp_fails(self):
        self.assertFalse(verify_standard_webhook(BODY, delivery(ts=NOW - 301), SECRET, now=NOW))
        self.assertFalse(verify_standard_webhook(BODY, delivery(ts=NOW + 301), SECRET, now=NOW))
        self.assertTrue(verify_standard_webhook(BODY, delivery(ts=NOW - 301), SECRET, tolerance=600, now=NOW))

    def test_missing_headers_fail(self):
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            headers = delivery()
            del headers[name]
            self.assertFalse(verify_standard_webhook(BODY, headers, SECRET, now=NOW), name)


    def test_the_key_is_the_decoded_secret_or_else_its_bytes(self):
        self.assertEqual(standard_webhooks_key(SECRET), bytes(range(32)))
        # An older secret in URL-safe base64 without padding keys with the bytes it encodes, as the
        # service's own decoder reads it.
        self.assertEqual(standard_webhooks_key("whsec_TA9RT62r_EyFkPaU").hex(), "4c0f514fadabfc4c8590f694")
        self.assertEqual(standard_webhooks_key("whsec_not base64!"), b"whsec_not base64!")


class IdverifySignatureTest(unittest.TestCase):
    def test_keyed_with_the_whole_secret_string(self):
        header = delivery()["idverify-signature"]
        self.assertTrue(verify_idverify_signature(BODY, header, SECRET, now=NOW))
        # Keyed with the decoded bytes (the Standard Webhooks key) it must not verify.
        key = base64.b64decode(SECRET[len("whsec_"):])
        wrong = "t=%d,v1=%s" % (NOW, hmac.new(key, ("%d.%s" % (NOW, BODY)).encode(), hashlib.sha256).hexdigest())
        self.assertFalse(verify_idverify_signature(BODY, wrong, SECRET, now=NOW))

    def test_rotation_with_two_signatures(self):
        header = delivery(secrets=(OLD_SECRET, SECRET))["idverify-signature"]
        self.assertTrue(verify_idverify_signature(BODY, header, SECRET, now=NOW))
        self.assertTrue(verify_idverify_signature(BODY, header, OLD_SECRET, now=NOW))
        self.assertFalse(verify_idverify_signature(BODY, header, "whsec_other", now=NOW))

    def test_tampered_body_and_old_timestamp_fail(self):
        header = delivery()["idverify-signature"]
        self.assertFalse(verify_idverify_signature(BODY + " ", header, SECRET, now=NOW))
        self.assertFalse(verify_idverify_signature(BODY, delivery(ts=NOW - 301)["idverify-signature"], SECRET, now=NOW))
        self.assertFalse(verify_idverify_signature(BODY, "v1=abc", SECRET, now=NOW))
        self.assertFalse(verify_idverify_signature(BODY, "", SECRET, now=NOW))


class VerifyWebhookTest(unittest.TestCase):
    def test_valid_when_every_scheme_present_verifies(self):
        self.assertTrue(verify_webhook(BODY, delivery(), SECRET, now=NOW))
        only_ours = {"idverify-signature": delivery()["idverify-signature"]}
        self.assertTrue(verify_webhook(BODY, only_ours, SECRET, now=NOW))
        only_std = {k: v for k, v in delivery().items() if k != "idverify-signature"}
        self.assertTrue(verify_webhook(BODY, only_std, SECRET, now=NOW))

    def test_one_failing_scheme_fails_the_delivery(self):
        headers = dict(delivery(), **{"idverify-signature": "t=%d,v1=%s" % (NOW, "0" * 64)})
        self.assertFalse(verify_webhook(BODY, headers, SECRET, now=NOW))
        headers = dict(delivery(), **{"webhook-signature": "v1," + base64.b64encode(b"x" * 32).decode()})
        self.assertFalse(verify_webhook(BODY, headers, SECRET, now=NOW))

    def test_no_signature_at_all_fails(self):
        self.assertFalse(verify_webhook(BODY, {"content-type": "application/json"}, SECRET, now=NOW))


if __name__ == "__main__":
    unittest.main()
