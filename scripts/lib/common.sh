# Shared helpers for Warp's scripts. Source it; it defines functions and sets:
#   WARP_HOME  the source tree (has pom.xml) or an installed tree (/usr/local/lib/warp)
#   WARP_JAR   the shaded jar (env WARP_JAR overrides)
# Nothing here prints to stdout: stdout belongs to the command the script runs.
# shellcheck shell=bash

WARP_HOME="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
# A jar named by the caller is used as it is: never rebuilt, never checked against the sources.
WARP_JAR_GIVEN="${WARP_JAR:+1}"
if [ -f "$WARP_HOME/pom.xml" ]; then
  WARP_SOURCE_TREE=1
  WARP_JAR="${WARP_JAR:-$WARP_HOME/daemon/target/warp.jar}"
else
  # Installed layout (scripts/install): PREFIX/lib/warp/{warp.jar,bin/warpd,bin/lib/common.sh}.
  WARP_SOURCE_TREE=0
  WARP_JAR="${WARP_JAR:-$WARP_HOME/warp.jar}"
fi
# Where JDKs are searched when neither JAVA_HOME nor PATH has a new enough one.
WARP_JVM_ROOT="${WARP_JVM_ROOT:-/usr/lib/jvm}"
WARP_MIN_JAVA=21
# warpd's JVM memory when WARP_HEAP / WARP_DIRECT_MEMORY are not set: the one place these
# defaults are written (why these values: warp_jvm_flags below). scripts/warpd, scripts/install's
# warpd.env, systemd/warpd.service and the README refer here.
WARP_DEFAULT_HEAP=384m
WARP_DEFAULT_DIRECT_MEMORY=128m

warp_die() {
  echo "error: $*" >&2
  exit 1
}

warp_say() {
  echo "$*" >&2
}

is_root() {
  [ "$(id -u)" = 0 ]
}

# as_root WHY SCRIPT ARGS...: returns at once when root. Otherwise runs SCRIPT ARGS again
# through sudo, keeping the environment and PATH (JAVA_HOME, WARP_*, the Maven on PATH), when
# sudo is installed; else dies saying how to become root. The documented commands are typed
# without sudo, so they work as root on a machine that has no sudo (containers, CI, cloud
# images) and for a user with sudo alike.
as_root() {
  local why="$1"
  shift
  is_root && return 0
  if command -v sudo >/dev/null 2>&1; then
    warp_say "$why; running it as root through sudo: sudo $*"
    exec sudo -E env "PATH=$PATH" "$@"
  fi
  warp_die "$why, and you are $(id -un), without sudo. Run it as root: su -c '$*' (or install sudo)."
}

# java_major BIN -> prints the major version of the java binary (8, 17, 21, 25...), or nothing.
java_major() {
  # "1.8.0_392" -> 8, "21.0.2" -> 21, "25" -> 25, "26-ea" -> 26
  "$1" -version 2>&1 | awk -F'"' '/version "/ { split($2, v, "."); m = (v[1] == "1" ? v[2] : v[1]); sub(/[^0-9].*/, "", m); print m; exit }'
}

