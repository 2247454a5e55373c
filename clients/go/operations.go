package idverify

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Bodies are anything encoding/json marshals (a struct or a map[string]any) with the document's field
// names; answers are *Response (Decode into your own struct, or Map).

// ---- accounts ----

// GetMe is the caller and their organisation; organisation.units is the balance.
func (c *Client) GetMe(ctx context.Context) (*Response, error) {
	// @operation GET /me
	return c.call(ctx, "GET", "/me", Request{})
}

func (c *Client) GetMeOrganisation(ctx context.Context) (*Response, error) {
	// @operation GET /meorganisation
	return c.call(ctx, "GET", "/meorganisation", Request{})
}

func (c *Client) EnrolTotp(ctx context.Context) (*Response, error) {
	// @operation POST /me/mfa/totp
	return c.call(ctx, "POST", "/me/mfa/totp", Request{})
}

func (c *Client) ConfirmTotp(ctx context.Context, body any) (*Response, error) {
	// @operation POST /me/mfa/totp/confirm
	return c.call(ctx, "POST", "/me/mfa/totp/confirm", Request{JSON: body})
}

func (c *Client) DisableTotp(ctx context.Context, body any) (*Response, error) {
	// @operation DELETE /me/mfa/totp
	return c.call(ctx, "DELETE", "/me/mfa/totp", Request{JSON: body})
}

// ChangePassword: every earlier token of the user stops working, this one's included: log in again.
func (c *Client) ChangePassword(ctx context.Context, body any) (*Response, error) {
	// @operation POST /change-password
	return c.call(ctx, "POST", "/change-password", Request{JSON: body})
}

func (c *Client) ForgotPassword(ctx context.Context, username string) (*Response, error) {
	// @operation POST /forgot-password
	return c.call(ctx, "POST", "/forgot-password", Request{JSON: map[string]string{"username": username}, NoAuth: true})
}

func (c *Client) ResetPassword(ctx context.Context, body any) (*Response, error) {
	// @operation POST /reset-password
	return c.call(ctx, "POST", "/reset-password", Request{JSON: body, NoAuth: true})
}

func (c *Client) ListAPIClients(ctx context.Context) (*Response, error) {
	// @operation GET /api-clients
	return c.call(ctx, "GET", "/api-clients", Request{})
}

// CreateAPIClient: the secret is in this answer only.
func (c *Client) CreateAPIClient(ctx context.Context, body any) (*Response, error) {
	// @operation POST /api-clients
	return c.call(ctx, "POST", "/api-clients", Request{JSON: body})
}

func (c *Client) AdoptAPIClient(ctx context.Context, clientID string) (*Response, error) {
	// @operation POST /api-clients/{client_id}/adopt
	return c.call(ctx, "POST", "/api-clients/{client_id}/adopt", Request{PathParams: id("client_id", clientID)})
}

func (c *Client) RotateAPIClient(ctx context.Context, clientID string) (*Response, error) {
	// @operation POST /api-clients/{client_id}/rotate
	return c.call(ctx, "POST", "/api-clients/{client_id}/rotate", Request{PathParams: id("client_id", clientID)})
}

func (c *Client) DeleteAPIClient(ctx context.Context, clientID string) (*Response, error) {
	// @operation DELETE /api-clients/{client_id}
	return c.call(ctx, "DELETE", "/api-clients/{client_id}", Request{PathParams: id("client_id", clientID)})
}

// ---- team and settings ----

func (c *Client) ListTeam(ctx context.Context) (*Response, error) {
	// @operation GET /team
	return c.call(ctx, "GET", "/team", Request{})
}

// AddTeamMember is retired: it answers 410; use InviteTeamMember.
func (c *Client) AddTeamMember(ctx context.Context, body any) (*Response, error) {
	// @operation POST /team
	return c.call(ctx, "POST", "/team", Request{JSON: body})
}

