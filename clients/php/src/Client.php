<?php

declare(strict_types=1);

namespace Idverify;

/**
 * A thin client of the Identity Verification and Wallet API: one generic request() and one small method per
 * operation of the OpenAPI document (`GET /v1/openapi.json`), each marked with its operation (an "@operation" comment: the method and the path as the document writes them).
 * JSON answers come back decoded (associative arrays); files (slip, invoice, statement PDF, CSV) as strings of
 * bytes. A non-2xx answer throws ApiError (status, detail, code); a transport failure IdverifyException.
 */
final class Client
{
    use Operations;

    private string $api;
    private string $root;
    private ?string $token;
    /** Unix seconds when the token ends (from expires_in), null when unknown. */
    private ?int $expiresAt = null;
    /** The form that signed in, kept to sign in again before the token ends; null when it cannot be repeated. */
    private ?array $grant = null;
    private int $timeout;
    private int $refreshMargin;
    /** @var callable(string, string, array<string, string>, ?string, int): Response */
    private $transport;
    /** @var callable(): int */
    private $clock;
    private ?Response $last = null;

    /**
     * @param string $baseUrl the API's versioned base, e.g. http://localhost:8080/v1 (a service root without /v1 works too)
     * @param array{token?: string, timeout?: int, refresh_margin?: int, transport?: callable, clock?: callable} $options
     *   timeout: seconds per request (default 60: a verification may take 30 s on the server);
     *   refresh_margin: sign in again this many seconds before the token ends (default 60);
     *   transport and clock: for tests (transport(method, url, headers, body, timeout): Response; clock(): unix seconds).
     */
    public function __construct(string $baseUrl, array $options = [])
    {
        $base = rtrim($baseUrl, '/');
        if (str_ends_with($base, '/v1')) {
            $this->api = $base;
            $this->root = substr($base, 0, -3);
        } else {
            $this->api = $base . '/v1';
            $this->root = $base;
        }
        $this->token = $options['token'] ?? null;
        $this->timeout = $options['timeout'] ?? 60;
        $this->refreshMargin = $options['refresh_margin'] ?? 60;
        $this->transport = $options['transport'] ?? [self::class, 'curl'];
        $this->clock = $options['clock'] ?? 'time';
    }

    /** POST /login with a password (OAuth 2.0 password grant); the token is kept and renewed before it ends. */
    public function login(string $username, string $password, ?string $otp = null, ?string $scope = null): array
    {
        $form = array_filter(['grant_type' => 'password', 'username' => $username, 'password' => $password, 'otp' => $otp, 'scope' => $scope], static fn ($v) => $v !== null);
        // A one-time code cannot be sent twice: such a sign-in is not renewed (sign in again when it ends).
        return $this->signIn($form, $otp === null);
    }

    /** POST /login with an API client's credentials (OAuth 2.0 client credentials grant); renewed before it ends. */
    public function loginClient(string $clientId, string $clientSecret, ?string $scope = null): array
    {
        $form = array_filter(['grant_type' => 'client_credentials', 'client_id' => $clientId, 'client_secret' => $clientSecret, 'scope' => $scope], static fn ($v) => $v !== null);
        return $this->signIn($form, true);
    }

    /** @operation POST /login */
    private function signIn(array $form, bool $renewable): array
    {
        $answer = $this->request('POST', '/login', ['form' => $form, 'auth' => false, 'operation' => 'login'])->json();
        $this->token = $answer['access_token'];
        $this->expiresAt = isset($answer['expires_in']) ? ($this->clock)() + (int) $answer['expires_in'] : null;
        $this->grant = $renewable ? $form : null;
        return $answer;
    }

    /** Use a token obtained elsewhere (it is not renewed). */
    public function setToken(?string $token): void
    {
        $this->token = $token;
        $this->expiresAt = null;
        $this->grant = null;
    }

    public function token(): ?string
    {
        return $this->token;
    }

