package idverify

import (
	"encoding/json"
	"fmt"
)

// APIError is every non-2xx answer. Status is the HTTP status, Detail the service's message (every
// error body carries one), Code its machine-readable code where the API gives one (vnin_expired,
// mfa_required, insufficient_scope...; "" otherwise), Body the body as it came (the token endpoint's
// OAuth "error", a failed verification's "reference_id"), RequestID the X-Request-Id to quote to support.
type APIError struct {
	Status    int
	Detail    string
	Code      string
	Body      []byte
	RequestID string
	Operation string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %d %s", e.Operation, e.Status, e.Detail)
}

// ReferenceID names a verification whose outcome is unknown (502/504): requery it later.
func (e *APIError) ReferenceID() string {
	var b struct {
		ReferenceID string `json:"reference_id"`
	}
	_ = json.Unmarshal(e.Body, &b)
	return b.ReferenceID
}

func newAPIError(operation string, status int, body []byte, requestID string) *APIError {
	e := &APIError{Status: status, Body: body, RequestID: requestID, Operation: operation}
	var b map[string]any
	if json.Unmarshal(body, &b) == nil {
		if d, ok := b["detail"].(string); ok {
			e.Detail = d
		}
		if c, ok := b["code"].(string); ok {
			e.Code = c
		}
	}
	if e.Detail == "" {
		e.Detail = fmt.Sprintf("HTTP %d", status)
	}
	return e
}
