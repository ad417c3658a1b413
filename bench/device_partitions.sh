#!/usr/bin/env bash
# device_partitions.sh: issue 15 (partitions beyond one GPU's memory) on a
# GPU machine, in one call of about 4 minutes on 16 cores and an H200,
# after the build exists (bench/device_check.sh makes build-device/):
#   1 goldens  tests/cli/partitions.sh --backend cuda: SF 0.1, 8 partitions,
#              each query under its resident tables + 2 and + 1 of its
#              largest partition (read from its too-small error), seeds 0..5:
#              byte-identical to the unpartitioned CUDA run and equal to the
#              goldens (264 answers)
#   2 big      SF 10 (--sf-big), 8 partitions (/tmp/dkb-sf10p8, generated once):
#              each query on the backend under resident + 2 x its largest
#              partition (so at least 4 runs of partitions), --format csv
#              compared byte for byte with the unpartitioned CPU run on the
#              same store and with the unpartitioned run on the backend; the
#              query times (median of --runs) partitioned vs unpartitioned
#   3 bench    dkb bench --mem-budget on that store: on cuda the 22 streaming
#              experts, all valid (pass rate 100%); then, bounded, dkb bench
#              --backend cpu --mem-budget on a few queries (--bench-queries)
#              of the same store
#   4 stream   (cuda) the streaming figures on that store: per query under
#              --budget (default 1G; a query it cannot hold says so) and
#              under resident + 2 x largest partition: the query's median
#              ms, bytes copied, loads, device buffers, the copies' device
#              ms, compute ms, ms waited for a copy, the transfer floor
#              (bytes over the pinned H2D bandwidth measured in the same
#              process) and time/floor; csv --expect'ed against step 2's
#              CPU csv (or a fresh one)
# Out (--out DIR, default $OUT or ./device-partitions): log.txt (everything)
# and summary.txt (printed last). Exit 0 when every step passed, 1 on any
# mismatch or failure, 2 on a bad command line.
#   bench/device_partitions.sh                          # on the GPU machine
#   bench/device_partitions.sh --backend cpu --dkb build/dkb --sf-big 1   # a CPU test
# Options: --dkb PATH (default build-device/dkb), --out DIR, --backend cuda|cpu,
#   --sf-big SF (default 10; 0 skips steps 2 and 3), --store DIR (default
#   /tmp/dkb-sf<SF>p8), --jobs N (step 1's queries at once; default 8 on cuda, 1 on
#   cpu), --runs N (timed runs, default 3), --budget SIZE (step 3's, default 1G),
#   --bench-queries LIST (step 3's CPU bench, default q06,q13; none skips it),
#   --steps LIST (default 1,2,3,4; 4 only on cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# what the machine lacks (cJSON, libduckdb), carried in .devdeps/ (tools/devdeps.sh)
[ -f "$ROOT/.devdeps/env.sh" ] && source "$ROOT/.devdeps/env.sh"
DKB=$ROOT/build-device/dkb
OUTDIR=${OUT:-$ROOT/device-partitions}
BACKEND=cuda
SFB=10
STORE=
JOBS=
RUNS=3
BUDGET3=1G
BENCHQ=q06,q13
STEPS=1,2,3,4
while [ $# -gt 0 ]; do
    case $1 in
    --dkb) DKB=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --sf-big) SFB=$2; shift 2 ;;
    --store) STORE=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --budget) BUDGET3=$2; shift 2 ;;
    --bench-queries) BENCHQ=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_partitions.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $BACKEND in cpu|cuda) ;; *) echo "device_partitions.sh: --backend $BACKEND: cuda or cpu" >&2; exit 2 ;; esac
