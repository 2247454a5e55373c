package io.idverify;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * A thin client of the Identity Verification and Wallet API: one small method per operation of the OpenAPI
 * document ({@code GET /v1/openapi.json}), named by its operationId and marked with its operation (an "@operation" comment: the method and the path as the document writes them).
 * Bodies are anything Jackson writes (a Map, a record, a JsonNode) shaped as the document's schemas; JSON
 * answers come back as {@link JsonNode}, files (slip, invoice, statement PDF, CSV) as bytes. List methods take
 * their query (limit, cursor, filters) as a Map and answer one page: pass its next_cursor as cursor for the next.
 * A non-2xx answer throws {@link ApiException} (status, detail, code).
 */
public final class IdverifyClient extends BaseClient {
    public IdverifyClient(String baseUrl) {
        this(baseUrl, null);
    }

    public IdverifyClient(String baseUrl, Options options) {
        super(baseUrl, options);
    }

    private static RequestOptions q(Map<String, ?> query) {
        return RequestOptions.create().query(query);
    }

    private static RequestOptions json(Object body) {
        return RequestOptions.create().json(body);
    }

    // --- Accounts and sign-in (login and loginClient are in BaseClient) ---

    /** @operation GET /me */
    public JsonNode getMe() {
        return call("getMe", "GET", "/me");
    }

    /** @operation GET /meorganisation */
    public JsonNode getMeOrganisation() {
        return call("getMeOrganisation", "GET", "/meorganisation");
    }

    /** Starts two-factor enrolment. @operation POST /me/mfa/totp */
    public JsonNode enrolTotp() {
        return call("enrolTotp", "POST", "/me/mfa/totp");
    }

    /** @operation POST /me/mfa/totp/confirm */
    public JsonNode confirmTotp(Object body) {
        return call("confirmTotp", "POST", "/me/mfa/totp/confirm", json(body));
    }

    /** @operation DELETE /me/mfa/totp */
    public void disableTotp(Object body) {
        call("disableTotp", "DELETE", "/me/mfa/totp", json(body));
    }

    /** Every earlier token of the user ends, this client's too: log in again. @operation POST /change-password */
    public JsonNode changePassword(Object body) {
        JsonNode answer = call("changePassword", "POST", "/change-password", json(body));
        setToken(null);
        return answer;
    }

    /** Ends this client's token at once. @operation POST /logout */
    public void logout() {
        call("logout", "POST", "/logout");
        setToken(null);
    }

    /** Always 202, whether or not the username exists. @operation POST /forgot-password */
    public JsonNode forgotPassword(String username) {
        return call("forgotPassword", "POST", "/forgot-password", json(Map.of("username", username)).auth(false));
    }

    /** @operation POST /reset-password */
    public JsonNode resetPassword(Object body) {
        return call("resetPassword", "POST", "/reset-password", json(body).auth(false));
    }

    // --- API clients (servers' credentials) ---

    /** The secret is in this answer only. @operation POST /api-clients */
    public JsonNode createApiClient(Object body) {
        return call("createApiClient", "POST", "/api-clients", json(body));
    }

    /** @operation GET /api-clients */
    public JsonNode listApiClients() {
        return call("listApiClients", "GET", "/api-clients");
    }

    /** @operation POST /api-clients/{client_id}/adopt */
    public JsonNode adoptApiClient(String clientId) {
        return call("adoptApiClient", "POST", "/api-clients/" + seg(clientId) + "/adopt");
    }

    /** A new secret, in this answer only. @operation POST /api-clients/{client_id}/rotate */
    public JsonNode rotateApiClient(String clientId) {
        return call("rotateApiClient", "POST", "/api-clients/" + seg(clientId) + "/rotate");
    }

    /** @operation DELETE /api-clients/{client_id} */
    public void deleteApiClient(String clientId) {
        call("deleteApiClient", "DELETE", "/api-clients/" + seg(clientId));
    }

    // --- Team and organisation ---

    /** @operation GET /team */
    public JsonNode listTeam() {
        return call("listTeam", "GET", "/team");
    }

    /** Gone: always 410 (ApiException); invite people with inviteTeamMember. @operation POST /team */
    public JsonNode addTeamMember(Object body) {
        return call("addTeamMember", "POST", "/team", json(body == null ? Map.of() : body));
    }

