# Shared helpers for Warp's scripts. Source it; it defines functions and sets WARP_HOME.
# shellcheck shell=bash

WARP_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WARP_JAR="$WARP_HOME/daemon/target/warp.jar"

warp_die() {
  echo "error: $*" >&2
  exit 1
}

# java_major BIN -> prints the major version of the java binary, or nothing.
java_major() {
  "$1" -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit }'
}

# find_java: sets JAVA_HOME and JAVA to a JDK >= 21 (JAVA_HOME, java on PATH, /usr/lib/jvm/*).
find_java() {
  local candidates=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for c in /usr/lib/jvm/*; do [ -d "$c" ] && candidates+=("$c"); done
  for c in "${candidates[@]}"; do
    [ -x "$c/bin/java" ] || continue
    major=$(java_major "$c/bin/java")
    if [ -n "$major" ] && [ "$major" -ge 21 ] 2>/dev/null; then
      export JAVA_HOME="$c"
      JAVA="$c/bin/java"
      return 0
    fi
  done
  warp_die "Warp needs a JDK 21 or newer; none found in JAVA_HOME, on PATH or under /usr/lib/jvm.
  Install one, e.g. 'apt-get install openjdk-21-jdk' (or temurin-21-jdk), or set JAVA_HOME to it."
}

# find_maven: checks that mvn is there.
find_maven() {
  command -v mvn >/dev/null 2>&1 || warp_die "Maven (mvn) is needed to build Warp: 'apt-get install maven'."
}

# build_jar_if_missing: builds daemon/target/warp.jar (skipping tests) when it is missing or
# older than the sources.
build_jar_if_missing() {
  if [ -f "$WARP_JAR" ] && [ -z "$(find "$WARP_HOME" -path '*/src/main/*' -newer "$WARP_JAR" -print -quit 2>/dev/null)" ] \
     && [ -z "$(find "$WARP_HOME" -name pom.xml -newer "$WARP_JAR" -print -quit 2>/dev/null)" ]; then
    return 0
  fi
  find_maven
  echo "Building Warp (mvn package, tests skipped)..." >&2
  (cd "$WARP_HOME" && mvn -B -q -DskipTests package) >&2 || warp_die "the build failed; see the Maven output above."
}
