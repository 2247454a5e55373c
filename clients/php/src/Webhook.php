<?php

declare(strict_types=1);

namespace Idverify;

/**
 * Checks a webhook delivery's signatures. Every delivery carries two schemes made with the endpoint's one
 * secret (`whsec_<base64>`):
 * - `Idverify-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the whole
 *   secret string (prefix included);
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of
 *   "<id>.<timestamp>.<raw body>">`, keyed with the base64-decoded bytes after `whsec_`.
 * During a secret rotation each carries one signature per valid secret; one that matches is enough.
 * Give the body exactly as received, before any JSON decoding.
 */
final class Webhook
{
    /** Seconds a delivery's timestamp may be from the clock (either way): against replays. */
    public const TOLERANCE = 300;

    /**
     * True when the delivery carries at least one of the two schemes and every scheme it carries verifies
     * (a delivery that carries both must pass both: a forged or stale header is never outvoted).
     *
     * @param array<string, string|string[]> $headers the request's headers, names in any case
     */
    public static function verify(string $secret, array $headers, string $body, int $tolerance = self::TOLERANCE, ?int $now = null): bool
    {
        $h = [];
        foreach ($headers as $name => $value) {
            $h[strtolower((string) $name)] = is_array($value) ? (string) reset($value) : (string) $value;
        }
        $checked = false;
        if (isset($h['webhook-signature'])) {
            if (!self::verifyStandard($body, $h['webhook-id'] ?? '', $h['webhook-timestamp'] ?? '', $h['webhook-signature'], $secret, $tolerance, $now)) {
                return false;
            }
            $checked = true;
        }
        if (isset($h['idverify-signature'])) {
            if (!self::verifyIdverifySignature($body, $h['idverify-signature'], $secret, $tolerance, $now)) {
                return false;
            }
            $checked = true;
        }
        return $checked;
    }

    /** Our own scheme: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`, HMAC keyed with the whole secret string. */
    public static function verifyIdverifySignature(string $body, string $header, string $secret, int $tolerance = self::TOLERANCE, ?int $now = null): bool
    {
        $t = null;
        $candidates = [];
        foreach (explode(',', $header) as $part) {
            $i = strpos($part, '=');
            if ($i === false) {
                continue;
            }
            $key = trim(substr($part, 0, $i));
            $value = trim(substr($part, $i + 1));
            if ($key === 't') {
                $t = $value;
            } elseif ($key === 'v1') {
                $candidates[] = $value;
            }
        }
        if ($t === null || !self::fresh($t, $tolerance, $now)) {
            return false;
        }
        $expected = hash_hmac('sha256', $t . '.' . $body, $secret);
        return self::anyEquals($expected, $candidates);
    }

    /** Standard Webhooks: `webhook-signature` holds space-separated `v1,<base64>` entries. */
    public static function verifyStandard(string $body, string $id, string $timestamp, string $signatures, string $secret, int $tolerance = self::TOLERANCE, ?int $now = null): bool
    {
        $key = self::standardKey($secret);
        if ($key === null || $id === '' || !self::fresh($timestamp, $tolerance, $now)) {
            return false;
        }
        $expected = base64_encode(hash_hmac('sha256', "{$id}.{$timestamp}.{$body}", $key, true));
        $candidates = [];
        foreach (preg_split('/\s+/', trim($signatures)) ?: [] as $entry) {
            [$version, $sig] = array_pad(explode(',', $entry, 2), 2, '');
            if ($version === 'v1') {
                $candidates[] = $sig;
            }
        }
        return self::anyEquals($expected, $candidates);
    }

    /**
     * The key bytes Standard Webhooks uses: the base64 after `whsec_` decoded; null when it is not base64.
     * Secrets are shown in padded standard base64; the URL-safe alphabet and missing padding are read too.
     */
    public static function standardKey(string $secret): ?string
    {
        $b64 = strtr(str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret, '-_', '+/');
        $b64 = rtrim($b64, '=');
        $key = base64_decode($b64 . str_repeat('=', (4 - strlen($b64) % 4) % 4), true);
        return $key === false || $key === '' ? null : $key;
    }

    private static function fresh(string $timestamp, int $tolerance, ?int $now): bool
    {
        if (preg_match('/^\d{1,12}$/', $timestamp) !== 1) {
            return false;
        }
        return abs(($now ?? time()) - (int) $timestamp) <= $tolerance;
    }

    /** hash_equals against each: constant time for each comparison. */
    private static function anyEquals(string $expected, array $candidates): bool
    {
        $ok = false;
        foreach ($candidates as $candidate) {
            if (hash_equals($expected, $candidate)) {
                $ok = true;
            }
        }
        return $ok;
    }
}
