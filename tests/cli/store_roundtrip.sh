# store_roundtrip.sh: gen -> store -> export is byte-identical to dbgen;
# .tbl -> import -> store -> export is identical; info reports the store
# (table, JSON, CSV) and verifies its checksums.
source "$(dirname "$0")/lib/common.bash"

"$DKB" gen --sf 0.01 --out "$WORK/store" -q
"$DKB" export "$WORK/store" --format tbl --out "$WORK/exp" -q
check_hashes 0.01 "$WORK/exp"

"$DKB" gen --sf 0.01 --format tbl --out "$WORK/tbl" -q
"$DKB" import "$WORK/tbl" --out "$WORK/imp" --partitions 3 -j 2 -q
"$DKB" export "$WORK/imp" --format tbl --out "$WORK/exp2" -q
diff -r "$WORK/tbl" "$WORK/exp2" >/dev/null || fail ".tbl -> import -> export differs"
pass ".tbl -> store (3 partitions) -> .tbl is identical"

# The generated and the imported store hold the same column files.
for f in $(cd "$WORK/store" && find . -type f ! -name manifest.json); do
    cmp -s "$WORK/store/$f" "$WORK/imp/$f" || fail "gen and import stores differ in $f"
done
pass "generated store == imported store (every column file)"

"$DKB" info "$WORK/store" --verify >"$WORK/info.txt"
grep -q "every file matches its crc32" "$WORK/info.txt" || fail "info --verify did not verify"
grep -Eq "^lineitem +60175 rows" "$WORK/info.txt" || fail "info: lineitem rows"
grep -Eq "l_shipmode +dict +uint8" "$WORK/info.txt" || fail "info: l_shipmode type"
"$DKB" info "$WORK/imp" --format json >"$WORK/info.json"
python3 - "$WORK/info.json" <<'PY' || fail "info --format json"
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["tables"]}
assert d["scale_factor"] == 0.01, d["scale_factor"]
assert t["lineitem"]["rows"] == 60175 and t["orders"]["rows"] == 15000
lp, op = t["lineitem"]["partitions"], t["orders"]["partitions"]
assert len(lp) == 3 and len(op) == 3
for a, b in zip(lp, op):   # co-partitioned by orderkey
    assert (a["key_min"], a["key_max"]) == (b["key_min"], b["key_max"]), (a, b)
assert sum(p["rows"] for p in lp) == 60175
cols = {c["name"]: c for c in t["lineitem"]["columns"]}
assert cols["l_shipdate"]["dtype"] == "int32" and cols["l_extendedprice"]["dtype"] == "int64"
assert cols["l_returnflag"]["dict_size"] == 3
PY
pass "info --format json: rows, co-partitions, types"
"$DKB" info "$WORK/store" --format csv | head -1 | grep -q "^table,column,type,dtype,rows,bytes,dict_size$" || fail "info csv header"
pass "info --format csv"

# The store's files are plain arrays: check a few values with python.
python3 - "$WORK/store" <<'PY' || fail "raw column files"
import json, struct, sys, os
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
raw = open(os.path.join(d, "lineitem/l_shipdate.i32"), "rb").read()
days = struct.unpack("<i", raw[:4])[0]
import datetime
assert datetime.date(1970, 1, 1) + datetime.timedelta(days) == datetime.date(1996, 3, 13), days
PY
pass "raw column file readable without dkb (first l_shipdate is 1996-03-13)"

# Importing some tables only (as dbgen -T writes them): the scale factor is
# inferred from a table whose size it fixes; the store exports the same files.
"$DKB" gen --sf 0.01 --format tbl --table lineitem,orders,supplier --out "$WORK/some" -q
"$DKB" import "$WORK/some" --table lineitem,orders,supplier --partitions 2 --out "$WORK/some-st" -q
"$DKB" info "$WORK/some-st" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["scale_factor"] == 0.01, d["scale_factor"]
assert sorted(t["name"] for t in d["tables"]) == ["lineitem", "orders", "supplier"]
' || fail "partial import: info"
"$DKB" export "$WORK/some-st" --format tbl --out "$WORK/some-exp" -q
diff -r "$WORK/some" "$WORK/some-exp" >/dev/null || fail "partial import -> export differs"
pass "import --table (3 tables, 2 partitions) round trip"

# gen --partitions and import --partitions of the same data give the same
# partitions (orders/lineitem by orderkey, part/partsupp by partkey).
"$DKB" gen --sf 0.01 --partitions 3 --out "$WORK/gp3" -q
"$DKB" import "$WORK/tbl" --partitions 3 --out "$WORK/ip3" -q
for st in gp3 ip3; do "$DKB" info "$WORK/$st" --format json >"$WORK/$st.json"; done
python3 - "$WORK/gp3.json" "$WORK/ip3.json" <<'PY' || fail "gen and import partitions differ"
import json, sys
g, i = (json.load(open(f)) for f in sys.argv[1:3])
parts = lambda d: {t["name"]: t["partitions"] for t in d["tables"]}
assert parts(g) == parts(i), (parts(g), parts(i))
ps = parts(g)["partsupp"]
assert all(p["rows"] % 4 == 0 for p in ps), ps          # whole parts
for a, b in zip(parts(g)["part"], ps):                   # co-partitioned by partkey
    assert (a["key_min"], a["key_max"]) == (b["key_min"], b["key_max"]), (a, b)
PY
pass "gen and import partition alike (part/partsupp co-partitioned)"
