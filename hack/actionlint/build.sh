#!/usr/bin/env bash
# Builds actionlint (the GitHub Actions workflow linter, for tests/release_pipeline_test.ts) and prints its
# path; cached.
exec "$(dirname "$0")/../go_tool_build.sh" actionlint github.com/rhysd/actionlint/cmd/actionlint v1.7.12
