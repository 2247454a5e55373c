// Package idverify is a thin client for the Identity Verification and Wallet API: one generic request
// (Do) and one small method per operation of the OpenAPI document (GET /v1/openapi.json). Standard
// library only.
//
// Each method's "@operation" comment names the operation it calls, exactly as the document writes
// it; test/clients/operation-coverage.test.ts fails when an operation of the document has none.
package idverify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const jsonType = "application/json"

// Client calls the API. BaseURL is the versioned base, e.g. http://localhost:8080/v1.
//
// Log in with Login (a person) or LoginClient (an API client's id and secret): the client keeps the
// credentials and signs in again RefreshMargin before the token expires, so a long-running process
// never sends an expired token. With two-factor sign-in (an otp) there is nothing to sign in again
// with: call Login yourself when it expires. Safe for concurrent use.
type Client struct {
	BaseURL       string
	RootURL       string // the service root, for /healthz and /readyz
	HTTPClient    *http.Client
	RefreshMargin time.Duration
	Now           func() time.Time

	mu          sync.Mutex
	token       string
	expiresAt   time.Time
	credentials url.Values
}

// New makes a client for the versioned base URL (e.g. http://localhost:8080/v1).
func New(baseURL string) *Client {
	base := strings.TrimRight(baseURL, "/")
	return &Client{
		BaseURL:       base,
		RootURL:       strings.TrimSuffix(base, "/v1"),
		HTTPClient:    &http.Client{Timeout: 45 * time.Second},
		RefreshMargin: time.Minute,
		Now:           time.Now,
	}
}

// Request is any operation: Path as the document writes it ("/verify-nin/batches/{id}"), its {name}
// segments filled from PathParams. At most one of JSON, Form and Body is the request body.
type Request struct {
	Method      string
	Path        string
	PathParams  map[string]string
	Query       url.Values
	JSON        any
	Form        url.Values
	Body        []byte
	ContentType string
	Header      http.Header
	Accept      string // default application/json
	NoAuth      bool
	Root        bool // at the service root instead of the versioned base
}

// Response is a 2xx answer: its status, headers and raw body (JSON, PDF or CSV bytes as they came).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the JSON body into v.
func (r *Response) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Map is the JSON body as a map (nil for an empty body).
func (r *Response) Map() (map[string]any, error) {
	if len(r.Body) == 0 {
		return nil, nil
	}
	var m map[string]any
	return m, json.Unmarshal(r.Body, &m)
}

// Do sends any request; a non-2xx answer is an *APIError.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	op := r.Method + " " + r.Path
	path := r.Path
	for k, v := range r.PathParams {
		path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
	}
	u := c.BaseURL + path
	if r.Root {
		u = c.RootURL + path
	}
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	var body io.Reader
	contentType := r.ContentType
	switch {
	case r.JSON != nil:
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		body, contentType = bytes.NewReader(b), jsonType
	case r.Form != nil:
		body, contentType = strings.NewReader(r.Form.Encode()), "application/x-www-form-urlencoded"
	case r.Body != nil:
		body = bytes.NewReader(r.Body)
		if contentType == "" {
			contentType = "application/octet-stream"
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	accept := r.Accept
	if accept == "" {
		accept = jsonType
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if !r.NoAuth {
		token, err := c.currentToken(ctx, op)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, newAPIError(op, res.StatusCode, raw, res.Header.Get("X-Request-Id"))
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw}, nil
}

func (c *Client) call(ctx context.Context, method, path string, r Request) (*Response, error) {
	r.Method, r.Path = method, path
	return c.Do(ctx, r)
}

func id(name, value string) map[string]string { return map[string]string{name: value} }

// ---- tokens ----

// TokenResponse is POST /login's answer (OAuth 2.0).
type TokenResponse struct {
	AccessToken           string `json:"access_token"`
	TokenType             string `json:"token_type"`
	ExpiresIn             int    `json:"expires_in"`
	Scope                 string `json:"scope"`
	RequirePasswordChange bool   `json:"require_password_change,omitempty"`
}

// ErrNoToken is returned by a call that needs a token before Login, LoginClient or SetToken.
var ErrNoToken = errors.New("this call needs a token: call Login or LoginClient first")

// Token is the bearer token in use ("" before a login).
func (c *Client) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// SetToken uses a token obtained elsewhere (no automatic renewal).
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token, c.expiresAt, c.credentials = token, time.Time{}, nil
}

func (c *Client) currentToken(ctx context.Context, op string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.credentials != nil && !c.expiresAt.IsZero() && !c.Now().Before(c.expiresAt.Add(-c.RefreshMargin)) {
		if _, err := c.signIn(ctx, c.credentials); err != nil {
			return "", err
		}
	}
	if c.token == "" {
		return "", fmt.Errorf("%s: %w", op, ErrNoToken)
	}
	return c.token, nil
}

// signIn runs with mu held.
func (c *Client) signIn(ctx context.Context, form url.Values) (*TokenResponse, error) {
	res, err := c.Do(ctx, Request{Method: "POST", Path: "/login", Form: form, NoAuth: true})
	if err != nil {
		return nil, err
	}
	var t TokenResponse
	if err := res.Decode(&t); err != nil {
		return nil, fmt.Errorf("POST /login: %w", err)
	}
	c.token = t.AccessToken
	c.expiresAt = time.Time{}
	if t.ExpiresIn > 0 {
		c.expiresAt = c.Now().Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	return &t, nil
}

// Login signs in as a person; the token is kept (and renewed before it expires unless otp was
// needed). RequirePasswordChange: only ChangePassword works until then. otp and scope may be "".
func (c *Client) Login(ctx context.Context, username, password, otp, scope string) (*TokenResponse, error) {
	// @operation POST /login
	form := url.Values{"username": {username}, "password": {password}}
	if scope != "" {
		form.Set("scope", scope)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := form
	if otp != "" {
		sent = url.Values{"otp": {otp}}
		for k, v := range form {
			sent[k] = v
		}
	}
	t, err := c.signIn(ctx, sent)
	if err != nil {
		return nil, err
	}
	c.credentials = form
	if otp != "" {
		c.credentials = nil
	}
	return t, nil
}

// LoginClient uses OAuth 2.0 client credentials (an API client's server); the token is kept and renewed.
func (c *Client) LoginClient(ctx context.Context, clientID, clientSecret, scope string) (*TokenResponse, error) {
	// @operation POST /login
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret}}
	if scope != "" {
		form.Set("scope", scope)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.signIn(ctx, form)
	if err != nil {
		return nil, err
	}
	c.credentials = form
	return t, nil
}

// Logout ends this token at once; no automatic sign-in follows.
func (c *Client) Logout(ctx context.Context) error {
	// @operation POST /logout
	if _, err := c.call(ctx, "POST", "/logout", Request{}); err != nil {
		return err
	}
	c.SetToken("")
	return nil
}
