#!/usr/bin/env bash
# device_dist.sh: issue 16 on a GPU machine: `dkb run --backend cuda` with
# the ranks' collectives through NCCL (`--comm nccl`, docs/distributed.md)
# against the plain run, the 22 queries at SF 1, byte for byte, and the
# median times. Rows (each `dkb run all --backend cuda` on every seed):
#   plain            dkb run (the reference), store /tmp/dkb-sf1
#   nccl             dkb run --comm nccl: one process (single bootstrap)
#   mpi1-nccl        mpirun -np 1 dkb run --comm nccl (MPI bootstrap)
#   plain-pP         dkb run on the store of P partitions (reference of the
#                    2-rank rows; must equal plain too)
#   mpi2-mpi         mpirun -np 2 ... --comm mpi: two ranks on the GPU(s),
#                    partials through host memory and MPI
#   mpi2-nccl        mpirun -np 2 ... --comm nccl: on one GPU dkb refuses it
#                    (NCCL takes one GPU per rank): "refused" is then expected
#   mpi2-nccl-hostid the same with NCCL_HOSTID set apart per rank, so NCCL
#                    takes the ranks for two hosts (sockets over lo):
#                    experimental; not running is noted, a mismatch fails
# The mpirun rows need mpirun and build/dkb_comm_mpi.so (MPI headers at
# build time). Run after bench/device_check.sh (it builds build-device;
# this script rebuilds incrementally); the runs take about 2-3 minutes:
# seed 0 first, then the timing (`--time`, seed 0: 1 warm-up, 5 runs), then
# the other seeds while --budget lasts. Results in --out DIR (default $OUT
# or ./device-dist): summary.txt (printed last, <= 20 lines) and
# details.log. Exit 1 on any mismatch or when a row that must run fails.
#   bench/device_dist.sh [--out DIR] [--build DIR] [--seeds "0 1 2 3 4 5"]
#                        [--partitions P] [--budget SECONDS] [--no-build]
#                        [--sf SF] [--backend cpu]   (a dry run without a GPU)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/device-dist}
BUILD=$ROOT/build-device
SEEDS="0 1 2 3 4 5"   # tests/cli/golden_cuda.sh's
PARTS=8
BUDGET=180            # seconds from the start after which no further seed is begun
DO_BUILD=1
SF=1 BACKEND=cuda
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUTDIR=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --partitions) PARTS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --no-build) DO_BUILD=0; shift ;;
    --sf) SF=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_dist.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
export NCCL_NVLS_ENABLE=0   # required on the lent H200 machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUTDIR" || exit 1
SUM=$OUTDIR/summary.txt LOG=$OUTDIR/details.log
: >"$SUM"
: >"$LOG"
TMP=$(mktemp -d /tmp/device-dist.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
T0=$(date +%s)
JOBS=$(nproc)
DKB=$BUILD/dkb
log() { echo "$*" >>"$LOG"; }
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo $(( $(date +%s) - T0 )); }

# ---- what is there ----
say "which mpirun: $(command -v mpirun || echo 'not found')"
say "which mpicc:  $(command -v mpicc || echo 'not found')"
command -v mpirun >/dev/null && say "mpirun: $(mpirun --version 2>&1 | head -1)"
GPU=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -3 | tr '\n' ';')
say "GPUs: ${GPU:-nvidia-smi not found}"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)

