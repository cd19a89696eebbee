// Command captoken makes what a capability-token issuer makes, so that a
// tool's policy can be tried against the calculator example: an ES256 key
// pair, and tokens signed with it for one exact call.
//
// Make a key pair: the public key set, for the server's OTC_JWKS_FILE, and
// the private key (PEM, PKCS #8, readable by its owner only), which stays
// with the issuer:
//
//	go run ./examples/captoken -keygen -jwks jwks.json -key key.pem
//
// Then mint a token for a call of Payments.Refund whose request body is in
// body.json, byte for byte as it will be sent:
//
//	go run ./examples/captoken -key key.pem -iss https://issuer.example \
//	    -aud urn:otc:example:payments -caps payments:refund \
//	    -blast-radius tenant:acme -exec-act refund -body body.json
//
// The token is printed on standard output. It carries iss, sub, aud, iat,
// exp (-ttl after now, 5 minutes by default), a random jti, and the claims
// the flags ask for: caps, blast_radius, exec_act, target, inp_hash (the
// base64url SHA-256, without padding, of the exact bytes of -body; "-"
// reads them from standard input), htm and htu. Its header names the key
// by its kid, the key's RFC 7638 thumbprint, which -keygen also writes in
// the key set; -kid overrides it for a key set made elsewhere.
//
// It is a tool for trying things out: a real issuer decides what to grant
// before it signs, and keeps its key somewhere safer than a file.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// defaultTTL is how long a token is valid: enough to paste it into a
// command, short enough that a leaked one is soon useless.
const defaultTTL = 5 * time.Minute

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, time.Now()))
}

// mintOptions are the flags of minting.
type mintOptions struct {
	keyPath     string
	kid         string
	iss, sub    string
	aud, caps   string // comma-separated
	blastRadius string
	execAct     string
	target      string
	bodyPath    string
	htm, htu    string
	ttl         time.Duration
}

// run runs the command with args and returns its exit code: 0, 1 when it
// failed, 2 when the arguments are wrong.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, now time.Time) int {
	flags := flag.NewFlagSet("captoken", flag.ContinueOnError)
	flags.SetOutput(stderr)
	keygen := flags.Bool("keygen", false, "write a new ES256 key pair: the public key set to -jwks and the private key to -key")
	jwksPath := flags.String("jwks", "", "with -keygen, the `file` to write the public JSON Web Key Set to")
	var o mintOptions
	flags.StringVar(&o.keyPath, "key", "", "the private key's PEM `file`: written by -keygen, read to sign a token")
	flags.StringVar(&o.kid, "kid", "", "the key `id` in the token's header; empty means the key's RFC 7638 thumbprint, as -keygen writes it")
	flags.StringVar(&o.iss, "iss", "", "the token's issuer: one the server accepts (its OTC_TOKEN_ISSUER)")
	flags.StringVar(&o.sub, "sub", "example-agent", "the token's subject: who the call is made for")
	flags.StringVar(&o.aud, "aud", "", "the token's audience, comma-separated: the tool's resource URI, or its id (Toolkit.Tool@x.y.z)")
	flags.StringVar(&o.caps, "caps", "", "the capabilities granted, comma-separated (payments:refund)")
	flags.StringVar(&o.blastRadius, "blast-radius", "", "the call's blast radius, `scope:value` (tenant:acme)")
	flags.StringVar(&o.execAct, "exec-act", "", "the operation the token is bound to (refund)")
	flags.StringVar(&o.target, "target", "", "the target the token is bound to")
	flags.StringVar(&o.bodyPath, "body", "", "the `file` holding the exact request body the token is bound to (its SHA-256 becomes inp_hash); - for standard input")
	flags.StringVar(&o.htm, "htm", "", "the HTTP `method` the token is bound to (POST)")
	flags.StringVar(&o.htu, "htu", "", "the `URL` the token is bound to, without query (http://127.0.0.1:8080/tools/call)")
	flags.DurationVar(&o.ttl, "ttl", defaultTTL, "how long the token is valid")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, "captoken: "+msg)
		flags.Usage()
		return 2
	}
	if flags.NArg() > 0 {
		return usage(fmt.Sprintf("unexpected argument %q", flags.Arg(0)))
	}

	if *keygen {
		if *jwksPath == "" || o.keyPath == "" {
			return usage("-keygen needs -jwks and -key: where to write the public key set and the private key")
		}
		kid, err := writeKeyPair(*jwksPath, o.keyPath)
		if err != nil {
			fmt.Fprintln(stderr, "captoken: "+err.Error())
			return 1
		}
		fmt.Fprintf(stderr, "captoken: wrote the key set %s and the private key %s (kid %s)\n", *jwksPath, o.keyPath, kid)
		return 0
	}

	switch {
	case *jwksPath != "":
		return usage("-jwks is only for -keygen")
	case o.keyPath == "":
		return usage("-key is required: the private key's PEM file (make one with -keygen)")
	case o.iss == "":
		return usage("-iss is required: the issuer the server accepts")
	case splitList(o.aud) == nil:
		return usage("-aud is required: the tool's resource URI or id")
	case o.ttl <= 0:
		return usage("-ttl must be positive")
	}
	var body []byte
	if o.bodyPath != "" {
		var err error
		if o.bodyPath == "-" {
			body, err = io.ReadAll(stdin)
		} else {
			body, err = os.ReadFile(o.bodyPath)
		}
		if err != nil {
			fmt.Fprintln(stderr, "captoken: reading -body: "+err.Error())
			return 1
		}
	}
	token, err := mint(o, body, now)
	if err != nil {
		fmt.Fprintln(stderr, "captoken: "+err.Error())
		return 1
	}
	fmt.Fprintln(stdout, token)
	return 0
}

