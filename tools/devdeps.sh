#!/usr/bin/env bash
# devdeps.sh: what a lent GPU machine lacks, gathered here into .devdeps/
# (git-ignored: add "/.devdeps/" to .git/info/exclude) for a device call to
# carry: Debian's cJSON (libcjson1, libcjson-dev) and zlib headers
# (zlib1g-dev) as .deb files, libduckdb.so (tools/oracle's npm package,
# xz-compressed to fit the transfer) and env.sh, which a command sources
# there: the debs unpacked under /tmp, CMAKE_PREFIX_PATH/CPATH/LIBRARY_PATH/
# LD_LIBRARY_PATH pointed at them, DKB_LIBDUCKDB set. bench/device_check.sh
# sources it when it exists.
#   tools/devdeps.sh            # here, once per checkout
#   (device) bench/device_check.sh tests      # with carry [".devdeps"]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.devdeps
mkdir -p "$out"
grep -qx '/.devdeps/' "$root/.git/info/exclude" 2>/dev/null || echo '/.devdeps/' >>"$root/.git/info/exclude"
(cd "$out" && apt-get download libcjson1 libcjson-dev zlib1g-dev >/dev/null)
so=$root/tools/oracle/node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so
[ -f "$so" ] || (cd "$root/tools/oracle" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
[ -f "$out/libduckdb.so.xz" ] || xz -T0 -6 -c "$so" >"$out/libduckdb.so.xz"
cat >"$out/env.sh" <<'SH'
# env.sh (written by tools/devdeps.sh): source on the device machine
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p /tmp/cj
for f in "$D"/libcjson*.deb; do dpkg -x "$f" /tmp/cj; done
export CMAKE_PREFIX_PATH=/tmp/cj/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export CPATH=/tmp/cj/usr/include${CPATH:+:$CPATH}
export LIBRARY_PATH=/tmp/cj/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=/tmp/cj/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ ! -f /usr/include/zlib.h ]; then
  mkdir -p /tmp/zdev && dpkg -x "$D"/zlib1g-dev*.deb /tmp/zdev
  z=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
  ln -sf "$z" /tmp/zdev/usr/lib/x86_64-linux-gnu/libz.so
  export CMAKE_PREFIX_PATH=/tmp/zdev/usr:$CMAKE_PREFIX_PATH CPATH=/tmp/zdev/usr/include:$CPATH
fi
[ -f /tmp/libduckdb.so ] || xz -dc "$D"/libduckdb.so.xz >/tmp/libduckdb.so
export DKB_LIBDUCKDB=/tmp/libduckdb.so
SH
du -sh "$out" | sed 's/^/devdeps: /'