# find_java [--jdk]: sets JAVA_HOME and JAVA to a Java >= 21. Looks at JAVA_HOME, then java on
# PATH, then the newest under $WARP_JVM_ROOT. With --jdk the candidate must also have javac
# (building needs a JDK; running the jar only needs a runtime).
find_java() {
  local need_javac=0 c major best="" best_major=0 candidates=()
  [ "${1:-}" = "--jdk" ] && need_javac=1
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  # JAVA_HOME and PATH win in that order when they qualify: the user chose them.
  for c in "${candidates[@]}"; do
    if _java_qualifies "$c" "$need_javac"; then
      _use_java "$c"
      return 0
    fi
  done
  for c in "$WARP_JVM_ROOT"/*; do
    [ -L "$c" ] && continue   # Debian's java-1.17.0-openjdk-amd64 style aliases
    _java_qualifies "$c" "$need_javac" || continue
    major=$(java_major "$c/bin/java")
    if [ "$major" -gt "$best_major" ]; then best="$c"; best_major="$major"; fi
  done
  if [ -n "$best" ]; then
    _use_java "$best"
    return 0
  fi
  local what="Java runtime"
  [ "$need_javac" = 1 ] && what="JDK"
  warp_die "Warp needs a $what $WARP_MIN_JAVA or newer; none found in JAVA_HOME${JAVA_HOME:+ ($JAVA_HOME)}, on PATH or under $WARP_JVM_ROOT.
  Install one (Debian 13: 'apt-get install openjdk-21-jdk-headless'; Debian 12 has none: unpack a Temurin 21+ JDK from adoptium.net under /usr/lib/jvm) or set JAVA_HOME to it."
}

_java_qualifies() {
  local home="$1" need_javac="$2" major
  [ -x "$home/bin/java" ] || return 1
  [ "$need_javac" = 1 ] && [ ! -x "$home/bin/javac" ] && return 1
  major=$(java_major "$home/bin/java")
  [ -n "$major" ] && [ "$major" -ge "$WARP_MIN_JAVA" ] 2>/dev/null
}

_use_java() {
  export JAVA_HOME="$1"
  JAVA="$1/bin/java"
  JAVA_MAJOR=$(java_major "$JAVA")
}

# find_maven: checks that mvn is there and quiets the JDK 24+ warnings Maven 3.8/3.9 trigger.
find_maven() {
  command -v mvn >/dev/null 2>&1 || warp_die "Maven (mvn) is needed to build Warp: run 'apt-get install maven' (as root)."
  if [ "${JAVA_MAJOR:-0}" -ge 24 ] && [[ "${MAVEN_OPTS:-}" != *sun-misc-unsafe-memory-access* ]]; then
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
  fi
  # Maven's jansi writes colour-reset codes after the last line even in batch mode; CI reads
  # the closing lines, so keep them clean.
  [[ "${MAVEN_OPTS:-}" == *jansi.noreset* ]] || export MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true"
}

# warp_mvn ARGS...: runs Maven from the source root in batch mode, without colours or download
# progress. WARP_MAVEN_ARGS adds arguments (e.g. -o to build offline).
warp_mvn() {
  local extra=()
  read -r -a extra <<< "${WARP_MAVEN_ARGS:-}"
  # The commit goes into the jar's version (warpd -V, warpctl status), to tell builds apart.
  local commit
  commit="$(git -C "$WARP_HOME" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  (cd "$WARP_HOME" && mvn -B -ntp -Dstyle.color=never "-Dwarp.commit=$commit" "${extra[@]}" "$@")
}

# jar_is_stale: true when the jar is missing or older than a pom.xml or a main source file.
jar_is_stale() {
  [ -f "$WARP_JAR" ] || return 0
  [ "$WARP_SOURCE_TREE" = 1 ] && [ -z "$WARP_JAR_GIVEN" ] || return 1
  local inputs=("$WARP_HOME/pom.xml") pom mod
  for pom in "$WARP_HOME"/*/pom.xml; do
    mod="$(dirname "$pom")"
    inputs+=("$pom")
    [ -d "$mod/src/main" ] && inputs+=("$mod/src/main")
  done
  # Only module sources are scanned: demo/ may hold a live FUSE mount that find must not walk.
  [ -n "$(find "${inputs[@]}" -newer "$WARP_JAR" -print -quit 2>/dev/null)" ]
}

# build_jar_if_missing: builds the shaded jar (tests skipped) when it is missing or stale.
# Concurrent callers (two launchers started at once) build once: the second waits on a lock.
build_jar_if_missing() {
  jar_is_stale || return 0
  [ -z "$WARP_JAR_GIVEN" ] || warp_die "WARP_JAR=$WARP_JAR does not exist."
  [ "$WARP_SOURCE_TREE" = 1 ] || warp_die "$WARP_JAR is missing; reinstall Warp (scripts/install from a source tree)."
  [ -x "${JAVA_HOME:-}/bin/javac" ] || find_java --jdk
  find_maven
  mkdir -p "$WARP_HOME/daemon/target"
  local lock="$WARP_HOME/daemon/target/.warp-build.lock"
  exec 9>"$lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if jar_is_stale; then
    warp_say "Building Warp: mvn package, tests skipped (the first build downloads dependencies and takes a few minutes)..."
    local log
    log="$(mktemp)"
    if ! warp_mvn -q -DskipTests package >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      rm -f "$log"
      exec 9>&-
      warp_die "the build failed (Maven output above). Fix it, or run 'cd $WARP_HOME && mvn -B -DskipTests package' to see everything."
    fi
    rm -f "$log"
    [ -f "$WARP_JAR" ] || warp_die "the build succeeded but produced no $WARP_JAR."
    touch "$WARP_JAR"   # shade may keep an older mtime when nothing changed; mark it fresh
  fi
  exec 9>&-
}

