#!/usr/bin/env bash
# The README's test command under load: every module's tests, with the
# race detector and without the test cache, RUNS times in a row (3 by
# default) while HOGS busy loops (by default one per core) keep every core
# busy. A test that waits for time rather than for the event it means
# fails here first. Export the variables .ci/run exports (OTC_REQUIRE_REDIS
# and the others) to include the tests that need Redis, HAProxy, Chromium
# and Node; without them those tests skip.
#
#   make test-loaded            # or: RUNS=1 HOGS=4 bash .ci/test-loaded.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${RUNS:-3}"
hogs="${HOGS:-$(nproc)}"

pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=($!)
done

failed=0
for run in $(seq "$runs"); do
  echo "== run $run of $runs, beside $hogs busy loops"
  start=$SECONDS
  if go test -race -count=1 work; then
    echo "== run $run passed in $((SECONDS - start)) s"
  else
    echo "== run $run FAILED after $((SECONDS - start)) s"
    failed=$((failed + 1))
  fi
done
echo "== $((runs - failed)) of $runs runs passed"
[ "$failed" -eq 0 ]
