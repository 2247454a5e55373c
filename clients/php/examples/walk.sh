#!/usr/bin/env bash
# Runs the five-minute walk with PHP (8.1+, curl extension): no Composer needed (autoload.php).
# Reads IDVERIFY_BASE_URL (e.g. http://localhost:8080/v1), IDVERIFY_USERNAME, IDVERIFY_PASSWORD and
# optionally IDVERIFY_WEBHOOK_FILES and IDVERIFY_WEBHOOK_TOLERANCE (seconds a delivery's timestamp may be
# from the clock: unset 300; 0 no check); prints one JSON object per line.
set -euo pipefail
exec php "$(dirname "$0")/walk.php"
