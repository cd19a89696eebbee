// Package jose signs and verifies the compact JSON Web Signatures (RFC
// 7515) that OAuth's key-bound grants are made of: a client's assertion
// (RFC 7523), a workload's or an enterprise's grant, and DPoP proofs
// (RFC 9449), whose public key travels in the header as a JSON Web Key
// (RFC 7517) named by its thumbprint (RFC 7638).
//
// Keys are [crypto.Signer]s, so that a key held by a hardware module or a
// cloud KMS signs as well as one in memory: ECDSA on P-256, P-384 and
// P-521 (ES256, ES384, ES512), RSA of 2,048 bits or more (RS256, or PS256
// where asked), and Ed25519 (EdDSA).
package jose

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"strings"
)

// b64 is base64url without padding, JOSE's encoding.
var b64 = base64.RawURLEncoding

// Algorithms are the signature algorithms this package signs and
// verifies, all asymmetric.
var Algorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// Alg is the algorithm a key signs with: the one its curve fixes for
// ECDSA, RS256 for RSA, EdDSA for Ed25519. For an RSA key, prefer names
// an algorithm among those a server supports (PS256 where it lists it
// and not RS256).
func Alg(key crypto.Signer, supported ...string) (string, error) {
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		return ecAlg(pub)
	case *rsa.PublicKey:
		if pub.N.BitLen() < 2048 {
			return "", fmt.Errorf("an RSA key of %d bits: at least 2048 are needed", pub.N.BitLen())
		}
		for _, a := range supported {
			if strings.HasPrefix(a, "RS") || strings.HasPrefix(a, "PS") {
				if _, _, ok := rsaHash(a); ok {
					return a, nil
				}
			}
		}
		return "RS256", nil
	case ed25519.PublicKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("a key of type %T: only ECDSA, RSA and Ed25519 keys sign JWTs", key.Public())
}

// ecAlg is the algorithm of an ECDSA key, which its curve fixes.
func ecAlg(pub *ecdsa.PublicKey) (string, error) {
	switch pub.Curve {
	case elliptic.P256():
		return "ES256", nil
	case elliptic.P384():
		return "ES384", nil
	case elliptic.P521():
		return "ES512", nil
	}
	return "", fmt.Errorf("an ECDSA key on %s: only P-256, P-384 and P-521 sign JWTs", pub.Curve.Params().Name)
}

// rsaHash is the hash of an RSA algorithm, and whether it is PSS.
func rsaHash(alg string) (crypto.Hash, bool, bool) {
	if strings.HasPrefix(alg, "ES") {
		return 0, false, false
	}
	return hashOf(alg)
}

// hashOf is the hash of an ECDSA or RSA algorithm, and whether it is
// PSS.
func hashOf(alg string) (crypto.Hash, bool, bool) {
	if len(alg) != 5 {
		return 0, false, false
	}
	var h crypto.Hash
	switch alg[2:] {
	case "256":
		h = crypto.SHA256
	case "384":
		h = crypto.SHA384
	case "512":
		h = crypto.SHA512
	default:
		return 0, false, false
	}
	switch alg[:2] {
	case "ES", "RS":
		return h, false, true
	case "PS":
		return h, true, true
	}
	return 0, false, false
}

// Sign makes a compact JWS of claims (any value encoding/json encodes to
// an object), with header's members and alg, signed by key.
func Sign(key crypto.Signer, alg string, header map[string]any, claims any) (string, error) {
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(hb) + "." + b64.EncodeToString(cb)
	sig, err := signInput(key, alg, []byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// signInput signs a JWS's signing input.
func signInput(key crypto.Signer, alg string, input []byte) ([]byte, error) {
	if alg == "EdDSA" {
		return key.Sign(rand.Reader, input, crypto.Hash(0))
	}
	h, pss, ok := hashOf(alg)
	if !ok {
		return nil, fmt.Errorf("jose: unknown algorithm %q", alg)
	}
	digest := digestOf(h, input)
	var opts crypto.SignerOpts = h
	if pss {
		opts = &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h}
	}
	sig, err := key.Sign(rand.Reader, digest, opts)
	if err != nil {
		return nil, err
	}
	if pub, ok := key.Public().(*ecdsa.PublicKey); ok {
		// A crypto.Signer's ECDSA signature is ASN.1; JWS's is r||s,
		// each the curve's size.
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return nil, fmt.Errorf("jose: the key's ECDSA signature: %w", err)
		}
		size := (pub.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*size)
		rs.R.FillBytes(out[:size])
		rs.S.FillBytes(out[size:])
		return out, nil
	}
	return sig, nil
}

