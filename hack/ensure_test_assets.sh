#!/usr/bin/env bash
# Makes sure what the local control plane needs exists: etcd (Debian's etcd-server) and kube-apiserver
# built from the Go module proxy (cached); for the tests (the default) also kubectl, kube-proxy, kube-controller-manager,
# nftables, containerd, helm, promtool, actionlint, terraform and its hcloud provider.
# Installs etcd with apt-get when running as root; otherwise says what to install. Prints nothing when
# everything is in place.
#   usage: hack/ensure_test_assets.sh [--demo]
#   --demo: only what `deno task demo` and `deno task dev` run (etcd, kube-apiserver, kubectl)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
demo=false
[[ "${1:-}" == "--demo" ]] && demo=true
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
if $demo; then
  # kube-apiserver for the local cluster, kubectl for the commands the quickstart gives next.
  if [[ -z "${KUBEBUILDER_ASSETS:-}" ]]; then
    "$here/kube_assets/build.sh" --only kube-apiserver >/dev/null
    "$here/kube_assets/build.sh" --only kubectl >/dev/null
  fi
  exit 0
fi
if [[ -z "${KUBEBUILDER_ASSETS:-}" ]]; then
  "$here/kube_assets/build.sh" >/dev/null
fi
# The oldest supported minor's kube-apiserver, kubectl and kubelet (tests/oldest_minor_test.ts, which
# also builds them on demand).
"$here/kube_assets/build.sh" --oldest >/dev/null
# nft, for the real kube-proxy of the draining proof (nftables mode; testing/kube_proxy.ts).
if ! command -v nft >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "installing nftables from Debian" >&2
    (apt-get install -y -qq nftables >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nftables; }) >&2
  else
    echo "nft is missing: install Debian's nftables (sudo apt-get install nftables)" >&2
    exit 1
  fi
fi
# containerd, the container runtime of the real kubelets (tests/kubelet_test.ts; testing/containerd.ts
# starts its own, with every path in the test's folder).
if ! [[ -x /usr/bin/containerd ]] && [[ -z "${TEST_ASSET_CONTAINERD:-}" ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "installing containerd from Debian" >&2
    (apt-get install -y -qq containerd >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq containerd; }) >&2
    # The package enables a system service; the tests start their own containerd.
    (systemctl disable --now containerd >/dev/null 2>&1 || true)
  else
    echo "containerd is missing: install Debian's containerd (sudo apt-get install containerd)" >&2
    exit 1
  fi
fi
# helm, for the chart tests (tests/chart_test.ts) and `deno task manifests`; the tests that use it also
# build it on demand (testing/helm.ts), so a single test file runs on its own.
"$here/helm/build.sh" >/dev/null
# promtool, for the alert rule tests (tests/alert_rules_test.ts), which also build it on demand.
"$here/promtool/build.sh" >/dev/null
# actionlint, for the release workflow's check (tests/release_pipeline_test.ts, which also builds it on demand).
"$here/actionlint/build.sh" >/dev/null
# terraform and the hcloud provider, for dev-env.tf applied against the simulator
# (tests/dev_env_apply_test.ts, which also builds them on demand).
"$here/terraform/build.sh" >/dev/null