build_note="not rebuilt (--no-build)"
if [ "$DO_BUILD" = 1 ] || [ ! -x "$DKB" ]; then
    t=$(date +%s)
    if { [ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release; } >>"$LOG" 2>&1 &&
        cmake --build "$BUILD" -j "$JOBS" >>"$LOG" 2>&1; then
        build_note="ok in $(( $(date +%s) - t ))s"
    else
        echo "device_dist: build FAILED in $BUILD: $(grep -m2 -E 'error' "$LOG" | tr '\n' ' ')" | tee -a "$LOG" >"$SUM"
        exit 1
    fi
fi
T0=$(date +%s)   # the budget counts from here: the build is apart
HAVE_MPI=0 HAVE_NCCL=0
[ -f "$BUILD/dkb_comm_mpi.so" ] && HAVE_MPI=1
[ -f "$BUILD/dkb_comm_nccl.so" ] && HAVE_NCCL=1
say "$BUILD/dkb_comm_mpi.so: $([ $HAVE_MPI = 1 ] && echo built || echo 'not built (no MPI headers at configure?)'); dkb_comm_nccl.so: $([ $HAVE_NCCL = 1 ] && echo built || echo 'not built')"
command -v mpirun >/dev/null || HAVE_MPI=0

# ---- stores ----
S1=/tmp/dkb-sf$SF SP=/tmp/dkb-sf$SF-p$PARTS
[ -f "$S1/manifest.json" ] || "$DKB" gen --sf "$SF" --out "$S1" -j "$JOBS" -q --force >>"$LOG" 2>&1 ||
    { say "dkb gen --sf $SF --out $S1 FAILED"; exit 1; }
[ -f "$SP/manifest.json" ] || "$DKB" gen --sf "$SF" --partitions "$PARTS" --out "$SP" -j "$JOBS" -q --force >>"$LOG" 2>&1 ||
    { say "dkb gen --sf $SF --partitions $PARTS --out $SP FAILED"; exit 1; }
log "stores ready at $(elapsed)s: $S1, $SP"

# ---- the rows ----
MPIRUN=(mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE)
ROWS=(plain nccl mpi1-nccl "plain-p$PARTS" mpi2-mpi mpi2-nccl mpi2-nccl-hostid)
declare -A STORE=([plain]=$S1 [nccl]=$S1 [mpi1-nccl]=$S1 ["plain-p$PARTS"]=$SP [mpi2-mpi]=$SP [mpi2-nccl]=$SP
                  [mpi2-nccl-hostid]=$SP)
declare -A REF=([nccl]=plain [mpi1-nccl]=plain ["plain-p$PARTS"]=plain [mpi2-mpi]="plain-p$PARTS"
                [mpi2-nccl]="plain-p$PARTS" [mpi2-nccl-hostid]="plain-p$PARTS")
declare -A STATE NOTE SAME RAN MEDSUM   # STATE: run | refused | skipped | failed | noexp
for r in "${ROWS[@]}"; do STATE[$r]=run NOTE[$r]="" SAME[$r]=0 RAN[$r]=0 MEDSUM[$r]=-; done
if [ "$HAVE_MPI" = 0 ]; then
    for r in mpi1-nccl mpi2-mpi mpi2-nccl mpi2-nccl-hostid; do STATE[$r]=skipped NOTE[$r]="no mpirun or dkb_comm_mpi.so"; done
fi

# cmd ROW ARGS...: the command line of row ROW running `dkb run ARGS`
cmd() {
    local row=$1
    shift
    case $row in
    plain|plain-p*) echo "$DKB" run "$@" ;;
    nccl) echo "$DKB" run "$@" --comm nccl ;;
    mpi1-nccl) echo "${MPIRUN[@]}" -np 1 "$DKB" run "$@" --comm nccl ;;
    mpi2-mpi) echo "${MPIRUN[@]}" -np 2 "$DKB" run "$@" --comm mpi ;;
    mpi2-nccl) echo "${MPIRUN[@]}" -np 2 "$DKB" run "$@" --comm nccl ;;
    mpi2-nccl-hostid)
        local x=(-x NCCL_NVLS_ENABLE -x NCCL_SOCKET_IFNAME=lo -x NCCL_IB_DISABLE=1)
        # a host id per rank through env(1): -x in one app context of several is not per context everywhere
        echo mpirun --allow-run-as-root --bind-to none "${x[@]}" -np 1 env NCCL_HOSTID=dkb-rank0 "$DKB" run "$@" --comm nccl \
            : "${x[@]}" -np 1 env NCCL_HOSTID=dkb-rank1 "$DKB" run "$@" --comm nccl ;;
    esac
}

# run_row ROW SEED: run it, compare with its reference, note what happened
run_row() {
    local row=$1 s=$2 rc=0 out=$TMP/$1-$2.out err=$TMP/$1-$2.err limit=60
    [ "${STATE[$row]}" = run ] || return 0
    [ "$row" = mpi2-nccl-hostid ] && limit=45
    local c
    c=$(cmd "$row" all --backend "$BACKEND" --data "${STORE[$row]}" --seed "$s")
    log "[$(elapsed)s] $row seed $s: $c"
    # shellcheck disable=SC2086
    timeout "$limit" $c >"$out" 2>"$err" || rc=$?
    grep -v '^dkb run: q[0-9]* on [0-9]* ranks:' "$err" | head -4 | sed 's/^/    /' >>"$LOG"
    local setup
    setup=$(grep -m1 '^dkb run: --comm nccl:' "$err" | sed 's/.*NCCL set up in/init/; s/ (median.*//')
    [ -n "$setup" ] && NOTE[$row]=$setup
    if [ "$rc" != 0 ]; then
        local why
        why="exit $rc$([ "$rc" = 124 ] && echo " (timed out after ${limit}s)"): $({ grep -E 'error|WARN' "$err" || grep -v '^dkb run: q[0-9]* on' "$err"; } | grep -m1 . | cut -c1-150)"
        if [ "$row" = mpi2-nccl ] && [ "$rc" = 1 ] && grep -q 'would share GPU .*NCCL takes one GPU per rank' "$err"; then
            STATE[$row]=refused NOTE[$row]="refused as expected on one GPU: $(sed 's/^dkb run: error: --comm nccl: //' "$err" | head -1 | cut -c1-90)"
        elif [ "$row" = mpi2-nccl-hostid ]; then
            STATE[$row]=noexp NOTE[$row]="experimental, did not run: $why"
        else
            STATE[$row]=failed NOTE[$row]="seed $s: $why"
        fi
        log "    -> ${STATE[$row]}: ${NOTE[$row]}"
        return 0
    fi
    RAN[$row]=$((RAN[$row] + 1))
    if [ -z "${REF[$row]:-}" ]; then
        SAME[$row]=$((SAME[$row] + 1))
    elif [ -f "$TMP/${REF[$row]}-$s.out" ] && cmp -s "$out" "$TMP/${REF[$row]}-$s.out"; then
        SAME[$row]=$((SAME[$row] + 1))
    else
        log "    -> MISMATCH with ${REF[$row]} seed $s: $(cmp "$out" "$TMP/${REF[$row]}-$s.out" 2>&1 | head -1)"
        diff "$TMP/${REF[$row]}-$s.out" "$out" 2>&1 | head -6 | sed 's/^/    /' >>"$LOG"
    fi
    if [ "$row" = mpi2-mpi ] || [ "$row" = mpi2-nccl ] || [ "$row" = mpi2-nccl-hostid ]; then
        local n
        n=$(grep -c '^dkb run: q[0-9]* on 2 ranks: ' "$err" || true)
        [ "$n" = 22 ] || log "    -> only $n of 22 queries say they were split over 2 ranks"
        [ "$row" = mpi2-mpi ] || [ "$(grep -c 'gathered through NCCL$' "$err" || true)" = 22 ] ||
            log "    -> not 22 queries gathered through NCCL"
    fi
}

