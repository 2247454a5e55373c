"""A thin client for the Identity Verification and Wallet API: one generic request, one small method
per operation of the OpenAPI document (``GET /v1/openapi.json``).

Each method's ``@operation`` comment names the operation it calls, exactly as the document writes it;
test/clients/operation-coverage.test.ts fails when an operation of the document has none.
"""

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Union

from .errors import ApiError

__all__ = ["Client", "Response"]

JSON = "application/json"


class Response:
    """A 2xx answer: its status, headers (lower-cased names) and raw bytes."""

    def __init__(self, status: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content.decode("utf-8")) if self.content else None


def _query_of(values: Mapping[str, Any]) -> Dict[str, Any]:
    # `from` is a Python keyword: list methods take `from_` and send `from`.
    return {k.rstrip("_"): v for k, v in values.items() if v is not None}


class Client:
    """``base_url`` is the versioned base, e.g. ``http://localhost:8080/v1``.

    Log in with :meth:`login` (a person) or :meth:`login_client` (an API client's id and secret); the
    client keeps the credentials and signs in again ``refresh_margin`` seconds before the token
    expires, so a long-running process never sends an expired token. With two-factor sign-in (an
    ``otp``) there is nothing to sign in again with: call :meth:`login` yourself when it expires.
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        timeout: float = 45.0,
        refresh_margin: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # /healthz and /readyz live at the service root, outside the versioned base.
        self.root_url = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        self.timeout = timeout
        self.refresh_margin = refresh_margin
        self._clock = clock
        self._token = token
        self._expires_at: Optional[float] = None
        self._credentials: Optional[Dict[str, str]] = None
        self._lock = threading.Lock()

    # ---- the generic request ------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        path_params: Optional[Mapping[str, Any]] = None,
        query: Optional[Mapping[str, Any]] = None,
        json_body: Any = None,
        form: Optional[Mapping[str, Any]] = None,
        content: Optional[Union[bytes, str]] = None,
        content_type: Optional[str] = None,
        headers: Optional[Mapping[str, Optional[str]]] = None,
        accept: str = JSON,
        auth: bool = True,
        versioned: bool = True,
        operation: str = "",
    ) -> Response:
        """Any operation: ``path`` as the document writes it (``/verify-nin/batches/{id}``), its
        ``{name}`` segments filled from ``path_params``. Raises :class:`ApiError` on a non-2xx answer."""
        filled = path
        for name, value in (path_params or {}).items():
            filled = filled.replace("{%s}" % name, urllib.parse.quote(str(value), safe=""))
        url = (self.base_url if versioned else self.root_url) + filled
        q = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        sent: Dict[str, str] = {"Accept": accept}
        data: Optional[bytes] = None
        if json_body is not None:
            data, sent["Content-Type"] = json.dumps(json_body).encode("utf-8"), JSON
        elif form is not None:
            data = urllib.parse.urlencode({k: v for k, v in form.items() if v is not None}).encode("utf-8")
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        elif content is not None:
            data = content.encode("utf-8") if isinstance(content, str) else content
            sent["Content-Type"] = content_type or "application/octet-stream"
        if auth:
            sent["Authorization"] = "Bearer " + self._current_token(operation)
        for k, v in (headers or {}).items():
            if v is not None:
                sent[k] = v
        req = urllib.request.Request(url, data=data, headers=sent, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return Response(res.status, dict(res.headers.items()), res.read())
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                body: Any = json.loads(raw.decode("utf-8")) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            raise ApiError(err.code, body, err.headers.get("x-request-id"), operation) from None

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        return self.request(method, path, operation="%s %s" % (method, path), **kw).json()

    def _bytes(self, method: str, path: str, accept: str, **kw: Any) -> bytes:
        return self.request(method, path, accept=accept, operation="%s %s" % (method, path), **kw).content

    # ---- tokens -------------------------------------------------------------------------------

    @property
    def token(self) -> Optional[str]:
        return self._token

    def set_token(self, token: Optional[str]) -> None:
        """Use a token obtained elsewhere (no automatic refresh)."""
        with self._lock:
            self._token, self._expires_at, self._credentials = token, None, None

    def _current_token(self, operation: str) -> str:
        with self._lock:
            due = self._expires_at is not None and self._clock() >= self._expires_at - self.refresh_margin
            if due and self._credentials is not None:
                self._sign_in(self._credentials)
            if not self._token:
                raise RuntimeError("%s needs a token: call login() or login_client() first" % (operation or "this call"))
            return self._token

    def _sign_in(self, form: Dict[str, str]) -> Dict[str, Any]:
        answer = self.request("POST", "/login", form=form, auth=False, operation="POST /login").json()
        self._token = answer["access_token"]
        expires_in = answer.get("expires_in")
        self._expires_at = self._clock() + float(expires_in) if expires_in else None
        return answer

    def login(self, username: str, password: str, otp: Optional[str] = None, scope: Optional[str] = None) -> Dict[str, Any]:
        """Sign in as a person; the token is kept (and renewed before it expires unless ``otp`` was needed).
        ``require_password_change`` in the answer: only :meth:`change_password` works until then."""
        # @operation POST /login
        form = {"username": username, "password": password}
        if scope:
            form["scope"] = scope
        with self._lock:
            answer = self._sign_in(dict(form, otp=otp) if otp else form)
            self._credentials = None if otp else form
        return answer

    def login_client(self, client_id: str, client_secret: str, scope: Optional[str] = None) -> Dict[str, Any]:
        """OAuth 2.0 client credentials (an API client's server); the token is kept and renewed."""
        # @operation POST /login
        form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": client_secret}
        if scope:
            form["scope"] = scope
        with self._lock:
            answer = self._sign_in(form)
            self._credentials = form
        return answer

    def logout(self) -> None:
        """Ends this token at once; no automatic sign-in follows."""
        # @operation POST /logout
        self._json("POST", "/logout")
        self.set_token(None)

    # ---- accounts -----------------------------------------------------------------------------

    def get_me(self) -> Dict[str, Any]:
        """The caller and their organisation; ``organisation.units`` is the balance."""
        # @operation GET /me
        return self._json("GET", "/me")

    def get_me_organisation(self) -> Dict[str, Any]:
        # @operation GET /meorganisation
        return self._json("GET", "/meorganisation")

    def enrol_totp(self) -> Dict[str, Any]:
        # @operation POST /me/mfa/totp
        return self._json("POST", "/me/mfa/totp")

    def confirm_totp(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation POST /me/mfa/totp/confirm
        return self._json("POST", "/me/mfa/totp/confirm", json_body=body)

    def disable_totp(self, body: Mapping[str, Any]) -> None:
        # @operation DELETE /me/mfa/totp
        self._json("DELETE", "/me/mfa/totp", json_body=body)

    def change_password(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """Every earlier token of the user stops working, this one's included: log in again."""
        # @operation POST /change-password
        return self._json("POST", "/change-password", json_body=body)

    def forgot_password(self, username: str) -> Dict[str, Any]:
        # @operation POST /forgot-password
        return self._json("POST", "/forgot-password", json_body={"username": username}, auth=False)

    def reset_password(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation POST /reset-password
        return self._json("POST", "/reset-password", json_body=body, auth=False)

    def list_api_clients(self) -> Dict[str, Any]:
        # @operation GET /api-clients
        return self._json("GET", "/api-clients")

    def create_api_client(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """The secret is in this answer only."""
        # @operation POST /api-clients
        return self._json("POST", "/api-clients", json_body=body)

    def adopt_api_client(self, client_id: str) -> Dict[str, Any]:
        # @operation POST /api-clients/{client_id}/adopt
        return self._json("POST", "/api-clients/{client_id}/adopt", path_params={"client_id": client_id})

    def rotate_api_client(self, client_id: str) -> Dict[str, Any]:
        # @operation POST /api-clients/{client_id}/rotate
        return self._json("POST", "/api-clients/{client_id}/rotate", path_params={"client_id": client_id})

    def delete_api_client(self, client_id: str) -> None:
        # @operation DELETE /api-clients/{client_id}
        self._json("DELETE", "/api-clients/{client_id}", path_params={"client_id": client_id})

    # ---- team and settings --------------------------------------------------------------------

    def list_team(self) -> Dict[str, Any]:
        # @operation GET /team
        return self._json("GET", "/team")

    def add_team_member(self, body: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Retired: answers 410; use :meth:`invite_team_member`."""
        # @operation POST /team
        return self._json("POST", "/team", json_body=body)

    def update_team_member(self, member_id: int, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation PATCH /team/{id}
        return self._json("PATCH", "/team/{id}", path_params={"id": member_id}, json_body=body)

    def list_team_invitations(self) -> Dict[str, Any]:
        # @operation GET /team/invitations
        return self._json("GET", "/team/invitations")

    def invite_team_member(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation POST /team/invitations
        return self._json("POST", "/team/invitations", json_body=body)

    def revoke_team_invitation(self, invitation_id: int) -> Dict[str, Any]:
        # @operation DELETE /team/invitations/{id}
        return self._json("DELETE", "/team/invitations/{id}", path_params={"id": invitation_id})

    def preview_invitation(self, token: str) -> Dict[str, Any]:
        """What an invitation is for (organisation, role, username, expires_at), read with its token."""
        # @operation POST /invitations/preview
        return self._json("POST", "/invitations/preview", json_body={"token": token}, auth=False)

    def accept_invitation(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation POST /invitations/accept
        return self._json("POST", "/invitations/accept", json_body=body, auth=False)

    def get_organisation_settings(self) -> Dict[str, Any]:
        # @operation GET /me/organisation
        return self._json("GET", "/me/organisation")

    def update_organisation_settings(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation PATCH /me/organisation
        return self._json("PATCH", "/me/organisation", json_body=body)

    # ---- verification -------------------------------------------------------------------------

    def _verify(self, path: str, body: Mapping[str, Any], idempotency_key: Optional[str], respond_async: bool) -> Dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key, "Prefer": "respond-async" if respond_async else None}
        return self._json("POST", path, json_body=body, headers=headers)

    def verify_nin(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None, respond_async: bool = False) -> Dict[str, Any]:
        """``{"nin", "reason", "consent"?}``. With ``respond_async`` the answer is
        ``{"status": "pending", "reference_id"}`` at once: follow it with :meth:`requery_until_done`.
        An ``idempotency_key`` makes a retry answer the first call's result instead of verifying twice."""
        # @operation POST /verify-nin
        return self._verify("/verify-nin", body, idempotency_key, respond_async)

    def verify_vnin(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None, respond_async: bool = False) -> Dict[str, Any]:
        # @operation POST /verify-nin/vnin
        return self._verify("/verify-nin/vnin", body, idempotency_key, respond_async)

    def verify_phone(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None, respond_async: bool = False) -> Dict[str, Any]:
        # @operation POST /verify-nin/phone
        return self._verify("/verify-nin/phone", body, idempotency_key, respond_async)

    def verify_demography(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None, respond_async: bool = False) -> Dict[str, Any]:
        # @operation POST /verify-nin/demography
        return self._verify("/verify-nin/demography", body, idempotency_key, respond_async)

    def verify_match(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        # @operation POST /verify-nin/match
        return self._verify("/verify-nin/match", body, idempotency_key, False)

    def verify_face(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None, respond_async: bool = False) -> Dict[str, Any]:
        # @operation POST /verify-nin/face
        return self._verify("/verify-nin/face", body, idempotency_key, respond_async)

    def get_vnin_instructions(self) -> Dict[str, Any]:
        # @operation GET /verify-nin/vnin/instructions
        return self._json("GET", "/verify-nin/vnin/instructions")

    def requery_verification(self, reference_id: str) -> Dict[str, Any]:
        """Free and safe to retry: the record, or ``{"status": "pending"}`` (202) while it runs."""
        # @operation POST /verify-nin/requery
        return self._json("POST", "/verify-nin/requery", json_body={"reference_id": reference_id})

    def requery_until_done(self, reference_id: str, interval: float = 1.0, timeout: float = 120.0) -> Dict[str, Any]:
        """Requeries until the verification ended: its last answer (an ended failure raises ApiError)."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.requery_verification(reference_id)
            if not (isinstance(answer, dict) and answer.get("status") == "pending"):
                return answer
            if time.monotonic() >= deadline:
                raise TimeoutError("%s still pending after %s s" % (reference_id, timeout))
            time.sleep(interval)

    def get_verification_slip(self, reference_id: str) -> bytes:
        """The printable slip of a found verification: PDF bytes."""
        # @operation GET /verify-nin/slip/{reference_id}
        return self._bytes("GET", "/verify-nin/slip/{reference_id}", "application/pdf", path_params={"reference_id": reference_id})

    # ---- batches ------------------------------------------------------------------------------

    def create_batch(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """``{"reason", "rows": [{"nin"|"vnin", "client_ref"?}], "consent"?}``."""
        # @operation POST /verify-nin/batches
        return self._json("POST", "/verify-nin/batches", json_body=body)

    def create_batch_csv(
        self,
        csv: Union[bytes, str],
        reason: str,
        consent_obtained_at: Optional[str] = None,
        consent_channel: Optional[str] = None,
        consent_notice_version: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The CSV upload: a header row (``nin`` or ``vnin``, ``client_ref``), then one row per identifier."""
        # @operation POST /verify-nin/batches
        query = {
            "reason": reason,
            "consent_obtained_at": consent_obtained_at,
            "consent_channel": consent_channel,
            "consent_notice_version": consent_notice_version,
        }
        return self._json("POST", "/verify-nin/batches", query=query, content=csv, content_type="text/csv")

    def list_batches(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        # @operation GET /verify-nin/batches
        return self._json("GET", "/verify-nin/batches", query={"limit": limit, "cursor": cursor})

    def get_batch(self, batch_id: str) -> Dict[str, Any]:
        # @operation GET /verify-nin/batches/{id}
        return self._json("GET", "/verify-nin/batches/{id}", path_params={"id": batch_id})

    def get_batch_results(self, batch_id: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        # @operation GET /verify-nin/batches/{id}/results
        return self._json("GET", "/verify-nin/batches/{id}/results", path_params={"id": batch_id}, query={"limit": limit, "cursor": cursor})

    def get_batch_results_csv(self, batch_id: str) -> bytes:
        # @operation GET /verify-nin/batches/{id}/results
        return self._bytes("GET", "/verify-nin/batches/{id}/results", "text/csv", path_params={"id": batch_id})

    def cancel_batch(self, batch_id: str) -> Dict[str, Any]:
        # @operation POST /verify-nin/batches/{id}/cancel
        return self._json("POST", "/verify-nin/batches/{id}/cancel", path_params={"id": batch_id})

    # ---- reasons ------------------------------------------------------------------------------

    def list_nimc_reasons(self) -> Dict[str, Any]:
        # @operation GET /nimc-reasons
        return self._json("GET", "/nimc-reasons")

    def list_upstream_reasons(self) -> Dict[str, Any]:
        # @operation GET /upstream-reasons
        return self._json("GET", "/upstream-reasons")

    # ---- top-up -------------------------------------------------------------------------------

    def initialize_topup(self, units: int) -> Dict[str, Any]:
        """Starts a top-up: pay at ``authorization_url``, then :meth:`verify_topup` (or wait for the webhook)."""
        # @operation POST /topup/initialize
        return self._json("POST", "/topup/initialize", form={"units": units})

    def quote_topup(self, units: int) -> Dict[str, Any]:
        # @operation GET /topup/quote
        return self._json("GET", "/topup/quote", query={"units": units})

    def verify_topup(self, reference: str) -> Dict[str, Any]:
        # @operation POST /topup/verify
        return self._json("POST", "/topup/verify", form={"reference": reference})

    def receive_paystack_event(self, raw_body: Union[bytes, str], signature: str) -> Dict[str, Any]:
        """The payment processor's own webhook to the service (for trying a sandbox by hand)."""
        # @operation POST /webhooks/paystack
        return self._json(
            "POST", "/webhooks/paystack", content=raw_body, content_type=JSON, headers={"x-paystack-signature": signature}, auth=False
        )

    def get_auto_topup(self) -> Dict[str, Any]:
        # @operation GET /settings/auto-topup
        return self._json("GET", "/settings/auto-topup")

    def set_auto_topup(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation PUT /settings/auto-topup
        return self._json("PUT", "/settings/auto-topup", json_body=body)

    # ---- history ------------------------------------------------------------------------------

    def daily_usage(self, days: Optional[int] = None) -> Dict[str, Any]:
        # @operation GET /usage/daily
        return self._json("GET", "/usage/daily", query={"days": days})

    def list_transactions(self, **query: Any) -> Dict[str, Any]:
        """One page (``kind``, ``from_``, ``to``, ``limit``, ``cursor``); see :meth:`pages`."""
        # @operation GET /transactions
        return self._json("GET", "/transactions", query=_query_of(query))

    def list_transactions_csv(self, **query: Any) -> bytes:
        """The whole filtered ledger as CSV bytes (header row first)."""
        # @operation GET /transactions
        return self._bytes("GET", "/transactions", "text/csv", query=_query_of(query))

    def list_topups(self, **query: Any) -> Dict[str, Any]:
        # @operation GET /topups
        return self._json("GET", "/topups", query=_query_of(query))

    def list_topups_csv(self, **query: Any) -> bytes:
        # @operation GET /topups
        return self._bytes("GET", "/topups", "text/csv", query=_query_of(query))

    def get_topup(self, reference: str) -> Dict[str, Any]:
        # @operation GET /topups/{reference}
        return self._json("GET", "/topups/{reference}", path_params={"reference": reference})

    def get_topup_invoice(self, reference: str) -> bytes:
        """A credited top-up's invoice: PDF bytes."""
        # @operation GET /topups/{reference}/invoice
        return self._bytes("GET", "/topups/{reference}/invoice", "application/pdf", path_params={"reference": reference})

    def list_verifications(self, **query: Any) -> Dict[str, Any]:
        # @operation GET /verifications
        return self._json("GET", "/verifications", query=_query_of(query))

    def list_verifications_csv(self, **query: Any) -> bytes:
        # @operation GET /verifications
        return self._bytes("GET", "/verifications", "text/csv", query=_query_of(query))

    def get_verification_receipt(self, reference_id: str) -> Dict[str, Any]:
        # @operation GET /verifications/{reference_id}/receipt
        return self._json("GET", "/verifications/{reference_id}/receipt", path_params={"reference_id": reference_id})

    def list_audit_events(self, **query: Any) -> Dict[str, Any]:
        # @operation GET /audit-events
        return self._json("GET", "/audit-events", query=_query_of(query))

    def list_audit_events_csv(self, **query: Any) -> bytes:
        # @operation GET /audit-events
        return self._bytes("GET", "/audit-events", "text/csv", query=_query_of(query))

    def get_statement(self, month: str, accept: str = JSON) -> Any:
        """A month's statement (``YYYY-MM``): JSON, or with ``accept`` text/csv or application/pdf its bytes."""
        # @operation GET /statements/{month}
        if accept == JSON:
            return self._json("GET", "/statements/{month}", path_params={"month": month})
        return self._bytes("GET", "/statements/{month}", accept, path_params={"month": month})

    def pages(self, list_method: Callable[..., Dict[str, Any]], *args: Any, **query: Any) -> Iterator[Dict[str, Any]]:
        """Every page of a cursor-paged list, e.g. ``client.pages(client.list_transactions, kind="debit")``."""
        cursor = query.pop("cursor", None)
        while True:
            page = list_method(*args, cursor=cursor, **query)
            yield page
            cursor = page.get("next_cursor") if isinstance(page, dict) else None
            if not cursor:
                return

    # ---- webhooks -----------------------------------------------------------------------------

    def list_webhook_endpoints(self) -> Dict[str, Any]:
        # @operation GET /webhook-endpoints
        return self._json("GET", "/webhook-endpoints")

    def create_webhook_endpoint(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """``{"url", "events", "description"?}``; the answer's ``secret`` is shown this once."""
        # @operation POST /webhook-endpoints
        return self._json("POST", "/webhook-endpoints", json_body=body)

    def get_webhook_endpoint(self, endpoint_id: str) -> Dict[str, Any]:
        # @operation GET /webhook-endpoints/{id}
        return self._json("GET", "/webhook-endpoints/{id}", path_params={"id": endpoint_id})

    def update_webhook_endpoint(self, endpoint_id: str, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation PATCH /webhook-endpoints/{id}
        return self._json("PATCH", "/webhook-endpoints/{id}", path_params={"id": endpoint_id}, json_body=body)

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        # @operation DELETE /webhook-endpoints/{id}
        self._json("DELETE", "/webhook-endpoints/{id}", path_params={"id": endpoint_id})

    def rotate_webhook_secret(self, endpoint_id: str) -> Dict[str, Any]:
        # @operation POST /webhook-endpoints/{id}/rotate-secret
        return self._json("POST", "/webhook-endpoints/{id}/rotate-secret", path_params={"id": endpoint_id})

    def test_webhook_endpoint(self, endpoint_id: str) -> Dict[str, Any]:
        """Sends a ``ping`` event to the endpoint."""
        # @operation POST /webhook-endpoints/{id}/test
        return self._json("POST", "/webhook-endpoints/{id}/test", path_params={"id": endpoint_id})

    def list_webhook_deliveries(self, endpoint_id: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        # @operation GET /webhook-endpoints/{id}/deliveries
        return self._json("GET", "/webhook-endpoints/{id}/deliveries", path_params={"id": endpoint_id}, query={"limit": limit, "cursor": cursor})

    def redeliver_webhook(self, delivery_id: str) -> Dict[str, Any]:
        # @operation POST /webhook-endpoints/deliveries/{delivery_id}/redeliver
        return self._json("POST", "/webhook-endpoints/deliveries/{delivery_id}/redeliver", path_params={"delivery_id": delivery_id})

    # ---- verification links -------------------------------------------------------------------

    def list_verification_links(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        # @operation GET /verification-links
        return self._json("GET", "/verification-links", query={"limit": limit, "cursor": cursor})

    def create_verification_link(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        # @operation POST /verification-links
        return self._json("POST", "/verification-links", json_body=body)

    def get_verification_link(self, link_id: str) -> Dict[str, Any]:
        # @operation GET /verification-links/{id}
        return self._json("GET", "/verification-links/{id}", path_params={"id": link_id})

    def revoke_verification_link(self, link_id: str) -> Dict[str, Any]:
        # @operation POST /verification-links/{id}/revoke
        return self._json("POST", "/verification-links/{id}/revoke", path_params={"id": link_id})

    # ---- liveness -----------------------------------------------------------------------------

    def create_liveness_session(self) -> Dict[str, Any]:
        """A liveness session: the head poses (``challenges``) to show after a front frame, in its order."""
        # @operation POST /liveness/sessions
        return self._json("POST", "/liveness/sessions")

    def get_liveness_session(self, session_id: str) -> Dict[str, Any]:
        # @operation GET /liveness/sessions/{id}
        return self._json("GET", "/liveness/sessions/{id}", path_params={"id": session_id})

    # ---- platform and operations --------------------------------------------------------------

    def list_platform_organisations(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        # @operation GET /platform/organisations
        return self._json("GET", "/platform/organisations", query={"limit": limit, "cursor": cursor})

    def get_platform_organisation(self, organisation_id: int) -> Dict[str, Any]:
        # @operation GET /platform/organisations/{id}
        return self._json("GET", "/platform/organisations/{id}", path_params={"id": organisation_id})

    def healthz(self) -> Dict[str, Any]:
        # @operation GET /healthz
        return self._json("GET", "/healthz", auth=False, versioned=False)

    def readyz(self) -> Dict[str, Any]:
        # @operation GET /readyz
        return self._json("GET", "/readyz", auth=False, versioned=False)

    def get_openapi_document(self) -> Dict[str, Any]:
        # @operation GET /openapi.json
        return self._json("GET", "/openapi.json", auth=False)

    def get_openapi_document_30(self) -> Dict[str, Any]:
        """The same document rendered as OpenAPI 3.0, for tools that cannot read 3.1."""
        # @operation GET /openapi-3.0.json
        return self._json("GET", "/openapi-3.0.json", auth=False)
