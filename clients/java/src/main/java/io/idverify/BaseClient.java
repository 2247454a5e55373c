package io.idverify;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.LongSupplier;

/**
 * The generic part of the client: one {@link #request} for any call, sign-in and the token's renewal.
 * {@link IdverifyClient} adds one small method per operation. Thread-safe.
 */
public abstract class BaseClient {
    /** Settings; all optional. */
    public static final class Options {
        /** Per request (default 60 s: a verification may take 30 s on the server). */
        public Duration timeout = Duration.ofSeconds(60);
        /** Sign in again this long before the token ends (default 60 s). */
        public Duration refreshMargin = Duration.ofSeconds(60);
        /** A token obtained elsewhere (not renewed). */
        public String token;
        /** Unix seconds now; for tests. */
        public LongSupplier clock = () -> System.currentTimeMillis() / 1000;
        public HttpClient httpClient;
    }

    private final String api;
    private final String root;
    private final Options options;
    private final HttpClient http;
    private String token;
    private long expiresAt = -1;
    private Map<String, String> grant;
    private volatile ApiResponse last;

    /** @param baseUrl the API's versioned base, e.g. {@code http://localhost:8080/v1} (a service root without /v1 works too) */
    protected BaseClient(String baseUrl, Options options) {
        String base = baseUrl.replaceAll("/+$", "");
        if (base.endsWith("/v1")) {
            this.api = base;
            this.root = base.substring(0, base.length() - 3);
        } else {
            this.api = base + "/v1";
            this.root = base;
        }
        this.options = options == null ? new Options() : options;
        this.token = this.options.token;
        this.http = this.options.httpClient != null ? this.options.httpClient
            // HTTP/1.1: no h2c upgrade attempt on plain http.
            : HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }

    /** POST /login with a password (OAuth 2.0 password grant); the token is kept and renewed before it ends. */
    public JsonNode login(String username, String password) {
        return login(username, password, null, null);
    }

    /** With a one-time code ({@code otp}, two-factor sign-in) or narrowed {@code scope}; a sign-in with a code is not renewed. */
    public JsonNode login(String username, String password, String otp, String scope) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "password");
        form.put("username", username);
        form.put("password", password);
        if (otp != null) form.put("otp", otp);
        if (scope != null) form.put("scope", scope);
        return signIn(form, otp == null);
    }

    /** POST /login with an API client's credentials (OAuth 2.0 client credentials grant); renewed before it ends. */
    public JsonNode loginClient(String clientId, String clientSecret) {
        return loginClient(clientId, clientSecret, null);
    }

    public JsonNode loginClient(String clientId, String clientSecret, String scope) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "client_credentials");
        form.put("client_id", clientId);
        form.put("client_secret", clientSecret);
        if (scope != null) form.put("scope", scope);
        return signIn(form, true);
    }

    /** @operation POST /login */
    private synchronized JsonNode signIn(Map<String, String> form, boolean renewable) {
        JsonNode answer = request("POST", "/login", RequestOptions.create().form(form).auth(false).operation("login")).json();
        token = answer.path("access_token").asText();
        expiresAt = answer.has("expires_in") ? options.clock.getAsLong() + answer.get("expires_in").asLong() : -1;
        grant = renewable ? form : null;
        return answer;
    }

    /** Use a token obtained elsewhere (it is not renewed); null forgets it. */
    public synchronized void setToken(String value) {
        token = value;
        expiresAt = -1;
        grant = null;
    }

    public synchronized String token() {
        return token;
    }

    /** The last answer received (status, headers, raw body), also after an ApiException. */
    public ApiResponse lastResponse() {
        return last;
    }

    private synchronized String currentToken(String method, String path) {
        if (grant != null && expiresAt >= 0 && options.clock.getAsLong() >= expiresAt - options.refreshMargin.toSeconds()) {
            signIn(grant, true);
        }
        if (token == null) throw new IdverifyException(method + " " + path + " needs a token: call login() or loginClient() first");
        return token;
    }

    /**
     * Any request; {@code path} is relative to the versioned base ("/verify-nin") unless {@code o.root(true)}.
     * Throws {@link ApiException} on a non-2xx answer, {@link IdverifyException} when no answer came.
     */
    public ApiResponse request(String method, String path, RequestOptions o) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("accept", o.accept);
        byte[] body = null;
        if (o.json != null) {
            try {
                body = Json.MAPPER.writeValueAsBytes(o.json);
            } catch (JsonProcessingException e) {
                throw new IdverifyException("The body cannot be written as JSON: " + e.getMessage(), e);
            }
            headers.put("content-type", "application/json");
        } else if (o.form != null) {
            body = encode(o.form).getBytes(StandardCharsets.UTF_8);
            headers.put("content-type", "application/x-www-form-urlencoded");
        } else if (o.body != null) {
            body = o.body;
            headers.put("content-type", o.contentType);
        }
        if (o.auth) headers.put("authorization", "Bearer " + currentToken(method, path));
        headers.putAll(o.headers);
        String url = (o.root ? root : api) + path + (o.query.isEmpty() ? "" : "?" + encode(o.query));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(options.timeout)
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        HttpResponse<byte[]> res;
        try {
            res = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new IdverifyException(method + " " + url + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdverifyException(method + " " + url + ": interrupted", e);
        }
        Map<String, String> received = new HashMap<>();
        for (Map.Entry<String, List<String>> h : res.headers().map().entrySet()) {
            if (!h.getValue().isEmpty()) received.put(h.getKey().toLowerCase(Locale.ROOT), h.getValue().get(0));
        }
        ApiResponse answer = new ApiResponse(res.statusCode(), received, res.body());
        last = answer;
        if (answer.status() < 200 || answer.status() > 299) {
            throw ApiException.from(o.operation != null ? o.operation : method + " " + path, answer);
        }
        return answer;
    }

    /** A JSON operation: the decoded answer (null for 204). */
    protected JsonNode call(String operation, String method, String path, RequestOptions o) {
        return request(method, path, o.operation(operation)).json();
    }

    protected JsonNode call(String operation, String method, String path) {
        return call(operation, method, path, RequestOptions.create());
    }

    /** An operation answering a file (PDF, CSV): its bytes. */
    protected byte[] bytes(String operation, String path, String accept, RequestOptions o) {
        return request("GET", path, o.operation(operation).accept(accept)).body();
    }

    protected static RequestOptions verifying(Object body, VerifyOptions v) {
        RequestOptions o = RequestOptions.create().json(body);
        if (v != null) {
            o.header("Idempotency-Key", v.idempotencyKey);
            if (v.respondAsync) o.header("Prefer", "respond-async");
        }
        return o;
    }

    /** A path segment, percent-encoded. */
    protected static String seg(Object value) {
        return URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String encode(Map<String, ?> values) {
        StringJoiner out = new StringJoiner("&");
        values.forEach((k, v) -> {
            if (v != null) out.add(seg(k) + "=" + seg(v));
        });
        return out.toString();
    }
}
