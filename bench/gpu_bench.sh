#!/usr/bin/env bash
# gpu_bench.sh: the GPU engine's benchmark in one call (issue 5; docs/gpu.md):
#   build   cmake Release with CUDA, -j JOBS (BUILD dir)
#   bw      bench/gpu/bw.cu: device copy / read bandwidth (the floor's GB/s)
#   gen     dkb gen --sf S for each S of --sf-list into STORES/dkb-sfS (timed)
#   golden  tests/cli/golden_cuda.sh: 264 goldens (SF 0.01/0.1, seeds 0..5) on --backend cuda
#   cuda    per SF: the 22 CPU answers (--format csv) and one
#           `dkb run all --backend cuda --expect-dir <those> --time --runs R
#           --warmup W --bandwidth BW --format json`: equality and timings
#           (median, floor ms, median/floor, resident load) in one process
#   torch   bench/torch/run.py at --torch-sf: the PyTorch peer, all 22 queries,
#           each checked against dkb's answer; eager and torch.compile (best
#           effort per query) vs dkb cuda; the summary sums best-of per query
# Each stage can be skipped (--skip-STAGE, or --only "bw cuda"); a failing
# stage is reported and the next ones still run (those that need dkb skip
# when there is none). Results under OUT (env OUT, or --out; default
# ./bench-out), at most 8 files: bench.log (every stage's output),
# results.md and results.json (the summary), cuda-sfS.json (dkb's JSON per
# SF), torch.json, bw.json. Scratch (CPU answers, golden stores) in
# /tmp/dkb-gpu-bench. Exit 0 when every stage run passed, 1 otherwise.
#
#   bench/gpu_bench.sh                          # everything, SF 1 and 10 (about 6-9 minutes on an H200)
#   bench/gpu_bench.sh --sf-list 1 --skip-torch # first call
#   bench/gpu_bench.sh --skip-build --only "gen cuda torch" --sf-list 10   # second call (same machine)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

OUTDIR=${OUT:-$ROOT/bench-out}
BUILD=$ROOT/build-gpu
STORES=/tmp
SF_LIST="1 10"
TORCH_SF=""
JOBS=16
RUNS=10
WARMUP=2
BANDWIDTH=""
TORCH_BUDGET=240
STAGES="build bw gen golden cuda torch"
SCRATCH=/tmp/dkb-gpu-bench

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; cat <<EOF
options: --out DIR  --build DIR (default build-gpu)  --stores DIR (default /tmp)  --sf-list "1 10"
         --torch-sf S (default: the last of --sf-list)  -j N (default 16)  --runs N (10)  --warmup N (2)
         --bandwidth GBPS (skip the probe's number)  --torch-budget-s S (240)
         --skip-build --skip-bw --skip-gen --skip-golden --skip-cuda --skip-torch  --only "STAGES"
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --out) OUTDIR=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --stores) STORES=$2; shift 2 ;;
    --sf-list) SF_LIST=$2; shift 2 ;;
    --torch-sf) TORCH_SF=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --bandwidth) BANDWIDTH=$2; shift 2 ;;
    --torch-budget-s) TORCH_BUDGET=$2; shift 2 ;;
    --only) STAGES=$2; shift 2 ;;
    --skip-build|--skip-bw|--skip-gen|--skip-golden|--skip-cuda|--skip-torch)
        s=${1#--skip-}; STAGES=" $STAGES "; STAGES=${STAGES// $s / }; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu_bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$TORCH_SF" ] || TORCH_SF=${SF_LIST##* }
mkdir -p "$OUTDIR" "$SCRATCH" || { echo "gpu_bench.sh: cannot create $OUTDIR or $SCRATCH" >&2; exit 1; }
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/bench.log
: >"$LOG"
DKB=$BUILD/dkb
SUMMARY=$SCRATCH/summary.tsv   # stage<TAB>status<TAB>seconds<TAB>note
: >"$SUMMARY"
T_ALL=$(date +%s.%N)

log() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo "$(date +%s.%N) $1" | awk '{printf "%.1f", $1 - $2}'; }
want() { case " $STAGES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$SUMMARY"; log "== $1: $2 ($3 s) $4"; }
have_dkb() { [ -x "$DKB" ] || { record "$1" skipped 0 "no dkb binary at $DKB (build failed or skipped)"; return 1; }; }

log "gpu_bench.sh: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); stages: $STAGES; SF: $SF_LIST; out: $OUTDIR"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$LOG" 2>&1 || log "(nvidia-smi not available)"

