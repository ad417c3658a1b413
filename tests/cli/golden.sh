# golden.sh: the 22 TPC-H baseline plans give DuckDB's answers (the committed
# golden CSVs tests/answers/sf<SF>/qNN-s<S>.csv, made by
# tools/oracle/make-golden.sh) at SF 0.01 and SF 0.1 for seeds 0..5.
# Every one of the 2 x 6 x 22 answers must exist, be the one listed in
# tests/answers/MANIFEST, have been made from the SQL `dkb sql` prints now,
# and match `dkb run --expect`. Needs only dkb and the committed files.
source "$(dirname "$0")/lib/common.bash"

ANSWERS=$(cd "$(dirname "$0")/../answers" 2>/dev/null && pwd) || fail "tests/answers is missing"
MANIFEST="$ANSWERS/MANIFEST"
[ -f "$MANIFEST" ] || fail "$MANIFEST is missing (tools/oracle/make-golden.sh writes it)"
SFS="0.01 0.1"
SEEDS="0 1 2 3 4 5"
REGEN="regenerate with tools/oracle/make-golden.sh (docs/oracle.md)"

for sf in $SFS; do
    "$DKB" gen --sf "$sf" --out "$WORK/sf$sf" -q || fail "dkb gen --sf $sf failed"
done
pass "stores at SF ${SFS// /, SF }"

declare -A sql_sha csv_sha
while read -r file ssha csha _rows; do
    case $file in '#'*|'') continue ;; esac
    sql_sha[$file]=$ssha
    csv_sha[$file]=$csha
done <"$MANIFEST"

total=0 passed=0
failures=()
for sf in $SFS; do
    for s in $SEEDS; do
        for n in $(seq 1 22); do
            q=$(printf 'q%02d' "$n")
            f="sf$sf/$q-s$s.csv"
            total=$((total + 1))
            [ -f "$ANSWERS/$f" ] || { failures+=("$f: golden file missing; $REGEN"); continue; }
            [ -n "${sql_sha[$f]:-}" ] || { failures+=("$f: not in MANIFEST; $REGEN"); continue; }
            got=$(sha256sum <"$ANSWERS/$f" | cut -d' ' -f1)
            [ "$got" = "${csv_sha[$f]}" ] ||
                { failures+=("$f: differs from the CSV that make-golden.sh wrote (edited by hand?); $REGEN"); continue; }
            got=$("$DKB" sql "$q" --seed "$s" --sf "$sf" 2>"$WORK/sql.err" | sha256sum | cut -d' ' -f1) ||
                { failures+=("$f: dkb sql $q --seed $s --sf $sf failed: $(head -1 "$WORK/sql.err")"); continue; }
            [ "$got" = "${sql_sha[$f]}" ] ||
                { failures+=("$f: made from other SQL than \`dkb sql $q --seed $s --sf $sf\` prints now (stale golden); $REGEN"); continue; }
            rc=0
            out=$("$DKB" run "$q" --data "$WORK/sf$sf" --seed "$s" --expect "$ANSWERS/$f" 2>&1 >/dev/null) || rc=$?
            if [ "$rc" = 0 ]; then
                passed=$((passed + 1))
            else
                failures+=("$f: dkb run $q --seed $s at SF $sf exited $rc: $(printf '%s' "$out" | head -3 | tr '\n' ' ')")
            fi
        done
    done
done

[ "$total" = 264 ] || fail "checked $total answers, expected 264"
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
echo "golden: $passed of $total answers match DuckDB (SF ${SFS// /, SF }; seeds ${SEEDS// /,}; q01..q22), ${#failures[@]} failed"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} of $total golden answers differ"
pass "all $total answers match DuckDB"
