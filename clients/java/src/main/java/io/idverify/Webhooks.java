package io.idverify;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks a webhook delivery's signatures. Every delivery carries two schemes made with the endpoint's one
 * secret ({@code whsec_<base64>}):
 * <ul>
 * <li>{@code Idverify-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">}, keyed with the
 * whole secret string (prefix included);</li>
 * <li>Standard Webhooks: {@code webhook-id}, {@code webhook-timestamp} and {@code webhook-signature: v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<raw body>">}, keyed with the base64-decoded bytes after {@code whsec_}.</li>
 * </ul>
 * During a secret rotation each carries one signature per valid secret; one that matches is enough. Give the
 * body exactly as received, before any JSON parsing.
 */
public final class Webhooks {
    /** Seconds a delivery's timestamp may be from the clock (either way): against replays. */
    public static final long TOLERANCE_SECONDS = 300;

    private Webhooks() {}

    /** {@link #verify(String, Map, String, long, Long)} with the default tolerance and the clock. */
    public static boolean verify(String secret, Map<String, String> headers, String body) {
        return verify(secret, headers, body, TOLERANCE_SECONDS, null);
    }

    /**
     * True when the delivery carries at least one of the two schemes and every scheme it carries verifies (a
     * delivery that carries both must pass both: a forged or stale header is never outvoted).
     *
     * @param headers the request's headers, names in any case
     * @param now unix seconds, null for the clock
     */
    public static boolean verify(String secret, Map<String, String> headers, String body, long toleranceSeconds, Long now) {
        Map<String, String> h = new HashMap<>();
        headers.forEach((k, v) -> h.put(k.toLowerCase(Locale.ROOT), v));
        boolean checked = false;
        if (h.containsKey("webhook-signature")) {
            if (!verifyStandard(body, h.getOrDefault("webhook-id", ""), h.getOrDefault("webhook-timestamp", ""), h.get("webhook-signature"), secret, toleranceSeconds, now)) {
                return false;
            }
            checked = true;
        }
        if (h.containsKey("idverify-signature")) {
            if (!verifyIdverifySignature(body, h.get("idverify-signature"), secret, toleranceSeconds, now)) return false;
            checked = true;
        }
        return checked;
    }

    /** Our own scheme: {@code t=<unix seconds>,v1=<hex>[,v1=<hex>]}, HMAC keyed with the whole secret string. */
    public static boolean verifyIdverifySignature(String body, String header, String secret, long toleranceSeconds, Long now) {
        String t = null;
        List<String> candidates = new ArrayList<>();
        for (String part : header.split(",")) {
            int i = part.indexOf('=');
            if (i < 0) continue;
            String key = part.substring(0, i).trim();
            String value = part.substring(i + 1).trim();
            if (key.equals("t")) t = value;
            else if (key.equals("v1")) candidates.add(value);
        }
        if (t == null || !fresh(t, toleranceSeconds, now)) return false;
        String expected = HexFormat.of().formatHex(hmac(secret.getBytes(StandardCharsets.UTF_8), t + "." + body));
        return anyEquals(expected, candidates);
    }

    /** Standard Webhooks: {@code signatures} holds space-separated {@code v1,<base64>} entries. */
    public static boolean verifyStandard(String body, String id, String timestamp, String signatures, String secret, long toleranceSeconds, Long now) {
        byte[] key = standardKey(secret);
        if (key == null || id == null || id.isEmpty() || timestamp == null || !fresh(timestamp, toleranceSeconds, now)) return false;
        String expected = Base64.getEncoder().encodeToString(hmac(key, id + "." + timestamp + "." + body));
        List<String> candidates = new ArrayList<>();
        for (String entry : signatures.trim().split("\\s+")) {
            int i = entry.indexOf(',');
            if (i > 0 && entry.substring(0, i).equals("v1")) candidates.add(entry.substring(i + 1));
        }
        return anyEquals(expected, candidates);
    }

    /**
     * The key bytes Standard Webhooks uses: the base64 after {@code whsec_} decoded; null when it is not base64.
     * Secrets are shown in padded standard base64; the URL-safe alphabet and missing padding are read too.
     */
    public static byte[] standardKey(String secret) {
        String b64 = (secret.startsWith("whsec_") ? secret.substring(6) : secret).replace('-', '+').replace('_', '/').replaceAll("=+$", "");
        try {
            byte[] key = Base64.getDecoder().decode(b64); // padding is optional to Java's decoder
            return key.length == 0 ? null : key;
        } catch (IllegalArgumentException notBase64) {
            return null;
        }
    }

    private static boolean fresh(String timestamp, long toleranceSeconds, Long now) {
        if (!timestamp.matches("\\d{1,12}")) return false;
        long clock = now != null ? now : System.currentTimeMillis() / 1000;
        return Math.abs(clock - Long.parseLong(timestamp)) <= toleranceSeconds;
    }

    /** MessageDigest.isEqual is constant-time for equal lengths. */
    private static boolean anyEquals(String expected, List<String> candidates) {
        byte[] want = expected.getBytes(StandardCharsets.UTF_8);
        boolean ok = false;
        for (String c : candidates) {
            if (MessageDigest.isEqual(want, c.getBytes(StandardCharsets.UTF_8))) ok = true;
        }
        return ok;
    }

    private static byte[] hmac(byte[] key, String message) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