[ -n "$JOBS" ] || { [ "$BACKEND" = cuda ] && JOBS=8 || JOBS=1; }
[ "$SFB" = 0 ] && STEPS=${STEPS//[234]/}
[ "$BACKEND" = cuda ] || STEPS=${STEPS//4/}
[ -n "$STORE" ] || STORE=/tmp/dkb-sf${SFB}p8
case $DKB in /*) ;; *) DKB=$ROOT/$DKB ;; esac
[ -x "$DKB" ] || { echo "device_partitions.sh: $DKB: no dkb binary (build first, or --dkb PATH)" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 1
LOG=$OUTDIR/log.txt SUM=$OUTDIR/summary.txt
: >"$LOG"; : >"$SUM"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dkb-devpart.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
NPROC=$(nproc)
status=0
T0=$(date +%s)
say() { echo "$*" >>"$SUM"; echo "$*" >>"$LOG"; }
log() { echo "$*" >>"$LOG"; }
since() { echo $(( $(date +%s) - $1 )); }
has() { [[ ",$STEPS," == *",$1,"* ]]; }
say "device_partitions: backend $BACKEND, $(basename "$DKB") $DKB, $NPROC cores, $(date -u +%FT%TZ)"

# ---- step 1: the goldens with a small budget (tests/cli/partitions.sh) ----
step1() {
    local t rc=0; t=$(date +%s)
    log "== step 1: tests/cli/partitions.sh --backend $BACKEND --jobs $1"
    DKB=$DKB DKB_TESTDATA=$ROOT/tests/data DKB_TMP=$TMP/step1 \
        bash "$ROOT/tests/cli/partitions.sh" --backend "$BACKEND" --jobs "$1" >"$TMP/step1.log" 2>&1 || rc=$?
    cat "$TMP/step1.log" >>"$LOG"
    S1RC=$rc S1T=$(since "$t")
}
if has 1; then
    step1 "$JOBS"
    if [ "$S1RC" != 0 ] && [ "$JOBS" != 1 ] && grep -qi "busy or unavailable\|exclusive" "$TMP/step1.log"; then
        log "(step 1 again one query at a time: the GPU refused processes side by side)"
        step1 1
    fi
    if [ "$S1RC" = 0 ]; then
        say "1 goldens   ok     ${S1T}s  264 of 264 answers (22 queries x 6 seeds x 2 budgets, SF 0.1, 8 partitions) partitioned = unpartitioned = golden"
    else
        status=1
        [ "$S1RC" = 77 ] && why="no GPU: $(grep -m1 '^skip:' "$TMP/step1.log")" ||
            why="$(grep -c '^FAIL' "$TMP/step1.log") FAIL lines; first: $(grep -m1 '^FAIL' "$TMP/step1.log" | cut -c1-150)"
        say "1 goldens   FAILED ${S1T}s  exit $S1RC: $why"
    fi
fi

# ---- step 2: SF big, 8 partitions, each query forced partitioned ----
qms() { sed -n "s/^$1 time: .*query median \([0-9.]*\) ms.*/\1/p" "$2" | head -1; }
if has 2 || has 3 || has 4; then
    t=$(date +%s)
    if [ ! -f "$STORE/manifest.json" ]; then
        if ! "$DKB" gen --sf "$SFB" --partitions 8 --out "$STORE" -j "$NPROC" -q --force >>"$LOG" 2>&1; then
            say "2 gen       FAILED $(since "$t")s  dkb gen --sf $SFB --partitions 8 --out $STORE"; status=1; STEPS=1
        fi
    fi
    # the store's own partition count (8 when generated here; --store may name another)
    NPART=$(python3 -c 'import json,sys; print(next(len(t["partitions"]) for t in json.load(open(sys.argv[1]))["tables"] if t["name"] == "lineitem"))' \
        "$STORE/manifest.json" 2>/dev/null || echo "?")
    { has 2 || has 3 || has 4; } && say "  store     $STORE (SF $SFB, $NPART partitions): $(since "$t")s ($(du -sh "$STORE" | cut -f1))"
fi
if has 2; then
    t=$(date +%s)
    log "== step 2: SF $SFB, $NPART partitions: partitioned $BACKEND vs unpartitioned cpu and $BACKEND"
    printf '%-5s %-11s %-10s %-5s %-5s %10s %10s %7s\n' query budget runs =cpu =full full_ms part_ms part/full >"$TMP/table"
    nok=0 napprox=0 nbad=0 sumf=0 sump=0
    NV=(--no-verify --data "$STORE")  # just generated (or generated by this script before)
    for n in $(seq 1 22); do
        q=$(printf 'q%02d' "$n")
        verdict=ok note=
        # the budget: resident + 2 x the largest partition, from the too-small error
        err=$("$DKB" run "$q" --backend cpu "${NV[@]}" --mem-budget 1 2>&1 >/dev/null)
        re="\(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
        if [[ $err =~ $re ]]; then budget=$((BASH_REMATCH[2] + 2 * BASH_REMATCH[4])); else
            budget=; verdict=FAIL note="no too-small error: $(echo "$err" | head -1 | cut -c1-100)"; fi
        rc1=0 rc2=0 rc3=0
        "$DKB" run "$q" --backend cpu "${NV[@]}" --format csv >"$TMP/$q.cpu.csv" 2>"$TMP/$q.cpu.err" || rc1=$?
        "$DKB" run "$q" --backend "$BACKEND" "${NV[@]}" --format csv --runs "$RUNS" >"$TMP/$q.full.csv" \
            2>"$TMP/$q.full.err" || rc2=$?
        if [ -n "$budget" ]; then
            # --expect the CPU's csv: equal within the goldens' tolerance (floats 1e-9)
            "$DKB" run "$q" --backend "$BACKEND" "${NV[@]}" --format csv --runs "$RUNS" --mem-budget "$budget" \
                --expect "$TMP/$q.cpu.csv" >"$TMP/$q.part.csv" 2>"$TMP/$q.part.err" || rc3=$?
        fi
        cat "$TMP/$q.full.err" "$TMP/$q.part.err" 2>/dev/null | grep -v '^$' >>"$LOG"
        runs=$(sed -n "s/^dkb run: $q partitioned: \([0-9]*\) partitions in \([0-9]*\) runs\{0,1\} per pass, \([0-9]*\) pass.*/\2x\3/p" "$TMP/$q.part.err" 2>/dev/null)
        fms=$(qms "$q" "$TMP/$q.full.err") pms=$(qms "$q" "$TMP/$q.part.err" 2>/dev/null)
        ecpu=- efull=-
        if [ "$verdict" = ok ]; then
            if [ "$rc1" != 0 ] || [ "$rc2" != 0 ] || [ "$rc3" != 0 ]; then
                verdict=FAIL
                note="exit cpu $rc1, full $rc2, partitioned $rc3: $(cat "$TMP/$q.cpu.err" "$TMP/$q.full.err" "$TMP/$q.part.err" | grep -m1 'error' | cut -c1-120)"
            fi
            cmp -s "$TMP/$q.part.csv" "$TMP/$q.cpu.csv" && ecpu=yes || ecpu=no
            cmp -s "$TMP/$q.part.csv" "$TMP/$q.full.csv" && efull=yes || efull=no
            [ -s "$TMP/$q.cpu.csv" ] || { verdict=FAIL; note=${note:-"empty csv"}; }
            if [ -z "$runs" ] && [ "$verdict" = ok ]; then verdict=FAIL note="not partitioned: $(head -1 "$TMP/$q.part.err")"; fi
            # partitioned must be byte for byte the unpartitioned run on the same
            # backend; against the CPU byte equality is expected too, and a
            # difference within the tolerance (--expect passed) is flagged '~'
            if [ "$verdict" = ok ] && [ "$efull" = no ]; then verdict=FAIL note="partitioned csv differs from the unpartitioned $BACKEND run"; fi
            if [ "$verdict" = ok ] && [ "$ecpu" = no ]; then verdict="ok~" note="differs from cpu bytes within 1e-9 (the unpartitioned $BACKEND run too)"; fi
        fi
        case $verdict in ok) nok=$((nok + 1)) ;; ok~) napprox=$((napprox + 1)) ;;
        *) nbad=$((nbad + 1)); [ -n "${first:-}" ] || first="$q: $note" ;; esac
        ratio=-
        if [ -n "$fms" ] && [ -n "$pms" ]; then
            ratio=$(awk -v a="$pms" -v b="$fms" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')
            sumf=$(awk -v a="$sumf" -v b="$fms" 'BEGIN { print a + b }') sump=$(awk -v a="$sump" -v b="$pms" 'BEGIN { print a + b }')
        fi
        printf '%-5s %-11s %-10s %-5s %-5s %10s %10s %7s %s %s\n' "$q" "${budget:--}" "${runs:--}" "$ecpu" "$efull" \
            "${fms:--}" "${pms:--}" "$ratio" "$verdict" "$note" >>"$TMP/table"
    done
    cat "$TMP/table" >>"$LOG"
    [ "$nbad" = 0 ] || status=1
    v=ok; [ "$nbad" = 0 ] || v=FAILED
    say "2 big       $(printf '%-6s' "$v") $(since "$t")s  SF $SFB p$NPART on $BACKEND, budget resident + 2 x largest partition: $nok of 22 byte-equal to cpu, $napprox within 1e-9 only, $nbad failed${first:+ (first: ${first:0:120})}; query ms summed: unpartitioned $sumf, partitioned $sump (median of $RUNS)"
    # the table in the summary, 3 queries a line: runs of partitions x passes,
    # byte-equal to cpu/to the unpartitioned run, ms unpartitioned>partitioned
    awk 'NR > 1 { printf "%s %s %s/%s %s>%s %s\n", $1, $3, $4, $5, $6, $7, $9 }' "$TMP/table" |
        paste -d'|' - - - | sed 's/|*$//; s/|/  |  /g; s/^/  /' >>"$SUM"
    say "  (per query: runs of partitions x passes, csv byte-equal to cpu/to unpartitioned $BACKEND, ms unpartitioned>partitioned)"
fi

# ---- step 3: dkb bench --mem-budget ----
if has 3; then
    t=$(date +%s)
    log "== step 3: dkb bench --backend $BACKEND --mem-budget $BUDGET3 --sf $SFB --data $STORE"
    rc=0
    timeout 120 "$DKB" bench --backend "$BACKEND" --mem-budget "$BUDGET3" --sf "$SFB" --data "$STORE" --no-verify \
        --quick --seeds 1 -q --queries "$([ "$BACKEND" = cuda ] && echo all || echo "$BENCHQ")" \
        --out "$TMP/bench-$BACKEND" >"$TMP/b1.out" 2>"$TMP/b1.err" || rc=$?
    cat "$TMP/b1.out" "$TMP/b1.err" >>"$LOG"
    if [ "$BACKEND" = cuda ]; then
        pass=$(grep -m1 '^pass rate' "$TMP/b1.out")
        if [ "$rc" = 0 ] && [[ "$pass" == "pass rate 100.0%"* ]]; then
            say "3 bench     ok     $(since "$t")s  cuda --mem-budget $BUDGET3: $pass; $(grep -m1 '^overall' "$TMP/b1.out")"
        else
            status=1
            say "3 bench     FAILED $(since "$t")s  cuda --mem-budget $BUDGET3: exit $rc, ${pass:-no pass rate}: $(tail -2 "$TMP/b1.err" | tr '\n' ' ' | cut -c1-140)"
        fi
    fi
    if [ "$BENCHQ" != none ]; then
        if [ "$BACKEND" = cuda ]; then
            t=$(date +%s)
            rc=0
            timeout 150 "$DKB" bench --backend cpu --mem-budget "$BUDGET3" --sf "$SFB" --data "$STORE" --no-verify \
                --quick --seeds 1 -q --queries "$BENCHQ" --out "$TMP/bench-cpu" >"$TMP/b2.out" 2>"$TMP/b2.err" || rc=$?
            cat "$TMP/b2.out" "$TMP/b2.err" >>"$LOG"
        else
            cp "$TMP/b1.out" "$TMP/b2.out"
        fi
        line=$(python3 - "$TMP/bench-cpu/results.json" <<'PY' 2>&1
import json, sys
try:
    qs = json.load(open(sys.argv[1]))["bench"]["queries"]
except Exception as e:
    print("FAIL no results.json (%s)" % e); sys.exit()
bad = [q["query"] for q in qs if q["class"] != "ok" or not q.get("partitioned")]
rows = ["%s %s %s runs %.2fx" % (q["query"], q["class"], q.get("baseline_runs"), q.get("speedup") or 0) for q in qs]
print(("ok " if not bad else "FAIL ") + "; ".join(rows)
      + ("" if not bad else "  (not ok or not partitioned: %s)" % ",".join(bad)))
PY
)
        [ "$BACKEND" = cuda ] || [ "$rc" = 0 ] || line="FAIL exit $rc: $(head -1 "$TMP/b1.err")"
        v=${line%% *}; [ "$v" = ok ] || { v=FAILED; status=1; }
        say "3 bench-cpu $(printf '%-6s' "$v") $(since "$t")s  cpu --mem-budget $BUDGET3 $BENCHQ: ${line#* }"
    fi
fi
# ---- step 4: the streaming figures (cuda) ----
if has 4; then
    t=$(date +%s)
    log "== step 4: streaming on $BACKEND, SF $SFB p$NPART: --mem-budget $BUDGET3 and resident + 2 x largest"
    printf '%-5s %-12s %6s %9s %12s %5s %3s %9s %9s %9s %9s %9s %8s %s\n' query budget runs query_ms copied_bytes \
        loads buf copy_ms comp_ms wait_ms pass_ms floor_ms t/floor note >"$TMP/table4"
    n4=0 bad4=0 tq=0 tf=0
    NV=(--no-verify --data "$STORE")
    re="\(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
    for n in $(seq 1 22); do
        q=$(printf 'q%02d' "$n")
        [ -s "$TMP/$q.cpu.csv" ] || "$DKB" run "$q" --backend cpu "${NV[@]}" --format csv >"$TMP/$q.cpu.csv" 2>/dev/null
        err=$("$DKB" run "$q" --backend "$BACKEND" "${NV[@]}" --mem-budget 1 2>&1 >/dev/null)
        b2=; [[ $err =~ $re ]] && b2=$((BASH_REMATCH[2] + 2 * BASH_REMATCH[4]))
        for budget in "$BUDGET3" $b2; do
            rc=0
            "$DKB" run "$q" --backend "$BACKEND" "${NV[@]}" --format csv --runs "$RUNS" --mem-budget "$budget" \
                --expect "$TMP/$q.cpu.csv" >/dev/null 2>"$TMP/$q.s4.err" || rc=$?
            grep -v '^$' "$TMP/$q.s4.err" >>"$LOG"
            ms=$(qms "$q" "$TMP/$q.s4.err")
            runs=$(sed -n "s/^dkb run: $q partitioned: [0-9]* partitions in \([0-9]*\) runs\{0,1\} per pass, \([0-9]*\) pass.*/\1x\2/p" "$TMP/$q.s4.err")
            l=$(sed -n "s/^dkb run: $q streamed: \([0-9]*\) bytes in \([0-9]*\) loads\{0,1\} through \([0-9]*\) device buffers\{0,1\} of [0-9]* bytes; copies \([0-9.]*\) ms on the device (stager [0-9.]* ms), compute \([0-9.]*\) ms, waited \([0-9.]*\) ms, passes \([0-9.]*\) ms; pinned H2D [0-9.na]* GB\/s, transfer floor \([0-9.na]*\) ms/\1 \2 \3 \4 \5 \6 \7 \8/p" "$TMP/$q.s4.err")
            note=ok
            if [ "$rc" != 0 ]; then
                note="exit $rc: $(grep -m1 'error' "$TMP/$q.s4.err" | cut -c1-110)"
                grep -q "too small" "$TMP/$q.s4.err" && note="too small: $(grep -o 'needs at least [^ ]*' "$TMP/$q.s4.err")" || bad4=$((bad4 + 1))
            elif [ -z "$runs" ]; then note="fits (not partitioned)"
            elif [ -z "$l" ]; then note="FAIL: no streamed line"; bad4=$((bad4 + 1))
            fi
            read -r cb ld buf cp cm wt ps fl <<<"${l:-- - - - - - - -}"
            tf_=-
            if [ -n "$l" ] && [ -n "$ms" ]; then
                tf_=$(awk -v a="$ms" -v b="$fl" 'BEGIN { printf (b > 0 ? "%.2f" : "-"), a / b }')
                tq=$(awk -v a="$tq" -v b="$ms" 'BEGIN { print a + b }') tf=$(awk -v a="$tf" -v b="$fl" 'BEGIN { print a + b }')
                n4=$((n4 + 1))
            fi
            printf '%-5s %-12s %6s %9s %12s %5s %3s %9s %9s %9s %9s %9s %8s %s\n' "$q" "$budget" "${runs:--}" "${ms:--}" \
                "$cb" "$ld" "$buf" "$cp" "$cm" "$wt" "$ps" "$fl" "$tf_" "$note" >>"$TMP/table4"
        done
    done
    cat "$TMP/table4" >>"$LOG"
    [ "$bad4" = 0 ] || status=1
    v=ok; [ "$bad4" = 0 ] || v=FAILED
    say "4 stream    $(printf '%-6s' "$v") $(since "$t")s  SF $SFB p$NPART, --mem-budget $BUDGET3 and resident + 2 x largest: $n4 streamed runs, $bad4 failed; query ms summed $tq over transfer floors $tf"
    sed 's/^/  /' "$TMP/table4" >>"$SUM"
fi
say "total $(since "$T0")s; exit $status; log: $LOG"
cat "$SUM"
exit $status
