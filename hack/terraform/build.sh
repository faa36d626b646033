#!/usr/bin/env bash
# Builds terraform and the hetznercloud/hcloud provider from the Go module proxy (for
# tests/dev_env_apply_test.ts) into a cache folder; prints terraform's path, the provider's on the
# second line. Cached.
#
# terraform's go.mod replaces nine remote-state backends and internal/legacy with folders that are
# their own modules, which module zips leave out (and `go install terraform@version` refuses replace
# directives): the build uses a copy of the module whose backend registry keeps only the backends it
# ships (local, remote, cloud, http, inmem). State stays local in the test, so nothing it does is lost.
#   usage: hack/terraform/build.sh
set -euo pipefail
TF_VERSION=v1.13.3
PROVIDER_VERSION=v1.68.0
cache=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}
out=$cache/terraform-$TF_VERSION
provider=$("$(dirname "$0")/../go_tool_build.sh" terraform-provider-hcloud \
  github.com/hetznercloud/terraform-provider-hcloud "$PROVIDER_VERSION")
if [[ -x "$out/terraform" ]]; then
  printf '%s\n%s\n' "$out/terraform" "$provider"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build terraform (https://go.dev/dl)" >&2; exit 1; }
start=$(date +%s)
echo "building terraform $TF_VERSION into $out (first build takes a few minutes)" >&2
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/hashicorp/terraform@$TF_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$src" "$work/terraform"
chmod -R u+w "$work/terraform"
cd "$work/terraform"
dropped=(azure consul cos gcs kubernetes oci oss pg s3)
for b in "${dropped[@]}"; do
  go mod edit -droprequire "github.com/hashicorp/terraform/internal/backend/remote-state/$b" \
    -dropreplace "github.com/hashicorp/terraform/internal/backend/remote-state/$b"
  sed -i "/internal\/backend\/remote-state\/$b\"/d" internal/backend/init/init.go
done
go mod edit -droprequire github.com/hashicorp/terraform/internal/legacy \
  -dropreplace github.com/hashicorp/terraform/internal/legacy
sed -i -E '/^\s+"(azurerm|consul|cos|gcs|kubernetes|oss|pg|s3|oci)":\s+func\(\)/d' internal/backend/init/init.go
mkdir -p "$out"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/terraform.tmp" . >&2
mv "$out/terraform.tmp" "$out/terraform"
echo "built in $(( $(date +%s) - start )) s" >&2
printf '%s\n%s\n' "$out/terraform" "$provider"
