#!/usr/bin/env bash
# Builds the hrobot-go conformance program (hrobot-go at the version the official CCM pins) and
# prints the binary's path.   usage: hack/hrobot_go_check/build.sh
exec "$(dirname "$0")/../go_program_build.sh" hrobot_go_check
