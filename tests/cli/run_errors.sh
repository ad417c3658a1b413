# run_errors.sh: `dkb run` and `dkb sql`: bad input gets one clear line and
# exit 2 (command line) or 1 (data, store, answers); good input prints the
# parameters, pure CSV, JSON, timing, and checks against golden CSVs.
source "$(dirname "$0")/lib/common.bash"

S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
"$DKB" gen --sf 0.01 --table nation,region --out "$WORK/small" -q
"$DKB" gen --sf 0.01 --part 1 --parts 2 --out "$WORK/slice" -q

# ---- command line (exit 2) ----
expect_fail 2 "run: unknown query 'q23' \(expected q01..q22 or 1..22\)" -- "$DKB" run q23 --data "$S"
expect_fail 2 "unknown query 'lineitem'" -- "$DKB" run lineitem --data "$S"
expect_fail 2 "run: missing QUERY" -- "$DKB" run --data "$S"
expect_fail 2 "run: missing --data STORE" -- "$DKB" run q06
expect_fail 2 "unexpected argument 'q07'" -- "$DKB" run q06 q07 --data "$S"
expect_fail 2 "q06: unknown parameter 'foo' \(parameters: date, discount, quantity\)" -- \
    "$DKB" run q06 --data "$S" --param foo=1
expect_fail 2 "q06: parameter override 'date' is not NAME=VALUE" -- "$DKB" run q06 --data "$S" --param date
expect_fail 2 "q06: parameter date: '1994-02-30' is not a date \(YYYY-MM-DD\)" -- \
    "$DKB" run q06 --data "$S" --param date=1994-02-30
expect_fail 2 "q06: parameter discount: '0.065' has more than 2 digits after the point" -- \
    "$DKB" run q06 --data "$S" --param discount=0.065
expect_fail 2 "q06: parameter quantity: 'many' is not an integer" -- "$DKB" run q06 --data "$S" --param quantity=many
expect_fail 2 "q06: parameter date given twice" -- \
    "$DKB" run q06 --data "$S" --param date=1994-01-01 --param date=1995-01-01
expect_fail 2 "q03: parameter segment: value longer than 47 bytes" -- \
    "$DKB" run q03 --data "$S" --param segment=$(printf 'x%.0s' {1..48})
expect_fail 2 "q08: nation 'ATLANTIS' is not a nation name" -- "$DKB" run q08 --data "$S" --param nation=ATLANTIS
# parameter errors come before the store is opened
expect_fail 2 "unknown parameter 'foo'" -- "$DKB" run q06 --data "$WORK/none" --param foo=1
expect_fail 2 "--param needs a single query" -- "$DKB" run all --data "$S" --param date=1994-01-01
expect_fail 2 "--format csv prints one query" -- "$DKB" run all --data "$S" --format csv
expect_fail 2 "--expect FILE needs a single query; use --expect-dir" -- "$DKB" run all --data "$S" --expect x.csv
expect_fail 2 "--expect-official FILE needs a single query" -- "$DKB" run all --data "$S" --expect-official x.out
expect_fail 2 "choose one of --expect" -- "$DKB" run q06 --data "$S" --expect a.csv --expect-dir d
expect_fail 2 "official answers are for the qualification parameters" -- \
    "$DKB" run q06 --data "$S" --seed 3 --expect-official x.out
expect_fail 2 "official answers are for the qualification parameters" -- \
    "$DKB" run q06 --data "$S" --param discount=0.05 --expect-official-dir d
expect_fail 2 "official answers are for SF 1; store .* is SF 0.01" -- \
    "$DKB" run q06 --data "$S" --expect-official x.out
expect_fail 2 "--seed -1: expected an integer from 0" -- "$DKB" run q06 --data "$S" --seed -1
expect_fail 2 "--seed 18446744073709551616: expected an integer" -- "$DKB" run q06 --data "$S" --seed 18446744073709551616
expect_fail 2 "--runs 0: expected an integer from 1" -- "$DKB" run q06 --data "$S" --runs 0
expect_fail 2 "--warmup -1: expected an integer from 0" -- "$DKB" run q06 --data "$S" --warmup -1
expect_fail 2 "--threads x: expected an integer" -- "$DKB" run q06 --data "$S" --threads x
expect_fail 2 "--backend gpu: expected cpu or cuda" -- "$DKB" run q06 --data "$S" --backend gpu
expect_fail 2 "--format yaml: expected table, json or csv" -- "$DKB" run q06 --data "$S" --format yaml

