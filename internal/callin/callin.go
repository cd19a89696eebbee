package callin

import "github.com/otcgo/otc/internal/jsonparse"

// SetParsed records that req's Input is the text of node of doc, so that
// the pipeline reads the node instead of parsing Input again. req is an
// *otc.CallRequest; doc must stay unreleased until the call returns.
var SetParsed func(req any, doc *jsonparse.Document, node int32)
