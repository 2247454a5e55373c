package idverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a delivery's timestamp may be from the clock (replays).
const DefaultWebhookTolerance = 5 * time.Minute

// WebhookOptions tunes the checks; the zero value means 5 minutes around the clock.
type WebhookOptions struct {
	Tolerance time.Duration
	Now       time.Time
}

func (o WebhookOptions) fresh(ts string) bool {
	// Digits only: "+1e9" or " 12" are not a Unix time a sender writes.
	if ts == "" || len(ts) > 12 || strings.Trim(ts, "0123456789") != "" {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	now, tol := o.Now, o.Tolerance
	if now.IsZero() {
		now = time.Now()
	}
	if tol == 0 {
		tol = DefaultWebhookTolerance
	}
	d := now.Sub(time.Unix(sec, 0))
	return d <= tol && d >= -tol
}

// HeadersOf turns a net/http request's headers into the lower-cased map the checks take.
func HeadersOf(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}

func lower(headers map[string]string) map[string]string {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		out[strings.ToLower(k)] = v
	}
	return out
}

// StandardWebhooksKey is the HMAC key of Standard Webhooks: a whsec_ secret's base64-decoded bytes
// (any other secret: its UTF-8 bytes).
func StandardWebhooksKey(secret string) []byte {
	if strings.HasPrefix(secret, "whsec_") {
		// Shown as standard padded base64; a secret made before that form is URL-safe base64 without
		// padding, and the service decodes both alphabets, padded or not, so this does too.
		tail := strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimPrefix(secret, "whsec_")), "=")
		if key, err := base64.RawStdEncoding.DecodeString(tail); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// VerifyStandardWebhook is true when one "v1,<base64>" of webhook-signature is the HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}" keyed with the secret's decoded bytes, and the timestamp
// is within the tolerance. Pass the body exactly as received, before any JSON parsing.
func VerifyStandardWebhook(body []byte, headers map[string]string, secret string, o WebhookOptions) bool {
	h := lower(headers)
	id, ts, sigs := h["webhook-id"], h["webhook-timestamp"], h["webhook-signature"]
	if id == "" || sigs == "" || !o.fresh(ts) {
		return false
	}
	mac := hmac.New(sha256.New, StandardWebhooksKey(secret))
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	ok := false
	for _, entry := range strings.Split(sigs, " ") {
		version, value, found := strings.Cut(entry, ",")
		// Every entry is compared in constant time: no early exit tells which one matched.
		if found && version == "v1" && hmac.Equal([]byte(value), expected) {
			ok = true
		}
	}
	return ok
}

// VerifyIdverifySignature is true when one v1= of "Idverify-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]"
// is the HMAC-SHA256 of "<t>.<body>" keyed with the whole secret string (whsec_ included), and t is
// within the tolerance.
func VerifyIdverifySignature(body []byte, header string, secret string, o WebhookOptions) bool {
	var ts []string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = append(ts, v)
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if len(ts) != 1 || !o.fresh(ts[0]) {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts[0] + "."))
	mac.Write(body)
	expected := []byte(hex.EncodeToString(mac.Sum(nil)))
	ok := false
	for _, v := range sigs {
		if hmac.Equal([]byte(v), expected) {
			ok = true
		}
	}
	return ok
}

// VerifyWebhook is true when every scheme the delivery carries verifies (webhook-signature and/or
// idverify-signature), and it carries at least one: a delivery whose two signatures disagree was
// altered, whichever one a receiver happens to check.
func VerifyWebhook(body []byte, headers map[string]string, secret string, o WebhookOptions) bool {
	h := lower(headers)
	present := 0
	if _, ok := h["webhook-signature"]; ok {
		present++
		if !VerifyStandardWebhook(body, h, secret, o) {
			return false
		}
	}
	if sig, ok := h["idverify-signature"]; ok {
		present++
		if !VerifyIdverifySignature(body, sig, secret, o) {
			return false
		}
	}
	return present > 0
}
