<?php
// The five-minute walk (the README's, as a program): sign in, read the balance, verify the fixture NIN,
// verify a live NIN without waiting and requery it until it ends, then check the webhook deliveries named in
// IDVERIFY_WEBHOOK_FILES. One JSON object per line. A delivery's timestamp must be within
// IDVERIFY_WEBHOOK_TOLERANCE seconds of the clock (unset: 300, the verifier's replay window; 0: no
// timestamp check, for deliveries saved earlier and verified now).

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

use Idverify\ApiError;
use Idverify\Client;
use Idverify\Webhook;

function line(array $fields, ?string $rawAnswer = null): void
{
    $json = json_encode($fields, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    // The answer as the API sent it (a JSON text on one line), not re-encoded.
    echo $rawAnswer === null ? $json : substr($json, 0, -1) . ',"answer":' . trim($rawAnswer) . '}', "\n";
}

$client = new Client(getenv('IDVERIFY_BASE_URL') ?: 'http://localhost:8080/v1');
$client->login((string) getenv('IDVERIFY_USERNAME'), (string) getenv('IDVERIFY_PASSWORD'));

$me = $client->getMe();
line(['step' => 'me', 'units' => $me['organisation']['units'] ?? null]);

// A fixture NIN: a full sample record, no upstream call, 0 units.
$client->verifyNin(['nin' => '12345678901', 'reason' => 'corporate'], bin2hex(random_bytes(16)));
line(['step' => 'verify_nin'], $client->lastResponse()->body);

// A live NIN, without waiting: 202 pending at once, then requery until it is no longer pending.
$accepted = $client->verifyNin(['nin' => '23456789012', 'reason' => 'corporate'], bin2hex(random_bytes(16)), true);
try {
    $client->requeryUntilDone($accepted['reference_id'], 0.25, 120);
} catch (ApiError $e) {
    // It ended with an error (e.g. 404 NIN not found): that is its answer too.
}
line(['step' => 'requery'], $client->lastResponse()->body);

$seconds = (int) (getenv('IDVERIFY_WEBHOOK_TOLERANCE') ?: 300);
$tolerance = $seconds > 0 ? $seconds : PHP_INT_MAX; // 0: a window wider than any clock, so no timestamp check
foreach (array_filter(explode(',', (string) getenv('IDVERIFY_WEBHOOK_FILES'))) as $file) {
    $delivery = json_decode((string) file_get_contents(trim($file)), true, 512, JSON_THROW_ON_ERROR);
    line(['step' => 'webhook', 'valid' => Webhook::verify($delivery['secret'], $delivery['headers'], $delivery['body'], $tolerance)]);
}
