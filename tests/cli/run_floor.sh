# run_floor.sh: the load and floor fields of `dkb run --time` on the CPU
# backend: each query's floor is the bytes of the distinct store columns its
# prepare reads (checked against the manifest's file sizes for q06 and for
# q13, which reads a TEXT column), --bandwidth turns it into ms, the JSON carries the
# same numbers, CSV output stays pure (timing on stderr), the CPU backend
# reports no resident load, and a bad --bandwidth is a usage error.
source "$(dirname "$0")/lib/common.bash"

S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

# floor_of TABLE:COL ...: bytes the manifest gives for these columns as
# dkb_tp_column reads them (data/codes file; TEXT: offsets + bytes files).
floor_of() {
    python3 - "$S/manifest.json" "$@" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
cols = {(t["name"], c["name"]): c for t in m["tables"] for c in t["columns"]}
total = 0
for tc in sys.argv[2:]:
    c = cols[tuple(tc.split(":"))]
    roles = ("offsets", "bytes") if c["type"] == "text" else ("data", "codes")
    total += sum(f["bytes"] for f in c["files"] if f["role"] in roles)
print(total)
EOF
}

# ---- table output: the floor line, exact bytes ----
check_floor() { # QUERY NCOLUMNS TABLE:COL...
    local q=$1 ncol=$2
    shift 2
    local want out
    want=$(floor_of "$@")
    out=$("$DKB" run "$q" --data "$S" --time --runs 1 --warmup 0)
    echo "$out" | grep -Eq "^$q floor: $ncol columns, $want bytes \([0-9.]+ MB\)$" ||
        fail "$q floor line: want $ncol columns, $want bytes; got: $(echo "$out" | grep "floor" || echo none)"
    echo "$out" | grep -q "^$q load:" && fail "$q: the CPU backend printed a resident load line"
    pass "$q floor: $ncol columns, $want bytes (manifest)"
}
check_floor q06 4 lineitem:l_shipdate lineitem:l_discount lineitem:l_quantity lineitem:l_extendedprice
check_floor q13 3 customer:c_custkey orders:o_custkey orders:o_comment

# ---- the existing time line is unchanged; --bandwidth adds floor ms ----
out=$("$DKB" run q06 --data "$S" --bandwidth 2.5 --runs 3 --warmup 0)
echo "$out" | grep -Eq "^q06 time: load [0-9.]+ ms; query median [0-9.]+ ms, min [0-9.]+, max [0-9.]+ \(3 runs after 0 warm-ups; cpu, [0-9]+ threads?\)$" ||
    fail "q06 time line changed: $out"
want=$(floor_of lineitem:l_shipdate lineitem:l_discount lineitem:l_quantity lineitem:l_extendedprice)
ms=$(python3 -c "print('%.4f' % ($want / 2.5e9 * 1e3))")
echo "$out" | grep -Eq "^q06 floor: 4 columns, $want bytes \([0-9.]+ MB\); $ms ms at 2\.5 GB/s; median/floor [0-9.]+$" ||
    fail "q06 floor with --bandwidth 2.5: want $ms ms; got: $(echo "$out" | grep floor)"
pass "--bandwidth implies --time and gives floor ms = bytes / bandwidth ($ms ms)"

# ---- JSON: the same numbers ----
"$DKB" run all --data "$S" --format json --runs 1 --warmup 0 --bandwidth 100 >"$WORK/all.json"
python3 - "$WORK/all.json" "$want" <<'EOF' || fail "JSON floor/load fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 22, len(d)
for x in d:
    t = x["timing"]
    for k in ("floor_columns", "floor_bytes", "floor_ms", "bandwidth_gbps", "median_over_floor", "resident_load"):
        assert k in t, (x["query"], k)
    assert t["floor_columns"] >= 1 and t["floor_bytes"] > 0, (x["query"], t)
    assert abs(t["floor_ms"] - t["floor_bytes"] / 100e9 * 1e3) <= 1e-6 + 1e-6 * t["floor_ms"], (x["query"], t)
    r = t["resident_load"]
    assert r["columns"] == 0 and r["bytes"] == 0 and r["seconds"] == 0, (x["query"], r)  # CPU maps in place
q06 = [x for x in d if x["query"] == "q06"][0]["timing"]
assert q06["floor_columns"] == 4 and q06["floor_bytes"] == int(sys.argv[2]), q06
EOF
pass "JSON: floor_columns, floor_bytes, floor_ms, resident_load for all 22"

# ---- all: the summary lines ----
out=$("$DKB" run all --data "$S" --runs 1 --warmup 0)
[ "$(echo "$out" | grep -c '^q[0-9][0-9] floor: ')" = 22 ] || fail "run all: not 22 floor lines"
echo "$out" | grep -Eq "^all floor: [0-9]+ bytes \([0-9.]+ MB\) summed over the 22 queries$" ||
    fail "run all: no 'all floor' line: $(echo "$out" | tail -3)"
pass "run all prints 22 floor lines and their sum"

# ---- CSV stays pure; timing and floor on stderr ----
"$DKB" run q13 --data "$S" --format csv >"$WORK/plain.csv"
"$DKB" run q13 --data "$S" --format csv --bandwidth 10 >"$WORK/timed.csv" 2>"$WORK/timed.err"
cmp -s "$WORK/plain.csv" "$WORK/timed.csv" || fail "q13 csv with --bandwidth differs from plain csv"
grep -q "^q13 floor: 3 columns" "$WORK/timed.err" || fail "q13 csv: floor line not on stderr: $(cat "$WORK/timed.err")"
pass "csv: rows on stdout unchanged, floor on stderr"

# ---- the counter restarts at each query (reset), not cumulative ----
out=$("$DKB" run all --data "$S" --runs 1 --warmup 0)
echo "$out" | grep -q "^q06 floor: 4 columns, $want bytes" || fail "q06 floor inside run all is not its own"
pass "floors are per query inside run all"

# ---- bad --bandwidth ----
expect_fail 2 "--bandwidth 0: expected GB/s above 0" -- "$DKB" run q06 --data "$S" --bandwidth 0
expect_fail 2 "--bandwidth -3: expected GB/s above 0" -- "$DKB" run q06 --data "$S" --bandwidth -3
expect_fail 2 "--bandwidth fast: not a number" -- "$DKB" run q06 --data "$S" --bandwidth fast
pass "run_floor"
