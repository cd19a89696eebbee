package client

import (
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/otcgo/otc"
)

// JWTSigner signs a fresh HS256 token for every request, for servers that
// authenticate with a shared secret. A short lifetime keeps a
// token that leaks from a log or a proxy useful only briefly.
type JWTSigner struct {
	// Secret is the shared HS256 secret. Required.
	Secret []byte
	// Lifetime is how long each token is valid. Zero means one minute.
	Lifetime time.Duration
	// Audience, when set, becomes the "aud" claim.
	Audience string
	// Subject, when set, becomes the "sub" claim: who the caller is.
	Subject string
}

// token signs one token, valid from now for the lifetime.
func (s *JWTSigner) token(now time.Time) (string, error) {
	life := s.Lifetime
	if life <= 0 {
		life = time.Minute
	}
	claims := jwt.RegisteredClaims{
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(life)),
		Subject:   s.Subject,
		// A random id, so that two tokens signed in the same second differ.
		ID: otc.NewCallID(),
	}
	if s.Audience != "" {
		claims.Audience = jwt.ClaimStrings{s.Audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.Secret)
}

// authorize adds the configured credentials to a request.
func (c *Client) authorize(req *http.Request) error {
	if c.apiKey != "" {
		req.Header.Set(otc.HeaderAPIKey, c.apiKey)
	}
	switch {
	case c.bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	case c.jwt != nil:
		tok, err := c.jwt.token(time.Now())
		if err != nil {
			return fmt.Errorf("signing the bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}
