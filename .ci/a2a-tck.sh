#!/usr/bin/env bash
# The A2A TCK's mandatory tests (interop/a2a-tck, vendored at a pinned
# commit: see interop/a2a-tck/VENDORED.md) against interop/tckagent, an agent built
# with the a2a package for it. The TCK's Python dependencies come from
# Debian (CI reaches no PyPI). The outcome is held to
# .ci/a2a-tck-expected-failures.yml: a listed test must fail, each for the
# reason given there (tests that contradict A2A 1.0), and every other must
# pass or be skipped for a capability the agent does not declare.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
PACKAGES=(python3-pytest python3-pytest-asyncio python3-httpx python3-requests python3-responses
  python3-deepdiff python3-jsonschema python3-yaml python3-dotenv python3-grpcio python3-protobuf
  python3-openssl python3-aiohttp python3-packaging)
if ! "$PY" -c 'import pytest, pytest_asyncio, httpx, requests, responses, deepdiff, jsonschema, yaml, dotenv, grpc, google.protobuf, OpenSSL, aiohttp, packaging' 2>/dev/null; then
  echo "-- installing the TCK's Python dependencies from Debian"
  sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
fi

work=$(mktemp -d)
agent_pid=""
cleanup() {
  if [ -n "$agent_pid" ]; then kill "$agent_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd interop && go build -o "$work/tckagent" ./tckagent && go build -o "$work/tckverdict" ./tckverdict)
"$work/tckagent" --addr 127.0.0.1:0 >"$work/url" 2>"$work/agent.log" &
agent_pid=$!
for _ in $(seq 100); do
  [ -s "$work/url" ] && break
  sleep 0.1
done
url=$(head -1 "$work/url")
[ -n "$url" ] || { echo "the TCK agent did not start:"; cat "$work/agent.log"; exit 1; }
echo "-- the TCK's mandatory tests against $url"

# As the TCK's own runner runs its mandatory category, with a JUnit report.
(cd interop/a2a-tck && PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest tests/mandatory \
  --sut-url="$url" --test-scope=all --tb=line -q -p no:cacheprovider \
  -m "mandatory or mandatory_protocol" --junitxml="$work/tck.xml" >"$work/tck.log" 2>&1) || true
tail -n 3 "$work/tck.log"
if ! "$work/tckverdict" --report "$work/tck.xml" --expected .ci/a2a-tck-expected-failures.yml; then
  echo "-- the TCK's output:"
  cat "$work/tck.log"
  exit 1
fi
