package otc

import "time"

// SetJWTAuthClockForTest makes a's checks of "exp", "nbf" and "iat" read
// the time from now. It lets the black-box tests in auth_test.go (package
// otc_test, compiled into the same test binary) pin the clock, so that a
// boundary such as "expired 30 s ago with a 30 s leeway" is exact and a
// fuzz seed token never expires. Call it before the authenticator serves.
func SetJWTAuthClockForTest(a *JWTAuth, now func() time.Time) { a.now = now }
