# python_corpus.sh: `dkb eval --target python` (Python candidates over CPU
# torch, docs/harness.md "Python candidates") classifies the Python corpus:
# tests/candidates/python/honest (Q1 and Q6, full and core, valid: the answers are
# checked against the baseline on seed 0 and 5 random seeds, as always) and
# tests/candidates/python/adversarial/CASE (crash, recursion, never_ends,
# wrong_answer, unfilled_output, writes_input, import_os / subprocess /
# socket / ctypes, opens_file, dunder_escape, library_state, library_alias_state, module_cache,
# raises, syntax_error, bad_entry, bad_result, extra_threads): each directory evaluated on
# its own at SF 0.01 with one thread, every row of results.json of the class
# its EXPECTED file names (lib/corpus_results.py). Also: C files beside the
# Python ones are not rows with --target python, --target triton needs --backend cuda.
# Exits 77 (skipped) only when the interpreter the harness uses
# ($DKB_PYTHON, else /usr/bin/python3, else python3) cannot import torch and
# numpy; CI installs python3-torch (.ci/run).
# Environment: CASES="a b" runs only those case directories ("honest" is the
# honest one); KEEP_WORK=1 keeps $WORK.
source "$(dirname "$0")/lib/common.bash"

CAND="$(cd "$(dirname "$0")/../candidates/python" && pwd)"
PY="${DKB_PYTHON:-}"
[ -n "$PY" ] || { [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; } || PY=python3
if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
    echo "SKIP: $PY cannot import torch and numpy (install python3-torch python3-numpy)"
    exit 77
fi
# The README's Python example is the honest Q6: the core listing is the file,
# the full listing lines of the file.
python3 - "$CAND/../../../README.md" "$CAND/honest" <<'PY' || fail "README's Python Q6 example differs from tests/candidates/python/honest"
import sys
readme, honest = open(sys.argv[1]).read(), sys.argv[2]
i = readme.index("### Python candidates (`--target python`)")
b1 = readme.index("```python\n", i) + 10
core = readme[b1:readme.index("```\n", b1)]
b2 = readme.index("```python\n", b1) + 10
full = readme[b2:readme.index("```\n", b2)]
assert core == open(honest + "/q06.core.py").read(), "q06.core.py"
lines = open(honest + "/q06.full.py").read().splitlines()
extra = [l for l in full.splitlines() if l not in lines]
assert not extra, f"q06.full.py: {extra}"
PY
pass "README's Python example matches tests/candidates/python/honest/q06.{core,full}.py"
# and the Triton example, tests/candidates/triton/honest (text only: no GPU here)
python3 - "$CAND/../../../README.md" "$CAND/../triton/honest" <<'PY' || fail "README's Triton Q6 example differs from tests/candidates/triton/honest"
import sys
readme, honest = open(sys.argv[1]).read(), sys.argv[2]
i = readme.index("### Triton candidates (`--target triton`)")
b1 = readme.index("```python\n", i) + 10
core = readme[b1:readme.index("```\n", b1)]
b2 = readme.index("```python\n", b1) + 10
full = readme[b2:readme.index("```\n", b2)]
assert core == open(honest + "/q06.core.py").read(), "q06.core.py"
assert full in open(honest + "/q06.full.py").read(), "q06.full.py"
PY
pass "README's Triton example matches tests/candidates/triton/honest/q06.{core,full}.py"
# The static check on its own (the bridge's check_source, as the build step
# runs it): what passes (a Triton-shaped module, a local named like a denied
# builtin) and what is refused, with the line.
"$PY" -B - "$CAND/../../../src/harness/python" <<'PY' || fail "the bridge's static check"
import sys
sys.path.insert(0, sys.argv[1])
import py_bridge as b
F = "def full(db, params, env):\n"
cases = [
    (F + "    input = 1\n    return input\n", 0, ""),
    ("import torch\nimport triton\nimport triton.language as tl\n@triton.jit\n"
     "def k(x_ptr, n, BLOCK: tl.constexpr):\n    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
     "    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)\n" + F + "    k[(1,)](db, 1, BLOCK=128)\n", 0, ""),
    ("from __future__ import annotations\nimport math\nimport numpy as np\nfrom typing import Dict\n" + F + "    pass\n", 0, ""),
    (F + "    return open('x')\n", 3, "line 2: use of 'open'"),
    ("import torch\n" + F + "    return torch.os\n", 3, "line 3: access to 'os'"),
    ("from torch import os\n" + F + "    pass\n", 3, "import of 'os' from torch"),
    ("import numpy.ctypeslib\n" + F + "    pass\n", 3, "import of 'numpy.ctypeslib'"),
    ("import torch.utils.cpp_extension\n" + F + "    pass\n", 3, "import of 'torch.utils.cpp_extension'"),
    ("import importlib\n" + F + "    pass\n", 3, "import of 'importlib'"),
    ("from . import x\n" + F + "    pass\n", 3, "relative import"),
    (F + "    x = getattr(db, 'a')\n", 3, "use of 'getattr'"),
    (F + "    return db._t\n", 3, "access to attribute '_t'"),
    (F + "    return ().__class__\n", 3, "access to attribute '__class__'"),
    (F + "    return __builtins__\n", 3, "use of '__builtins__'"),
    ("import numpy as np\n" + F + "    np.cache = 1\n", 3, "assignment into 'np'"),
    ("import torch\n" + F + "    torch.Tensor.x = 1\n", 3, "assignment into 'torch'"),
    (F + "    exec('1')\n", 3, "use of 'exec'"),
    (F + "    return db.f_back\n", 3, "access to 'f_back'"),
    # a kept compiled Triton kernel's shared parts (state there would survive a call)
    ("import triton\n" + F + "    ck = k[(1,)](db)\n    ck.src.constants['x'] = 1\n", 3, "line 4: access to 'src'"),
    ("import triton\n" + F + "    ck = k[(1,)](db)\n    ck.run.x = 1\n", 3, "line 4: access to 'run'"),
    ("def core(inputs, outputs, env):\n    pass\n", 5, "does not define full()"),
    (F + "    return (\n", 4, "line 2"),
]
bad = 0
for src, want, text in cases:
    st, msg = b.check_source(src, "full")
    if st != want or text not in msg:
        print(f"FAIL: {src!r}: got {st} {msg!r}, expected {want} {text!r}", file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
pass "the static check passes what the ABI allows and names what it refuses"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

# ---- options ----
expect_fail 2 "--target rust: expected python" -- "$DKB" eval "$CAND/honest" --data "$S" --target rust
expect_fail 2 "--target triton: the CUDA backend's" -- \
    "$DKB" eval "$CAND/honest" --data "$S" --target triton --backend cpu --out "$WORK/cuda"
help=$("$DKB" eval --help) && grep -q -- "--target T" <<<"$help" || fail "eval --help lists --target"
pass "--target: errors and --help"

# C candidates beside the Python ones are not rows (and the .py files are not
# rows without --target python)
mix="$WORK/mix"
mkdir -p "$mix"
cp "$CAND/honest/q06.core.py" "$mix/"
cp "$CAND/../honest/q06.full.c" "$mix/"
cp "$CAND/honest/q06.core.py" "$mix/q6.core.py"
"$DKB" eval "$mix" --data "$S" --target python --out "$WORK/mix-out" --seeds 1 --min-seconds 0 --min-runs 2 \
    --format json -q >"$WORK/mix.json" 2>"$WORK/mix.stderr" || fail "eval --target python on a mixed directory"
python3 - "$WORK/mix.json" <<'PY' || fail "mixed directory: rows or ignored files"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [(r["query"], r["mode"], r["class"]) for r in d["candidates"]]
assert rows == [("q06", "core", "ok")], rows
assert d["ignored_files"] == ["q6.core.py"], d["ignored_files"]
PY
"$DKB" eval "$mix" --data "$S" --out "$WORK/mix-c" --seeds 1 --min-seconds 0 --min-runs 2 --mode full \
    --format json -q >"$WORK/mix-c.json" 2>/dev/null || fail "eval (C) on a mixed directory"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [(r['query'],r['mode']) for r in d['candidates']]==[('q06','full')], d['candidates']; assert d['ignored_files']==[], d['ignored_files']" \
    "$WORK/mix-c.json" || fail "the C evaluation took Python files"
pass "--target python takes qNN.<mode>.py only; the C evaluation ignores them"

failures=0
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --target python --data "$S" --out "$out" --seeds 5 --min-seconds 0.2 --mem-limit 2 -q "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")" >&2
        failures=$((failures + 1))
        return
    fi
    python3 "$(dirname "$0")/lib/corpus_results.py" "$out/results.json" "$expected" "$dir" .py ||
        failures=$((failures + 1))
}

cases=$(echo ${CASES:-honest $(cd "$CAND/adversarial" && ls)})
for c in $cases; do
    if [ "$c" = honest ]; then
        eval_case honest "$CAND/honest" "$(cat "$CAND/honest/EXPECTED")" --threads 1
        continue
    fi
    d="$CAND/adversarial/$c"
    [ -f "$d/EXPECTED" ] || fail "$d/EXPECTED missing"
    extra=(--threads 1)
    [ -f "$d/ARGS" ] && read -r -a extra <"$d/ARGS"
    eval_case "$c" "$d" "$(cat "$d/EXPECTED")" "${extra[@]}"
done

[ "$failures" = 0 ] || fail "$failures case(s) misclassified (KEEP_WORK=1 keeps $WORK)"
pass "Python corpus classified as expected: $cases"
