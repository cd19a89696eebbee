module github.com/otcgo/otc/examples/deploy

go 1.26.0

require github.com/otcgo/otc v0.0.0-00010101000000-000000000000

replace github.com/otcgo/otc => ../..
