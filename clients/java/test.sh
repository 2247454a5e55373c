#!/usr/bin/env bash
# Compiles the client and its main-based test runner with plain javac (no Maven: nothing downloads) and runs
# it. Jackson from JACKSON_CLASSPATH, by default Debian's jars (libjackson2-databind-java).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp="${JACKSON_CLASSPATH:-/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar}"
out="$here/build/test"
rm -rf "$out" && mkdir -p "$out"
javac -encoding UTF-8 -d "$out" -cp "$cp" $(find "$here/src/main/java" "$here/src/test/java" -name '*.java')
exec java -cp "$out:$cp" io.idverify.ClientTest
