// Package inspecttest drives the page of "otc inspect" in a real browser:
// it builds and starts examples/calculator and "otc inspect --no-open",
// reads the URL the command prints, and drives headless Chromium through
// the Chrome DevTools Protocol (github.com/chromedp/chromedp).
//
// It is a module of its own so that neither the library nor the otc
// command depends on chromedp. Its tests skip when no Chromium is
// installed, and fail instead when OTC_REQUIRE_CHROMIUM=1 (as .ci/run
// sets it). Each test saves a screenshot under its temporary directory;
//
//	OTC_INSPECT_SCREENSHOT=../docs/inspect.png go test -run 'TestInspect_Add$' .
//
// (from this directory) regenerates the README's screenshot;
// OTC_INSPECT_SCREENSHOTS=DIR keeps every test's screenshot in DIR.
package inspecttest
