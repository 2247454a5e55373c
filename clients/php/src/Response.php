<?php

declare(strict_types=1);

namespace Idverify;

/** One HTTP answer as it came: status, headers (names lower-cased) and the raw body. */
final class Response
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)] ?? null;
    }

    /**
     * The body decoded as JSON (associative arrays), null when empty. Strict: a body that is not JSON throws,
     * unless $strict is false (then null).
     */
    public function json(bool $strict = true): mixed
    {
        if ($this->body === '') {
            return null;
        }
        try {
            return json_decode($this->body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            if ($strict) {
                throw new IdverifyException("The answer ({$this->status}) is not JSON: " . $e->getMessage(), 0, $e);
            }
            return null;
        }
    }
}
