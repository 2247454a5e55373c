package idverify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

type fakeAPI struct {
	mu       sync.Mutex
	logins   []url.Values
	last     *http.Request
	lastBody string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last, f.lastBody = r, string(raw)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/login":
		form, _ := url.ParseQuery(string(raw))
		f.logins = append(f.logins, form)
		if form.Get("password") == "wrong" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"detail":"Incorrect username or password","error":"invalid_grant","error_description":"x"}`)
			return
		}
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"bearer","expires_in":3600,"scope":""}`, len(f.logins))
	case "/v1/me":
		fmt.Fprintf(w, `{"organisation":{"units":7},"auth":%q}`, r.Header.Get("Authorization"))
	case "/v1/verify-nin/vnin":
		w.Header().Set("X-Request-Id", "req-1")
		w.WriteHeader(404)
		fmt.Fprint(w, `{"detail":"This vNIN has expired","code":"vnin_expired"}`)
	case "/v1/verify-nin":
		if r.Header.Get("Prefer") == "respond-async" {
			w.WriteHeader(202)
			fmt.Fprint(w, `{"status":"pending","message":"m","reference_id":"REF-AAAAAAAAAAAA"}`)
			return
		}
		fmt.Fprint(w, `{"status":"success"}`)
	case "/healthz":
		fmt.Fprint(w, `{"status":"ok"}`)
	default:
		w.WriteHeader(500)
		fmt.Fprint(w, "not json")
	}
}

func setup(t *testing.T) (*fakeAPI, *Client, *time.Time) {
	fake := &fakeAPI{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c := New(srv.URL + "/v1")
	clock := time.Unix(1000, 0)
	c.Now = func() time.Time { return clock }
	return fake, c, &clock
}

func authOf(t *testing.T, c *Client) string {
	res, err := c.GetMe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := res.Map()
	return m["auth"].(string)
}

func TestTokenRenewedBeforeItExpires(t *testing.T) {
	fake, c, clock := setup(t)
	if _, err := c.Login(context.Background(), "ada", "pw", "", ""); err != nil {
		t.Fatal(err)
	}
	if got := authOf(t, c); got != "Bearer tok-1" {
		t.Fatal(got)
	}
	*clock = clock.Add(3600*time.Second - 61*time.Second)
	if got := authOf(t, c); got != "Bearer tok-1" {
		t.Fatalf("renewed too early: %s", got)
	}
	*clock = clock.Add(2 * time.Second)
	if got := authOf(t, c); got != "Bearer tok-2" {
		t.Fatalf("not renewed within the margin: %s", got)
	}
	if len(fake.logins) != 2 || fake.logins[1].Get("username") != "ada" || fake.logins[1].Get("password") != "pw" {
		t.Fatalf("logins %v", fake.logins)
	}
}

func TestClientCredentialsRenewed(t *testing.T) {
	fake, c, clock := setup(t)
	if _, err := c.LoginClient(context.Background(), "cli_1", "s3cret", "verify"); err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Hour)
	if got := authOf(t, c); got != "Bearer tok-2" {
		t.Fatal(got)
	}
	l := fake.logins[1]
	if l.Get("grant_type") != "client_credentials" || l.Get("client_id") != "cli_1" || l.Get("client_secret") != "s3cret" || l.Get("scope") != "verify" {
		t.Fatalf("renewal sent %v", l)
	}
}

func TestOneTimeCodeLoginNotRepeated(t *testing.T) {
	fake, c, clock := setup(t)
	if _, err := c.Login(context.Background(), "ada", "pw", "123456", ""); err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Hour)
	authOf(t, c)
	if len(fake.logins) != 1 {
		t.Fatalf("signed in again with a spent code: %v", fake.logins)
	}
}

func TestErrorsCarryStatusDetailCode(t *testing.T) {
	_, c, _ := setup(t)
	ctx := context.Background()
	_, err := c.Login(ctx, "ada", "wrong", "", "")
	var e *APIError
	if !errors.As(err, &e) || e.Status != 401 || e.Detail != "Incorrect username or password" || e.Code != "" {
		t.Fatalf("%#v", err)
	}
	if _, err := c.Login(ctx, "ada", "pw", "", ""); err != nil {
		t.Fatal(err)
	}
	_, err = c.VerifyVnin(ctx, map[string]string{"vnin": "AA000000000008ZZ", "reason": "corporate"}, VerifyOptions{})
	if !errors.As(err, &e) || e.Status != 404 || e.Detail != "This vNIN has expired" || e.Code != "vnin_expired" || e.RequestID != "req-1" {
		t.Fatalf("%#v", err)
	}
	_, err = c.CancelBatch(ctx, "b1")
	if !errors.As(err, &e) || e.Status != 500 || e.Detail != "HTTP 500" || string(e.Body) != "not json" {
		t.Fatalf("%#v", err)
	}
}

func TestVerifyOptionsAreSent(t *testing.T) {
	fake, c, _ := setup(t)
	ctx := context.Background()
	if _, err := c.Login(ctx, "ada", "pw", "", ""); err != nil {
		t.Fatal(err)
	}
	res, err := c.VerifyNin(ctx, map[string]string{"nin": "23456789012", "reason": "corporate"}, VerifyOptions{IdempotencyKey: "k-1", RespondAsync: true})
	if err != nil || res.Status != 202 {
		t.Fatal(res, err)
	}
	if fake.last.Header.Get("Idempotency-Key") != "k-1" || fake.last.Header.Get("Prefer") != "respond-async" || fake.lastBody != `{"nin":"23456789012","reason":"corporate"}` {
		t.Fatalf("%v %s", fake.last.Header, fake.lastBody)
	}
}

func TestRootOperationsAndNoToken(t *testing.T) {
	fake, c, _ := setup(t)
	ctx := context.Background()
	if _, err := c.Healthz(ctx); err != nil || fake.last.URL.Path != "/healthz" {
		t.Fatal(err, fake.last.URL)
	}
	if _, err := c.GetMe(ctx); !errors.Is(err, ErrNoToken) {
		t.Fatal(err)
	}
}
