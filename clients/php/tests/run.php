<?php
// The PHP client's unit tests: `php tests/run.php`; exits non-zero when one fails. No server: a fake transport
// answers, and a fake clock drives the token's end.

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

use Idverify\ApiError;
use Idverify\Client;
use Idverify\IdverifyException;
use Idverify\Response;
use Idverify\Webhook;

$failures = 0;
$count = 0;

function check(string $name, callable $test): void
{
    global $failures, $count;
    $count++;
    try {
        $test();
        echo "ok   {$name}\n";
    } catch (Throwable $e) {
        $failures++;
        echo "FAIL {$name}: " . get_class($e) . ': ' . $e->getMessage() . "\n";
    }
}

function same(mixed $expected, mixed $actual, string $what = ''): void
{
    if ($expected !== $actual) {
        throw new RuntimeException(($what !== '' ? "{$what}: " : '') . 'expected ' . var_export($expected, true) . ', got ' . var_export($actual, true));
    }
}

/** A transport answering from a queue of [status, headers, body], recording each request. */
final class FakeTransport
{
    public array $requests = [];

    public function __construct(public array $answers)
    {
    }

    public function __invoke(string $method, string $url, array $headers, ?string $body, int $timeout): Response
    {
        $this->requests[] = compact('method', 'url', 'headers', 'body');
        [$status, $h, $b] = array_shift($this->answers) ?? throw new RuntimeException("unexpected request {$method} {$url}");
        return new Response($status, $h, $b);
    }
}

// A vector made by Node's crypto (not by this client), for a secret of 32 bytes of 7.
const SECRET = 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';
const BODY = '{"id":"evt_1","type":"ping"}';
const T = 1700000000;
const IDV = 't=1700000000,v1=5aa1a5a2789d8e0b5e13ddb5c7fbe7b070f5db5c25957ad46a9a70500a76a87e';
const STD = 'v1,vOZsgLBIpxhPMpcT3O2fLeUe/czdQBrUV5yLUrTiShg=';

function delivery(array $override = []): array
{
    return $override + ['Idverify-Signature' => IDV, 'Webhook-Id' => 'evt_1', 'Webhook-Timestamp' => (string) T, 'Webhook-Signature' => STD];
}

check('Idverify-Signature made by another implementation verifies', function () {
    same(true, Webhook::verifyIdverifySignature(BODY, IDV, SECRET, 300, T + 10));
});

check('Standard Webhooks signature made by another implementation verifies', function () {
    same(true, Webhook::verifyStandard(BODY, 'evt_1', (string) T, STD, SECRET, 300, T - 10));
});

check('a delivery with both schemes verifies, header names in any case', function () {
    same(true, Webhook::verify(SECRET, delivery(), BODY, 300, T));
    same(true, Webhook::verify(SECRET, array_change_key_case(delivery(), CASE_UPPER), BODY, 300, T));
});

check('a tampered body fails both schemes', function () {
    $tampered = str_replace('ping', 'pong', BODY);
    same(false, Webhook::verifyIdverifySignature($tampered, IDV, SECRET, 300, T));
    same(false, Webhook::verifyStandard($tampered, 'evt_1', (string) T, STD, SECRET, 300, T));
    same(false, Webhook::verify(SECRET, delivery(), $tampered, 300, T));
});

check('an old timestamp fails (beyond the 5 minute tolerance), a wider tolerance accepts it', function () {
    same(false, Webhook::verify(SECRET, delivery(), BODY, 300, T + 301));
    same(false, Webhook::verifyStandard(BODY, 'evt_1', (string) T, STD, SECRET, 300, T + 301));
    same(false, Webhook::verifyIdverifySignature(BODY, IDV, SECRET, 300, T - 301));
    same(true, Webhook::verify(SECRET, delivery(), BODY, 400, T + 301));
});

check('during a rotation either secret verifies (two signatures per scheme)', function () {
    $other = 'whsec_' . base64_encode(str_repeat("\x09", 32));
    $idv2 = hash_hmac('sha256', T . '.' . BODY, $other);
    $std2 = 'v1,' . base64_encode(hash_hmac('sha256', 'evt_1.' . T . '.' . BODY, base64_decode(substr($other, 6)), true));
    $headers = delivery(['Idverify-Signature' => IDV . ",v1={$idv2}", 'Webhook-Signature' => "{$std2} " . STD]);
    same(true, Webhook::verify(SECRET, $headers, BODY, 300, T));
    same(true, Webhook::verify($other, $headers, BODY, 300, T));
    same(false, Webhook::verify('whsec_' . base64_encode(str_repeat("\x01", 32)), $headers, BODY, 300, T));
});

