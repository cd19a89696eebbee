package primitive

import "errors"

// ErrNotFound is what a Read function returns (wrapped) when nothing is
// at the URI it was given (the server it forwards to said so): the server
// answers as for a URI no entry matches.
var ErrNotFound = errors.New("no resource is at that URI")
