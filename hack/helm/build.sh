#!/usr/bin/env bash
# Builds helm (for the chart tests and `deno task manifests`) and prints its path; cached.
exec "$(dirname "$0")/../go_tool_build.sh" helm helm.sh/helm/v3/cmd/helm v3.22.0