    /** Disable or enable a user, or change their role. @operation PATCH /team/{id} */
    public JsonNode updateTeamMember(Object id, Object change) {
        return call("updateTeamMember", "PATCH", "/team/" + seg(id), json(change));
    }

    /** @operation POST /team/invitations */
    public JsonNode inviteTeamMember(Object body) {
        return call("inviteTeamMember", "POST", "/team/invitations", json(body));
    }

    /** @operation GET /team/invitations */
    public JsonNode listTeamInvitations() {
        return call("listTeamInvitations", "GET", "/team/invitations");
    }

    /** @operation DELETE /team/invitations/{id} */
    public JsonNode revokeTeamInvitation(Object id) {
        return call("revokeTeamInvitation", "DELETE", "/team/invitations/" + seg(id));
    }

    /** What an invitation is for (organisation, role, username, expires_at), read with its token. @operation POST /invitations/preview */
    public JsonNode previewInvitation(String token) {
        return call("previewInvitation", "POST", "/invitations/preview", json(Map.of("token", token)).auth(false));
    }

    /** The invited person chooses a password with the e-mail's token (no bearer token). @operation POST /invitations/accept */
    public JsonNode acceptInvitation(Object body) {
        return call("acceptInvitation", "POST", "/invitations/accept", json(body).auth(false));
    }

    /** @operation GET /me/organisation */
    public JsonNode getOrganisationSettings() {
        return call("getOrganisationSettings", "GET", "/me/organisation");
    }

    /** @operation PATCH /me/organisation */
    public JsonNode updateOrganisationSettings(Object change) {
        return call("updateOrganisationSettings", "PATCH", "/me/organisation", json(change));
    }

    // --- Verification (VerifyOptions: Idempotency-Key, Prefer: respond-async; null for none) ---

    /** @operation POST /verify-nin */
    public JsonNode verifyNin(Object body, VerifyOptions o) {
        return call("verifyNin", "POST", "/verify-nin", verifying(body, o));
    }

    public JsonNode verifyNin(Object body) {
        return verifyNin(body, null);
    }

    /** A virtual NIN (16 characters, use-once). @operation POST /verify-nin/vnin */
    public JsonNode verifyVnin(Object body, VerifyOptions o) {
        return call("verifyVnin", "POST", "/verify-nin/vnin", verifying(body, o));
    }

    /** @operation GET /verify-nin/vnin/instructions */
    public JsonNode getVninInstructions() {
        return call("getVninInstructions", "GET", "/verify-nin/vnin/instructions");
    }

    /** @operation POST /verify-nin/phone */
    public JsonNode verifyPhone(Object body, VerifyOptions o) {
        return call("verifyPhone", "POST", "/verify-nin/phone", verifying(body, o));
    }

    /** @operation POST /verify-nin/demography */
    public JsonNode verifyDemography(Object body, VerifyOptions o) {
        return call("verifyDemography", "POST", "/verify-nin/demography", verifying(body, o));
    }

    /** Match-only: booleans and scores, no record (always synchronous: respondAsync is not sent). @operation POST /verify-nin/match */
    public JsonNode verifyMatch(Object body, VerifyOptions o) {
        return call("verifyMatch", "POST", "/verify-nin/match", verifying(body, o == null ? null : VerifyOptions.create().idempotencyKey(o.idempotencyKey)));
    }

    /** @operation POST /verify-nin/face */
    public JsonNode verifyFace(Object body, VerifyOptions o) {
        return call("verifyFace", "POST", "/verify-nin/face", verifying(body, o));
    }

    /**
     * Free; safe to retry. While the verification runs the answer is {@code {"status": "pending", ...}} (202);
     * then what the verification answered (or its error, thrown).
     * @operation POST /verify-nin/requery
     */
    public JsonNode requeryVerification(String referenceId) {
        return call("requeryVerification", "POST", "/verify-nin/requery", json(Map.of("reference_id", referenceId)));
    }

