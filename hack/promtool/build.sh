#!/usr/bin/env bash
# Builds Prometheus' promtool (for the alert rule tests) and prints its path; cached.
exec "$(dirname "$0")/../go_tool_build.sh" promtool github.com/prometheus/prometheus/cmd/promtool v0.316.0