# warp_jvm_flags warpd|warpctl: prints the JVM flags the launchers use, one per line.
warp_jvm_flags() {
  # jnr-fuse (via jnr-ffi) and DuckDB load native code: allow it without JDK 22+ warnings.
  echo "--enable-native-access=ALL-UNNAMED"
  # jnr-ffi and Netty still use sun.misc.Unsafe; JDK 24+ warns about it unless allowed.
  # The flag does not exist before JDK 23, so it is only passed where it is understood.
  [ "${JAVA_MAJOR:-0}" -ge 24 ] && echo "--sun-misc-unsafe-memory-access=allow"
  case "$1" in
    warpd)
      # Heap: WARP_HEAP (default WARP_DEFAULT_HEAP, 384m). The JVM's default, a quarter of RAM, let warpd's resident
      # memory grow to 3 GiB in scripts/bench on a 24 GiB machine, and 1g to 908 MiB: G1 fills
      # whatever heap it has with garbage (fetched runs, per-request buffers) before it
      # collects. What must stay live is bounded: fetch buffers (128 MiB in flight + 64 MiB
      # pooled), the page cache of member index files (heap/16, 4-64 MiB, whatever the member
      # count: indexes are read in place from files in the cache directory),
      # ~290 bytes per directory inode the kernel holds (member files' inodes are computed: nothing
      # per file, so a find over 1.28M members left RSS at 395 MiB), manifests, the cache's block
      # index (~400 bytes a block or indexed member: 40 MiB for 100 GB of 1 MiB blocks, 13 MiB
      # for its 32,768 members; the spare members past those live outside the heap, about 60
      # bytes each: docs/cache.md) and order plans (64 MiB at most). 384m keeps
      # resident memory at 445-520 MiB under bench --network s3like (697-731 MiB over the quick
      # bench on loopback, whose GETs are 32 MiB and fill the heap to its bound; docs/bench.md). Artifacts of millions of members need no more (with
      # --mode remote, no cache directory, indexes are on the heap: raise it there);
      # WARP_JAVA_OPTS="-Xmx..." also wins.
      echo "-Xmx${WARP_HEAP:-$WARP_DEFAULT_HEAP}"
      # Direct buffers (the cache's 1 MiB read buffer, NIO's temporary buffers for cache writes)
      # are freed only when their owner is collected; without a bound they may grow to the heap
      # size. At the bound the JVM runs a full collection (System.gc) to free them.
      # Measured in use: ~84 MiB (32 FUSE reply buffers, per-thread cache read buffers).
      echo "-XX:MaxDirectMemorySize=${WARP_DIRECT_MEMORY:-$WARP_DEFAULT_DIRECT_MEMORY}"
      # A long-running server with many reader threads: G1 keeps pauses short under FUSE load.
      echo "-XX:+UseG1GC"
      # Not set, measured (2026-11-27, docs/bench.md "Peak RSS at 10M"): -XX:G1HeapRegionSize=2m.
      # G1 picks 1 MiB regions for this heap, and an array of half a region or more is
      # "humongous" (allocated outside the young generation; G1 grows the heap for it). A cold
      # find over 10M members fetched 1,222 index parts of 704,524 bytes, each into one array:
      # warpd peaked at 562-565 MiB, and at 392-394 MiB with 2 MiB regions (same jar, find
      # unchanged). But with 2 MiB regions DuckDB's filtered aggregate cold took 0.176-0.206 s
      # against 0.132-0.173 s in four pairs of bench --quick. Index parts are now read in place from
      # their files through a page cache of 16 KiB pages (and fetched into a reused buffer), so no
      # array of a part's size is allocated, whatever MemberIndexWriter.MAX_PART_BYTES is (1 MiB).
      # An idle daemon gives heap back to the OS: a collection after 60 s without one lets G1
      # uncommit what a burst of reads grew.
      echo "-XX:G1PeriodicGCInterval=60000"
      # A daemon that ran out of heap is half-dead (FUSE calls hang); exit so systemd restarts it.
      echo "-XX:+ExitOnOutOfMemoryError"
      # glibc's malloc arenas: exec_warp sets MALLOC_ARENA_MAX=2 for warpd (unless already set).
      # glibc's default is one arena per thread that mallocs, up to 8 per core, and each keeps
      # what its threads freed: in a shuffled epoch of 300,000 small files (scripts/epochs,
      # 2026-12-02) 15 arenas held about 280 MiB resident for 140 MiB in use (Native Memory
      # Tracking against pmap). With 2: warpd's peak 568/606 MiB (epochs 1/2) against 630/681,
      # files a second 1,244/1,974 against 1,234/1,859. At 100,000 files it was within the noise
      # of a single peak (405-515 against 479-502 MiB). Measured before (2026-11-27, the quick
      # bench's seq-dd/seq-fio, three pairs): peak RSS unchanged (the heap's 384 MiB dominates
      # there), seq-dd within noise, seq-fio lower in each pair (413/344, 298/211, 211/187 MB/s);
      # again on 2026-12-02, two pairs: seq-dd 438/425 and 401/460, seq-fio 352/379 and 420/367
      # MB/s, no cost (one setting's runs spread 308-490). docs/bench.md ("Native memory in a
      # long epoch") has these.
      # Not set, measured the same day: -XX:TrimNativeHeapInterval=1000 (peak 463/470 against
      # 460/479 MiB at 100,000 files; 416/416 with two arenas): what is freed is used again
      # within the second.
      ;;
    warpctl)
      # A short-lived client: the serial collector starts fastest and needs no extra threads.
      echo "-XX:+UseSerialGC"
      ;;
  esac
}

