#!/usr/bin/env bash
# Builds the client and the five-minute walk with plain javac (Java 17; no Maven: nothing downloads) into
# clients/java/build/walk and runs it. Jackson from JACKSON_CLASSPATH, by default Debian's jars
# (libjackson2-databind-java). Reads IDVERIFY_BASE_URL (e.g. http://localhost:8080/v1), IDVERIFY_USERNAME,
# IDVERIFY_PASSWORD and optionally IDVERIFY_WEBHOOK_FILES and IDVERIFY_WEBHOOK_TOLERANCE (seconds a
# delivery's timestamp may be from the clock: unset 300; 0 no check); prints one JSON object per line.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cp="${JACKSON_CLASSPATH:-/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar}"
out="$(mktemp -d "${TMPDIR:-/tmp}/idverify-java-walk.XXXXXX")"
trap 'rm -rf "$out"' EXIT
javac -encoding UTF-8 -d "$out" -cp "$cp" $(find "$here/src/main/java" -name '*.java') "$here/examples/Walk.java"
java -cp "$out:$cp" Walk
