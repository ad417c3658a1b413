#!/usr/bin/env bash
# device_triton.sh: the Triton target's check on a lent GPU machine (one
# 10-minute call): build (Release, CUDA), tests/cli/triton_corpus.sh (the
# Triton corpus and the CPU torch candidates on the GPU), then the Triton
# experts through `dkb eval src/kernels/triton --target triton` at SF 1 and
# SF 10 (stores generated once under /tmp). Logs under $OUT; the rows of
# every results.json printed. The machine's torch is in a virtual
# environment: DKB_PYTHON is set to the python3 on PATH.
#   tools/devdeps.sh                                   # here, once per checkout
#   (device, carry [".devdeps"]) bench/device_triton.sh
#   CASES="honest crash" CT=120 SFS=10 ET=60 bench/device_triton.sh   # a subset, shorter limits
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-triton}
mkdir -p "$OUT"
source .devdeps/env.sh
(cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release && cmake --build build-device -j16 --target dkb dkb_pyshim) > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
export DKB=$PWD/build-device/dkb DKB_TMP=/tmp/t KEEP_WORK=1 DKB_TESTDATA=$PWD/tests/data PYTHONUNBUFFERED=1
export DKB_PYTHON=$(command -v python3)
( [ -f /tmp/dkb-sf1/manifest.json ] || $DKB gen --sf 1 --out /tmp/dkb-sf1 -j 8 -q --force; [ -f /tmp/dkb-sf10/manifest.json ] || $DKB gen --sf 10 --out /tmp/dkb-sf10 -j 8 -q --force ) > $OUT/gen.log 2>&1 &
GEN=$!
timeout ${CT:-260} bash tests/cli/triton_corpus.sh > $OUT/corpus.log 2>&1; echo corpus rc=$?
{ python3 - <<'PY'
import json, glob
for f in sorted(glob.glob("/tmp/t/triton_corpus/results/*/results.json")):
    for r in json.load(open(f))["candidates"]:
        a = r.get("attribution") or {}
        if r["query"] == "q01" and f.split("/")[-2] == "honest": print(json.dumps(a)[:700])
        print(f.split("/")[-2], r["query"], r["mode"], r["class"], r.get("raw_speedup"), r.get("candidate_ms"), "own", a.get("own_share"), "|", (r.get("detail") or "")[:250])
PY
grep -h -A4 "top kernels" /tmp/t/triton_corpus/*.stdout | cut -c1-400; grep -v "^ok:" $OUT/corpus.log | cut -c1-300 | head -20; } 2>&1 | tee $OUT/summary.txt
wait $GEN
for sf in ${SFS:-1 10}; do
  timeout ${ET:-120} $DKB eval src/kernels/triton --target triton --data /tmp/dkb-sf$sf --out /tmp/ev$sf --seeds 5 > $OUT/experts_sf$sf.txt 2>&1; echo "experts sf$sf rc=$?"
  head -12 $OUT/experts_sf$sf.txt | cut -c1-220
done