func (c *Client) UpdateTeamMember(ctx context.Context, memberID int, body any) (*Response, error) {
	// @operation PATCH /team/{id}
	return c.call(ctx, "PATCH", "/team/{id}", Request{PathParams: id("id", strconv.Itoa(memberID)), JSON: body})
}

func (c *Client) ListTeamInvitations(ctx context.Context) (*Response, error) {
	// @operation GET /team/invitations
	return c.call(ctx, "GET", "/team/invitations", Request{})
}

func (c *Client) InviteTeamMember(ctx context.Context, body any) (*Response, error) {
	// @operation POST /team/invitations
	return c.call(ctx, "POST", "/team/invitations", Request{JSON: body})
}

func (c *Client) RevokeTeamInvitation(ctx context.Context, invitationID int) (*Response, error) {
	// @operation DELETE /team/invitations/{id}
	return c.call(ctx, "DELETE", "/team/invitations/{id}", Request{PathParams: id("id", strconv.Itoa(invitationID))})
}

// PreviewInvitation reads what an invitation is for (organisation, role, username, expires_at) with its token.
func (c *Client) PreviewInvitation(ctx context.Context, token string) (*Response, error) {
	// @operation POST /invitations/preview
	return c.call(ctx, "POST", "/invitations/preview", Request{JSON: map[string]string{"token": token}, NoAuth: true})
}

func (c *Client) AcceptInvitation(ctx context.Context, body any) (*Response, error) {
	// @operation POST /invitations/accept
	return c.call(ctx, "POST", "/invitations/accept", Request{JSON: body, NoAuth: true})
}

func (c *Client) GetOrganisationSettings(ctx context.Context) (*Response, error) {
	// @operation GET /me/organisation
	return c.call(ctx, "GET", "/me/organisation", Request{})
}

func (c *Client) UpdateOrganisationSettings(ctx context.Context, body any) (*Response, error) {
	// @operation PATCH /me/organisation
	return c.call(ctx, "PATCH", "/me/organisation", Request{JSON: body})
}

// ---- verification ----

// VerifyOptions: an Idempotency-Key makes a retry answer the first call's result instead of
// verifying twice; RespondAsync sends "Prefer: respond-async" (202 pending at once, then requery).
type VerifyOptions struct {
	IdempotencyKey string
	RespondAsync   bool
}

func (c *Client) verify(ctx context.Context, path string, body any, o VerifyOptions) (*Response, error) {
	h := http.Header{}
	if o.IdempotencyKey != "" {
		h.Set("Idempotency-Key", o.IdempotencyKey)
	}
	if o.RespondAsync {
		h.Set("Prefer", "respond-async")
	}
	return c.call(ctx, "POST", path, Request{JSON: body, Header: h})
}

// VerifyNin: {"nin", "reason", "consent"?}. Status 202 is {"status": "pending", "reference_id"}.
func (c *Client) VerifyNin(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin
	return c.verify(ctx, "/verify-nin", body, o)
}

func (c *Client) VerifyVnin(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin/vnin
	return c.verify(ctx, "/verify-nin/vnin", body, o)
}

func (c *Client) VerifyPhone(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin/phone
	return c.verify(ctx, "/verify-nin/phone", body, o)
}

func (c *Client) VerifyDemography(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin/demography
	return c.verify(ctx, "/verify-nin/demography", body, o)
}

// VerifyMatch takes no RespondAsync (the operation answers at once).
func (c *Client) VerifyMatch(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin/match
	o.RespondAsync = false
	return c.verify(ctx, "/verify-nin/match", body, o)
}

func (c *Client) VerifyFace(ctx context.Context, body any, o VerifyOptions) (*Response, error) {
	// @operation POST /verify-nin/face
	return c.verify(ctx, "/verify-nin/face", body, o)
}

func (c *Client) GetVninInstructions(ctx context.Context) (*Response, error) {
	// @operation GET /verify-nin/vnin/instructions
	return c.call(ctx, "GET", "/verify-nin/vnin/instructions", Request{})
}

