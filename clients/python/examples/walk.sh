#!/usr/bin/env bash
# Runs the five-minute walk with the machine's python3 (3.9+; standard library only, nothing to install).
# Reads IDVERIFY_BASE_URL, IDVERIFY_USERNAME, IDVERIFY_PASSWORD and, optionally, IDVERIFY_WEBHOOK_FILES and
# IDVERIFY_WEBHOOK_TOLERANCE (seconds a delivery's timestamp may be from the clock: unset 300; 0 no check).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' || { echo "the Python client needs Python 3.9 or newer: $(python3 --version 2>&1)" >&2; exit 1; }
exec python3 -B "$here/walk.py"
