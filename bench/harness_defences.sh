#!/usr/bin/env bash
# harness_defences.sh: what Harness II's defences (no state survives a call:
# docs/harness.md) do to the timings, measured as a user would see them:
# `dkb eval` of the experts with this tree's harness and with an older
# tree's, interleaved (old, new, old, new...), on the same stores, in one
# run. Per query it prints the baseline's and the expert's median under
# each harness and the ratio new/old; a ratio near 1 for both means the
# defences cost nothing inside the timed region (everything they do runs
# before the clock starts, but the malloc perturbation, which both sides
# now pay while timing). Also prints build/dkb_guard_cost (the per-call
# cost outside the timed region) for 1 and all threads.
#
# usage: bench/harness_defences.sh --old-tree DIR [--cpu-sf 1] [--cuda-sf 10]
#            [--rounds 2] [--stores DIR] [--out DIR] [--skip-cpu] [--skip-cuda] [-j N]
# DIR is an extracted older tree (e.g. `git archive 25196d3 | tar -x -C DIR`).
# Both trees are built (Release) under DIR/build-hd and build-hd here;
# stores are generated under --stores (default /tmp) when missing. CUDA
# runs only where the build has CUDA and a GPU answers. Results: OUT
# (default bench-out/defences): one CSV per eval, summary.md (the tables).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=""; CPU_SF=1; CUDA_SF=10; ROUNDS=2; STORES=/tmp; OUTDIR=$ROOT/bench-out/defences; JOBS=$(nproc)
DO_CPU=1; DO_CUDA=1
die() { echo "harness_defences.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --old-tree) OLD=$(cd "$2" && pwd) || die "no directory $2"; shift 2 ;;
    --cpu-sf) CPU_SF=$2; shift 2 ;;
    --cuda-sf) CUDA_SF=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --stores) STORES=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --skip-cpu) DO_CPU=0; shift ;;
    --skip-cuda) DO_CUDA=0; shift ;;
    -j) JOBS=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$OLD" ] || die "--old-tree DIR is required"
mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"

build() { # build SRC BUILD
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >"$OUTDIR/$(basename "$2")-cmake.log" 2>&1 &&
        cmake --build "$2" -j "$JOBS" >"$OUTDIR/$(basename "$2")-build.log" 2>&1
}
echo "== building the old tree ($OLD) and this one"
build "$OLD" "$OLD/build-hd" & pid_old=$!
build "$ROOT" "$ROOT/build-hd" || die "build of this tree failed ($OUTDIR/build-hd-build.log)"
wait $pid_old || die "build of the old tree failed ($OUTDIR/build-hd-build.log of $OLD)"
NEW_DKB=$ROOT/build-hd/dkb OLD_DKB=$OLD/build-hd/dkb

store() { # store SF -> path
    local s="$STORES/dkb-sf$1"
    [ -f "$s/manifest.json" ] || "$NEW_DKB" gen --sf "$1" --out "$s" -j "$JOBS" -q --force >&2 || die "gen SF $1 failed"
    echo "$s"
}

run_evals() { # run_evals NAME DIR STORE BACKEND
    local name=$1 dir=$2 st=$3 be=$4
    for r in $(seq 1 "$ROUNDS"); do
        for v in old new; do
            local exe=$OLD_DKB tree=$OLD
            [ $v = new ] && exe=$NEW_DKB tree=$ROOT
            echo "== $name round $r: $v harness"
            (cd "$tree" && "$exe" eval "$dir" --data "$st" --backend "$be" --mode full --seeds 2 \
                --out "$OUTDIR/res-$name-$v-$r" -q --format csv) >"$OUTDIR/$name-$v-$r.csv" 2>"$OUTDIR/$name-$v-$r.err" ||
                echo "   (exit $?: $OUTDIR/$name-$v-$r.err)"
        done
    done
}

[ $DO_CPU = 1 ] && run_evals cpu src/kernels/cpu "$(store "$CPU_SF")" cpu
if [ $DO_CUDA = 1 ]; then
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
        run_evals cuda src/kernels/cuda "$(store "$CUDA_SF")" cuda
    else
        echo "== no GPU: CUDA skipped"
    fi
fi

echo "== per-call cost outside the timed region (build-hd/dkb_guard_cost)"
{ "$ROOT/build-hd/dkb_guard_cost" 1 2000; "$ROOT/build-hd/dkb_guard_cost" "$JOBS" 2000; } | tee "$OUTDIR/guard_cost.txt"

python3 - "$OUTDIR" "$ROUNDS" <<'PY' | tee "$OUTDIR/summary.md"
import csv, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
for name in ("cpu", "cuda"):
    runs = {"old": [], "new": []}
    for v in runs:
        for r in range(1, rounds + 1):
            p = os.path.join(out, f"{name}-{v}-{r}.csv")
            if not os.path.exists(p) or not os.path.getsize(p):
                continue
            rows = {}
            with open(p) as f:
                for row in csv.DictReader(f):
                    rows[row["query"]] = row
            runs[v].append(rows)
    if not runs["old"] or not runs["new"]:
        continue
    def med(v, q, col):
        xs = [float(r[q][col]) for r in runs[v] if q in r and r[q][col] not in ("", None)]
        return statistics.median(xs) if xs else float("nan")
    qs = sorted(set(runs["old"][0]) & set(runs["new"][0]))
    print(f"\n### {name}: median over {rounds} evals per harness, ms\n")
    print("| query | baseline old | baseline new | new/old | expert old | expert new | new/old | class new |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    tot = {k: 0.0 for k in ("bo", "bn", "co", "cn")}
    for q in qs:
        bo, bn = med("old", q, "baseline_ms"), med("new", q, "baseline_ms")
        co, cn = med("old", q, "candidate_ms"), med("new", q, "candidate_ms")
        for k, x in zip(("bo", "bn", "co", "cn"), (bo, bn, co, cn)):
            tot[k] += x if x == x else 0
        cls = runs["new"][-1][q]["class"]
        print(f"| {q} | {bo:.3f} | {bn:.3f} | {bn / bo:.3f} | {co:.3f} | {cn:.3f} | {cn / co:.3f} | {cls} |")
    print(f"| total | {tot['bo']:.3f} | {tot['bn']:.3f} | {tot['bn'] / tot['bo']:.3f} | {tot['co']:.3f} | "
          f"{tot['cn']:.3f} | {tot['cn'] / tot['co']:.3f} | |")
PY
