# expert_specs.sh: the binding specs of the 44 experts checked without
# running them (tests/tools/expert_specs.py says what): above all that every
# input a CUDA expert binds is bound the same way by a C expert that CI runs,
# and that every expert's parameters and result columns are its query's, as
# dkb declares them at SF 0.01. A CUDA expert cannot run without a GPU; this
# catches a wrong name, kind or pointer count in one before it reaches one.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
python3 - "$DKB" "$S" "$WORK/decl.json" <<'PY' || fail "could not collect the queries' parameters and result columns"
import json, subprocess, sys
dkb, store, out = sys.argv[1:4]
decl = {}
for n in range(1, 23):
    q = "q%02d" % n
    run = json.loads(subprocess.run([dkb, "run", q, "--data", store, "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    params = json.loads(subprocess.run([dkb, "sql", q, "--params-json"], check=True, capture_output=True,
                                       text=True).stdout)["params"]
    decl[q] = {"params": params, "columns": run["columns"]}
json.dump(decl, open(out, "w"))
PY
python3 "$ROOT/tests/tools/expert_specs.py" "$ROOT" "$WORK/decl.json" || fail "expert binding specs"
pass "expert binding specs"

# the check fails on a wrong spec: copies of the tree with a wrong kind, a wrong name, a missing pointer
mkdir -p "$WORK/tree/src/kernels"
cp -r "$ROOT/src/kernels/cpu" "$ROOT/src/kernels/cuda" "$WORK/tree/src/kernels/"
broken() {   # broken SED WANT: q06.full.cu edited by SED must fail naming WANT
    rm -rf "$WORK/tree" && mkdir -p "$WORK/tree/src/kernels"
    cp -r "$ROOT/src/kernels/cpu" "$ROOT/src/kernels/cuda" "$WORK/tree/src/kernels/"
    sed -i "$1" "$WORK/tree/src/kernels/cuda/q06.full.cu"
    cmp -s "$ROOT/src/kernels/cuda/q06.full.cu" "$WORK/tree/src/kernels/cuda/q06.full.cu" && fail "could not apply $1"
    local out
    out=$(python3 "$ROOT/tests/tools/expert_specs.py" "$WORK/tree" "$WORK/decl.json") && fail "$1 passed the check"
    grep -qF "$2" <<<"$out" || fail "$1: the check did not say '$2': $out"
    pass "caught: $1"
}
broken 's/l_extendedprice:i64/l_extendedprice:f64/' 'lineitem "l_extendedprice:f64" is bound so by no C expert'
broken 's/l_shipdate:i32/l_shipdat:i32/' 'lineitem "l_shipdat:i32" is bound so by no C expert'
broken 's/date discount quantity/date discount quantity:str/' 'parameter "quantity:str"'
broken 's/ \&qty, \&price/ \&qty/' '4 entries but 3 pointers'
