.PHONY: test test-loaded wild wild-lock tune-search lint bench bench-peers bench-deploy fuzz run chaos chaos-short

# The README's test command, which tests every module of go.work; .ci/run
# runs it too.
test:
	go test -race work

# The test command three times in a row while busy loops keep every core
# busy (.ci/test-loaded.sh): what a test that waits for time rather than
# for its event cannot pass. About three times as long as make test.
test-loaded:
	bash .ci/test-loaded.sh

# otc gateway in front of some forty public MCP servers from npm, as
# people run them (.ci/wild.sh): what each lists alone, what the gateway
# serves and how fast, what is left after SIGTERM; wild-report.md.
wild:
	bash .ci/wild.sh

# The lockfile make wild installs from, written anew from servers.txt
# (after a server is added or its version changed); no package's install
# script runs.
wild-lock:
	cd interop/wild && node -e 'const fs=require("fs"); const p=JSON.parse(fs.readFileSync("package.json")); p.dependencies={}; for (const l of fs.readFileSync("servers.txt","utf8").split("\n")) { const w=l.trim().split(/\s+/)[0]; if (!w || w.startsWith("#")) continue; const i=w.lastIndexOf("@"); p.dependencies[w.slice(0,i)]=w.slice(i+1); } fs.writeFileSync("package.json", JSON.stringify(p,null,2)+"\n")' && \
	rm -f package-lock.json && npm install --package-lock-only --ignore-scripts --no-audit --no-fund --legacy-peer-deps --loglevel=error

# Chooses the search ranking's weights on the development requests
# (search/testdata/queries.txt) by coordinate ascent, five folds; prints
# each fold's weights and held-out recall and their medians. Never reads
# the held-out request sets.
tune-search:
	OTC_SEARCH_TUNE=1 go test -run TestTune -v -timeout 60m ./search

lint:
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...

# Benchmarks behind the figures of docs/performance.md.
bench:
	go test -run '^$$' -bench . -benchmem -count 8 . | tee bench.txt

# The comparison with hand-written handlers and other Go MCP servers
# (benchmarks/, a module of its own): in process, 10 runs of each server,
# summarised by benchstat with the floor as the base column; then the
# loopback rounds, which run once and report their own medians.
bench-peers:
	cd benchmarks && go test -run '^$$' -bench 'InProcess|RegistrySize|ListTools' -benchmem -count 10 . | tee ../bench-peers.txt
	cd benchmarks && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da -col /server -filter '.name:(InProcess OR ListTools)' ../bench-peers.txt
	cd benchmarks && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da -col /tools -filter .name:RegistrySize ../bench-peers.txt
	cd benchmarks && go test -run '^$$' -bench Loopback -benchtime 1x . | tee -a ../bench-peers.txt
	cd benchmarks && go test -run '^$$' -bench Gateway -benchtime 1x -count 3 . | tee -a ../bench-peers.txt
	cd benchmarks && go test -run '^$$' -bench Clients -benchtime 1x . | tee -a ../bench-peers.txt

fuzz:
	go test -run '^$$' -fuzz FuzzCall -fuzztime 2m .

run:
	go run ./examples/calculator

# Three replicas of the example server behind HAProxy, sharing Redis,
# under load while one is restarted, one killed and Redis restarted
# (examples/deploy; needs redis-server and haproxy). It ends with the line
# "chaos: N calls, R calls/s, E errors, D ran twice".
chaos:
	cd examples/deploy && go run ./chaos

# The short form, which .ci/run runs as a Go test.
chaos-short:
	cd examples/deploy && go run ./chaos -short

# The deployment's capacity, without the chaos: 256 callers (a process of
# their own) through HAProxy to 1, 2 and 3 replicas, with no Redis and
# with Redis in each durability mode; calls/s, p50 and p99, the CPU of
# each part, Redis's commands and CPU per call, and what bounded each run
# (examples/deploy; needs redis-server and haproxy). A few minutes.
bench-deploy:
	cd examples/deploy && go run ./chaos -capacity
