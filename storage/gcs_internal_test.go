package storage

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/option"
)

// TestGCSCredentials: outside the emulator, the client signs its requests
// with Application Default Credentials (here a service account key whose
// token endpoint is local) on top of the bounded transport, and falls
// back to unauthenticated requests when there are none, naming that
// cause when the store refuses them.
func TestGCSCredentials(t *testing.T) {
	const d = time.Second
	release := make(chan struct{})
	var tokens atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/token":
			tokens.Add(1)
			w.Write([]byte(`{"access_token":"test-token","token_type":"Bearer","expires_in":3600}`))
		case "/storage/v1/b/stall":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/storage/v1/b/bkt":
			if r.Header.Get("Authorization") != "Bearer test-token" {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":{"code":401,"message":"Anonymous caller"}}`))
				return
			}
			w.Write([]byte(`{"name":"bkt"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(release)
	endpoint := option.WithEndpoint(srv.URL + "/storage/v1/")
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	ctx := context.Background()

	t.Run("service account", func(t *testing.T) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", serviceAccountKey(t, srv.URL+"/token"))
		c, err := newGCSClient(ctx, d, endpoint)
		if err != nil || c.noAuth != nil {
			t.Fatalf("client: %v (no credentials: %v)", err, c.noAuth)
		}
		if _, err := c.Bucket("bkt").Attrs(ctx); err != nil || tokens.Load() == 0 {
			t.Fatalf("an authenticated request: %v, %d tokens fetched", err, tokens.Load())
		}
		// A hang beyond the bound shows as the context's error.
		sctx, cancel := context.WithTimeout(newOp(ctx), 20*time.Second)
		defer cancel()
		start := time.Now()
		_, err = c.Bucket("stall").Attrs(sctx)
		if err = c.wrap("gs://stall", err); !errors.Is(err, ErrTimeout) || time.Since(start) > 3*d+5*time.Second {
			t.Fatalf("a stalled request: %v after %v, want ErrTimeout", err, time.Since(start))
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
		c, err := newGCSClient(ctx, d, endpoint)
		if err != nil || c.noAuth == nil {
			t.Fatalf("client: %v (no credentials: %v)", err, c.noAuth)
		}
		_, err = c.Bucket("bkt").Attrs(ctx)
		if err = c.wrap("gs://bkt", err); !errors.Is(err, ErrNoCredentials) {
			t.Fatalf("an unauthenticated request refused: %v, want ErrNoCredentials", err)
		}
	})
}

// serviceAccountKey writes a service account key file whose token
// endpoint is tokenURI.
func serviceAccountKey(t *testing.T, tokenURI string) string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "test",
		"private_key_id": "k1",
		"private_key":    string(pemKey),
		"client_email":   "test@test.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      tokenURI,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
