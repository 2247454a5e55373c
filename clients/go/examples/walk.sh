#!/usr/bin/env bash
# Builds and runs the five-minute walk with the machine's Go (1.19+; standard library only: nothing is
# downloaded, GOPROXY=off makes sure). Reads IDVERIFY_BASE_URL, IDVERIFY_USERNAME, IDVERIFY_PASSWORD
# and, optionally, IDVERIFY_WEBHOOK_FILES and IDVERIFY_WEBHOOK_TOLERANCE (seconds a delivery's timestamp
# may be from the clock: unset 300; 0 no check).
set -euo pipefail
module="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd "$module" && GOPROXY=off GOFLAGS= GOTOOLCHAIN=local go build -o "$out/walk" ./examples/walk)
"$out/walk"
