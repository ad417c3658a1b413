# eval_corpus.sh: `dkb eval` classifies the candidate corpus correctly.
#
# tests/candidates/honest holds fused Q6 and Q1 candidates (core and full
# mode); tests/candidates/adversarial/CASE/ holds one or two candidates per
# case, each built to fail (or to try to cheat) in one way. Every case
# directory has an EXPECTED file: a verdict name (harness.h), optionally
# followed by "fast" (valid, counted: raw speedup > 1) or "slow" (valid, not
# counted: raw speedup < 1). Each directory is evaluated on its own with
# `dkb eval DIR --data SF0.01` and every row of results.json must have the
# expected class.
#
# Speed is checked at SF 0.01 with one thread (--threads 1): there the fused
# candidates are 3 to 20 times faster than the baseline and the slow ones
# (a plain scan 400 times over) 50 times slower, 5 times even against a
# sanitizer build's baseline: margins that hold on a loaded 2-core machine.
# The honest candidates are also run with 2 threads (their OpenMP paths;
# validity only: on a busy 2-core machine a 2-thread region can wait
# milliseconds for its second thread). Timing is short (--min-seconds 0.2);
# the infinite loop gets a 5 s timeout, every worker a 1 GB memory limit.
#
# Environment: CASES="a b" runs only those case directories ("honest" is
# the honest one); KEEP_WORK=1 keeps $WORK (results under $WORK/results);
# MEM_BUDGET=SIZE evaluates the full-mode files only, under --mem-budget
# SIZE (a budget the queries fit: the budget path on, nothing streamed; the
# streaming cases are tests/cli/eval_budget.sh's).
source "$(dirname "$0")/lib/common.bash"

CAND="$(cd "$(dirname "$0")/../candidates" && pwd)"

# The README's worked example is the honest Q6 candidate: the core-mode
# listing is the file, the full-mode listing lines of the file (less the
# rescale declaration that stands in for its body).
python3 - "$CAND/../../README.md" "$CAND/honest" <<'PY' || fail "README's Q6 example differs from tests/candidates/honest"
import sys
readme, honest = open(sys.argv[1]).read(), sys.argv[2]
def block(title):
    i = readme.index(title)
    b = readme.index("```c\n", i) + 5
    return readme[b:readme.index("```\n", b)]
assert block("### Worked example: Q6 in core mode") == open(honest + "/q06.core.c").read(), "q06.core.c"
full = open(honest + "/q06.full.c").read().splitlines()
extra = [l for l in block("### The same query in full mode").splitlines() if l not in full and "rescale" not in l]
assert not extra, f"q06.full.c: {extra}"
PY
pass "README's worked example matches tests/candidates/honest/q06.{core,full}.c"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

# check_results JSON EXPECTED DIR: every candidate file of DIR has one row,
# of the expected class (and speed); lib/corpus_results.py says what is checked.
budget=()
ext=.c
if [ -n "${MEM_BUDGET:-}" ]; then
    budget=(--mem-budget "$MEM_BUDGET")
    ext=.full.c
fi
check_results() {
    python3 "$(dirname "$0")/lib/corpus_results.py" "$@" "$ext"
}

# eval_case NAME DIR EXPECTED [dkb eval options...]
failures=0
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --data "$S" --out "$out" --seeds 5 --min-seconds 0.2 --mem-limit 1 -q "${budget[@]}" "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")" >&2
        failures=$((failures + 1))
        return
    fi
    check_results "$out/results.json" "$expected" "$dir" || failures=$((failures + 1))
}

cases=$(echo ${CASES:-honest $(cd "$CAND/adversarial" && ls)})
for c in $cases; do
    if [ "$c" = honest ]; then
        eval_case honest "$CAND/honest" "$(cat "$CAND/honest/EXPECTED")" --threads 1
        eval_case honest-2threads "$CAND/honest" ok --threads 2
        continue
    fi
    d="$CAND/adversarial/$c"
    [ -f "$d/EXPECTED" ] || fail "$d/EXPECTED missing"
    extra=(--threads 1)
    # a case's ARGS file replaces the options (e.g. --threads 2 for a case
    # that needs a second OpenMP thread)
    [ -f "$d/ARGS" ] && read -r -a extra <"$d/ARGS"
    [ "$c" = infinite_loop ] && extra+=(--timeout 5)
    # a sanitizer build lacks the worker's process defences (no system-call
    # filter, the time-stamp counter left on): a case that only they catch
    # says what such a build classifies it as in EXPECTED_SANITIZED
    want=$(cat "$d/EXPECTED")
    [ "${DKB_SANITIZED:-0}" = 1 ] && [ -f "$d/EXPECTED_SANITIZED" ] && want=$(cat "$d/EXPECTED_SANITIZED")
    eval_case "$c" "$d" "$want" "${extra[@]}"
done

[ "$failures" = 0 ] || fail "$failures case(s) misclassified (KEEP_WORK=1 keeps $WORK)"
pass "corpus classified as expected: $cases"