func digestOf(h crypto.Hash, b []byte) []byte {
	var d hash.Hash
	switch h {
	case crypto.SHA384:
		d = sha512.New384()
	case crypto.SHA512:
		d = sha512.New()
	default:
		d = sha256.New()
	}
	d.Write(b)
	return d.Sum(nil)
}

// PublicJWK is the JSON Web Key of a public key, with its required
// members only (those its thumbprint is made of).
func PublicJWK(pub crypto.PublicKey) (map[string]any, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		ek, err := k.ECDH()
		if err != nil {
			return nil, fmt.Errorf("jose: %w", err)
		}
		raw := ek.Bytes() // 0x04 || x || y
		size := (len(raw) - 1) / 2
		return map[string]any{"kty": "EC", "crv": k.Curve.Params().Name, "x": b64.EncodeToString(raw[1 : 1+size]), "y": b64.EncodeToString(raw[1+size:])}, nil
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "n": b64.EncodeToString(k.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(k.E)).Bytes())}, nil
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64.EncodeToString(k)}, nil
	}
	return nil, fmt.Errorf("jose: a public key of type %T", pub)
}

// Thumbprint is the SHA-256 JWK thumbprint of jwk (RFC 7638), base64url:
// the hash of its required members, in lexicographic order, without
// white space.
func Thumbprint(jwk map[string]any) (string, error) {
	var members []string
	switch jwk["kty"] {
	case "EC":
		members = []string{"crv", "kty", "x", "y"}
	case "RSA":
		members = []string{"e", "kty", "n"}
	case "OKP":
		members = []string{"crv", "kty", "x"}
	default:
		return "", fmt.Errorf("jose: a JWK of kty %v", jwk["kty"])
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range members {
		v, ok := jwk[m].(string)
		if !ok {
			return "", fmt.Errorf("jose: the JWK has no %s", m)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m)
		s, _ := json.Marshal(v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(s)
	}
	b.WriteByte('}')
	sum := sha256.Sum256([]byte(b.String()))
	return b64.EncodeToString(sum[:]), nil
}

// ParsePrivateKey reads a PEM private key: PKCS #8 ("PRIVATE KEY"), SEC 1
// ("EC PRIVATE KEY") or PKCS #1 ("RSA PRIVATE KEY"), the first such block
// of data.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key (a PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY block)")
		}
		var key any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the %s block: %w", block.Type, err)
		}
		s, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a private key of type %T cannot sign", key)
		}
		if _, err := Alg(s); err != nil {
			return nil, err
		}
		return s, nil
	}
}

