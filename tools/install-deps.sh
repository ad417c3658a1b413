#!/usr/bin/env bash
# install-deps.sh: install the Debian packages the build needs, if missing.
# Needs: cJSON (libcjson-dev), zlib (zlib1g-dev), libcurl (libcurl4-openssl-dev); tests also use coreutils'
# sha256sum, binutils' nm (with gcc) and python3 (installed when missing).
set -euo pipefail
need=()
[ -f /usr/include/cjson/cJSON.h ] || need+=(libcjson-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
compgen -G '/usr/include/*/curl/curl.h' >/dev/null || [ -f /usr/include/curl/curl.h ] || need+=(libcurl4-openssl-dev)
command -v python3 >/dev/null || need+=(python3)
for extra in "$@"; do dpkg -s "$extra" >/dev/null 2>&1 || need+=("$extra"); done
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${need[*]}" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
