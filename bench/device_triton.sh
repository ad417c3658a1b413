#!/usr/bin/env bash
# device_triton.sh: the Triton target's check on a lent GPU machine (one
# 10-minute call; pick STEPS to fit it): build dkb and the Python shim
# (Release, CUDA), then the steps named in STEPS (default "corpus experts"):
#   corpus    tests/cli/triton_corpus.sh: the Triton corpus and the CPU torch
#             candidates on the GPU (about 240 s)
#   experts   dkb eval src/kernels/triton --target triton at each SF in SFS
#             (default "1 10"; about 100 s at SF 1 with 5 seeds)
#   bench     dkb bench --target triton at the last SF in SFS
#   optimize  tests/cli/optimize_triton.sh (the repair loop against the
#             fake model server)
# Stores are generated once under /tmp (in the background while the corpus
# runs). Logs under $OUT; summary.txt holds every row, with the top kernels.
# The machine's torch is in a virtual environment: DKB_PYTHON is the python3
# on PATH.
#   tools/devdeps.sh                                   # here, once per checkout
#   (device, carry [".devdeps"]) bench/device_triton.sh
#   STEPS="experts bench optimize" SFS=10 ET=200 bench/device_triton.sh
#   CASES="honest crash" CT=120 STEPS=corpus bench/device_triton.sh     # a corpus subset
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-triton}
STEPS=${STEPS:-corpus experts}
SFS=${SFS:-1 10}
mkdir -p "$OUT"
source .devdeps/env.sh
(cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release && cmake --build build-device -j16 --target dkb dkb_pyshim) > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
export DKB=$PWD/build-device/dkb DKB_TMP=/tmp/t KEEP_WORK=1 DKB_TESTDATA=$PWD/tests/data PYTHONUNBUFFERED=1
export DKB_PYTHON=$(command -v python3)
has() { [[ " $STEPS " == *" $1 "* ]]; }
( for sf in $SFS; do [ -f /tmp/dkb-sf$sf/manifest.json ] || $DKB gen --sf $sf --out /tmp/dkb-sf$sf -j 16 -q --force; done ) > $OUT/gen.log 2>&1 &
GEN=$!
rows() {   # every row of the results.json files given, with its attribution's kernels
  python3 - "$@" <<'PY'
import json, sys
for f in sys.argv[1:]:
    try:
        doc = json.load(open(f))
    except (OSError, ValueError) as e:
        print(f, "unreadable:", e); continue
    for r in doc["candidates"]:
        a = r.get("attribution") or {}
        top = ", ".join("%s [%s] %.4f" % (k["name"], k["library"] or "own", k["ms"]) for k in a.get("top") or [])
        print(f.split("/")[-2], r["query"], r["mode"], r["class"], r.get("raw_speedup"),
              (r.get("candidate_ms") or {}).get("median"), "own", a.get("own_share"), "lead", a.get("lead_ms"),
              "|", (r.get("detail") or "")[:250], "|", top)
PY
}
if has corpus; then
  timeout ${CT:-260} bash tests/cli/triton_corpus.sh > $OUT/corpus.log 2>&1; echo "corpus rc=$?"
  { rows /tmp/t/triton_corpus/results/*/results.json; grep -v "^ok:" $OUT/corpus.log | cut -c1-300 | head -20; } 2>&1 | tee $OUT/summary.txt
fi
wait $GEN
if has experts; then
  for sf in $SFS; do
    timeout ${ET:-200} $DKB eval src/kernels/triton --target triton --data /tmp/dkb-sf$sf --out $OUT/ev$sf --seeds 5 > $OUT/experts_sf$sf.txt 2>&1; echo "experts sf$sf rc=$?"
    head -12 $OUT/experts_sf$sf.txt | cut -c1-220
    rows $OUT/ev$sf/results.json >> $OUT/summary.txt
  done
fi
if has bench; then
  sf=${SFS##* }
  timeout ${BT:-300} $DKB bench --target triton --data /tmp/dkb-sf$sf --sf $sf --out $OUT/bench -q > $OUT/bench.txt 2>&1; echo "bench sf$sf rc=$?"
  tail -8 $OUT/bench.txt | cut -c1-220
fi
if has optimize; then
  timeout ${OT:-200} bash tests/cli/optimize_triton.sh > $OUT/optimize.log 2>&1; echo "optimize_triton rc=$?"
  tail -5 $OUT/optimize.log | cut -c1-300
fi