# ---- data, store, answers (exit 1) ----
expect_fail 1 "$WORK/none/manifest.json: cannot open" -- "$DKB" run q06 --data "$WORK/none"
mkdir -p "$WORK/bad" && echo '{"format": "parquet"}' >"$WORK/bad/manifest.json"
expect_fail 1 "manifest" -- "$DKB" run q06 --data "$WORK/bad"
expect_fail 1 "q06 prepare: store .*small has no table lineitem \(seed 0\)" -- "$DKB" run q06 --data "$WORK/small"
expect_fail 1 "store .*slice holds slice 1 of 2; queries need a whole data set" -- "$DKB" run q06 --data "$WORK/slice"
expect_fail 1 "q06 seed 0: $WORK/missing.csv: No such file" -- "$DKB" run q06 --data "$S" --expect "$WORK/missing.csv"

# ---- results ----
out=$("$DKB" run q06 --data "$S")
[ "$(echo "$out" | head -1)" = "q06 seed=0 date=1994-01-01 discount=0.06 quantity=24" ] || fail "q06 parameter line: $out"
echo "$out" | grep -q "^(1 row)$" || fail "q06 table: $out"
"$DKB" run 8 --data "$S" | head -1 | grep -qx "q08 seed=0 nation=BRAZIL region=AMERICA type='ECONOMY ANODIZED STEEL'" \
    || fail "q08 parameter line"
pass "parameter lines"

# CSV: header and rows only, even with --time (timing on stderr)
"$DKB" run q03 --data "$S" --format csv --time --runs 2 --warmup 0 >"$WORK/q03.csv" 2>"$WORK/q03.err"
[ "$(head -1 "$WORK/q03.csv")" = "l_orderkey,revenue,o_orderdate,o_shippriority" ] || fail "q03 csv header"
[ "$(wc -l <"$WORK/q03.csv")" = 11 ] || fail "q03 csv: $(wc -l <"$WORK/q03.csv") lines, expected 11"
grep -Eq "^q03 time: load [0-9.]+ ms; query median [0-9.]+ ms, min [0-9.]+, max [0-9.]+ \(2 runs after 0 warm-ups" \
    "$WORK/q03.err" || fail "q03 timing line: $(cat "$WORK/q03.err")"
pass "csv is pure, timing on stderr"

# JSON: query, seed, params, columns, rows, timing
json=$("$DKB" run q14 --data "$S" --seed 2 --format json --time --runs 1)
for key in '"query": "q14"' '"seed": 2' '"params": {"date": "' '"columns": [{"name": "promo_revenue"' \
    '"rows": [' '"timing": {"load_ms": ' '"runs": 1'; do
    echo "$json" | grep -qF "$key" || fail "q14 json lacks $key: $json"
