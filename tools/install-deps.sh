#!/usr/bin/env bash
# install-deps.sh: install the Debian packages the build needs, if missing.
# Needs: cJSON (libcjson-dev), zlib (zlib1g-dev), libcurl (libcurl4-openssl-dev); tests also use coreutils'
# sha256sum, binutils' nm (with gcc) and python3 (installed when missing).
# Then libduckdb for `dkb sql --data` (loaded at run time; src/sql/duckdb_load.h):
# tools/oracle's pinned npm packages (`npm ci`: @duckdb/node-api and, on Linux
# x86-64, @duckdb/node-bindings-linux-x64 with libduckdb.so), when npm is
# there and they are not installed yet; without npm a note says what is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# libduckdb: npm ci in tools/oracle unless its packages are there already.
duckdb_deps() {
    local mods="$here/oracle/node_modules/@duckdb"
    if [ "$(uname -m)" = x86_64 ]; then
        [ -f "$mods/node-bindings-linux-x64/libduckdb.so" ] && return 0
    else
        [ -f "$mods/node-api/package.json" ] && return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "install-deps: npm not found: dkb sql --data needs libduckdb (install Node.js 20 and npm, then rerun; or set DKB_LIBDUCKDB)" >&2
        return 0
    fi
    echo "install-deps: npm ci in tools/oracle (DuckDB, libduckdb)" >&2
    (cd "$here/oracle" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

need=()
[ -f /usr/include/cjson/cJSON.h ] || need+=(libcjson-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
compgen -G '/usr/include/*/curl/curl.h' >/dev/null || [ -f /usr/include/curl/curl.h ] || need+=(libcurl4-openssl-dev)
command -v python3 >/dev/null || need+=(python3)
for extra in "$@"; do dpkg -s "$extra" >/dev/null 2>&1 || need+=("$extra"); done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-deps: installing ${need[*]}" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
duckdb_deps