// PublicKey is the public key of a JSON Web Key: EC on P-256, P-384 or
// P-521, RSA of 2,048 bits or more, or OKP Ed25519. A JWK with a private
// member ("d", or RSA's primes) is refused: it must never travel.
func PublicKey(jwk map[string]any) (crypto.PublicKey, error) {
	for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"} {
		if _, ok := jwk[private]; ok {
			return nil, errors.New("the JWK holds a private key")
		}
	}
	field := func(name string) ([]byte, error) {
		s, ok := jwk[name].(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("the JWK has no %s", name)
		}
		b, err := b64.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("the JWK's %s is not base64url", name)
		}
		return b, nil
	}
	switch jwk["kty"] {
	case "EC":
		var curve elliptic.Curve
		switch jwk["crv"] {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("an EC JWK on the curve %v", jwk["crv"])
		}
		x, err := field("x")
		if err != nil {
			return nil, err
		}
		y, err := field("y")
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return nil, errors.New("the EC JWK's coordinates are not of its curve's size")
		}
		raw := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, raw)
		if err != nil {
			return nil, fmt.Errorf("the EC JWK: %w", err)
		}
		return pub, nil
	case "RSA":
		n, err := field("n")
		if err != nil {
			return nil, err
		}
		e, err := field("e")
		if err != nil {
			return nil, err
		}
		if len(e) > 4 {
			return nil, errors.New("the RSA JWK's exponent is too large")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.N.BitLen() > 8192 || pub.E < 3 {
			return nil, fmt.Errorf("an RSA JWK of %d bits with exponent %d", pub.N.BitLen(), pub.E)
		}
		return pub, nil
	case "OKP":
		if jwk["crv"] != "Ed25519" {
			return nil, fmt.Errorf("an OKP JWK on the curve %v", jwk["crv"])
		}
		x, err := field("x")
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, errors.New("the Ed25519 JWK is not 32 bytes")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, fmt.Errorf("a JWK of kty %v", jwk["kty"])
}

// maxCompact bounds a compact JWS this package reads.
const maxCompact = 16 << 10

// Parse splits a compact JWS, decodes its header and claims (JSON
// objects, numbers kept as json.Number), and returns them with the
// signing input and the signature, unverified.
func Parse(token string) (header, claims map[string]any, input, sig []byte, err error) {
	if len(token) > maxCompact {
		return nil, nil, nil, nil, fmt.Errorf("a JWT of %d bytes, over %d", len(token), maxCompact)
	}
	h, rest, ok := strings.Cut(token, ".")
	c, s, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.Contains(s, ".") {
		return nil, nil, nil, nil, errors.New("not a compact JWT (three parts separated by dots)")
	}
	decode := func(part string, out *map[string]any) error {
		b, err := b64.DecodeString(part)
		if err != nil {
			return errors.New("a part is not base64url")
		}
		d := json.NewDecoder(strings.NewReader(string(b)))
		d.UseNumber()
		if err := d.Decode(out); err != nil || *out == nil {
			return errors.New("a part is not a JSON object")
		}
		return nil
	}
	if err := decode(h, &header); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("the header: %w", err)
	}
	if err := decode(c, &claims); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("the claims: %w", err)
	}
	if sig, err = b64.DecodeString(s); err != nil {
		return nil, nil, nil, nil, errors.New("the signature is not base64url")
	}
	return header, claims, []byte(h + "." + c), sig, nil
}

// Verify checks a signature of input by pub with alg, an algorithm of
// [Algorithms] that fits the key.
func Verify(pub crypto.PublicKey, alg string, input, sig []byte) error {
	bad := errors.New("the signature does not verify")
	switch k := pub.(type) {
	case ed25519.PublicKey:
		if alg != "EdDSA" || !ed25519.Verify(k, input, sig) {
			return bad
		}
		return nil
	case *ecdsa.PublicKey:
		h, _, ok := hashOf(alg)
		if !ok || !strings.HasPrefix(alg, "ES") {
			return fmt.Errorf("the algorithm %q does not fit an EC key", alg)
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		if want, _ := ecAlg(k); want != alg || len(sig) != 2*size {
			return bad
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(k, digestOf(h, input), r, s) {
			return bad
		}
		return nil
	case *rsa.PublicKey:
		h, pss, ok := rsaHash(alg)
		if !ok {
			return fmt.Errorf("the algorithm %q does not fit an RSA key", alg)
		}
		var err error
		if pss {
			err = rsa.VerifyPSS(k, h, digestOf(h, input), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto, Hash: h})
		} else {
			err = rsa.VerifyPKCS1v15(k, h, digestOf(h, input), sig)
		}
		if err != nil {
			return bad
		}
		return nil
	}
	return fmt.Errorf("a public key of type %T", pub)
}