done
json=$("$DKB" run all --data "$S" --format json)
[ "$(echo "$json" | grep -c '^{"query": "q')" = 22 ] && [ "$(echo "$json" | head -1)" = "[" ] &&
    [ "$(echo "$json" | tail -1)" = "]" ] || fail "all json: $(echo "$json" | head -3)"
pass "json"

# seeds and overrides change the parameters, deterministically
a=$("$DKB" run q06 --data "$S" --seed 5 | head -1)
b=$("$DKB" run q06 --data "$S" --seed 5 | head -1)
[ "$a" = "$b" ] && [ "$a" != "q06 seed=5 date=1994-01-01 discount=0.06 quantity=24" ] || fail "seed 5: $a / $b"
"$DKB" run q06 --data "$S" --seed 5 --param discount=0.05 | head -1 | grep -q "discount=0.05" || fail "override"
pass "seeds and overrides"

# goldens: a CSV written by dkb run (q03: exact types) matches; an edit is reported
mkdir -p "$WORK/answers"
cp "$WORK/q03.csv" "$WORK/answers/q03-s0.csv"
"$DKB" run q03 --data "$S" --format csv --seed 4 >"$WORK/answers/q03-s4.csv"
"$DKB" run q03 --data "$S" --expect "$WORK/q03.csv" | grep -q "^q03 seed=0 .*: ok, 10 rows match " || fail "--expect ok"
"$DKB" run q03 --data "$S" --seed 4 --expect-dir "$WORK/answers" | grep -q ": ok, 10 rows match .*q03-s4.csv" ||
    fail "--expect-dir seed 4"
awk -F, 'NR == 4 {$2 = $2 + 1} {print}' OFS=, "$WORK/q03.csv" >"$WORK/q03-bad.csv"
expect_fail 1 "q03 seed 0: .*q03-bad.csv: row 3, column revenue: got [0-9.]+, expected [0-9.]+" -- \
    "$DKB" run q03 --data "$S" --expect "$WORK/q03-bad.csv"
head -5 "$WORK/q03.csv" >"$WORK/q03-short.csv"
expect_fail 1 "q03-short.csv: got 10 rows, expected 4" -- "$DKB" run q03 --data "$S" --expect "$WORK/q03-short.csv"
sed '1s/revenue/rev/' "$WORK/q03.csv" >"$WORK/q03-name.csv"
expect_fail 1 "q03-name.csv:1: column 2 is named 'rev', expected 'revenue'" -- \
    "$DKB" run q03 --data "$S" --expect "$WORK/q03-name.csv"
expect_fail 1 "q03 seed 7: .*q03-s7.csv: No such file" -- "$DKB" run q03 --data "$S" --seed 7 --expect-dir "$WORK/answers"
# all with a partial golden set: every query reported, exit 1
rc=0
"$DKB" run all --data "$S" --expect-dir "$WORK/answers" >"$WORK/all.out" 2>"$WORK/all.err" || rc=$?
[ "$rc" = 1 ] || fail "all with missing goldens exited $rc"
grep -q "^q03 seed=0 .*: ok" "$WORK/all.out" && grep -q "^1 of 22 queries ok$" "$WORK/all.out" || fail "all summary"
[ "$(grep -c '^dkb run: error: q[0-9][0-9] seed 0: .*No such file' "$WORK/all.err")" = 21 ] || fail "all errors"
pass "goldens"

# ---- dkb sql ----
sql=$("$DKB" sql q06)
echo "$sql" | grep -q "l_shipdate >= date '1994-01-01'" && echo "$sql" | grep -q "between 0.06 - 0.01" &&
    echo "$sql" | grep -q "l_quantity < 24" || fail "sql q06: $sql"
"$DKB" sql 11 --sf 0.1 | grep -q "\* 0.0010000000" || fail "sql q11 --sf 0.1"
"$DKB" sql q16 --seed 3 --param "type=SMALL PLATED" | grep -q "p_type not like 'SMALL PLATED%'" || fail "sql q16 override"
"$DKB" sql q06 --seed 9 --params-json |
    grep -Eq '^\{"query": "q06", "seed": 9, "sf": 1, "params": \{"date": "199[3-7]-01-01", "discount": 0.0[2-9], "quantity": 2[45]\}\}$' ||
    fail "sql --params-json: $("$DKB" sql q06 --seed 9 --params-json)"
for n in $(seq 1 22); do
    left=$("$DKB" sql $n --seed 11 | grep -Eo "(^|[^:]):[a-z][a-z_0-9]*" || true)
    [ -z "$left" ] || fail "sql q$n: placeholder left: $left"
done
pass "sql"
expect_fail 2 "sql: unknown query 'q0'" -- "$DKB" sql q0
expect_fail 2 "sql: missing QUERY" -- "$DKB" sql
expect_fail 2 "q06: unknown parameter 'foo' \(parameters: date, discount, quantity\)" -- "$DKB" sql q06 --param foo=1
expect_fail 2 "--sf 0: scale factor must be positive" -- "$DKB" sql q11 --sf 0
expect_fail 2 "--sf x: not a number" -- "$DKB" sql q11 --sf x
expect_fail 2 "unexpected argument 'q07'" -- "$DKB" sql q06 q07

# (the help text is captured first: grep -q stops reading at its match,
# which under pipefail would fail the pipeline with SIGPIPE)
help=$("$DKB" run --help) && grep -q "usage: dkb run QUERY --data STORE" <<<"$help" || fail "run --help"
help=$("$DKB" sql --help) && grep -q "usage: dkb sql QUERY" <<<"$help" || fail "sql --help"
help=$("$DKB" --help) && grep -q "^  run " <<<"$help" || fail "--help lists run"
pass "help"
