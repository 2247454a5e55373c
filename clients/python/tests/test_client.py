import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from idverify import ApiError, Client  # noqa: E402


class FakeApi:
    """A local server standing in for the API: it counts sign-ins and answers from a script."""

    def __init__(self):
        self.logins = []
        self.requests = []
        self.expires_in = 3600
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=None):
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                fake.requests.append(("POST", self.path, dict(self.headers), body))
                if self.path == "/v1/login":
                    form = {k: v[0] for k, v in parse_qs(body).items()}
                    fake.logins.append(form)
                    if form.get("password") == "wrong":
                        return self.answer(401, {"detail": "Incorrect username or password", "error": "invalid_grant", "error_description": "x"})
                    token = "tok-%d" % len(fake.logins)
                    return self.answer(200, {"access_token": token, "token_type": "bearer", "expires_in": fake.expires_in, "scope": ""})
                if self.path == "/v1/verify-nin/vnin":
                    return self.answer(404, {"detail": "This vNIN has expired", "code": "vnin_expired"}, {"X-Request-Id": "req-1"})
                if self.path == "/v1/verify-nin":
                    if self.headers.get("Prefer") == "respond-async":
                        return self.answer(202, {"status": "pending", "message": "m", "reference_id": "REF-AAAAAAAAAAAA"})
                    return self.answer(200, {"status": "success", "data": {"nin": "12345678901"}})
                return self.answer(500, b"not json")

            def do_GET(self):
                fake.requests.append(("GET", self.path, dict(self.headers), ""))
                if self.path == "/v1/me":
                    return self.answer(200, {"organisation": {"units": 7}, "auth": self.headers.get("Authorization")})
                if self.path == "/healthz":
                    return self.answer(200, {"status": "ok"})
                return self.answer(404, {"detail": "Not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.base_url = "http://127.0.0.1:%d/v1" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.api = FakeApi()
        self.now = [1000.0]
        self.client = Client(self.api.base_url, clock=lambda: self.now[0], refresh_margin=60)

    def tearDown(self):
        self.api.close()

    def test_the_token_is_renewed_before_it_expires(self):
        self.client.login("ada", "pw")
        self.assertEqual(self.client.get_me()["auth"], "Bearer tok-1")
        self.now[0] += 3600 - 61  # still more than the margin left: the same token
        self.assertEqual(self.client.get_me()["auth"], "Bearer tok-1")
        self.now[0] += 2  # within the margin: signs in again first
        self.assertEqual(self.client.get_me()["auth"], "Bearer tok-2")
        self.assertEqual(len(self.api.logins), 2)
        self.assertEqual(self.api.logins[1], {"username": "ada", "password": "pw"})

    def test_client_credentials_are_renewed_too(self):
        self.client.login_client("cli_1", "s3cret", scope="verify")
        self.now[0] += 3600
        self.assertEqual(self.client.get_me()["auth"], "Bearer tok-2")
        self.assertEqual(self.api.logins[1], {"grant_type": "client_credentials", "client_id": "cli_1", "client_secret": "s3cret", "scope": "verify"})

    def test_a_login_with_a_one_time_code_is_not_repeated(self):
        self.client.login("ada", "pw", otp="123456")
        self.now[0] += 3600
        self.client.get_me()
        self.assertEqual(len(self.api.logins), 1)

    def test_errors_carry_status_detail_code_and_request_id(self):
        self.client.login("ada", "pw")
        with self.assertRaises(ApiError) as caught:
            self.client.verify_vnin({"vnin": "AA000000000008ZZ", "reason": "corporate"})
        err = caught.exception
        self.assertEqual((err.status, err.detail, err.code, err.request_id), (404, "This vNIN has expired", "vnin_expired", "req-1"))

    def test_an_error_without_code_or_json(self):
        with self.assertRaises(ApiError) as caught:
            self.client.login("ada", "wrong")
        self.assertEqual((caught.exception.status, caught.exception.detail, caught.exception.code), (401, "Incorrect username or password", None))
        self.assertEqual(caught.exception.body["error"], "invalid_grant")
        self.client.login("ada", "pw")
        with self.assertRaises(ApiError) as caught:
            self.client.cancel_batch("b1")
        self.assertEqual((caught.exception.status, caught.exception.detail, caught.exception.body), (500, "HTTP 500", "not json"))

    def test_idempotency_key_and_respond_async_are_sent(self):
        self.client.login("ada", "pw")
        answer = self.client.verify_nin({"nin": "23456789012", "reason": "corporate"}, idempotency_key="k-1", respond_async=True)
        self.assertEqual(answer["status"], "pending")
        _, _, headers, body = self.api.requests[-1]
        self.assertEqual(headers.get("Idempotency-Key"), "k-1")
        self.assertEqual(headers.get("Prefer"), "respond-async")
        self.assertEqual(json.loads(body), {"nin": "23456789012", "reason": "corporate"})

    def test_service_root_operations_leave_the_versioned_base(self):
        self.assertEqual(self.client.healthz(), {"status": "ok"})
        self.assertEqual(self.api.requests[-1][1], "/healthz")

    def test_a_call_before_login_says_so(self):
        with self.assertRaises(RuntimeError):
            self.client.get_me()


if __name__ == "__main__":
    unittest.main()
