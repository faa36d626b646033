#!/usr/bin/env bash
# Builds the hcloud-go conformance program (hcloud-go at the version the official CCM pins, from the
# Go module proxy) into a cache folder and prints the binary's path. Reuses a build of the same sources.
#   usage: hack/hcloud_go_check/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '/^require github.com\/hetznercloud\/hcloud-go\/v2/ {print $3}' "$here/go.mod")
digest=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-12)
out=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/hcloud-go-check-$version-$digest
if [[ -x "$out/hcloud_go_check" ]]; then
  echo "$out/hcloud_go_check"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build the hcloud-go check (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
cd "$here"
CGO_ENABLED=0 go build -trimpath -o "$out/hcloud_go_check.tmp" .
mv "$out/hcloud_go_check.tmp" "$out/hcloud_go_check"
echo "$out/hcloud_go_check"