# ---- build ----
if want build; then
    t=$(date +%s.%N)
    if { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDKB_CUDA=ON &&
         cmake --build "$BUILD" -j "$JOBS"; } >>"$LOG" 2>&1; then
        record build ok "$(elapsed "$t")" "$BUILD"
    else
        record build FAILED "$(elapsed "$t")" "see bench.log"
    fi
fi

# ---- bandwidth probe ----
BW_COPY="" BW_READ=""
if want bw; then
    t=$(date +%s.%N)
    if nvcc -O3 -arch=sm_90 -o "$SCRATCH/bw" "$ROOT/bench/gpu/bw.cu" >>"$LOG" 2>&1 &&
       timeout 120 "$SCRATCH/bw" --gib 4 --reps 20 >"$SCRATCH/bw.out" 2>>"$LOG"; then
        cat "$SCRATCH/bw.out" >>"$LOG"
        grep '^{' "$SCRATCH/bw.out" | tail -1 >"$OUTDIR/bw.json"
        BW_COPY=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['copy_gbps'])" "$OUTDIR/bw.json")
        BW_READ=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['read_gbps'])" "$OUTDIR/bw.json")
        record bw ok "$(elapsed "$t")" "copy $BW_COPY GB/s, read $BW_READ GB/s"
    else
        cat "$SCRATCH/bw.out" >>"$LOG" 2>/dev/null
        record bw FAILED "$(elapsed "$t")" "see bench.log"
    fi
fi
[ -n "$BANDWIDTH" ] || BANDWIDTH=$BW_COPY
if [ -z "$BANDWIDTH" ] && [ -f "$OUTDIR/bw.json" ]; then
    BANDWIDTH=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['copy_gbps'])" "$OUTDIR/bw.json" 2>/dev/null)
fi

# ---- stores ----
if want gen && have_dkb gen; then
    for sf in $SF_LIST; do
        t=$(date +%s.%N)
        if "$DKB" gen --sf "$sf" --out "$STORES/dkb-sf$sf" -j "$JOBS" --force -q >>"$LOG" 2>&1; then
            record "gen-sf$sf" ok "$(elapsed "$t")" "$STORES/dkb-sf$sf, $(du -sm "$STORES/dkb-sf$sf" | cut -f1) MB"
        else
            record "gen-sf$sf" FAILED "$(elapsed "$t")" "see bench.log"
        fi
    done
fi

# ---- goldens on the CUDA backend ----
if want golden && have_dkb golden; then
    t=$(date +%s.%N)
    rc=0
    DKB=$DKB DKB_TESTDATA=$ROOT/tests/data DKB_TMP=$SCRATCH/golden \
        timeout 400 bash "$ROOT/tests/cli/golden_cuda.sh" >"$SCRATCH/golden.out" 2>&1 || rc=$?
    cat "$SCRATCH/golden.out" >>"$LOG"
    line=$(grep '^golden_cuda:' "$SCRATCH/golden.out" | tail -1)
    case $rc in
    0) record golden ok "$(elapsed "$t")" "$line" ;;
    77) record golden skipped "$(elapsed "$t")" "no GPU: $(grep '^skip' "$SCRATCH/golden.out" | head -1)" ;;
    124) record golden FAILED "$(elapsed "$t")" "timed out after 400 s" ;;
    *) record golden FAILED "$(elapsed "$t")" "${line:-exit $rc; see bench.log}" ;;
    esac
fi

# ---- CPU vs CUDA equality and CUDA timings, per SF ----
if want cuda && have_dkb cuda; then
    for sf in $SF_LIST; do
        S=$STORES/dkb-sf$sf
        t=$(date +%s.%N)
        if [ ! -f "$S/manifest.json" ]; then record "cuda-sf$sf" FAILED 0 "no store $S (run the gen stage)"; continue; fi
        A=$SCRATCH/cpu-sf$sf
        rm -rf "$A" && mkdir -p "$A"
        cpu_fail=0
        for n in $(seq 1 22); do
            q=$(printf 'q%02d' "$n")
            timeout 120 "$DKB" run "$q" --data "$S" --format csv >"$A/$q-s0.csv" 2>>"$LOG" ||
                { cpu_fail=$((cpu_fail + 1)); rm -f "$A/$q-s0.csv"; log "cpu $q at SF $sf failed"; }
        done
        bwopt=()
        [ -n "$BANDWIDTH" ] && bwopt=(--bandwidth "$BANDWIDTH")
        rc=0
        timeout 400 "$DKB" run all --backend cuda --data "$S" --expect-dir "$A" --format json --time \
            --runs "$RUNS" --warmup "$WARMUP" "${bwopt[@]}" >"$OUTDIR/cuda-sf$sf.json" 2>"$SCRATCH/cuda-sf$sf.err" || rc=$?
        cat "$SCRATCH/cuda-sf$sf.err" >>"$LOG"
        if ! python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$OUTDIR/cuda-sf$sf.json" 2>/dev/null; then
            # the run died part-way: one process per query, gathered into one JSON list
            log "cuda-sf$sf: dkb run all exited $rc without whole JSON; running the queries one by one"
            for n in $(seq 1 22); do
                q=$(printf 'q%02d' "$n")
                timeout 120 "$DKB" run "$q" --backend cuda --data "$S" --expect "$A/$q-s0.csv" --format json --time \
                    --runs "$RUNS" --warmup "$WARMUP" "${bwopt[@]}" >"$SCRATCH/one-$q.json" 2>>"$LOG" ||
                    log "cuda $q at SF $sf: exit $?"
            done
            python3 - "$SCRATCH" "$OUTDIR/cuda-sf$sf.json" <<'EOF'