    /**
     * Requeries until the verification ended: its last answer (an ended failure throws ApiException, as the
     * verification call would have). Throws IdverifyException when still pending after {@code timeout}.
     */
    public JsonNode requeryUntilDone(String referenceId, Duration interval, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            JsonNode answer = requeryVerification(referenceId);
            if (!"pending".equals(answer.path("status").asText())) return answer;
            if (System.nanoTime() >= deadline) throw new IdverifyException(referenceId + " still pending after " + timeout);
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IdverifyException("interrupted while requerying " + referenceId, e);
            }
        }
    }

    /** {@link #requeryUntilDone(String, Duration, Duration)} every second, for up to two minutes. */
    public JsonNode requeryUntilDone(String referenceId) {
        return requeryUntilDone(referenceId, Duration.ofSeconds(1), Duration.ofMinutes(2));
    }

    /**
     * Every page of a history list, following next_cursor, fetched as the iteration goes:
     * {@code for (JsonNode page : client.pages(client::listTransactions, Map.of("kind", "debit")))}.
     */
    public Iterable<JsonNode> pages(Function<Map<String, ?>, JsonNode> list, Map<String, ?> query) {
        return () -> new Iterator<>() {
            private final Map<String, Object> q = new HashMap<>(query == null ? Map.of() : query);
            private boolean done;

            @Override
            public boolean hasNext() {
                return !done;
            }

            @Override
            public JsonNode next() {
                if (done) throw new NoSuchElementException();
                JsonNode page = list.apply(q);
                JsonNode cursor = page.path("next_cursor");
                if (cursor.isTextual()) q.put("cursor", cursor.asText());
                else done = true;
                return page;
            }
        };
    }

    /** The printable slip of a found verification: PDF bytes. @operation GET /verify-nin/slip/{reference_id} */
    public byte[] getVerificationSlip(String referenceId) {
        return bytes("getVerificationSlip", "/verify-nin/slip/" + seg(referenceId), "application/pdf", RequestOptions.create());
    }

    /** @operation GET /nimc-reasons */
    public JsonNode listNimcReasons() {
        return call("listNimcReasons", "GET", "/nimc-reasons");
    }

    /** @operation GET /upstream-reasons */
    public JsonNode listUpstreamReasons() {
        return call("listUpstreamReasons", "GET", "/upstream-reasons");
    }

    // --- Batches ---

    /** A batch as JSON: {@code {"reason", "rows": [{"nin"|"phone_no"|..., "client_ref"}]}}. @operation POST /verify-nin/batches */
    public JsonNode createBatch(Object body) {
        return call("createBatch", "POST", "/verify-nin/batches", json(body));
    }

    /** A batch as a CSV upload (header row first); reason and consent go in the query. @operation POST /verify-nin/batches */
    public JsonNode createBatchCsv(String csv, Map<String, ?> query) {
        return call("createBatch", "POST", "/verify-nin/batches", q(query).body(csv.getBytes(StandardCharsets.UTF_8), "text/csv"));
    }

    /** @operation GET /verify-nin/batches */
    public JsonNode listBatches(Map<String, ?> query) {
        return call("listBatches", "GET", "/verify-nin/batches", q(query));
    }

    /** @operation GET /verify-nin/batches/{id} */
    public JsonNode getBatch(Object id) {
        return call("getBatch", "GET", "/verify-nin/batches/" + seg(id));
    }

    /** One page of a batch's results as JSON. @operation GET /verify-nin/batches/{id}/results */
    public JsonNode getBatchResults(Object id, Map<String, ?> query) {
        return call("getBatchResults", "GET", "/verify-nin/batches/" + seg(id) + "/results", q(query));
    }

    /** A batch's results as CSV. @operation GET /verify-nin/batches/{id}/results */
    public byte[] getBatchResultsCsv(Object id) {
        return bytes("getBatchResults", "/verify-nin/batches/" + seg(id) + "/results", "text/csv", RequestOptions.create());
    }

    /** @operation POST /verify-nin/batches/{id}/cancel */
    public JsonNode cancelBatch(Object id) {
        return call("cancelBatch", "POST", "/verify-nin/batches/" + seg(id) + "/cancel");
    }

    // --- Wallet and top-ups ---

    /** A payment link for {@code units} units (organisation administrators). @operation POST /topup/initialize */
    public JsonNode initializeTopup(long units) {
        return call("initializeTopup", "POST", "/topup/initialize", RequestOptions.create().form(Map.of("units", units)));
    }

    /** @operation GET /topup/quote */
    public JsonNode quoteTopup(long units) {
        return call("quoteTopup", "GET", "/topup/quote", RequestOptions.create().query("units", units));
    }

    /** @operation POST /topup/verify */
    public JsonNode verifyTopup(String reference) {
        return call("verifyTopup", "POST", "/topup/verify", RequestOptions.create().form(Map.of("reference", reference)));
    }

    /** The payment processor's callback (it calls this, not you): the raw event and its signature. @operation POST /webhooks/paystack */
    public JsonNode receivePaystackEvent(String rawBody, String signature) {
        return call("receivePaystackEvent", "POST", "/webhooks/paystack",
            RequestOptions.create().body(rawBody.getBytes(StandardCharsets.UTF_8), "application/json").header("x-paystack-signature", signature).auth(false));
    }

    /** @operation GET /settings/auto-topup */
    public JsonNode getAutoTopup() {
        return call("getAutoTopup", "GET", "/settings/auto-topup");
    }

    /** @operation PUT /settings/auto-topup */
    public JsonNode setAutoTopup(Object settings) {
        return call("setAutoTopup", "PUT", "/settings/auto-topup", json(settings));
    }

    /** {@code days} null: the server's default. @operation GET /usage/daily */
    public JsonNode dailyUsage(Integer days) {
        return call("dailyUsage", "GET", "/usage/daily", RequestOptions.create().query("days", days));
    }

    // --- History (pages: pass next_cursor as cursor; the *Csv methods give the whole filtered list) ---

    /** @operation GET /transactions */
    public JsonNode listTransactions(Map<String, ?> query) {
        return call("listTransactions", "GET", "/transactions", q(query));
    }

    /** @operation GET /transactions */
    public byte[] listTransactionsCsv(Map<String, ?> query) {
        return bytes("listTransactions", "/transactions", "text/csv", q(query));
    }

    /** @operation GET /topups */
    public JsonNode listTopups(Map<String, ?> query) {
        return call("listTopups", "GET", "/topups", q(query));
    }

    /** @operation GET /topups */
    public byte[] listTopupsCsv(Map<String, ?> query) {
        return bytes("listTopups", "/topups", "text/csv", q(query));
    }

    /** @operation GET /topups/{reference} */
    public JsonNode getTopup(String reference) {
        return call("getTopup", "GET", "/topups/" + seg(reference));
    }

    /** A paid top-up's invoice: PDF bytes. @operation GET /topups/{reference}/invoice */
    public byte[] getTopupInvoice(String reference) {
        return bytes("getTopupInvoice", "/topups/" + seg(reference) + "/invoice", "application/pdf", RequestOptions.create());
    }

    /** @operation GET /verifications */
    public JsonNode listVerifications(Map<String, ?> query) {
        return call("listVerifications", "GET", "/verifications", q(query));
    }

    /** @operation GET /verifications */
    public byte[] listVerificationsCsv(Map<String, ?> query) {
        return bytes("listVerifications", "/verifications", "text/csv", q(query));
    }

    /** @operation GET /verifications/{reference_id}/receipt */
    public JsonNode getVerificationReceipt(String referenceId) {
        return call("getVerificationReceipt", "GET", "/verifications/" + seg(referenceId) + "/receipt");
    }

    /** @operation GET /audit-events */
    public JsonNode listAuditEvents(Map<String, ?> query) {
        return call("listAuditEvents", "GET", "/audit-events", q(query));
    }

    /** @operation GET /audit-events */
    public byte[] listAuditEventsCsv(Map<String, ?> query) {
        return bytes("listAuditEvents", "/audit-events", "text/csv", q(query));
    }

    /** A month's statement ("2026-01") as JSON. @operation GET /statements/{month} */
    public JsonNode getStatement(String month) {
        return call("getStatement", "GET", "/statements/" + seg(month));
    }

    /** A month's statement as bytes: {@code accept} "application/pdf" or "text/csv". @operation GET /statements/{month} */
    public byte[] getStatementFile(String month, String accept) {
        return bytes("getStatement", "/statements/" + seg(month), accept, RequestOptions.create());
    }

    // --- Webhook endpoints ---

    /** The signing secret ({@code whsec_...}) is in this answer only. @operation POST /webhook-endpoints */
    public JsonNode createWebhookEndpoint(Object body) {
        return call("createWebhookEndpoint", "POST", "/webhook-endpoints", json(body));
    }

    /** @operation GET /webhook-endpoints */
    public JsonNode listWebhookEndpoints() {
        return call("listWebhookEndpoints", "GET", "/webhook-endpoints");
    }

    /** @operation GET /webhook-endpoints/{id} */
    public JsonNode getWebhookEndpoint(Object id) {
        return call("getWebhookEndpoint", "GET", "/webhook-endpoints/" + seg(id));
    }

    /** @operation PATCH /webhook-endpoints/{id} */
    public JsonNode updateWebhookEndpoint(Object id, Object change) {
        return call("updateWebhookEndpoint", "PATCH", "/webhook-endpoints/" + seg(id), json(change));
    }

    /** @operation DELETE /webhook-endpoints/{id} */
    public void deleteWebhookEndpoint(Object id) {
        call("deleteWebhookEndpoint", "DELETE", "/webhook-endpoints/" + seg(id));
    }

    /** A new secret, in this answer only; the old one keeps signing for 24 hours. @operation POST /webhook-endpoints/{id}/rotate-secret */
    public JsonNode rotateWebhookSecret(Object id) {
        return call("rotateWebhookSecret", "POST", "/webhook-endpoints/" + seg(id) + "/rotate-secret");
    }

    /** Sends a {@code ping} event. @operation POST /webhook-endpoints/{id}/test */
    public JsonNode testWebhookEndpoint(Object id) {
        return call("testWebhookEndpoint", "POST", "/webhook-endpoints/" + seg(id) + "/test");
    }

    /** @operation GET /webhook-endpoints/{id}/deliveries */
    public JsonNode listWebhookDeliveries(Object id, Map<String, ?> query) {
        return call("listWebhookDeliveries", "GET", "/webhook-endpoints/" + seg(id) + "/deliveries", q(query));
    }

    /** @operation POST /webhook-endpoints/deliveries/{delivery_id}/redeliver */
    public JsonNode redeliverWebhook(Object deliveryId) {
        return call("redeliverWebhook", "POST", "/webhook-endpoints/deliveries/" + seg(deliveryId) + "/redeliver");
    }

    // --- Verification links (a person verifies themselves on a hosted page) ---

    /** @operation POST /verification-links */
    public JsonNode createVerificationLink(Object body) {
        return call("createVerificationLink", "POST", "/verification-links", json(body));
    }

    /** @operation GET /verification-links */
    public JsonNode listVerificationLinks(Map<String, ?> query) {
        return call("listVerificationLinks", "GET", "/verification-links", q(query));
    }

    /** @operation GET /verification-links/{id} */
    public JsonNode getVerificationLink(Object id) {
        return call("getVerificationLink", "GET", "/verification-links/" + seg(id));
    }

    /** @operation POST /verification-links/{id}/revoke */
    public JsonNode revokeVerificationLink(Object id) {
        return call("revokeVerificationLink", "POST", "/verification-links/" + seg(id) + "/revoke");
    }

    // --- Liveness (head poses in a random order, judged on the server) ---

    /** @operation POST /liveness/sessions */
    public JsonNode createLivenessSession() {
        return call("createLivenessSession", "POST", "/liveness/sessions");
    }

    /** @operation GET /liveness/sessions/{id} */
    public JsonNode getLivenessSession(Object id) {
        return call("getLivenessSession", "GET", "/liveness/sessions/" + seg(id));
    }

    // --- Platform administrators ---

    /** @operation GET /platform/organisations */
    public JsonNode listPlatformOrganisations(Map<String, ?> query) {
        return call("listPlatformOrganisations", "GET", "/platform/organisations", q(query));
    }

    /** @operation GET /platform/organisations/{id} */
    public JsonNode getPlatformOrganisation(Object id) {
        return call("getPlatformOrganisation", "GET", "/platform/organisations/" + seg(id));
    }

    // --- Service (no token) ---

    /** Liveness, at the service root (outside /v1). @operation GET /healthz */
    public JsonNode healthz() {
        return call("healthz", "GET", "/healthz", RequestOptions.create().root(true).auth(false));
    }

    /** Readiness, at the service root (outside /v1). @operation GET /readyz */
    public JsonNode readyz() {
        return call("readyz", "GET", "/readyz", RequestOptions.create().root(true).auth(false));
    }

    /** The OpenAPI document this client follows. @operation GET /openapi.json */
    public JsonNode getOpenApiDocument() {
        return call("getOpenApiDocument", "GET", "/openapi.json", RequestOptions.create().auth(false));
    }

    /** The same document rendered as OpenAPI 3.0, for tools that cannot read 3.1. @operation GET /openapi-3.0.json */
    public JsonNode getOpenApiDocument30() {
        return call("getOpenApiDocument30", "GET", "/openapi-3.0.json", RequestOptions.create().auth(false));
    }
}
