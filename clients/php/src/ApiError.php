<?php

declare(strict_types=1);

namespace Idverify;

/**
 * A non-2xx answer of the API. `detail` is the service's message ("HTTP <status>" when the body has none),
 * `code` its machine-readable code where it gives one (e.g. `mfa_required`, `vnin_expired`), else null.
 * Quote `requestId` (the X-Request-Id header) to support.
 */
final class ApiError extends IdverifyException
{
    /**
     * @var string|null the body's `code` (as PDOException does, this redeclares Exception's code: getCode() gives it too)
     */
    public $code;

    public function __construct(
        public readonly int $status,
        public readonly string $detail,
        ?string $code,
        /** The decoded JSON body (an array), or the raw text when it is not JSON. */
        public readonly mixed $body,
        public readonly ?string $requestId,
        public readonly string $operation,
    ) {
        parent::__construct("{$operation}: {$status} {$detail}");
        $this->code = $code;
    }

    /** Built from an answer: status, detail and code read from the body the API sent. */
    public static function fromResponse(string $operation, Response $res): self
    {
        $body = $res->json(false);
        $detail = is_array($body) && is_string($body['detail'] ?? null) ? $body['detail'] : "HTTP {$res->status}";
        $code = is_array($body) && is_string($body['code'] ?? null) ? $body['code'] : null;
        return new self($res->status, $detail, $code, $body ?? $res->body, $res->header('x-request-id'), $operation);
    }

    /** reference_id of a verification whose outcome is unknown (502/504): requery it after 30 s. */
    public function referenceId(): ?string
    {
        return is_array($this->body) && is_string($this->body['reference_id'] ?? null) ? $this->body['reference_id'] : null;
    }
}
