# experts_cpu_par.sh: the 22 expert CPU candidates on their parallel paths.
# experts_cpu_a/b.sh run them at SF 0.1 and 0.001, where most experts' work
# is under their one-thread threshold (about 256K rows, as the baseline's
# backend); at SF 0.4 with 2 threads lineitem, orders and partsupp are above
# it, so the multi-threaded, multi-chunk code runs (a chunk merge in q16 was
# wrong only there). Every row must be ok on seed 0 and 2 random seeds.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/experts.bash"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export DKB_CANDIDATE_H="${DKB_CANDIDATE_H:-$ROOT/include/dkb/candidate.h}"
S="$WORK/sf04"
"$DKB" gen --sf 0.4 --out "$S" -q -j 2
"$DKB" eval "$ROOT/src/kernels/cpu" --data "$S" --mode full --seeds 2 --threads 2 --warmup 0 --min-runs 1 \
    --min-seconds 0 --timeout 120 --out "$WORK/results" -q || fail "dkb eval exited $? (harness error)"
all=$(seq -s, -f 'q%02g' 1 22)
check_results "$WORK/results/results.json" "$all" || fail "some expert candidates are not ok at SF 0.4 on 2 threads"
pass "the 22 expert CPU candidates: verdict ok at SF 0.4 on 2 threads (seed 0 + 2 random seeds)"
