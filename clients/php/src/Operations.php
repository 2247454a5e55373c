<?php

declare(strict_types=1);

namespace Idverify;

/**
 * One method per operation of the OpenAPI document, named by its operationId. Bodies are arrays shaped as
 * the document's schemas; list methods take their query (limit, cursor, filters) as an array and answer one
 * page (pass the answer's next_cursor as cursor for the next). The rules of each call are in the API
 * reference (/docs); here only what the client adds.
 */
trait Operations
{
    // --- Accounts and sign-in (login and loginClient are in Client) ---

    /** @operation GET /me */
    public function getMe(): array
    {
        return $this->call('getMe', 'GET', '/me');
    }

    /** @operation GET /meorganisation */
    public function getMeOrganisation(): array
    {
        return $this->call('getMeOrganisation', 'GET', '/meorganisation');
    }

    /** Starts two-factor enrolment: the secret and its otpauth URI. @operation POST /me/mfa/totp */
    public function enrolTotp(): array
    {
        return $this->call('enrolTotp', 'POST', '/me/mfa/totp');
    }

    /** @operation POST /me/mfa/totp/confirm */
    public function confirmTotp(array $body): array
    {
        return $this->call('confirmTotp', 'POST', '/me/mfa/totp/confirm', ['json' => $body]);
    }

    /** @operation DELETE /me/mfa/totp */
    public function disableTotp(array $body): void
    {
        $this->call('disableTotp', 'DELETE', '/me/mfa/totp', ['json' => $body]);
    }

    /** Every earlier token of the user ends, this client's too: log in again. @operation POST /change-password */
    public function changePassword(array $body): array
    {
        $answer = $this->call('changePassword', 'POST', '/change-password', ['json' => $body]);
        $this->setToken(null);
        return $answer;
    }

    /** Ends this client's token at once. @operation POST /logout */
    public function logout(): void
    {
        $this->call('logout', 'POST', '/logout');
        $this->setToken(null);
    }

    /** Always 202, whether or not the username exists. @operation POST /forgot-password */
    public function forgotPassword(string $username): array
    {
        return $this->call('forgotPassword', 'POST', '/forgot-password', ['json' => ['username' => $username], 'auth' => false]);
    }

    /** @operation POST /reset-password */
    public function resetPassword(array $body): array
    {
        return $this->call('resetPassword', 'POST', '/reset-password', ['json' => $body, 'auth' => false]);
    }

    // --- API clients (servers' credentials) ---

    /** The secret is in this answer only. @operation POST /api-clients */
    public function createApiClient(array $body): array
    {
        return $this->call('createApiClient', 'POST', '/api-clients', ['json' => $body]);
    }

    /** @operation GET /api-clients */
    public function listApiClients(): array
    {
        return $this->call('listApiClients', 'GET', '/api-clients');
    }

    /** @operation POST /api-clients/{client_id}/adopt */
    public function adoptApiClient(string $clientId): array
    {
        return $this->call('adoptApiClient', 'POST', '/api-clients/' . self::seg($clientId) . '/adopt');
    }

    /** A new secret, in this answer only. @operation POST /api-clients/{client_id}/rotate */
    public function rotateApiClient(string $clientId): array
    {
        return $this->call('rotateApiClient', 'POST', '/api-clients/' . self::seg($clientId) . '/rotate');
    }

    /** @operation DELETE /api-clients/{client_id} */
    public function deleteApiClient(string $clientId): void
    {
        $this->call('deleteApiClient', 'DELETE', '/api-clients/' . self::seg($clientId));
    }

    // --- Team and organisation ---

    /** @operation GET /team */
    public function listTeam(): array
    {
        return $this->call('listTeam', 'GET', '/team');
    }

    /** Gone: always 410 (ApiError); invite people with inviteTeamMember. @operation POST /team */
    public function addTeamMember(array $body = []): mixed
    {
        return $this->call('addTeamMember', 'POST', '/team', ['json' => $body]);
    }

    /** Disable or enable a user, or change their role. @operation PATCH /team/{id} */
    public function updateTeamMember(string|int $id, array $change): array
    {
        return $this->call('updateTeamMember', 'PATCH', '/team/' . self::seg($id), ['json' => $change]);
    }