check('one forged scheme fails the delivery even when the other verifies; no scheme at all fails', function () {
    same(false, Webhook::verify(SECRET, delivery(['Webhook-Signature' => 'v1,' . base64_encode(str_repeat('x', 32))]), BODY, 300, T));
    same(false, Webhook::verify(SECRET, delivery(['Idverify-Signature' => 't=1700000000,v1=00']), BODY, 300, T));
    same(true, Webhook::verify(SECRET, ['idverify-signature' => IDV], BODY, 300, T));
    same(true, Webhook::verify(SECRET, ['webhook-id' => 'evt_1', 'webhook-timestamp' => (string) T, 'webhook-signature' => STD], BODY, 300, T));
    same(false, Webhook::verify(SECRET, ['content-type' => 'application/json'], BODY, 300, T));
});

check('Standard Webhooks keys with the decoded bytes, not the secret string; a wrong id fails', function () {
    $withString = 'v1,' . base64_encode(hash_hmac('sha256', 'evt_1.' . T . '.' . BODY, SECRET, true));
    same(false, Webhook::verifyStandard(BODY, 'evt_1', (string) T, $withString, SECRET, 300, T));
    same(false, Webhook::verifyStandard(BODY, 'evt_2', (string) T, STD, SECRET, 300, T));
});

check('a secret made before Standard Webhooks (URL-safe base64, no padding) is decoded as Node decodes it', function () {
    $secret = 'whsec_-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_8';
    $body = '{"id":"evt_2","type":"ping"}';
    same(true, Webhook::verifyStandard($body, 'evt_2', (string) T, 'v1,UvZj7pLeA5viyLIVTcHLYndOMgs2HHMqqXNEmQeLX/g=', $secret, 300, T));
    same(null, Webhook::standardKey('whsec_not base64!'));
});

check('an error answer becomes ApiError with status, detail, code and request id', function () {
    $t = new FakeTransport([[404, ['x-request-id' => 'req-1'], '{"detail":"vNIN has expired","code":"vnin_expired"}']]);
    $c = new Client('http://api.test/v1', ['token' => 'tok', 'transport' => $t]);
    try {
        $c->verifyVnin(['vnin' => 'AA000000000001ZZ', 'reason' => 'corporate']);
        throw new RuntimeException('no error thrown');
    } catch (ApiError $e) {
        same(404, $e->status);
        same('vNIN has expired', $e->detail);
        same('vnin_expired', $e->code);
        same('req-1', $e->requestId);
        same('verifyVnin', $e->operation);
    }
});

check('an error without a code or a JSON body still carries status and detail', function () {
    $t = new FakeTransport([[502, [], '{"detail":"Upstream failed","reference_id":"REF-1"}'], [500, [], 'oops']]);
    $c = new Client('http://api.test/v1', ['token' => 'tok', 'transport' => $t]);
    try {
        $c->verifyNin(['nin' => '23456789012', 'reason' => 'corporate']);
        throw new RuntimeException('no error thrown');
    } catch (ApiError $e) {
        same([502, 'Upstream failed', null, 'REF-1'], [$e->status, $e->detail, $e->code, $e->referenceId()]);
    }
    try {
        $c->getMe();
        throw new RuntimeException('no error thrown');
    } catch (ApiError $e) {
        same([500, 'HTTP 500', 'oops'], [$e->status, $e->detail, $e->body]);
        same(true, $e instanceof IdverifyException);
    }
});

check('a request: URL, bearer token, Idempotency-Key and Prefer headers, JSON body', function () {
    $t = new FakeTransport([[202, [], '{"status":"pending","reference_id":"REF-2"}']]);
    $c = new Client('http://api.test/v1/', ['token' => 'tok', 'transport' => $t]);
    same('pending', $c->verifyNin(['nin' => '23456789012', 'reason' => 'corporate'], 'key-1', true)['status']);
    $r = $t->requests[0];
    same(['POST', 'http://api.test/v1/verify-nin'], [$r['method'], $r['url']]);
    same('Bearer tok', $r['headers']['authorization']);
    same('key-1', $r['headers']['idempotency-key']);
    same('respond-async', $r['headers']['prefer']);
    same('application/json', $r['headers']['content-type']);
    same(['nin' => '23456789012', 'reason' => 'corporate'], json_decode($r['body'], true));
});

