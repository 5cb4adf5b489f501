#!/usr/bin/env bash
# Warm passes over warpd's disk cache, the page cache dropped before each: what a second epoch
# after a restart (or after memory pressure) reads. Uses what a `scripts/bench` run (full size)
# left in its workdir: the store S3Proxy served, read here as a file:// store, and the generated
# data's layout. Starts its own warpd on a fresh cache in a temporary directory, fills the cache
# with one cold pass of each, then prints, per pass, the ImageFolder pass (5,000 images, folder
# order, 2 workers: files/s) and a dd of the 1 GiB file (MB/s). Needs root (FUSE, dropping the
# page cache). Run it with two jars one after the other (--jar) to compare builds.
#
# usage: scripts/bench.d/warm_passes.sh [--workdir DIR] [--jar JAR] [--passes N]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/common.sh
source "$HERE/../lib/common.sh"
workdir="$WARP_HOME/.bench" jar="$WARP_JAR" passes=5
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir="$2"; shift 2 ;;
    --jar) jar="$2"; shift 2 ;;
    --passes) passes="$2"; shift 2 ;;
    *) warp_die "unknown argument '$1' (usage: warm_passes.sh [--workdir DIR] [--jar JAR] [--passes N])" ;;
  esac
done
is_root || warp_die "warm_passes.sh mounts a FUSE file system and drops the page cache: run it as root"
store="$workdir/s3/warp-bench/store"
[ -d "$store" ] || warp_die "$store is missing: run scripts/bench (full size, --workdir $workdir) first"
[ -f "$jar" ] || warp_die "$jar is missing: build it (mvn -q package -DskipTests)"
find_java
tmp=$(mktemp -d /tmp/warp-warm.XXXXXX)
mkdir -p "$tmp/mnt" "$tmp/cache"
"$JAVA" -jar "$jar" warpd --mount "$tmp/mnt" --remote "file://$store" --cache-dir "$tmp/cache" \
  --socket "$tmp/sock" > "$tmp/warpd.log" 2>&1 &
pid=$!
cleanup() {
  unmount_fuse "$tmp/mnt" || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 150); do [ -d "$tmp/mnt/bench/full" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
[ -d "$tmp/mnt/bench/full" ] || { cat "$tmp/warpd.log" >&2; warp_die "warpd did not mount bench/full (its log is above)"; }
images="$tmp/mnt/bench/full/images"
big=$(find "$tmp/mnt/bench/full/big" -type f | head -1)
pass() { /usr/bin/python3 "$HERE/imagefolder_pass.py" "$images" --workers 2 --batch 32; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; }
pass > /dev/null
dd if="$big" of=/dev/null bs=4M status=none
for i in $(seq "$passes"); do
  drop
  img=$(pass | tail -1 | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(round(j["files"] / j["seconds"]))')
  drop
  mbs=$(dd if="$big" of=/dev/null bs=4M 2>&1 | tail -1 | awk '{print $(NF-1), $NF}')
  echo "pass $i: ImageFolder warm $img files/s; dd warm $mbs"
done
