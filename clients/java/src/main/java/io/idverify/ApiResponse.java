package io.idverify;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** One HTTP answer as it came: status, headers (names lower-cased) and the raw body. */
public final class ApiResponse {
    private final int status;
    private final Map<String, String> headers;
    private final byte[] body;

    public ApiResponse(int status, Map<String, String> headers, byte[] body) {
        this.status = status;
        this.headers = Map.copyOf(headers);
        this.body = body;
    }

    public int status() {
        return status;
    }

    public Map<String, String> headers() {
        return headers;
    }

    /** A header's value, the name in any case; null when absent. */
    public String header(String name) {
        return headers.get(name.toLowerCase(java.util.Locale.ROOT));
    }

    public byte[] body() {
        return body.clone();
    }

    public String text() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The body as JSON; null when empty. A body that is not JSON throws IdverifyException. */
    public JsonNode json() {
        if (body.length == 0) return null;
        try {
            return Json.MAPPER.readTree(body);
        } catch (IOException e) {
            throw new IdverifyException("The answer (" + status + ") is not JSON: " + e.getMessage(), e);
        }
    }
}
