module github.com/otcgo/otc/examples/deploy

go 1.26.0