    /** @operation POST /team/invitations */
    public function inviteTeamMember(array $body): array
    {
        return $this->call('inviteTeamMember', 'POST', '/team/invitations', ['json' => $body]);
    }

    /** @operation GET /team/invitations */
    public function listTeamInvitations(): array
    {
        return $this->call('listTeamInvitations', 'GET', '/team/invitations');
    }

    /** @operation DELETE /team/invitations/{id} */
    public function revokeTeamInvitation(string|int $id): array
    {
        return $this->call('revokeTeamInvitation', 'DELETE', '/team/invitations/' . self::seg($id));
    }

    /** What an invitation is for (organisation, role, username, expires_at), read with its token. @operation POST /invitations/preview */
    public function previewInvitation(string $token): array
    {
        return $this->call('previewInvitation', 'POST', '/invitations/preview', ['json' => ['token' => $token], 'auth' => false]);
    }

    /** The invited person chooses a password with the e-mail's token (no bearer token). @operation POST /invitations/accept */
    public function acceptInvitation(array $body): array
    {
        return $this->call('acceptInvitation', 'POST', '/invitations/accept', ['json' => $body, 'auth' => false]);
    }

    /** @operation GET /me/organisation */
    public function getOrganisationSettings(): array
    {
        return $this->call('getOrganisationSettings', 'GET', '/me/organisation');
    }

    /** @operation PATCH /me/organisation */
    public function updateOrganisationSettings(array $change): array
    {
        return $this->call('updateOrganisationSettings', 'PATCH', '/me/organisation', ['json' => $change]);
    }

    // --- Verification. $idempotencyKey makes a retry safe; $respondAsync answers 202 pending at once (requery it). ---