import json, sys, os
out = []
for n in range(1, 23):
    q = "q%02d" % n
    try:
        out.append(json.load(open(os.path.join(sys.argv[1], "one-%s.json" % q))))
    except (OSError, ValueError) as e:
        out.append({"query": q, "error": "no result (crash or timeout): %s" % e})
json.dump(out, open(sys.argv[2], "w"))
EOF
        fi
        note=$(python3 - "$OUTDIR/cuda-sf$sf.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = sum(1 for x in d if x.get("check", {}).get("ok"))
bad = [x["query"] for x in d if not x.get("check", {}).get("ok")]
print("%d of 22 equal to the CPU answers%s" % (ok, ("; differ or failed: " + " ".join(bad)) if bad else ""))
EOF
)
        [ "$cpu_fail" = 0 ] || note="$note; $cpu_fail CPU answers failed"
        case $note in "22 of 22"*) [ "$cpu_fail" = 0 ] && st=ok || st=FAILED ;; *) st=FAILED ;; esac
        record "cuda-sf$sf" "$st" "$(elapsed "$t")" "$note"
    done
fi

# ---- PyTorch calibration ----
if want torch && have_dkb torch; then
    t=$(date +%s.%N)
    S=$STORES/dkb-sf$TORCH_SF
    rc=0
    if ! python3 -c "import torch" 2>>"$LOG"; then
        record torch skipped 0 "python3 cannot import torch"
    elif [ ! -f "$S/manifest.json" ]; then
        record torch FAILED 0 "no store $S"
    else
        cj=()
        [ -f "$OUTDIR/cuda-sf$TORCH_SF.json" ] && cj=(--dkb-cuda-json "$OUTDIR/cuda-sf$TORCH_SF.json")
        PYTHONUNBUFFERED=1 timeout $((TORCH_BUDGET + 120)) python3 "$ROOT/bench/torch/run.py" --store "$S" --dkb "$DKB" \
            "${cj[@]}" --json "$OUTDIR/torch.json" --budget-s "$TORCH_BUDGET" >"$SCRATCH/torch.out" 2>&1 || rc=$?
        cat "$SCRATCH/torch.out" >>"$LOG"
        if [ "$rc" = 0 ]; then record torch ok "$(elapsed "$t")" "SF $TORCH_SF; table in results.md"
        else record torch FAILED "$(elapsed "$t")" "exit $rc; see bench.log"; fi
    fi
fi

# ---- summary: results.json, results.md, the final table ----
python3 - "$OUTDIR" "$SUMMARY" "$SF_LIST" "${BANDWIDTH:-}" "$(elapsed "$T_ALL")" <<'EOF' | tee -a "$LOG"
import json, os, sys
out, summary, sfs, bw, total = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
stages = [dict(zip(("stage", "status", "seconds", "note"), l.rstrip("\n").split("\t"))) for l in open(summary) if l.strip()]
res = {"stages": stages, "bandwidth_gbps": float(bw) if bw else None, "total_seconds": float(total), "cuda": {}}
for name in ("bw.json", "torch.json"):
    try:
        res[name[:-5]] = json.load(open(os.path.join(out, name)))
    except (OSError, ValueError):
        pass
md = ["# GPU benchmark results", "", "Total %s s; floor bandwidth %s GB/s (bench/gpu/bw.cu copy)." % (total, bw or "-"), "",
      "| stage | status | s | note |", "|---|---|---:|---|"]