check('path segments are encoded; healthz is at the service root; top-up is form-encoded', function () {
    $t = new FakeTransport([[200, [], '%PDF-1.4'], [200, [], '{"status":"ok"}'], [200, [], '{"reference":"r"}']]);
    $c = new Client('http://api.test/v1', ['token' => 'tok', 'transport' => $t]);
    same('%PDF-1.4', $c->getVerificationSlip('REF/1'));
    same('http://api.test/v1/verify-nin/slip/REF%2F1', $t->requests[0]['url']);
    same('application/pdf', $t->requests[0]['headers']['accept']);
    $c->healthz();
    same('http://api.test/healthz', $t->requests[1]['url']);
    same(false, isset($t->requests[1]['headers']['authorization']));
    $c->initializeTopup(100);
    same('units=100', $t->requests[2]['body']);
    same('application/x-www-form-urlencoded', $t->requests[2]['headers']['content-type']);
});

check('the token is renewed with the same grant before it ends, not earlier', function () {
    $now = 1000;
    $token = static fn (string $tok) => [200, [], json_encode(['access_token' => $tok, 'token_type' => 'bearer', 'expires_in' => 3600, 'scope' => ''])];
    $me = [200, [], '{"id":1}'];
    $t = new FakeTransport([$token('tok-1'), $me, $token('tok-2'), $me]);
    $c = new Client('http://api.test/v1', ['transport' => $t, 'clock' => function () use (&$now) { return $now; }]);
    $c->loginClient('cid', 'csecret');
    same('grant_type=client_credentials&client_id=cid&client_secret=csecret', $t->requests[0]['body']);
    $now += 3600 - 61;
    $c->getMe();
    same('Bearer tok-1', $t->requests[1]['headers']['authorization']);
    $now += 2; // now within a minute of the end
    $c->getMe();
    same('http://api.test/v1/login', $t->requests[2]['url']);
    same($t->requests[0]['body'], $t->requests[2]['body']);
    same('Bearer tok-2', $t->requests[3]['headers']['authorization']);
    same(4, count($t->requests));
});

check('a password sign-in is renewed too; one with a one-time code is not', function () {
    $now = 0;
    $token = [200, [], '{"access_token":"a","token_type":"bearer","expires_in":3600,"scope":""}'];
    $t = new FakeTransport([$token, $token, [200, [], '{}'], $token, [401, [], '{"detail":"Token expired"}']]);
    $c = new Client('http://api.test/v1', ['transport' => $t, 'clock' => function () use (&$now) { return $now; }]);
    $c->login('demo-admin', 'pw');
    $now = 3600;
    $c->getMe();
    same('grant_type=password&username=demo-admin&password=pw', $t->requests[1]['body']);
    $c->login('demo-admin', 'pw', '123456');
    $now = 3600 * 3;
    try {
        $c->getMe();
        throw new RuntimeException('no error thrown');
    } catch (ApiError $e) {
        same(401, $e->status);
    }
    same('http://api.test/v1/me', $t->requests[4]['url']);
});

check('a call that needs a token, without one, fails before sending', function () {
    $t = new FakeTransport([]);
    $c = new Client('http://api.test/v1', ['transport' => $t]);
    try {
        $c->getMe();
        throw new RuntimeException('no error thrown');
    } catch (ApiError $e) {
        throw $e;
    } catch (IdverifyException $e) {
        same(0, count($t->requests));
    }
});

check('requeryUntilDone requeries while pending and answers the ended body; pages follow next_cursor', function () {
    $pending = [202, [], '{"status":"pending","reference_id":"REF-3"}'];
    $t = new FakeTransport([$pending, $pending, [200, [], '{"status":"success","data":{"reference_id":"REF-3"}}'],
        [200, [], '{"data":[1],"next_cursor":"c1"}'], [200, [], '{"data":[2],"next_cursor":null}']]);
    $c = new Client('http://api.test/v1', ['token' => 'tok', 'transport' => $t]);
    same('success', $c->requeryUntilDone('REF-3', 0.001, 5)['status']);
    same(3, count($t->requests));
    $seen = [];
    foreach ($c->pages([$c, 'listTransactions'], ['kind' => 'debit']) as $page) {
        $seen[] = $page['data'][0];
    }
    same([1, 2], $seen);
    same('http://api.test/v1/transactions?kind=debit', $t->requests[3]['url']);
    same('http://api.test/v1/transactions?kind=debit&cursor=c1', $t->requests[4]['url']);
});

echo "{$count} tests, {$failures} failed\n";
exit($failures === 0 ? 0 : 1);
