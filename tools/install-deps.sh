#!/usr/bin/env bash
# install-deps.sh: install the Debian packages the build needs, if missing.
# Needs: cJSON (libcjson-dev), zlib (zlib1g-dev); tests also use coreutils'
# sha256sum and python3 (both on Debian by default).
set -euo pipefail
need=()
[ -f /usr/include/cjson/cJSON.h ] || need+=(libcjson-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
for extra in "$@"; do dpkg -s "$extra" >/dev/null 2>&1 || need+=("$extra"); done
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${need[*]}" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
