# torch_peer.sh: the PyTorch peer (bench/torch/run.py, all 22 TPC-H plans)
# gives dkb's answers at SF 0.01: torch on the CPU (--device cpu, eager) and
# the same plans on numpy (--backend numpy); every query must be "ok"
# (strings, INT and DECIMAL cells exactly equal, FLOAT within 1e-9 rel).
# Also checks that run.py's comparison tells a one-unit DECIMAL difference,
# a missing row and a changed string apart from equal answers (ties in any
# order pass).
#
# Exits 77 (CTest: skipped) only when no python3 can import torch and numpy
# (Debian: apt-get install python3-torch python3-numpy); any differing or
# failing query is a failure. About 5 s.
source "$(dirname "$0")/lib/common.bash"

RUN=$(cd "$(dirname "$0")/../../bench/torch" && pwd)/run.py
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the source tree
PY=""
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c "import torch, numpy" 2>/dev/null; then PY=$py; break; fi
done
if [ -z "$PY" ]; then
    echo "skip: no python3 here imports torch and numpy (apt-get install python3-torch python3-numpy)"
    exit 77
fi
pass "$PY imports torch $("$PY" -c 'import torch; print(torch.__version__)')"

# ---- the comparison itself ----
"$PY" - "$RUN" <<'EOF' || fail "run.py's rows_ok does not tell differing answers apart"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("run", sys.argv[1])
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
dec4 = [{"type": "STRING"}, {"type": "DECIMAL", "scale": 4}]
assert run.rows_ok([["A", 123456789.0123]], [["A", 123456789.0123]], dec4) == ""
assert run.rows_ok([["A", 123456789.0124]], [["A", 123456789.0123]], dec4) != ""          # one unit of scale 4
assert run.rows_ok([["A", 10385578376.585468]], [["A", 10385578376.585466]],
                   [{"type": "STRING"}, {"type": "DECIMAL", "scale": 6}]) != ""           # one unit, above 2^53
assert run.rows_ok([["B", 1.0]], [["A", 1.0]], dec4) != ""                                 # a string
assert run.rows_ok([["A", 1.0]], [["A", 1.0], ["B", 2.0]], dec4) != ""                     # a row
assert run.rows_ok([["B", 1.0], ["A", 1.0]], [["A", 1.0], ["B", 1.0]], dec4) == ""          # ORDER BY ties
assert run.rows_ok([[7]], [[8]], [{"type": "INT"}]) != ""
assert run.rows_ok([[0.1 + 0.2]], [[0.3]], [{"type": "FLOAT"}]) == ""                      # FLOAT: last bits
assert run.rows_ok([[0.3001]], [[0.3]], [{"type": "FLOAT"}]) != ""
assert run.rows_ok([[None]], [[0.0]], [{"type": "DECIMAL", "scale": 2}]) != ""             # NULL is not 0
EOF
pass "rows_ok: equal answers pass, a unit of a DECIMAL, a string, a row, an INT differ"

# ---- all 22 against dkb ----
S=$WORK/sf0.01
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 --out $S failed"
check_run() {   # check_run LABEL JSON ARGS...: run.py exits 0 and its JSON has 22 "ok"
    local label=$1 json=$2 rc=0
    shift 2
    "$PY" -W ignore "$RUN" --store "$S" --dkb "$DKB" --reps 1 --warmup 0 --no-compile --json "$json" "$@" \
        >"$WORK/$label.out" 2>&1 || rc=$?
    local bad
    bad=$("$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = d['results']
bad = ['%s: %s' % (x['query'], x['check']) for x in r if x['check'] != 'ok']
if len(r) != 22: bad.append('%d results, not 22' % len(r))
print('; '.join(bad))" "$json" 2>&1) || bad="no JSON from run.py (exit $rc): $(tail -3 "$WORK/$label.out" | tr '\n' ' ')"
    [ -z "$bad" ] || fail "$label: $bad"
    [ "$rc" = 0 ] || fail "$label: run.py exited $rc: $(tail -3 "$WORK/$label.out" | tr '\n' ' ')"
    pass "$label: 22 of 22 equal to dkb run QUERY --format json at SF 0.01"
}
check_run torch-cpu "$WORK/torch.json" --device cpu
check_run numpy "$WORK/numpy.json" --backend numpy
