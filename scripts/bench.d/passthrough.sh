#!/usr/bin/env bash
# scripts/bench.d/passthrough.sh [MiB]: a whole file read again, through warpd and from its
# passthrough copy (warpd --passthrough on|off), beside the same file on local disk.
# Publishes a DuckDB-written Parquet file of about MiB (default 256) to a file:// store, then for
# each mode (on, off, on, off) starts warpd, reads the file whole twice (the copy is made when
# the first read closes), and reads it three times with dd bs=4M, the page cache dropped before
# each read, alternating with the local file. Prints MB/s and warpd's CPU. Needs root (FUSE,
# dropping the page cache) and Linux 6.9+ for passthrough. See docs/cache.md ("Passthrough").
set -euo pipefail
# shellcheck source=../lib/common.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../lib/common.sh"
as_root "the passthrough bench mounts a FUSE file system and drops the page cache, which needs root" "$0" "$@"
find_java
build_jar_if_missing
mib="${1:-256}"
jar="$WARP_HOME/daemon/target/warp.jar"
work="$(mktemp -d /tmp/warp-passthrough.XXXXXX)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if mountpoint -q "$work/mnt"; then umount -l "$work/mnt" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/src/main" "$work/store" "$work/mnt"
"$JAVA" -cp "$jar" "$WARP_HOME/scripts/bench.d/BenchSql.java" big "$work/src/main/part-0.parquet" \
  $((mib * 1024 * 1024)) 2>/dev/null
"$JAVA" -jar "$jar" warpctl --remote "file://$work/store" publish --no-daemon --set-latest \
  --table "main=$work/src/main/part-0.parquet" bench/pt >/dev/null
file="$work/mnt/bench/pt/main/part-0.parquet"
local_file="$work/src/main/part-0.parquet"
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
mbps() { dd if="$1" of=/dev/null bs=4M 2>&1 | awk 'END { for (i = 1; i <= NF; i++) if ($i == "copied,") { printf "%.0f", $1 / $(i + 1) / 1e6 } }'; }
for mode in on off on off; do
  "$JAVA" -jar "$jar" warpd --passthrough "$mode" --mount "$work/mnt" --remote "file://$work/store" \
    --cache-dir "$work/cache" --socket "$work/warpd.sock" >"$work/warpd.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do mountpoint -q "$work/mnt" && break; sleep 0.1; done
  mountpoint -q "$work/mnt" || warp_die "warpd did not mount; its log: $(cat "$work/warpd.log")"
  cat "$file" >/dev/null; sleep 2
  cat "$file" >/dev/null; sleep 2
  cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  for run in 1 2 3; do
    drop; w=$(mbps "$file")
    drop; l=$(mbps "$local_file")
    echo "passthrough $mode, read $run: warp $w MB/s, local disk $l MB/s"
  done
  cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  ticks=$(getconf CLK_TCK)
  echo "passthrough $mode: warpd CPU over the 3 reads $(( (cpu1 - cpu0) * 1000 / ticks )) ms," \
    "copies $(find "$work/cache/v1/copies" -type f | wc -l)"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done
