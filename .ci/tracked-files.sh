#!/usr/bin/env bash
# Every tracked file ships in the module zip that `go get` downloads, so
# none may be a program (mode 755, or an ELF, Mach-O, PE or WebAssembly
# binary) or larger than 1 MiB, unless it is named below with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

# Executable on purpose: the CI scripts themselves.
allowed_exec=(
  .ci/run
  .ci/mcp-conformance.sh
)
# Large on purpose: the lockfile that pins every package make wild
# installs (interop, a module of its own, not in the root module's zip).
allowed_large=(
  interop/wild/package-lock.json
)
limit=$((1024 * 1024))

in_list() {
  local want=$1; shift
  local f
  for f in "$@"; do [ "$f" = "$want" ] && return 0; done
  return 1
}

bad=0
while IFS=$'\t' read -r meta path; do
  mode=${meta%% *}
  [ -f "$path" ] || continue
  if [ "$mode" = 100755 ] && ! in_list "$path" "${allowed_exec[@]}"; then
    echo "$path: tracked as executable (mode 755); drop the bit or allow it in .ci/tracked-files.sh"
    bad=1
  fi
  magic=$(head -c 4 "$path" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46|cffaedfe|cefaedfe|feedfacf|feedface|cafebabe|0061736d|4d5a*)
      if ! in_list "$path" "${allowed_exec[@]}"; then
        echo "$path: a compiled program is tracked; remove it and add it to .gitignore"
        bad=1
      fi ;;
  esac
  size=$(stat -c %s "$path")
  if [ "$size" -gt "$limit" ] && ! in_list "$path" "${allowed_large[@]}"; then
    echo "$path: $size bytes, over 1 MiB; keep it out of the module or allow it in .ci/tracked-files.sh with the reason"
    bad=1
  fi
done < <(git ls-files -s | sed 's/^\([0-9]*\) [0-9a-f]* [0-9]*\t/\1 x\t/')

# What `go get github.com/otcgo/otc` downloads: every tracked file outside
# the nested modules (a folder with a go.mod of its own). Fixtures that only
# a nested module's tests read belong in that module.
root_budget=$((8 * 1024 * 1024))
nested=$(git ls-files '*/go.mod' | xargs -r -n1 dirname | sed 's#$#/#')
root_bytes=0
while IFS= read -r path; do
  [ -f "$path" ] || continue
  skip=0
  for m in $nested; do
    case "$path" in "$m"*) skip=1; break ;; esac
  done
  [ $skip = 1 ] && continue
  root_bytes=$((root_bytes + $(stat -c %s "$path")))
done < <(git ls-files)
if [ "$root_bytes" -gt "$root_budget" ]; then
  echo "the root module's files come to $root_bytes bytes, over 8 MiB: move fixtures to the nested modules that use them"
  bad=1
fi
exit $bad
