package io.idverify;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Java client's unit tests, a main-based runner (no framework): exits 1 when one fails. A local
 * HttpServer (the JDK's) plays the API; a fake clock drives the token's end.
 */
public final class ClientTest {
    private static int count;
    private static int failures;

    interface Body {
        void run() throws Exception;
    }

    static void check(String name, Body test) {
        count++;
        try {
            test.run();
            System.out.println("ok   " + name);
        } catch (Throwable e) {
            failures++;
            System.out.println("FAIL " + name + ": " + e);
        }
    }

    static void same(Object expected, Object actual) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new AssertionError("expected " + expected + ", got " + actual);
        }
    }

    /** One request as the fake API received it. */
    record Seen(String method, String uri, Map<String, String> headers, String body) {}

    /** A local API answering from a queue of (status, headers, body). */
    static final class FakeApi implements AutoCloseable {
        final HttpServer server;
        final Deque<Object[]> answers = new ArrayDeque<>();
        final List<Seen> seen = new ArrayList<>();

        FakeApi() throws Exception {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", ex -> {
                Map<String, String> h = new HashMap<>();
                ex.getRequestHeaders().forEach((k, v) -> h.put(k.toLowerCase(), v.get(0)));
                synchronized (this) {
                    seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().getRawPath() + (ex.getRequestURI().getRawQuery() == null ? "" : "?" + ex.getRequestURI().getRawQuery()), h,
                        new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
                }
                Object[] a;
                synchronized (this) {
                    a = answers.poll();
                }
                if (a == null) a = new Object[] {599, Map.of(), "{\"detail\":\"unexpected request\"}"};
                @SuppressWarnings("unchecked")
                Map<String, String> headers = (Map<String, String>) a[1];
                headers.forEach((k, v) -> ex.getResponseHeaders().add(k, v));
                byte[] out = ((String) a[2]).getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders((Integer) a[0], out.length == 0 ? -1 : out.length);
                if (out.length > 0) ex.getResponseBody().write(out);
                ex.close();
            });
            server.start();
        }

        FakeApi answer(int status, Map<String, String> headers, String body) {
            answers.add(new Object[] {status, headers, body});
            return this;
        }

        String base() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    static IdverifyClient client(FakeApi api, String token, AtomicLong clock) {
        BaseClient.Options o = new BaseClient.Options();
        o.token = token;
        if (clock != null) o.clock = clock::get;
        return new IdverifyClient(api.base(), o);
    }

    // A vector made by Node's crypto (not by this client), for a secret of 32 bytes of 7.
    static final String SECRET = "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
    static final String BODY = "{\"id\":\"evt_1\",\"type\":\"ping\"}";
    static final long T = 1700000000L;
    static final String IDV = "t=1700000000,v1=5aa1a5a2789d8e0b5e13ddb5c7fbe7b070f5db5c25957ad46a9a70500a76a87e";
    static final String STD = "v1,vOZsgLBIpxhPMpcT3O2fLeUe/czdQBrUV5yLUrTiShg=";

    static Map<String, String> delivery(String idv, String std) {
        Map<String, String> h = new HashMap<>();
        if (idv != null) h.put("Idverify-Signature", idv);
        if (std != null) {
            h.put("Webhook-Id", "evt_1");
            h.put("Webhook-Timestamp", Long.toString(T));
            h.put("Webhook-Signature", std);
        }
        return h;
    }

    static byte[] hmac(byte[] key, String message) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    }

    static String token(String value) {
        return "{\"access_token\":\"" + value + "\",\"token_type\":\"bearer\",\"expires_in\":3600,\"scope\":\"\"}";
    }

    public static void main(String[] args) {
        check("Idverify-Signature made by another implementation verifies", () -> {
            same(true, Webhooks.verifyIdverifySignature(BODY, IDV, SECRET, 300, T + 10));
        });
        check("Standard Webhooks signature made by another implementation verifies", () -> {
            same(true, Webhooks.verifyStandard(BODY, "evt_1", Long.toString(T), STD, SECRET, 300, T - 10));
        });
        check("a delivery with both schemes verifies, header names in any case", () -> {
            same(true, Webhooks.verify(SECRET, delivery(IDV, STD), BODY, 300, T));
            Map<String, String> upper = new HashMap<>();
            delivery(IDV, STD).forEach((k, v) -> upper.put(k.toUpperCase(), v));
            same(true, Webhooks.verify(SECRET, upper, BODY, 300, T));
        });
        check("a tampered body fails both schemes", () -> {
            String tampered = BODY.replace("ping", "pong");
            same(false, Webhooks.verifyIdverifySignature(tampered, IDV, SECRET, 300, T));
            same(false, Webhooks.verifyStandard(tampered, "evt_1", Long.toString(T), STD, SECRET, 300, T));
            same(false, Webhooks.verify(SECRET, delivery(IDV, STD), tampered, 300, T));
        });
        check("an old timestamp fails (beyond the 5 minute tolerance), a wider tolerance accepts it", () -> {
            same(false, Webhooks.verify(SECRET, delivery(IDV, STD), BODY, 300, T + 301));
            same(false, Webhooks.verifyStandard(BODY, "evt_1", Long.toString(T), STD, SECRET, 300, T + 301));
            same(false, Webhooks.verifyIdverifySignature(BODY, IDV, SECRET, 300, T - 301));
            same(true, Webhooks.verify(SECRET, delivery(IDV, STD), BODY, 400, T + 301));
        });
        check("during a rotation either secret verifies (two signatures per scheme)", () -> {
            byte[] otherKey = new byte[32];
            java.util.Arrays.fill(otherKey, (byte) 9);
            String other = "whsec_" + Base64.getEncoder().encodeToString(otherKey);
            String idv2 = HexFormat.of().formatHex(hmac(other.getBytes(StandardCharsets.UTF_8), T + "." + BODY));
            String std2 = "v1," + Base64.getEncoder().encodeToString(hmac(otherKey, "evt_1." + T + "." + BODY));
            Map<String, String> h = delivery(IDV + ",v1=" + idv2, std2 + " " + STD);
            same(true, Webhooks.verify(SECRET, h, BODY, 300, T));
            same(true, Webhooks.verify(other, h, BODY, 300, T));
            byte[] wrong = new byte[32];
            java.util.Arrays.fill(wrong, (byte) 1);
            same(false, Webhooks.verify("whsec_" + Base64.getEncoder().encodeToString(wrong), h, BODY, 300, T));
        });
        check("one forged scheme fails the delivery even when the other verifies; no scheme at all fails", () -> {
            same(false, Webhooks.verify(SECRET, delivery(IDV, "v1," + Base64.getEncoder().encodeToString(new byte[32])), BODY, 300, T));
            same(false, Webhooks.verify(SECRET, delivery("t=1700000000,v1=00", STD), BODY, 300, T));
            same(true, Webhooks.verify(SECRET, delivery(IDV, null), BODY, 300, T));
            same(true, Webhooks.verify(SECRET, delivery(null, STD), BODY, 300, T));
            same(false, Webhooks.verify(SECRET, Map.of("content-type", "application/json"), BODY, 300, T));
        });
        check("Standard Webhooks keys with the decoded bytes, not the secret string; a wrong id fails", () -> {
            String withString = "v1," + Base64.getEncoder().encodeToString(hmac(SECRET.getBytes(StandardCharsets.UTF_8), "evt_1." + T + "." + BODY));
            same(false, Webhooks.verifyStandard(BODY, "evt_1", Long.toString(T), withString, SECRET, 300, T));
            same(false, Webhooks.verifyStandard(BODY, "evt_2", Long.toString(T), STD, SECRET, 300, T));
        });
        check("a secret made before Standard Webhooks (URL-safe base64, no padding) is decoded as Node decodes it", () -> {
            String secret = "whsec_-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_8";
            String body = "{\"id\":\"evt_2\",\"type\":\"ping\"}";
            same(true, Webhooks.verifyStandard(body, "evt_2", Long.toString(T), "v1,UvZj7pLeA5viyLIVTcHLYndOMgs2HHMqqXNEmQeLX/g=", secret, 300, T));
            same(null, Webhooks.standardKey("whsec_not base64!"));
        });
        check("an error answer becomes ApiException with status, detail, code and request id", () -> {
            try (FakeApi api = new FakeApi().answer(404, Map.of("X-Request-Id", "req-1"), "{\"detail\":\"vNIN has expired\",\"code\":\"vnin_expired\"}")) {
                try {
                    client(api, "tok", null).verifyVnin(Map.of("vnin", "AA000000000001ZZ", "reason", "corporate"), null);
                    throw new AssertionError("no exception");
                } catch (ApiException e) {
                    same(404, e.status());
                    same("vNIN has expired", e.detail());
                    same("vnin_expired", e.code());
                    same("req-1", e.requestId());
                    same("verifyVnin", e.operation());
                }
            }
        });
        check("an error without a code or a JSON body still carries status and detail", () -> {
            try (FakeApi api = new FakeApi().answer(502, Map.of(), "{\"detail\":\"Upstream failed\",\"reference_id\":\"REF-1\"}").answer(500, Map.of(), "oops")) {
                IdverifyClient c = client(api, "tok", null);
                try {
                    c.verifyNin(Map.of("nin", "23456789012", "reason", "corporate"));
                    throw new AssertionError("no exception");
                } catch (ApiException e) {
                    same(List.of(502, "Upstream failed", "REF-1"), List.of(e.status(), e.detail(), e.referenceId()));
                    same(null, e.code());
                }
                try {
                    c.getMe();
                    throw new AssertionError("no exception");
                } catch (ApiException e) {
                    same(List.of(500, "HTTP 500", "oops"), List.of(e.status(), e.detail(), e.rawBody()));
                    same(null, e.body());
                }
            }
        });
        check("a request: URL, bearer token, Idempotency-Key and Prefer headers, JSON body", () -> {
            try (FakeApi api = new FakeApi().answer(202, Map.of("Content-Type", "application/json"), "{\"status\":\"pending\",\"reference_id\":\"REF-2\"}")) {
                IdverifyClient c = client(api, "tok", null);
                same("pending", c.verifyNin(Map.of("nin", "23456789012"), VerifyOptions.create().idempotencyKey("key-1").respondAsync(true)).path("status").asText());
                Seen r = api.seen.get(0);
                same("POST /v1/verify-nin", r.method() + " " + r.uri());
                same("Bearer tok", r.headers().get("authorization"));
                same("key-1", r.headers().get("idempotency-key"));
                same("respond-async", r.headers().get("prefer"));
                same("application/json", r.headers().get("content-type"));
                same("{\"nin\":\"23456789012\"}", r.body());
            }
        });
        check("path segments are encoded; healthz is at the service root; top-up is form-encoded", () -> {
            try (FakeApi api = new FakeApi().answer(200, Map.of(), "%PDF-1.4").answer(200, Map.of(), "{\"status\":\"ok\"}").answer(200, Map.of(), "{}")) {
                IdverifyClient c = client(api, "tok", null);
                same("%PDF-1.4", new String(c.getVerificationSlip("REF/1"), StandardCharsets.UTF_8));
                same("/v1/verify-nin/slip/REF%2F1", api.seen.get(0).uri());
                same("application/pdf", api.seen.get(0).headers().get("accept"));
                c.healthz();
                same("/healthz", api.seen.get(1).uri());
                same(null, api.seen.get(1).headers().get("authorization"));
                c.initializeTopup(100);
                same("units=100", api.seen.get(2).body());
                same("application/x-www-form-urlencoded", api.seen.get(2).headers().get("content-type"));
            }
        });
        check("the token is renewed with the same grant before it ends, not earlier", () -> {
            AtomicLong now = new AtomicLong(1000);
            try (FakeApi api = new FakeApi().answer(200, Map.of(), token("tok-1")).answer(200, Map.of(), "{}").answer(200, Map.of(), token("tok-2")).answer(200, Map.of(), "{}")) {
                IdverifyClient c = client(api, null, now);
                c.loginClient("cid", "csecret");
                same("grant_type=client_credentials&client_id=cid&client_secret=csecret", api.seen.get(0).body());
                now.addAndGet(3600 - 61);
                c.getMe();
                same("Bearer tok-1", api.seen.get(1).headers().get("authorization"));
                now.addAndGet(2); // now within a minute of the end
                c.getMe();
                same("/v1/login", api.seen.get(2).uri());
                same(api.seen.get(0).body(), api.seen.get(2).body());
                same("Bearer tok-2", api.seen.get(3).headers().get("authorization"));
                same(4, api.seen.size());
            }
        });
        check("a password sign-in is renewed too; one with a one-time code is not", () -> {
            AtomicLong now = new AtomicLong(0);
            try (FakeApi api = new FakeApi().answer(200, Map.of(), token("a")).answer(200, Map.of(), token("b")).answer(200, Map.of(), "{}")
                    .answer(200, Map.of(), token("c")).answer(401, Map.of(), "{\"detail\":\"Token expired\"}")) {
                IdverifyClient c = client(api, null, now);
                c.login("demo-admin", "pw");
                now.set(3600);
                c.getMe();
                same("grant_type=password&username=demo-admin&password=pw", api.seen.get(1).body());
                c.login("demo-admin", "pw", "123456", null);
                now.set(3600 * 3);
                try {
                    c.getMe();
                    throw new AssertionError("no exception");
                } catch (ApiException e) {
                    same(401, e.status());
                }
                same("/v1/me", api.seen.get(4).uri());
            }
        });
        check("a call that needs a token, without one, fails before sending", () -> {
            try (FakeApi api = new FakeApi()) {
                try {
                    client(api, null, null).getMe();
                    throw new AssertionError("no exception");
                } catch (ApiException e) {
                    throw e;
                } catch (IdverifyException e) {
                    same(0, api.seen.size());
                }
            }
        });
        check("requeryUntilDone requeries while pending and answers the ended body; pages follow next_cursor", () -> {
            String pending = "{\"status\":\"pending\",\"reference_id\":\"REF-3\"}";
            try (FakeApi api = new FakeApi().answer(202, Map.of(), pending).answer(202, Map.of(), pending)
                    .answer(200, Map.of(), "{\"status\":\"success\",\"data\":{\"reference_id\":\"REF-3\"}}")
                    .answer(200, Map.of(), "{\"data\":[1],\"next_cursor\":\"c1\"}").answer(200, Map.of(), "{\"data\":[2],\"next_cursor\":null}")) {
                IdverifyClient c = client(api, "tok", null);
                same("success", c.requeryUntilDone("REF-3", java.time.Duration.ofMillis(1), java.time.Duration.ofSeconds(5)).path("status").asText());
                same(3, api.seen.size());
                List<Integer> seen = new ArrayList<>();
                for (var page : c.pages(c::listTransactions, Map.of("kind", "debit"))) seen.add(page.path("data").get(0).asInt());
                same(List.of(1, 2), seen);
                same("/v1/transactions?kind=debit", api.seen.get(3).uri());
                same(true, api.seen.get(4).uri().contains("cursor=c1"));
            }
        });
        System.out.println(count + " tests, " + failures + " failed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