md += ["| %s | %s | %s | %s |" % (s["stage"], s["status"], s["seconds"], s["note"]) for s in stages]
for sf in sfs:
    try:
        d = json.load(open(os.path.join(out, "cuda-sf%s.json" % sf)))
    except (OSError, ValueError):
        continue
    rows = []
    for x in d:
        t = x.get("timing", {})
        ld = t.get("resident_load", {})
        rows.append({"query": x["query"], "equal": bool(x.get("check", {}).get("ok")),
                     "message": x.get("check", {}).get("message", x.get("error", "")),
                     "median_ms": t.get("median_ms"), "min_ms": t.get("min_ms"), "floor_bytes": t.get("floor_bytes"),
                     "floor_ms": t.get("floor_ms"), "median_over_floor": t.get("median_over_floor"),
                     "load_bytes": ld.get("bytes"), "load_s": ld.get("seconds"), "load_gbps": ld.get("gbps")})
    res["cuda"][sf] = rows
    f = lambda v, d=3: "-" if v is None else "%.*f" % (d, v)
    md += ["", "## SF %s: dkb --backend cuda" % sf, "",
           "| query | = CPU | median ms | min ms | floor MB | floor ms | median/floor | load MB | load s | load GB/s |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["query"], "yes" if r["equal"] else "NO " + r["message"][:80], f(r["median_ms"]), f(r["min_ms"]),
            f(r["floor_bytes"] / 1e6 if r["floor_bytes"] is not None else None, 1), f(r["floor_ms"], 4),
            f(r["median_over_floor"], 1), f(r["load_bytes"] / 1e6 if r["load_bytes"] is not None else None, 1),
            f(r["load_s"]), f(r["load_gbps"], 2)))
    tm = [r["median_ms"] for r in rows if r["median_ms"] is not None]
    fm = [r["floor_ms"] for r in rows if r["floor_ms"] is not None]
    md.append("| all | %d/22 | %s | | | %s | %s | | | |" % (sum(r["equal"] for r in rows), f(sum(tm)), f(sum(fm), 4) if fm else "-",
                                                        f(sum(tm) / sum(fm), 1) if fm and sum(fm) > 0 else "-"))
if "torch" in res:
    t = res["torch"]
    f = lambda v, d=3: "-" if v is None else "%.*f" % (d, v)
    md += ["", "## PyTorch peer (SF %s, %s, torch %s)" % (t["sf"], t["device"], t["version"]), "",
           "best = the better of eager and torch.compile per query (the mode in brackets); dkb / best above 1: dkb is slower.", "",
           "| query | dkb cuda ms | torch best ms (mode) | dkb / best | torch eager ms | torch compile ms | check |",
           "|---|---:|---:|---:|---:|---:|---|"]
    rs = t["results"]
    for r in rs:
        best = r.get("best_ms")
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["query"], f(r["dkb_cuda_ms"]), f(best) + (" (%s)" % r["best_mode"] if r.get("best_mode") else ""),
            f(r["dkb_over_torch"], 2), f(r["eager_ms"]), f(r["compile_ms"]),
            r["check"] + ("; compile " + r["compile_note"] if r["compile_note"] else "")))
    have = [r for r in rs if r.get("best_ms") is not None]
    both = [r for r in have if r.get("dkb_cuda_ms") is not None]
    sd, sb = sum(r["dkb_cuda_ms"] for r in both), sum(r["best_ms"] for r in both)
    ok = sum(r["check"] == "ok" for r in rs)
    if len(both) != len(have):   # the torch total over every query with a time, then the common set
        md.append("| all torch (%d) | - | %s | - | | | |" % (len(have), f(sum(r["best_ms"] for r in have) if have else None)))
    md.append("| all (%d) | %s | %s | %s | | | %d/%d equal to dkb |" % (
        len(both), f(sd if both else None), f(sb if both else None), f(sd / sb if both and sb else None, 2), ok, len(rs)))
    modes = {}
    for r in rs:
        modes[r.get("best_mode") or "none"] = modes.get(r.get("best_mode") or "none", 0) + 1
    md += ["", "Best mode per query: %s." % ", ".join("%s %d" % kv for kv in sorted(modes.items()))]
    res["torch_total"] = {"queries": len(both), "dkb_cuda_ms": sd if both else None, "torch_best_ms": sb if both else None,
                          "equal": ok, "of": len(rs), "best_modes": modes}
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)
open(os.path.join(out, "results.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
EOF

if grep -q $'\tFAILED\t' "$SUMMARY"; then
    log "gpu_bench.sh: FAILED stages: $(awk -F'\t' '$2 == "FAILED" {printf "%s ", $1}' "$SUMMARY")(details in $LOG)"
    exit 1
fi
log "gpu_bench.sh: every stage run passed (results in $OUTDIR)"
