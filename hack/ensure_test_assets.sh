#!/usr/bin/env bash
# Makes sure the test control plane exists: etcd (Debian's etcd-server), kube-apiserver/kubectl, helm and promtool
# built from the Go module proxy (cached). Installs etcd with apt-get when running as root; otherwise
# says what to install. Prints nothing when everything is in place.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z "${KUBEBUILDER_ASSETS:-}" || ! -x "${KUBEBUILDER_ASSETS}/etcd" ]] && [[ -z "${TEST_ASSET_ETCD:-}" ]] \
  && ! [[ -x /usr/bin/etcd ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "installing etcd-server from Debian" >&2
    (apt-get install -y -qq etcd-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq etcd-server; }) >&2
    # The package enables a system service; the tests start their own etcd.
    (systemctl disable --now etcd >/dev/null 2>&1 || true)
  else
    echo "etcd is missing: install Debian's etcd-server (sudo apt-get install etcd-server) or set TEST_ASSET_ETCD" >&2
    exit 1
  fi
fi
if [[ -z "${KUBEBUILDER_ASSETS:-}" ]]; then
  "$here/kube_assets/build.sh" >/dev/null
fi
# helm, for the chart tests (tests/chart_test.ts) and `deno task manifests`.
"$here/helm/build.sh" >/dev/null
# promtool, for the alert rule tests (tests/alert_rules_test.ts).
"$here/promtool/build.sh" >/dev/null