# exec_warp warpd|warpctl ARGS...: replaces the shell with the JVM running the given program.
# WARP_JAVA_OPTS adds JVM flags after the defaults, so its "-Xmx4g" overrides WARP_HEAP.
exec_warp() {
  local program="$1" flags=() extra=()
  shift
  mapfile -t flags < <(warp_jvm_flags "$program")
  read -r -a extra <<< "${WARP_JAVA_OPTS:-}"
  # warpd: two glibc malloc arenas, unless MALLOC_ARENA_MAX is set (warp_jvm_flags says why).
  if [ "$program" = warpd ] && [ -z "${MALLOC_ARENA_MAX:-}" ]; then
    export MALLOC_ARENA_MAX=2
  fi
  exec "$JAVA" "${flags[@]}" "${extra[@]}" -jar "$WARP_JAR" "$program" "$@"
}

# missing_packages PKG...: prints the Debian packages that are not installed (all of them when
# dpkg is not available, so callers can decide what to do).
missing_packages() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

# ensure_packages PKG...: installs missing Debian packages with apt when root (apt-get update
# runs once per script, and only when something must be installed); dies with the command to
# run otherwise.
ensure_packages() {
  local missing=()
  command -v dpkg-query >/dev/null 2>&1 || {
    warp_say "warning: not a Debian system; make sure these are installed: $*"
    return 0
  }
  mapfile -t missing < <(missing_packages "$@")
  [ "${#missing[@]}" = 0 ] && return 0
  if ! is_root; then
    warp_die "missing packages: ${missing[*]}. Install them as root: apt-get install -y ${missing[*]}"
  fi
  command -v apt-get >/dev/null 2>&1 || warp_die "missing packages: ${missing[*]}, and apt-get is not available to install them."
  warp_say "Installing ${missing[*]} with apt-get..."
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${WARP_APT_UPDATED:-}" ]; then
    apt-get update -q >&2 || warp_die "apt-get update failed; check the network and /etc/apt/sources.list, then: apt-get install -y ${missing[*]}"
    WARP_APT_UPDATED=1
  fi
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
    || warp_die "could not install ${missing[*]} with apt-get; install them yourself: apt-get install -y ${missing[*]}"
}

# ensure_fuse: what warpd needs to mount, installed with apt when root (ensure_packages):
# fusermount (fuse3) and libfuse.so.2, through which warpd mounts (libfuse2; Debian 13 names it
# libfuse2t64, which apt picks for libfuse2). Checked by file, not package name, so a renamed
# package that is installed counts. Every script that starts warpd calls it: on a fresh machine
# scripts/scale ran for minutes before warpd failed for want of libfuse2.
ensure_fuse() {
  local need=()
  command -v fusermount >/dev/null 2>&1 || command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
  { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libfuse\.so\.2 ' || need+=(libfuse2)
  [ "${#need[@]}" = 0 ] || ensure_packages "${need[@]}"
}

# fuse_problem: prints why FUSE mounts cannot work here (nothing when they can).
fuse_problem() {
  if [ ! -e /dev/fuse ] && is_root && command -v modprobe >/dev/null 2>&1; then
    modprobe fuse >/dev/null 2>&1 || true
  fi
  if [ ! -c /dev/fuse ]; then
    echo "/dev/fuse does not exist (in a container: docker run --device /dev/fuse --cap-add SYS_ADMIN ...)"
  elif ! is_root; then
    echo "mounting needs root here (you are $(id -un))"
  elif ! { exec 8<>/dev/fuse; } 2>/dev/null; then
    echo "/dev/fuse cannot be opened (container without --device /dev/fuse, or a security policy)"
  else
    exec 8>&-
    command -v fusermount >/dev/null 2>&1 || command -v fusermount3 >/dev/null 2>&1 \
      || echo "fusermount is missing (apt-get install fuse3)"
  fi
}

# is_mounted DIR: true when DIR is a mount point (reads /proc, never touches DIR itself, so a
# dead FUSE mount cannot hang it).
is_mounted() {
  local dir
  # mountinfo writes backslash, space, tab and newline as octal escapes.
  dir="$(readlink -m "$1" | sed 's/\\/\\134/g; s/ /\\040/g; s/\t/\\011/g')"
  WARP_MOUNT_DIR="$dir" awk '$5 == ENVIRON["WARP_MOUNT_DIR"] { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# unmount_fuse DIR: lazily unmounts a FUSE mount point if it is mounted.
unmount_fuse() {
  is_mounted "$1" || return 0
  fusermount -u -z "$1" 2>/dev/null || fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
}

# print_usage SCRIPT: prints the script's leading comment block (after the shebang).
print_usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}