# time_row ROW: `--time` at seed 0; the per-query medians into the log
time_row() {
    local row=$1 rc=0 out=$TMP/$1-time.out
    [ "${STATE[$row]}" = run ] || return 0
    local c
    c=$(cmd "$row" all --backend "$BACKEND" --data "${STORE[$row]}" --seed 0 --time)
    log "[$(elapsed)s] timing $row: $c"
    # shellcheck disable=SC2086
    timeout 90 $c >"$out" 2>"$TMP/$row-time.err" || rc=$?
    if [ "$rc" != 0 ]; then
        log "    -> timing run exit $rc: $(head -2 "$TMP/$row-time.err" | tr '\n' ' ')"
        return 0
    fi
    MEDSUM[$row]=$(sed -n 's/^all time: .*medians sum to \([0-9.]*\) ms.*/\1/p' "$out")
    grep -E '^q[0-9]+ time: ' "$out" | sed -E 's/^(q[0-9]+) time: .*query median ([0-9.]+) ms.*/\1 \2/' >"$TMP/$row.med"
}

for s in $SEEDS; do
    if [ "$s" != "${SEEDS%% *}" ] && [ "$(elapsed)" -ge "$BUDGET" ]; then
        log "budget of ${BUDGET}s spent at $(elapsed)s: seeds from $s on not run"
        break
    fi
    for r in "${ROWS[@]}"; do run_row "$r" "$s"; done
    if [ "$s" = "${SEEDS%% *}" ]; then
        for r in "${ROWS[@]}"; do time_row "$r"; done
    fi
done
log "runs done at $(elapsed)s"

# per-query medians (ms), every timed row side by side
{
    printf '%-5s' query
    for r in "${ROWS[@]}"; do [ -f "$TMP/$r.med" ] && printf ' %16s' "$r"; done
    echo
    for n in $(seq 1 22); do
        q=$(printf 'q%02d' "$n")
        printf '%-5s' "$q"
        for r in "${ROWS[@]}"; do
            [ -f "$TMP/$r.med" ] && printf ' %16s' "$(awk -v q="$q" '$1 == q {print $2}' "$TMP/$r.med")"
        done
        echo
    done
} >>"$LOG"

# ---- summary ----
mismatch=0 broken=0
{
    echo "device_dist: ${GPU%%;*} ($NGPU GPU); mpirun $(command -v mpirun >/dev/null && echo yes || echo no), mpicc $(command -v mpicc >/dev/null && echo yes || echo no); dkb_comm_mpi.so $([ -f "$BUILD/dkb_comm_mpi.so" ] && echo yes || echo no), dkb_comm_nccl.so $([ $HAVE_NCCL = 1 ] && echo yes || echo no); build $build_note"
    echo "SF $SF, --backend $BACKEND, seeds tried: $SEEDS; stores $S1 (1 partition) and $SP ($PARTS); NCCL_NVLS_ENABLE=0"
    printf '%-17s %-9s %-10s %-13s %s\n' row state "same/ran" "median sum ms" "note (vs: reference row)"
    for r in "${ROWS[@]}"; do
        bad=$((RAN[$r] - SAME[$r]))
        mismatch=$((mismatch + bad))
        [ "${STATE[$r]}" = failed ] && broken=$((broken + 1))
        printf '%-17s %-9s %-10s %-13s %s\n' "$r" "${STATE[$r]}" "${SAME[$r]}/${RAN[$r]}" "${MEDSUM[$r]}" \
            "${REF[$r]:+vs ${REF[$r]}: }$(echo "${NOTE[$r]}" | cut -c1-120)"
    done
    if [ "$mismatch" = 0 ] && [ "$broken" = 0 ]; then
        echo "result: OK: every output that ran equals its reference byte for byte; $(elapsed)s of runs (details.log: commands, per-query medians)"
    else
        echo "result: FAILED: $mismatch output(s) differ, $broken row(s) that must run failed; $(elapsed)s (details.log)"
    fi
} >"$SUM"
cat "$SUM" >>"$LOG"
cat "$SUM"
[ "$mismatch" = 0 ] && [ "$broken" = 0 ]