// mint signs a token with the key in o.keyPath. body is the request body
// to bind to, or nil for no inp_hash.
func mint(o mintOptions, body []byte, now time.Time) (string, error) {
	key, err := readPrivateKey(o.keyPath)
	if err != nil {
		return "", err
	}
	kid := o.kid
	if kid == "" {
		if kid, err = thumbprint(&key.PublicKey); err != nil {
			return "", err
		}
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti) // never fails (crypto/rand)

	claims := jwt.MapClaims{
		"iss": o.iss,
		"sub": o.sub,
		"aud": splitList(o.aud),
		"iat": now.Unix(),
		"exp": now.Add(o.ttl).Unix(),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	}
	optional := map[string]string{
		"blast_radius": o.blastRadius,
		"exec_act":     o.execAct,
		"target":       o.target,
		"htm":          o.htm,
		"htu":          o.htu,
	}
	for k, v := range optional {
		if v != "" {
			claims[k] = v
		}
	}
	if caps := splitList(o.caps); caps != nil {
		claims["caps"] = caps
	}
	if body != nil {
		claims["inp_hash"] = inpHash(body)
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["kid"] = kid
	return t.SignedString(key)
}

// inpHash is the inp_hash of a request body: the base64url SHA-256 of its
// exact bytes, without padding.
func inpHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// splitList splits a comma-separated flag, skipping blanks; nil when it
// holds nothing.
func splitList(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// jwk is a public EC key as a JSON Web Key (RFC 7517, RFC 7518 §6.2).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// writeKeyPair writes a new P-256 key pair: the public key set to
// jwksPath and the private key to keyPath, readable by its owner only. It
// overwrites neither file, so that a key in use is never lost by a slip;
// it returns the key's kid.
func writeKeyPair(jwksPath, keyPath string) (string, error) {
	for _, p := range []string{jwksPath, keyPath} {
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s already exists: remove it first, or choose another name (a key in use is never overwritten)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	set, kid, err := publicKeySet(&key.PublicKey)
	if err != nil {
		return "", err
	}
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", err
	}
	if err := writeNew(jwksPath, set, 0o644); err != nil {
		_ = os.Remove(keyPath) // a private key without its public half is of no use
		return "", err
	}
	return kid, nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// publicKeySet encodes pub as a JSON Web Key Set of one key, and returns
// its kid.
func publicKeySet(pub *ecdsa.PublicKey) ([]byte, string, error) {
	x, y, err := coordinates(pub)
	if err != nil {
		return nil, "", err
	}
	kid, err := thumbprint(pub)
	if err != nil {
		return nil, "", err
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{[]jwk{{Kty: "EC", Crv: "P-256", X: x, Y: y, Kid: kid, Use: "sig", Alg: "ES256"}}}
	b, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return nil, "", err
	}
	return append(b, '\n'), kid, nil
}

// coordinates returns the base64url x and y of a P-256 public key, each
// the 32 bytes RFC 7518 §6.2.1 asks for.
func coordinates(pub *ecdsa.PublicKey) (x, y string, err error) {
	if pub.Curve != elliptic.P256() {
		return "", "", errors.New("the key is not on P-256, the curve of ES256")
	}
	point, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {
		return "", "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(point[1:33]), enc.EncodeToString(point[33:65]), nil
}

// thumbprint is the RFC 7638 thumbprint of an EC public key: the SHA-256
// of its required members in lexicographic order, without whitespace.
func thumbprint(pub *ecdsa.PublicKey) (string, error) {
	x, y, err := coordinates(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// readPrivateKey reads a P-256 private key from a PEM file: PKCS #8
// ("PRIVATE KEY", as -keygen writes) or SEC 1 ("EC PRIVATE KEY", as
// openssl ecparam -genkey writes).
func readPrivateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("%s holds no PRIVATE KEY or EC PRIVATE KEY PEM block", path)
		}
		var key any
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		default:
			continue // EC PARAMETERS, say
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ec, ok := key.(*ecdsa.PrivateKey)
		if !ok || ec.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%s: the key is not an EC P-256 key, the only kind ES256 signs with", path)
		}
		return ec, nil
	}
}
