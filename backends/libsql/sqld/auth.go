package sqld

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Auth is a key pair made for one run: the primary gets the public key
// (--auth-jwt-key-file) and refuses every request without a token signed
// by the private one. The token is a secret: it goes to clients in memory
// or through a child's environment, never into a URL, an argument list, a
// log or a report.
type Auth struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
}

// NewAuth makes a fresh Ed25519 key pair.
func NewAuth() (*Auth, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sqld auth: make a key pair: %w", err)
	}
	return &Auth{pub: pub, priv: priv}, nil
}

// PublicKey is the public key as sqld reads it: the raw 32 bytes in
// URL-safe base64.
func (a *Auth) PublicKey() string { return base64.RawURLEncoding.EncodeToString(a.pub) }

// WriteKeyFile writes the public key into dir and returns the file's path.
func (a *Auth) WriteKeyFile(dir string) (string, error) {
	path := filepath.Join(dir, "jwt-public-key")
	if err := os.WriteFile(path, []byte(a.PublicKey()), 0o600); err != nil {
		return "", fmt.Errorf("sqld auth: write the public key: %w", err)
	}
	return path, nil
}

// Token mints a read-write EdDSA JWT that expires after ttl.
func (a *Auth) Token(ttl time.Duration) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"EdDSA","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"a": "rw", "iat": time.Now().Unix(), "exp": time.Now().Add(ttl).Unix()})
	signing := header + "." + enc.EncodeToString(claims)
	return signing + "." + enc.EncodeToString(ed25519.Sign(a.priv, []byte(signing)))
}