    /** @operation POST /verify-nin */
    public function verifyNin(array $body, ?string $idempotencyKey = null, bool $respondAsync = false): array
    {
        return $this->call('verifyNin', 'POST', '/verify-nin', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, $respondAsync)]);
    }

    /** A virtual NIN (16 characters, use-once). @operation POST /verify-nin/vnin */
    public function verifyVnin(array $body, ?string $idempotencyKey = null, bool $respondAsync = false): array
    {
        return $this->call('verifyVnin', 'POST', '/verify-nin/vnin', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, $respondAsync)]);
    }

    /** @operation GET /verify-nin/vnin/instructions */
    public function getVninInstructions(): array
    {
        return $this->call('getVninInstructions', 'GET', '/verify-nin/vnin/instructions');
    }

    /** @operation POST /verify-nin/phone */
    public function verifyPhone(array $body, ?string $idempotencyKey = null, bool $respondAsync = false): array
    {
        return $this->call('verifyPhone', 'POST', '/verify-nin/phone', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, $respondAsync)]);
    }

    /** @operation POST /verify-nin/demography */
    public function verifyDemography(array $body, ?string $idempotencyKey = null, bool $respondAsync = false): array
    {
        return $this->call('verifyDemography', 'POST', '/verify-nin/demography', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, $respondAsync)]);
    }

    /** Match-only: booleans and scores, no record (always synchronous). @operation POST /verify-nin/match */
    public function verifyMatch(array $body, ?string $idempotencyKey = null): array
    {
        return $this->call('verifyMatch', 'POST', '/verify-nin/match', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, false)]);
    }

    /** @operation POST /verify-nin/face */
    public function verifyFace(array $body, ?string $idempotencyKey = null, bool $respondAsync = false): array
    {
        return $this->call('verifyFace', 'POST', '/verify-nin/face', ['json' => $body, 'headers' => self::verifyHeaders($idempotencyKey, $respondAsync)]);
    }

    /**
     * Free; safe to retry. While the verification runs the answer is `{"status": "pending", ...}` (202);
     * then what the verification answered (or its error, thrown).
     * @operation POST /verify-nin/requery
     */
    public function requeryVerification(string $referenceId): array
    {
        return $this->call('requeryVerification', 'POST', '/verify-nin/requery', ['json' => ['reference_id' => $referenceId]]);
    }

    /** The printable slip of a found verification: PDF bytes. @operation GET /verify-nin/slip/{reference_id} */
    public function getVerificationSlip(string $referenceId): string
    {
        return $this->bytes('getVerificationSlip', '/verify-nin/slip/' . self::seg($referenceId), 'application/pdf');
    }

    /** @operation GET /nimc-reasons */
    public function listNimcReasons(): array
    {
        return $this->call('listNimcReasons', 'GET', '/nimc-reasons');
    }

    /** @operation GET /upstream-reasons */
    public function listUpstreamReasons(): array
    {
        return $this->call('listUpstreamReasons', 'GET', '/upstream-reasons');
    }

    // --- Batches ---

    /** A batch as JSON: `{"reason", "rows": [{"nin"|"phone_no"|..., "client_ref"}]}`. @operation POST /verify-nin/batches */
    public function createBatch(array $body): array
    {
        return $this->call('createBatch', 'POST', '/verify-nin/batches', ['json' => $body]);
    }

    /**
     * A batch as a CSV upload (header row first); the reason and consent go in the query
     * (`['reason' => 'corporate', 'consent_obtained_at' => ...]`).
     * @operation POST /verify-nin/batches
     */
    public function createBatchCsv(string $csv, array $query): array
    {
        return $this->call('createBatch', 'POST', '/verify-nin/batches', ['body' => $csv, 'content_type' => 'text/csv', 'query' => $query]);
    }

    /** @operation GET /verify-nin/batches */
    public function listBatches(array $query = []): array
    {
        return $this->call('listBatches', 'GET', '/verify-nin/batches', ['query' => $query]);
    }

    /** @operation GET /verify-nin/batches/{id} */
    public function getBatch(string|int $id): array
    {
        return $this->call('getBatch', 'GET', '/verify-nin/batches/' . self::seg($id));
    }

    /** One page of a batch's results as JSON. @operation GET /verify-nin/batches/{id}/results */
    public function getBatchResults(string|int $id, array $query = []): array
    {
        return $this->call('getBatchResults', 'GET', '/verify-nin/batches/' . self::seg($id) . '/results', ['query' => $query]);
    }

    /** A batch's results as CSV text. @operation GET /verify-nin/batches/{id}/results */
    public function getBatchResultsCsv(string|int $id): string
    {
        return $this->bytes('getBatchResults', '/verify-nin/batches/' . self::seg($id) . '/results', 'text/csv');
    }

    /** @operation POST /verify-nin/batches/{id}/cancel */
    public function cancelBatch(string|int $id): array
    {
        return $this->call('cancelBatch', 'POST', '/verify-nin/batches/' . self::seg($id) . '/cancel');
    }

    // --- Wallet and top-ups ---

    /** A payment link for $units units (organisation administrators). @operation POST /topup/initialize */
    public function initializeTopup(int $units): array
    {
        return $this->call('initializeTopup', 'POST', '/topup/initialize', ['form' => ['units' => $units]]);
    }

    /** @operation GET /topup/quote */
    public function quoteTopup(int $units): array
    {
        return $this->call('quoteTopup', 'GET', '/topup/quote', ['query' => ['units' => $units]]);
    }

    /** @operation POST /topup/verify */
    public function verifyTopup(string $reference): array
    {
        return $this->call('verifyTopup', 'POST', '/topup/verify', ['form' => ['reference' => $reference]]);
    }

    /** The payment processor's callback (it calls this, not you): the raw event and its signature. @operation POST /webhooks/paystack */
    public function receivePaystackEvent(string $rawBody, string $signature): array
    {
        return $this->call('receivePaystackEvent', 'POST', '/webhooks/paystack', ['body' => $rawBody, 'content_type' => 'application/json', 'headers' => ['x-paystack-signature' => $signature], 'auth' => false]);
    }

    /** @operation GET /settings/auto-topup */
    public function getAutoTopup(): array
    {
        return $this->call('getAutoTopup', 'GET', '/settings/auto-topup');
    }

    /** @operation PUT /settings/auto-topup */
    public function setAutoTopup(array $settings): array
    {
        return $this->call('setAutoTopup', 'PUT', '/settings/auto-topup', ['json' => $settings]);
    }

    /** @operation GET /usage/daily */
    public function dailyUsage(?int $days = null): array
    {
        return $this->call('dailyUsage', 'GET', '/usage/daily', ['query' => ['days' => $days]]);
    }

    // --- History (pages: pass next_cursor as cursor; the *Csv methods give the whole filtered list) ---

    /** @operation GET /transactions */
    public function listTransactions(array $query = []): array
    {
        return $this->call('listTransactions', 'GET', '/transactions', ['query' => $query]);
    }

    /** @operation GET /transactions */
    public function listTransactionsCsv(array $query = []): string
    {
        return $this->bytes('listTransactions', '/transactions', 'text/csv', ['query' => $query]);
    }

    /** @operation GET /topups */
    public function listTopups(array $query = []): array
    {
        return $this->call('listTopups', 'GET', '/topups', ['query' => $query]);
    }

    /** @operation GET /topups */
    public function listTopupsCsv(array $query = []): string
    {
        return $this->bytes('listTopups', '/topups', 'text/csv', ['query' => $query]);
    }

    /** @operation GET /topups/{reference} */
    public function getTopup(string $reference): array
    {
        return $this->call('getTopup', 'GET', '/topups/' . self::seg($reference));
    }

    /** A paid top-up's invoice: PDF bytes. @operation GET /topups/{reference}/invoice */
    public function getTopupInvoice(string $reference): string
    {
        return $this->bytes('getTopupInvoice', '/topups/' . self::seg($reference) . '/invoice', 'application/pdf');
    }

    /** @operation GET /verifications */
    public function listVerifications(array $query = []): array
    {
        return $this->call('listVerifications', 'GET', '/verifications', ['query' => $query]);
    }

    /** @operation GET /verifications */
    public function listVerificationsCsv(array $query = []): string
    {
        return $this->bytes('listVerifications', '/verifications', 'text/csv', ['query' => $query]);
    }

    /** @operation GET /verifications/{reference_id}/receipt */
    public function getVerificationReceipt(string $referenceId): array
    {
        return $this->call('getVerificationReceipt', 'GET', '/verifications/' . self::seg($referenceId) . '/receipt');
    }

    /** @operation GET /audit-events */
    public function listAuditEvents(array $query = []): array
    {
        return $this->call('listAuditEvents', 'GET', '/audit-events', ['query' => $query]);
    }

    /** @operation GET /audit-events */
    public function listAuditEventsCsv(array $query = []): string
    {
        return $this->bytes('listAuditEvents', '/audit-events', 'text/csv', ['query' => $query]);
    }

    /** A month's statement ("2026-01") as JSON. @operation GET /statements/{month} */
    public function getStatement(string $month): array
    {
        return $this->call('getStatement', 'GET', '/statements/' . self::seg($month));
    }

    /** A month's statement as bytes: $accept 'application/pdf' or 'text/csv'. @operation GET /statements/{month} */
    public function getStatementFile(string $month, string $accept = 'application/pdf'): string
    {
        return $this->bytes('getStatement', '/statements/' . self::seg($month), $accept);
    }

    // --- Webhook endpoints ---

    /** The signing secret (`whsec_...`) is in this answer only. @operation POST /webhook-endpoints */
    public function createWebhookEndpoint(array $body): array
    {
        return $this->call('createWebhookEndpoint', 'POST', '/webhook-endpoints', ['json' => $body]);
    }

    /** @operation GET /webhook-endpoints */
    public function listWebhookEndpoints(): array
    {
        return $this->call('listWebhookEndpoints', 'GET', '/webhook-endpoints');
    }

    /** @operation GET /webhook-endpoints/{id} */
    public function getWebhookEndpoint(string|int $id): array
    {
        return $this->call('getWebhookEndpoint', 'GET', '/webhook-endpoints/' . self::seg($id));
    }

    /** @operation PATCH /webhook-endpoints/{id} */
    public function updateWebhookEndpoint(string|int $id, array $change): array
    {
        return $this->call('updateWebhookEndpoint', 'PATCH', '/webhook-endpoints/' . self::seg($id), ['json' => $change]);
    }

    /** @operation DELETE /webhook-endpoints/{id} */
    public function deleteWebhookEndpoint(string|int $id): void
    {
        $this->call('deleteWebhookEndpoint', 'DELETE', '/webhook-endpoints/' . self::seg($id));
    }

    /** A new secret, in this answer only; the old one keeps signing for 24 hours. @operation POST /webhook-endpoints/{id}/rotate-secret */
    public function rotateWebhookSecret(string|int $id): array
    {
        return $this->call('rotateWebhookSecret', 'POST', '/webhook-endpoints/' . self::seg($id) . '/rotate-secret');
    }

    /** Sends a `ping` event. @operation POST /webhook-endpoints/{id}/test */
    public function testWebhookEndpoint(string|int $id): array
    {
        return $this->call('testWebhookEndpoint', 'POST', '/webhook-endpoints/' . self::seg($id) . '/test');
    }

    /** @operation GET /webhook-endpoints/{id}/deliveries */
    public function listWebhookDeliveries(string|int $id, array $query = []): array
    {
        return $this->call('listWebhookDeliveries', 'GET', '/webhook-endpoints/' . self::seg($id) . '/deliveries', ['query' => $query]);
    }

    /** @operation POST /webhook-endpoints/deliveries/{delivery_id}/redeliver */
    public function redeliverWebhook(string|int $deliveryId): array
    {
        return $this->call('redeliverWebhook', 'POST', '/webhook-endpoints/deliveries/' . self::seg($deliveryId) . '/redeliver');
    }

    // --- Verification links (a person verifies themselves on a hosted page) ---

    /** @operation POST /verification-links */
    public function createVerificationLink(array $body): array
    {
        return $this->call('createVerificationLink', 'POST', '/verification-links', ['json' => $body]);
    }

    /** @operation GET /verification-links */
    public function listVerificationLinks(array $query = []): array
    {
        return $this->call('listVerificationLinks', 'GET', '/verification-links', ['query' => $query]);
    }

    /** @operation GET /verification-links/{id} */
    public function getVerificationLink(string|int $id): array
    {
        return $this->call('getVerificationLink', 'GET', '/verification-links/' . self::seg($id));
    }

    /** @operation POST /verification-links/{id}/revoke */
    public function revokeVerificationLink(string|int $id): array
    {
        return $this->call('revokeVerificationLink', 'POST', '/verification-links/' . self::seg($id) . '/revoke');
    }

    // --- Liveness (head poses in a random order, judged on the server) ---

    /** @operation POST /liveness/sessions */
    public function createLivenessSession(): array
    {
        return $this->call('createLivenessSession', 'POST', '/liveness/sessions');
    }

    /** @operation GET /liveness/sessions/{id} */
    public function getLivenessSession(string $id): array
    {
        return $this->call('getLivenessSession', 'GET', '/liveness/sessions/' . self::seg($id));
    }

    // --- Platform administrators ---

    /** @operation GET /platform/organisations */
    public function listPlatformOrganisations(array $query = []): array
    {
        return $this->call('listPlatformOrganisations', 'GET', '/platform/organisations', ['query' => $query]);
    }

    /** @operation GET /platform/organisations/{id} */
    public function getPlatformOrganisation(string|int $id): array
    {
        return $this->call('getPlatformOrganisation', 'GET', '/platform/organisations/' . self::seg($id));
    }

    // --- Service (no token) ---

    /** Liveness, at the service root (outside /v1). @operation GET /healthz */
    public function healthz(): array
    {
        return $this->call('healthz', 'GET', '/healthz', ['root' => true, 'auth' => false]);
    }

    /** Readiness, at the service root (outside /v1). @operation GET /readyz */
    public function readyz(): array
    {
        return $this->call('readyz', 'GET', '/readyz', ['root' => true, 'auth' => false]);
    }

    /** The OpenAPI document this client follows. @operation GET /openapi.json */
    public function getOpenApiDocument(): array
    {
        return $this->call('getOpenApiDocument', 'GET', '/openapi.json', ['auth' => false]);
    }

    /** The same document rendered as OpenAPI 3.0, for tools that cannot read 3.1. @operation GET /openapi-3.0.json */
    public function getOpenApiDocument30(): array
    {
        return $this->call('getOpenApiDocument30', 'GET', '/openapi-3.0.json', ['auth' => false]);
    }
}
