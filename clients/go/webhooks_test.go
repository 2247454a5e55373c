package idverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	now       = time.Unix(1_780_000_000, 0)
	secret    = "whsec_" + base64.StdEncoding.EncodeToString(seq(0, 32))
	oldSecret = "whsec_" + base64.StdEncoding.EncodeToString(seq(100, 32))
	body      = []byte(`{"id":"evt_1","type":"ping","created_at":"2026-06-01T00:00:00Z","data":{"endpoint_id":"we_1"}}`)
	at        = WebhookOptions{Now: now}
)

func seq(from, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from + i)
	}
	return b
}

func stdSig(sec string, ts int64, b []byte) string {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sec, "whsec_"))
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "evt_1.%d.%s", ts, b)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func ourSig(sec string, ts int64, b []byte) string {
	m := hmac.New(sha256.New, []byte(sec))
	fmt.Fprintf(m, "%d.%s", ts, b)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

func delivery(ts int64, secrets ...string) map[string]string {
	var std, ours []string
	for _, s := range secrets {
		std = append(std, stdSig(s, ts, body))
		ours = append(ours, ourSig(s, ts, body))
	}
	return map[string]string{
		"webhook-id":         "evt_1",
		"webhook-timestamp":  fmt.Sprint(ts),
		"webhook-signature":  strings.Join(std, " "),
		"idverify-signature": fmt.Sprintf("t=%d,%s", ts, strings.Join(ours, ",")),
	}
}

// The Standard Webhooks specification's test vector: what every library of that scheme checks.
func TestStandardWebhooksPublishedExample(t *testing.T) {
	h := map[string]string{
		"webhook-id":        "msg_p5jXN8AQM9LWM0D4loKWxJek",
		"webhook-timestamp": "1614265330",
		"webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	}
	o := WebhookOptions{Now: time.Unix(1614265330, 0)}
	if !VerifyStandardWebhook([]byte(`{"test": 2432232314}`), h, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", o) {
		t.Fatal("the specification's example did not verify")
	}
	if VerifyStandardWebhook([]byte(`{"test": 2432232315}`), h, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", o) {
		t.Fatal("a changed body verified")
	}
}

func TestStandardWebhookVerifies(t *testing.T) {
	if !VerifyStandardWebhook(body, delivery(now.Unix(), secret), secret, at) {
		t.Fatal("a signed delivery did not verify")
	}
	upper := map[string]string{}
	for k, v := range delivery(now.Unix(), secret) {
		upper[strings.ToUpper(k)] = v
	}
	if !VerifyStandardWebhook(body, upper, secret, at) || !VerifyWebhook(body, upper, secret, at) {
		t.Fatal("header names must be case-insensitive")
	}
}

func TestStandardWebhookRotation(t *testing.T) {
	h := delivery(now.Unix(), secret, oldSecret)
	if len(strings.Split(h["webhook-signature"], " ")) != 2 {
		t.Fatal("expected two signatures")
	}
	if !VerifyStandardWebhook(body, h, secret, at) || !VerifyStandardWebhook(body, h, oldSecret, at) {
		t.Fatal("either secret must verify during a rotation")
	}
	if VerifyStandardWebhook(body, delivery(now.Unix(), secret), oldSecret, at) {
		t.Fatal("the old secret verified a delivery it did not sign")
	}
}

func TestStandardWebhookTamperedAndOld(t *testing.T) {
	h := delivery(now.Unix(), secret)
	if VerifyStandardWebhook([]byte(strings.Replace(string(body), "ping", "pong", 1)), h, secret, at) {
		t.Fatal("a tampered body verified")
	}
	h["webhook-id"] = "evt_2"
	if VerifyStandardWebhook(body, h, secret, at) {
		t.Fatal("a changed id verified")
	}
	for _, ts := range []int64{now.Unix() - 301, now.Unix() + 301} {
		if VerifyStandardWebhook(body, delivery(ts, secret), secret, at) {
			t.Fatalf("timestamp %d verified", ts)
		}
	}
	if !VerifyStandardWebhook(body, delivery(now.Unix()-301, secret), secret, WebhookOptions{Now: now, Tolerance: 10 * time.Minute}) {
		t.Fatal("the tolerance is configurable")
	}
	for _, missing := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		h := delivery(now.Unix(), secret)
		delete(h, missing)
		if VerifyStandardWebhook(body, h, secret, at) {
			t.Fatalf("verified without %s", missing)
		}
	}
}

func TestStandardWebhooksKey(t *testing.T) {
	if string(StandardWebhooksKey(secret)) != string(seq(0, 32)) {
		t.Fatal("a whsec_ secret's key is its decoded bytes")
	}
	// An older secret in URL-safe base64 without padding keys with the bytes it encodes, as the
	// service's own decoder reads it.
	if hex.EncodeToString(StandardWebhooksKey("whsec_TA9RT62r_EyFkPaU")) != "4c0f514fadabfc4c8590f694" {
		t.Fatal("an older URL-safe secret keys with its decoded bytes")
	}
	if string(StandardWebhooksKey("whsec_not base64!")) != "whsec_not base64!" {
		t.Fatal("a secret that is not base64 keys with its bytes")
	}
}

func TestIdverifySignature(t *testing.T) {
	header := delivery(now.Unix(), oldSecret, secret)["idverify-signature"]
	if !VerifyIdverifySignature(body, header, secret, at) || !VerifyIdverifySignature(body, header, oldSecret, at) {
		t.Fatal("either v1 of a rotation must verify")
	}
	if VerifyIdverifySignature(body, header, "whsec_other", at) {
		t.Fatal("a wrong secret verified")
	}
	if VerifyIdverifySignature(append([]byte{}, append(body, ' ')...), header, secret, at) {
		t.Fatal("a tampered body verified")
	}
	if VerifyIdverifySignature(body, delivery(now.Unix()-301, secret)["idverify-signature"], secret, at) {
		t.Fatal("an old timestamp verified")
	}
	// Keyed with the whole string, not the decoded bytes.
	m := hmac.New(sha256.New, StandardWebhooksKey(secret))
	fmt.Fprintf(m, "%d.%s", now.Unix(), body)
	if VerifyIdverifySignature(body, fmt.Sprintf("t=%d,v1=%s", now.Unix(), hex.EncodeToString(m.Sum(nil))), secret, at) {
		t.Fatal("a signature keyed with the decoded bytes verified")
	}
	if VerifyIdverifySignature(body, "", secret, at) || VerifyIdverifySignature(body, "v1=abc", secret, at) {
		t.Fatal("a header without t verified")
	}
}

func TestVerifyWebhookNeedsEverySchemePresent(t *testing.T) {
	h := delivery(now.Unix(), secret)
	if !VerifyWebhook(body, h, secret, at) {
		t.Fatal("both schemes valid must verify")
	}
	if !VerifyWebhook(body, map[string]string{"idverify-signature": h["idverify-signature"]}, secret, at) {
		t.Fatal("our scheme alone must verify")
	}
	only := delivery(now.Unix(), secret)
	delete(only, "idverify-signature")
	if !VerifyWebhook(body, only, secret, at) {
		t.Fatal("Standard Webhooks alone must verify")
	}
	bad := delivery(now.Unix(), secret)
	bad["idverify-signature"] = fmt.Sprintf("t=%d,v1=%s", now.Unix(), strings.Repeat("0", 64))
	if VerifyWebhook(body, bad, secret, at) {
		t.Fatal("one failing scheme must fail the delivery")
	}
	if VerifyWebhook(body, map[string]string{"content-type": "application/json"}, secret, at) {
		t.Fatal("no signature at all verified")
	}
}
