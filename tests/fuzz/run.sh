#!/usr/bin/env bash
# run.sh: build the .tbl parser fuzz target with clang (libFuzzer + ASan +
# UBSan) and fuzz it for a bounded time.
#   tests/fuzz/run.sh [SECONDS]      (default 30)
# Builds in build-fuzz/; the corpus grows in build-fuzz/corpus (seeded from
# tests/fuzz/corpus); a crash leaves its input in build-fuzz/ and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-30}"
tools/install-deps.sh clang libclang-rt-14-dev libomp-14-dev
CC=clang cmake -S . -B build-fuzz -DDKB_FUZZ=ON -DBUILD_TESTING=OFF -DDKB_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz_tbl_parse -j "$(nproc)"
mkdir -p build-fuzz/corpus
cp -n tests/fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
cd build-fuzz
tests/fuzz/fuzz_tbl_parse -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict=../tests/fuzz/tbl.dict -print_final_stats=1 corpus
