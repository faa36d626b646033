#!/usr/bin/env bash
# Builds terraform and the hetznercloud/hcloud provider from the Go module proxy (for
# tests/dev_env_apply_test.ts) into a cache folder; prints terraform's path, the provider's on the
# second line. Cached.
#
# Both are built in a copy of their module (`go mod download` of the exact version): `go install
# module@version` asks the proxy for the module's version list, which it refuses for the provider
# (403). terraform's go.mod replaces nine remote-state backends and internal/legacy with folders that
# are their own modules, which module zips leave out: the copy's backend registry keeps only the
# backends the zip ships (local, remote, cloud, http, inmem). State stays local in the test.
#   usage: hack/terraform/build.sh
set -euo pipefail
TF_VERSION=v1.13.3
PROVIDER_VERSION=v1.68.0
cache=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}
terraform=$cache/terraform-$TF_VERSION/terraform
provider=$cache/terraform-provider-hcloud-$PROVIDER_VERSION/terraform-provider-hcloud

# build MODULE VERSION OUTPUT [PATCH-FUNCTION]: builds the module's main package from a copy.
build() {
  local module=$1 version=$2 output=$3 patch=${4:-}
  [[ -x "$output" ]] && return 0
  command -v go >/dev/null || { echo "go is required to build $module (https://go.dev/dl)" >&2; exit 1; }
  local start work src
  start=$(date +%s)
  echo "building $module $version (first build takes a few minutes)" >&2
  work=$(mktemp -d)
  src=$(cd "$work" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  (
    cd "$work/src"
    [[ -z "$patch" ]] || "$patch"
    mkdir -p "$(dirname "$output")"
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$output.tmp" . >&2
  )
  rm -rf "$work"
  mv "$output.tmp" "$output"
  echo "built in $(( $(date +%s) - start )) s" >&2
}

# terraform without the remote-state backends whose modules the zip leaves out.
local_backends_only() {
  local b
  for b in azure consul cos gcs kubernetes oci oss pg s3; do
    go mod edit -droprequire "github.com/hashicorp/terraform/internal/backend/remote-state/$b" \
      -dropreplace "github.com/hashicorp/terraform/internal/backend/remote-state/$b"
    sed -i "/internal\/backend\/remote-state\/$b\"/d" internal/backend/init/init.go
  done
  go mod edit -droprequire github.com/hashicorp/terraform/internal/legacy \
    -dropreplace github.com/hashicorp/terraform/internal/legacy
  sed -i -E '/^\s+"(azurerm|consul|cos|gcs|kubernetes|oss|pg|s3|oci)":\s+func\(\)/d' internal/backend/init/init.go
}

build github.com/hetznercloud/terraform-provider-hcloud "$PROVIDER_VERSION" "$provider"
build github.com/hashicorp/terraform "$TF_VERSION" "$terraform" local_backends_only
printf '%s\n%s\n' "$terraform" "$provider"