    /**
     * Requeries until the verification ended: its last answer (an ended failure throws ApiError, as the
     * verification call would have). Throws IdverifyException when still pending after $timeout seconds.
     */
    public function requeryUntilDone(string $referenceId, float $interval = 1.0, float $timeout = 120.0): array
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $answer = $this->requeryVerification($referenceId);
            if (($answer['status'] ?? null) !== 'pending') {
                return $answer;
            }
            if (microtime(true) >= $deadline) {
                throw new IdverifyException("{$referenceId} still pending after {$timeout} s");
            }
            usleep((int) ($interval * 1e6));
        }
    }

    /**
     * Every page of a history list, following next_cursor: `foreach ($client->pages([$client, 'listTransactions'], ['kind' => 'debit']) as $page)`.
     *
     * @param callable(array): array $list a list method taking its query
     * @return \Generator<int, array>
     */
    public function pages(callable $list, array $query = []): \Generator
    {
        do {
            $page = $list($query);
            yield $page;
            $query['cursor'] = $page['next_cursor'] ?? null;
        } while ($query['cursor'] !== null);
    }

    /** The last answer received (status, headers, raw body), also after an ApiError. */
    public function lastResponse(): ?Response
    {
        return $this->last;
    }

    /**
     * Any request. $path is relative to the versioned base ("/verify-nin") unless 'root' is true (healthz).
     * Options: query (array), json (encoded as JSON), form (form-encoded), body + content_type (raw), headers,
     * accept (default application/json), auth (default true: the bearer token), operation (named in errors).
     * Throws ApiError on a non-2xx answer.
     */
    public function request(string $method, string $path, array $o = []): Response
    {
        $headers = ['accept' => $o['accept'] ?? 'application/json'];
        $body = null;
        if (array_key_exists('json', $o)) {
            $body = json_encode($o['json'], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
            $headers['content-type'] = 'application/json';
        } elseif (array_key_exists('form', $o)) {
            $body = http_build_query($o['form'], '', '&', PHP_QUERY_RFC3986);
            $headers['content-type'] = 'application/x-www-form-urlencoded';
        } elseif (array_key_exists('body', $o)) {
            $body = $o['body'];
            $headers['content-type'] = $o['content_type'] ?? 'application/octet-stream';
        }
        if ($o['auth'] ?? true) {
            $this->renewIfEnding();
            if ($this->token === null) {
                throw new IdverifyException("{$method} {$path} needs a token: call login() or loginClient() first");
            }
            $headers['authorization'] = 'Bearer ' . $this->token;
        }
        foreach ($o['headers'] ?? [] as $k => $v) {
            if ($v !== null) {
                $headers[strtolower($k)] = (string) $v;
            }
        }
        $url = (($o['root'] ?? false) ? $this->root : $this->api) . $path;
        $query = array_filter($o['query'] ?? [], static fn ($v) => $v !== null);
        if ($query !== []) {
            $url .= '?' . http_build_query(array_map(static fn ($v) => is_bool($v) ? ($v ? 'true' : 'false') : $v, $query), '', '&', PHP_QUERY_RFC3986);
        }
        $res = ($this->transport)($method, $url, $headers, $body, $this->timeout);
        $this->last = $res;
        if ($res->status < 200 || $res->status > 299) {
            throw ApiError::fromResponse($o['operation'] ?? "{$method} {$path}", $res);
        }
        return $res;
    }

    /** Signs in again with the kept grant when the token ends within refresh_margin seconds. */
    private function renewIfEnding(): void
    {
        if ($this->grant !== null && $this->expiresAt !== null && ($this->clock)() >= $this->expiresAt - $this->refreshMargin) {
            $this->signIn($this->grant, true);
        }
    }

    /** A JSON operation: the decoded answer (null for 204). */
    private function call(string $operation, string $method, string $path, array $o = []): mixed
    {
        return $this->request($method, $path, $o + ['operation' => $operation])->json();
    }

    /** An operation answering a file: its bytes. */
    private function bytes(string $operation, string $path, string $accept, array $o = []): string
    {
        return $this->request('GET', $path, $o + ['operation' => $operation, 'accept' => $accept])->body;
    }

    /** The Idempotency-Key and Prefer headers of a verification call. */
    private static function verifyHeaders(?string $idempotencyKey, bool $respondAsync): array
    {
        return ['Idempotency-Key' => $idempotencyKey, 'Prefer' => $respondAsync ? 'respond-async' : null];
    }

    private static function seg(string|int $value): string
    {
        return rawurlencode((string) $value);
    }

    /** The default transport: PHP's curl extension. */
    public static function curl(string $method, string $url, array $headers, ?string $body, int $timeout): Response
    {
        $ch = curl_init($url);
        $lines = [];
        foreach ($headers as $k => $v) {
            $lines[] = "{$k}: {$v}";
        }
        $lines[] = 'expect:'; // no "100 continue" round trip for a large CSV
        $received = [];
        curl_setopt_array($ch, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => $timeout,
            CURLOPT_CONNECTTIMEOUT => min(10, $timeout),
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$received): int {
                $i = strpos($line, ':');
                if ($i !== false) {
                    $received[strtolower(trim(substr($line, 0, $i)))] = trim(substr($line, $i + 1));
                } elseif (str_starts_with($line, 'HTTP/')) {
                    $received = []; // a new answer (after a 100 Continue)
                }
                return strlen($line);
            },
        ]);
        if ($body !== null) {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $body);
        }
        $text = curl_exec($ch);
        if ($text === false) {
            $error = curl_error($ch);
            curl_close($ch);
            throw new IdverifyException("{$method} {$url}: {$error}");
        }
        $status = curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        curl_close($ch);
        return new Response($status, $received, $text);
    }
}
