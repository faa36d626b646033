#!/usr/bin/env bash
# Builds the hcloud-go conformance program (hcloud-go at the version the official CCM pins) and
# prints the binary's path.   usage: hack/hcloud_go_check/build.sh
exec "$(dirname "$0")/../go_program_build.sh" hcloud_go_check
