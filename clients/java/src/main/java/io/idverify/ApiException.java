package io.idverify;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A non-2xx answer of the API: {@link #status()}, {@link #detail()} (the service's message, "HTTP &lt;status&gt;"
 * when the body has none) and {@link #code()} (its machine-readable code where it gives one, e.g.
 * {@code mfa_required}, {@code vnin_expired}; else null). Quote {@link #requestId()} to support.
 */
public final class ApiException extends IdverifyException {
    private final int status;
    private final String detail;
    private final String code;
    private final JsonNode body;
    private final String rawBody;
    private final String requestId;
    private final String operation;

    public ApiException(String operation, int status, String detail, String code, JsonNode body, String rawBody, String requestId) {
        super(operation + ": " + status + " " + detail);
        this.operation = operation;
        this.status = status;
        this.detail = detail;
        this.code = code;
        this.body = body;
        this.rawBody = rawBody;
        this.requestId = requestId;
    }

    static ApiException from(String operation, ApiResponse res) {
        JsonNode body = null;
        try {
            body = res.json();
        } catch (IdverifyException notJson) {
            // The raw text stays in rawBody.
        }
        String detail = body != null && body.path("detail").isTextual() ? body.get("detail").asText() : "HTTP " + res.status();
        String code = body != null && body.path("code").isTextual() ? body.get("code").asText() : null;
        return new ApiException(operation, res.status(), detail, code, body, res.text(), res.header("x-request-id"));
    }

    public int status() {
        return status;
    }

    public String detail() {
        return detail;
    }

    /** The body's {@code code}, or null. */
    public String code() {
        return code;
    }

    /** The body as JSON, or null when it was not JSON (see {@link #rawBody()}). */
    public JsonNode body() {
        return body;
    }

    public String rawBody() {
        return rawBody;
    }

    public String requestId() {
        return requestId;
    }

    public String operation() {
        return operation;
    }

    /** reference_id of a verification whose outcome is unknown (502/504): requery it after 30 s. */
    public String referenceId() {
        return body != null && body.path("reference_id").isTextual() ? body.get("reference_id").asText() : null;
    }
}
