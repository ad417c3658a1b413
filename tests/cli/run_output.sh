# run_output.sh: what `dkb run` prints, byte for byte: CSV the same as
# DuckDB's golden CSVs (FLOATs with every digit, plain decimal), JSON with
# the same values and the parameters used, a parameter line that a shell
# reads back as the same parameters, the same result on 1 and 2 threads;
# and the bad inputs found in review (.tbl directory as --data, a seed with
# spaces, a parameter that is not UTF-8) get one clear line.
source "$(dirname "$0")/lib/common.bash"

ANSWERS=$(cd "$(dirname "$0")/../answers/sf0.01" && pwd) || fail "tests/answers/sf0.01 is missing"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
"$DKB" gen --sf 0.01 --format tbl --table nation,region --out "$WORK/tbl" -q

# ---- CSV: byte-identical to DuckDB (Q1 averages, Q8/Q14/Q17 floats included) ----
for s in 0 3; do
    for n in $(seq 1 22); do
        q=$(printf 'q%02d' "$n")
        "$DKB" run "$q" --data "$S" --seed "$s" --format csv >"$WORK/$q.csv"
        cmp -s "$WORK/$q.csv" "$ANSWERS/$q-s$s.csv" ||
            fail "$q seed $s: CSV differs from DuckDB's $ANSWERS/$q-s$s.csv: $(diff "$WORK/$q.csv" "$ANSWERS/$q-s$s.csv" | head -4 | tr '\n' ' ')"
        "$DKB" run "$q" --data "$S" --seed "$s" --format csv --threads 1 | cmp -s - "$WORK/$q.csv" ||
            fail "$q seed $s: --threads 1 and the default differ"
    done
done
pass "CSV of the 22 queries, seeds 0 and 3: the same bytes as DuckDB, on 1 thread and on all"
"$DKB" run q01 --data "$S" --format csv | grep -qE '^A,F,.*,25\.575154611454693,35785\.70930693735,0\.05008133906964238,14876$' ||
    fail "q01 seed 0: the averages are not DuckDB's doubles"

# ---- JSON: parses; numbers are the CSV's; parameters are those used ----
"$DKB" run q01 --data "$S" --format json --param delta=61 >"$WORK/q01.json"
python3 - "$WORK/q01.json" <<'EOF' || fail "q01 JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["params"] == {"delta": 61}, d["params"]
row = d["rows"][0]
assert repr(row[6]).startswith("25.5") and len(repr(row[6])) > 12, row  # every digit, not 6 decimals
EOF
"$DKB" run all --data "$S" --format json --seed 2 >"$WORK/all.json"
python3 - "$WORK/all.json" <<'EOF' || fail "run all JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["query"] for x in d] == ["q%02d" % n for n in range(1, 23)]
assert all("params" in x and "rows" in x for x in d)
EOF
pass "JSON of one query and of all 22 parses, with the parameters"

# ---- the parameter line reads back in a shell as the same parameters ----
for v in 'a$HOME*' "o'brien" '#x' 'two words' 'semi;colon' 'back\slash' 'é'; do
    line=$("$DKB" run q09 --data "$S" --param "color=$v" | head -1)
    eval "set -- ${line#q09 seed=0 }"
    [ "$#" = 1 ] && [ "$1" = "color=$v" ] || fail "parameter line '$line' reads back as '$*', not color=$v"
done
pass "string parameters are quoted for the shell where they need it"

# ---- bad input: one clear line ----
expect_fail 1 "$WORK/tbl holds .tbl files, not a store; make one with .dkb import" -- "$DKB" run q06 --data "$WORK/tbl"
expect_fail 2 "--seed  5: expected an integer" -- "$DKB" run q06 --data "$S" --seed " 5"
expect_fail 2 "--seed \+5: expected an integer" -- "$DKB" run q06 --data "$S" --seed +5
expect_fail 2 "q09: parameter color: the value is not valid UTF-8" -- "$DKB" run q09 --data "$S" --param "$(printf 'color=\xff\xfe')"
expect_fail 2 "q09: parameter color: the value is not valid UTF-8" -- "$DKB" sql q09 --param "$(printf 'color=\xed\xa0\x80')"
expect_fail 2 "--sf 0x10: not a number" -- "$DKB" sql q11 --sf 0x10
pass "run_output"
