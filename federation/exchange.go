package federation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// exchangeFor returns the token for the upstream in exchange for the
// caller's own, by the client's token exchange (Credentials.TokenExchange),
// or the tool error the caller gets when there is none.
func exchangeFor(ctx context.Context, cl remote, upstream string) (string, error) {
	subject, err := callerToken(ctx, "token_exchange needs the caller's bearer token to exchange")
	if err != nil {
		return "", err
	}
	tok, err := cl.ExchangeToken(ctx, subject)
	if err == nil {
		return tok, nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if oe, ok := errors.AsType[*otc.Error](err); ok && oe.Code == otc.CodeUnavailable {
		return "", &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) could not be given your credentials just now; try again.", upstream),
			CanRetry: true, RetryAfter: oe.RetryAfter, Err: err,
			DeveloperMessage: "federation: upstream " + upstream + ": " + err.Error()}
	}
	return "", &otc.ToolError{
		Message:          fmt.Sprintf("Your credentials cannot be used with the tool's server (%s): the authorization server would not exchange them.", upstream),
		DeveloperMessage: "federation: upstream " + upstream + ": " + wire.Truncate(err.Error(), 400), Err: err,
	}
}

// callerToken is the bearer token the call came with, or an error that
// says the tool needs one.
func callerToken(ctx context.Context, need string) (string, error) {
	refuse := &otc.ToolError{Message: "This tool needs a token issued for its server; the call did not carry one.",
		DeveloperMessage: "federation: " + need}
	r := otc.HTTPRequest(ctx)
	if r == nil {
		return "", refuse
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", refuse
	}
	return tok, nil
}

var errNoExchange = errors.New("federation: token exchange needs token_url, client_id, client_secret and an audience or a resource")
