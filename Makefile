.PHONY: test lint bench fuzz run

# The README's test command, which tests every module of go.work; .ci/run
# runs it too.
test:
	go test -race work

lint:
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...

# Benchmarks behind the README's figures.
bench:
	go test -run '^$$' -bench . -benchmem -count 8 . | tee bench.txt

fuzz:
	go test -run '^$$' -fuzz FuzzCall -fuzztime 2m .

run:
	go run ./examples/calculator