// RequeryVerification is free and safe to retry: the record (200), or 202 pending while it runs.
func (c *Client) RequeryVerification(ctx context.Context, referenceID string) (*Response, error) {
	// @operation POST /verify-nin/requery
	return c.call(ctx, "POST", "/verify-nin/requery", Request{JSON: map[string]string{"reference_id": referenceID}})
}

// RequeryUntilDone requeries every interval until the verification ended (an answer other than 202);
// an ended failure is an *APIError. ctx bounds the wait.
func (c *Client) RequeryUntilDone(ctx context.Context, referenceID string, interval time.Duration) (*Response, error) {
	for {
		res, err := c.RequeryVerification(ctx, referenceID)
		if err != nil || res.Status != http.StatusAccepted {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// GetVerificationSlip is the printable slip of a found verification: PDF bytes in Body.
func (c *Client) GetVerificationSlip(ctx context.Context, referenceID string) (*Response, error) {
	// @operation GET /verify-nin/slip/{reference_id}
	return c.call(ctx, "GET", "/verify-nin/slip/{reference_id}", Request{PathParams: id("reference_id", referenceID), Accept: "application/pdf"})
}

// ---- batches ----

// CreateBatch: {"reason", "rows": [{"nin"|"vnin", "client_ref"?}], "consent"?}.
func (c *Client) CreateBatch(ctx context.Context, body any) (*Response, error) {
	// @operation POST /verify-nin/batches
	return c.call(ctx, "POST", "/verify-nin/batches", Request{JSON: body})
}

// BatchCSVOptions are the CSV upload's query parameters (reason is required).
type BatchCSVOptions struct {
	Reason               string
	ConsentObtainedAt    string
	ConsentChannel       string
	ConsentNoticeVersion string
}

// CreateBatchCSV uploads a CSV: a header row (nin or vnin, client_ref), then one row per identifier.
func (c *Client) CreateBatchCSV(ctx context.Context, csv []byte, o BatchCSVOptions) (*Response, error) {
	// @operation POST /verify-nin/batches
	q := url.Values{"reason": {o.Reason}}
	for k, v := range map[string]string{"consent_obtained_at": o.ConsentObtainedAt, "consent_channel": o.ConsentChannel, "consent_notice_version": o.ConsentNoticeVersion} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return c.call(ctx, "POST", "/verify-nin/batches", Request{Query: q, Body: csv, ContentType: "text/csv"})
}

// ListBatches: one page; query limit and cursor (see EachPage).
func (c *Client) ListBatches(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /verify-nin/batches
	return c.call(ctx, "GET", "/verify-nin/batches", Request{Query: query})
}

func (c *Client) GetBatch(ctx context.Context, batchID string) (*Response, error) {
	// @operation GET /verify-nin/batches/{id}
	return c.call(ctx, "GET", "/verify-nin/batches/{id}", Request{PathParams: id("id", batchID)})
}

func (c *Client) GetBatchResults(ctx context.Context, batchID string, query url.Values) (*Response, error) {
	// @operation GET /verify-nin/batches/{id}/results
	return c.call(ctx, "GET", "/verify-nin/batches/{id}/results", Request{PathParams: id("id", batchID), Query: query})
}

// GetBatchResultsCSV: every row as CSV bytes.
func (c *Client) GetBatchResultsCSV(ctx context.Context, batchID string) (*Response, error) {
	// @operation GET /verify-nin/batches/{id}/results
	return c.call(ctx, "GET", "/verify-nin/batches/{id}/results", Request{PathParams: id("id", batchID), Accept: "text/csv"})
}

func (c *Client) CancelBatch(ctx context.Context, batchID string) (*Response, error) {
	// @operation POST /verify-nin/batches/{id}/cancel
	return c.call(ctx, "POST", "/verify-nin/batches/{id}/cancel", Request{PathParams: id("id", batchID)})
}

// ---- reasons ----

func (c *Client) ListNimcReasons(ctx context.Context) (*Response, error) {
	// @operation GET /nimc-reasons
	return c.call(ctx, "GET", "/nimc-reasons", Request{})
}

func (c *Client) ListUpstreamReasons(ctx context.Context) (*Response, error) {
	// @operation GET /upstream-reasons
	return c.call(ctx, "GET", "/upstream-reasons", Request{})
}

// ---- top-up ----

// InitializeTopup starts a top-up: pay at authorization_url, then VerifyTopup (or wait for the webhook).
func (c *Client) InitializeTopup(ctx context.Context, units int) (*Response, error) {
	// @operation POST /topup/initialize
	return c.call(ctx, "POST", "/topup/initialize", Request{Form: url.Values{"units": {strconv.Itoa(units)}}})
}

func (c *Client) QuoteTopup(ctx context.Context, units int) (*Response, error) {
	// @operation GET /topup/quote
	return c.call(ctx, "GET", "/topup/quote", Request{Query: url.Values{"units": {strconv.Itoa(units)}}})
}

func (c *Client) VerifyTopup(ctx context.Context, reference string) (*Response, error) {
	// @operation POST /topup/verify
	return c.call(ctx, "POST", "/topup/verify", Request{Form: url.Values{"reference": {reference}}})
}

// ReceivePaystackEvent is the payment processor's own webhook to the service (for trying a sandbox by hand).
func (c *Client) ReceivePaystackEvent(ctx context.Context, rawBody []byte, signature string) (*Response, error) {
	// @operation POST /webhooks/paystack
	h := http.Header{}
	h.Set("X-Paystack-Signature", signature)
	return c.call(ctx, "POST", "/webhooks/paystack", Request{Body: rawBody, ContentType: jsonType, Header: h, NoAuth: true})
}

func (c *Client) GetAutoTopup(ctx context.Context) (*Response, error) {
	// @operation GET /settings/auto-topup
	return c.call(ctx, "GET", "/settings/auto-topup", Request{})
}

func (c *Client) SetAutoTopup(ctx context.Context, body any) (*Response, error) {
	// @operation PUT /settings/auto-topup
	return c.call(ctx, "PUT", "/settings/auto-topup", Request{JSON: body})
}

// ---- history ----

// DailyUsage: days 0 means the service's default.
func (c *Client) DailyUsage(ctx context.Context, days int) (*Response, error) {
	// @operation GET /usage/daily
	q := url.Values{}
	if days > 0 {
		q.Set("days", strconv.Itoa(days))
	}
	return c.call(ctx, "GET", "/usage/daily", Request{Query: q})
}

// ListTransactions: one page of the ledger (kind, from, to, limit, cursor); see EachPage.
func (c *Client) ListTransactions(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /transactions
	return c.call(ctx, "GET", "/transactions", Request{Query: query})
}

// ListTransactionsCSV: the whole filtered ledger as CSV bytes (header row first).
func (c *Client) ListTransactionsCSV(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /transactions
	return c.call(ctx, "GET", "/transactions", Request{Query: query, Accept: "text/csv"})
}

func (c *Client) ListTopups(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /topups
	return c.call(ctx, "GET", "/topups", Request{Query: query})
}

func (c *Client) ListTopupsCSV(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /topups
	return c.call(ctx, "GET", "/topups", Request{Query: query, Accept: "text/csv"})
}

func (c *Client) GetTopup(ctx context.Context, reference string) (*Response, error) {
	// @operation GET /topups/{reference}
	return c.call(ctx, "GET", "/topups/{reference}", Request{PathParams: id("reference", reference)})
}

// GetTopupInvoice is a credited top-up's invoice: PDF bytes in Body.
func (c *Client) GetTopupInvoice(ctx context.Context, reference string) (*Response, error) {
	// @operation GET /topups/{reference}/invoice
	return c.call(ctx, "GET", "/topups/{reference}/invoice", Request{PathParams: id("reference", reference), Accept: "application/pdf"})
}

func (c *Client) ListVerifications(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /verifications
	return c.call(ctx, "GET", "/verifications", Request{Query: query})
}

func (c *Client) ListVerificationsCSV(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /verifications
	return c.call(ctx, "GET", "/verifications", Request{Query: query, Accept: "text/csv"})
}

func (c *Client) GetVerificationReceipt(ctx context.Context, referenceID string) (*Response, error) {
	// @operation GET /verifications/{reference_id}/receipt
	return c.call(ctx, "GET", "/verifications/{reference_id}/receipt", Request{PathParams: id("reference_id", referenceID)})
}

func (c *Client) ListAuditEvents(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /audit-events
	return c.call(ctx, "GET", "/audit-events", Request{Query: query})
}

func (c *Client) ListAuditEventsCSV(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /audit-events
	return c.call(ctx, "GET", "/audit-events", Request{Query: query, Accept: "text/csv"})
}

// GetStatement is a month's statement (YYYY-MM): accept "" (JSON), text/csv or application/pdf.
func (c *Client) GetStatement(ctx context.Context, month, accept string) (*Response, error) {
	// @operation GET /statements/{month}
	return c.call(ctx, "GET", "/statements/{month}", Request{PathParams: id("month", month), Accept: accept})
}

// EachPage calls list with the query, then with each answer's next_cursor, and visit with every page
// until the last one (or visit's error), e.g. c.EachPage(ctx, c.ListTransactions, url.Values{"kind": {"debit"}}, visit).
func (c *Client) EachPage(ctx context.Context, list func(context.Context, url.Values) (*Response, error), query url.Values, visit func(*Response) error) error {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	for {
		page, err := list(ctx, q)
		if err != nil {
			return err
		}
		if err := visit(page); err != nil {
			return err
		}
		var next struct {
			NextCursor *string `json:"next_cursor"`
		}
		if err := page.Decode(&next); err != nil || next.NextCursor == nil || *next.NextCursor == "" {
			return err
		}
		q.Set("cursor", *next.NextCursor)
	}
}

// ---- webhooks ----

func (c *Client) ListWebhookEndpoints(ctx context.Context) (*Response, error) {
	// @operation GET /webhook-endpoints
	return c.call(ctx, "GET", "/webhook-endpoints", Request{})
}

// CreateWebhookEndpoint: {"url", "events", "description"?}; the answer's secret is shown this once.
func (c *Client) CreateWebhookEndpoint(ctx context.Context, body any) (*Response, error) {
	// @operation POST /webhook-endpoints
	return c.call(ctx, "POST", "/webhook-endpoints", Request{JSON: body})
}

func (c *Client) GetWebhookEndpoint(ctx context.Context, endpointID string) (*Response, error) {
	// @operation GET /webhook-endpoints/{id}
	return c.call(ctx, "GET", "/webhook-endpoints/{id}", Request{PathParams: id("id", endpointID)})
}

func (c *Client) UpdateWebhookEndpoint(ctx context.Context, endpointID string, body any) (*Response, error) {
	// @operation PATCH /webhook-endpoints/{id}
	return c.call(ctx, "PATCH", "/webhook-endpoints/{id}", Request{PathParams: id("id", endpointID), JSON: body})
}

func (c *Client) DeleteWebhookEndpoint(ctx context.Context, endpointID string) (*Response, error) {
	// @operation DELETE /webhook-endpoints/{id}
	return c.call(ctx, "DELETE", "/webhook-endpoints/{id}", Request{PathParams: id("id", endpointID)})
}

func (c *Client) RotateWebhookSecret(ctx context.Context, endpointID string) (*Response, error) {
	// @operation POST /webhook-endpoints/{id}/rotate-secret
	return c.call(ctx, "POST", "/webhook-endpoints/{id}/rotate-secret", Request{PathParams: id("id", endpointID)})
}

// TestWebhookEndpoint sends a ping event to the endpoint.
func (c *Client) TestWebhookEndpoint(ctx context.Context, endpointID string) (*Response, error) {
	// @operation POST /webhook-endpoints/{id}/test
	return c.call(ctx, "POST", "/webhook-endpoints/{id}/test", Request{PathParams: id("id", endpointID)})
}

func (c *Client) ListWebhookDeliveries(ctx context.Context, endpointID string, query url.Values) (*Response, error) {
	// @operation GET /webhook-endpoints/{id}/deliveries
	return c.call(ctx, "GET", "/webhook-endpoints/{id}/deliveries", Request{PathParams: id("id", endpointID), Query: query})
}

func (c *Client) RedeliverWebhook(ctx context.Context, deliveryID string) (*Response, error) {
	// @operation POST /webhook-endpoints/deliveries/{delivery_id}/redeliver
	return c.call(ctx, "POST", "/webhook-endpoints/deliveries/{delivery_id}/redeliver", Request{PathParams: id("delivery_id", deliveryID)})
}

// ---- verification links ----

func (c *Client) ListVerificationLinks(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /verification-links
	return c.call(ctx, "GET", "/verification-links", Request{Query: query})
}

func (c *Client) CreateVerificationLink(ctx context.Context, body any) (*Response, error) {
	// @operation POST /verification-links
	return c.call(ctx, "POST", "/verification-links", Request{JSON: body})
}

func (c *Client) GetVerificationLink(ctx context.Context, linkID string) (*Response, error) {
	// @operation GET /verification-links/{id}
	return c.call(ctx, "GET", "/verification-links/{id}", Request{PathParams: id("id", linkID)})
}

func (c *Client) RevokeVerificationLink(ctx context.Context, linkID string) (*Response, error) {
	// @operation POST /verification-links/{id}/revoke
	return c.call(ctx, "POST", "/verification-links/{id}/revoke", Request{PathParams: id("id", linkID)})
}

// ---- liveness ----

// CreateLivenessSession starts a liveness check: the head poses to show after a front frame, in its order.
func (c *Client) CreateLivenessSession(ctx context.Context) (*Response, error) {
	// @operation POST /liveness/sessions
	return c.call(ctx, "POST", "/liveness/sessions", Request{})
}

func (c *Client) GetLivenessSession(ctx context.Context, sessionID string) (*Response, error) {
	// @operation GET /liveness/sessions/{id}
	return c.call(ctx, "GET", "/liveness/sessions/{id}", Request{PathParams: id("id", sessionID)})
}

// ---- platform and operations ----

func (c *Client) ListPlatformOrganisations(ctx context.Context, query url.Values) (*Response, error) {
	// @operation GET /platform/organisations
	return c.call(ctx, "GET", "/platform/organisations", Request{Query: query})
}

func (c *Client) GetPlatformOrganisation(ctx context.Context, organisationID int) (*Response, error) {
	// @operation GET /platform/organisations/{id}
	return c.call(ctx, "GET", "/platform/organisations/{id}", Request{PathParams: id("id", strconv.Itoa(organisationID))})
}

func (c *Client) Healthz(ctx context.Context) (*Response, error) {
	// @operation GET /healthz
	return c.call(ctx, "GET", "/healthz", Request{NoAuth: true, Root: true})
}

func (c *Client) Readyz(ctx context.Context) (*Response, error) {
	// @operation GET /readyz
	return c.call(ctx, "GET", "/readyz", Request{NoAuth: true, Root: true})
}

func (c *Client) GetOpenAPIDocument(ctx context.Context) (*Response, error) {
	// @operation GET /openapi.json
	return c.call(ctx, "GET", "/openapi.json", Request{NoAuth: true})
}

// GetOpenAPIDocument30 is the same document rendered as OpenAPI 3.0, for tools that cannot read 3.1.
func (c *Client) GetOpenAPIDocument30(ctx context.Context) (*Response, error) {
	// @operation GET /openapi-3.0.json
	return c.call(ctx, "GET", "/openapi-3.0.json", Request{NoAuth: true})
}
