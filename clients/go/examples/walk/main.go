// The five-minute walk: sign in, read the balance, verify the fixture NIN, verify a live NIN
// asynchronously and requery it until it ended, then check webhook deliveries' signatures.
//
//	IDVERIFY_BASE_URL=http://localhost:8080/v1 IDVERIFY_USERNAME=demo-admin IDVERIFY_PASSWORD=... \
//	  go run ./examples/walk   (from clients/go)
//
// Prints one JSON object per line. IDVERIFY_WEBHOOK_FILES (optional, comma-separated) names JSON files
// {"secret", "headers", "body"}, each a delivery as received. A delivery's timestamp must be within
// IDVERIFY_WEBHOOK_TOLERANCE seconds of the clock (unset: 300, the verifier's replay window; 0: no
// timestamp check, for deliveries saved earlier and verified now).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"idverify"
)

// emit prints {"step": step, key: value} on one line, "step" first as the walk's readers expect.
func emit(step string, key string, value any) {
	s, _ := json.Marshal(step)
	k, _ := json.Marshal(key)
	v, err := json.Marshal(value)
	if err != nil {
		fail(err)
	}
	fmt.Printf("{\"step\":%s,%s:%s}\n", s, k, v)
}

func fail(err error) {
	var apiErr *idverify.APIError
	if errors.As(err, &apiErr) {
		fmt.Fprintf(os.Stderr, "API error %d: %s (code %q, request id %s)\n", apiErr.Status, apiErr.Detail, apiErr.Code, apiErr.RequestID)
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(1)
}

func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		fail(err)
	}
	return hex.EncodeToString(b)
}

func main() {
	ctx := context.Background()
	base := os.Getenv("IDVERIFY_BASE_URL")
	if base == "" {
		base = "http://localhost:8080/v1"
	}
	client := idverify.New(base)
	if _, err := client.Login(ctx, os.Getenv("IDVERIFY_USERNAME"), os.Getenv("IDVERIFY_PASSWORD"), "", ""); err != nil {
		fail(err)
	}

	res, err := client.GetMe(ctx)
	if err != nil {
		fail(err)
	}
	var me struct {
		Organisation struct {
			Units json.Number `json:"units"`
		} `json:"organisation"`
	}
	if err := res.Decode(&me); err != nil {
		fail(err)
	}
	emit("me", "units", me.Organisation.Units)

	// A fixture NIN: a full sample record, nothing charged. The Idempotency-Key makes a retry safe.
	res, err = client.VerifyNin(ctx, map[string]string{"nin": "12345678901", "reason": "corporate"}, idverify.VerifyOptions{IdempotencyKey: newKey()})
	if err != nil {
		fail(err)
	}
	emit("verify_nin", "answer", json.RawMessage(res.Body))

	// A live (simulated) NIN, asked without waiting: 202 pending at once, then requeried until it ended.
	res, err = client.VerifyNin(ctx, map[string]string{"nin": "23456789012", "reason": "corporate"}, idverify.VerifyOptions{IdempotencyKey: newKey(), RespondAsync: true})
	if err != nil {
		fail(err)
	}
	var pending struct {
		ReferenceID string `json:"reference_id"`
	}
	if err := res.Decode(&pending); err != nil {
		fail(err)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	final, err := client.RequeryUntilDone(wait, pending.ReferenceID, 500*time.Millisecond)
	var apiErr *idverify.APIError
	switch {
	case err == nil:
		emit("requery", "answer", json.RawMessage(final.Body))
	case errors.As(err, &apiErr) && json.Valid(apiErr.Body):
		// An ended failure (not found, failed at the authority) is an answer too.
		emit("requery", "answer", json.RawMessage(apiErr.Body))
	default:
		fail(err)
	}

	seconds := int64(300)
	if v := os.Getenv("IDVERIFY_WEBHOOK_TOLERANCE"); v != "" {
		if seconds, err = strconv.ParseInt(v, 10, 64); err != nil || seconds < 0 {
			fail(fmt.Errorf("IDVERIFY_WEBHOOK_TOLERANCE must be a whole number of seconds: %q", v))
		}
	}
	tolerance := time.Duration(seconds) * time.Second
	if seconds == 0 {
		tolerance = time.Duration(math.MaxInt64) // a window wider than any clock, so no timestamp check
	}
	for _, name := range strings.Split(os.Getenv("IDVERIFY_WEBHOOK_FILES"), ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			fail(err)
		}
		var delivery struct {
			Secret  string            `json:"secret"`
			Headers map[string]string `json:"headers"`
			Body    string            `json:"body"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&delivery); err != nil {
			fail(err)
		}
		emit("webhook", "valid", idverify.VerifyWebhook([]byte(delivery.Body), delivery.Headers, delivery.Secret, idverify.WebhookOptions{Tolerance: tolerance}))
	}
}
