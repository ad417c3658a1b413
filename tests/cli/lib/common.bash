# common.bash: helpers for the command-line tests (sourced, not run).
# Environment (set by CTest): DKB (the binary), DKB_TESTDATA, DKB_TMP.
set -euo pipefail
: "${DKB:?DKB must point to the dkb binary}"
: "${DKB_TESTDATA:?}"
TEST_NAME=$(basename "$0" .sh)
WORK="${DKB_TMP:-/tmp}/$TEST_NAME"
rm -rf "$WORK"
mkdir -p "$WORK"
cleanup() { [ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# expect_fail CODE PATTERN -- CMD...: CMD must exit with CODE and print a
# single stderr line matching PATTERN (grep -E).
expect_fail() {
    local code=$1 pattern=$2
    shift 3
    local out rc=0
    out=$("$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code (stderr: $out)"
    echo "$out" | grep -Eq -- "$pattern" || fail "'$*' stderr does not match '$pattern': $out"
    [ "$(printf '%s\n' "$out" | wc -l)" -le 1 ] || fail "'$*' printed more than one error line: $out"
    pass "$* -> exit $code: $out"
}

# skip_without_cuda_eval STORE: exit 77 (skipped) when `dkb eval
# --backend cuda` reports no usable GPU or a build without CUDA (an empty
# candidate directory evaluates nothing but loads STORE onto the GPU);
# fail when it breaks otherwise.
skip_without_cuda_eval() {
    mkdir -p "$WORK/empty"
    if ! "$DKB" eval "$WORK/empty" --data "$1" --backend cuda --out "$WORK/probe" -q >"$WORK/probe.out" 2>&1; then
        if grep -qE "no usable GPU|without CUDA" "$WORK/probe.out"; then
            echo "skipped: $(tail -1 "$WORK/probe.out")"
            exit 77
        fi
        fail "dkb eval --backend cuda on an empty directory: $(tail -3 "$WORK/probe.out")"
    fi
}

# check_hashes SF DIR [SUFFIX]: every SF section entry of dbgen-hashes.txt
# matches DIR/<file> (sha256, lines, bytes).
check_hashes() {
    local sf=$1 dir=$2
    local n=0
    while read -r sha lines bytes file; do
        [ -f "$dir/$file" ] || fail "$dir/$file missing"
        local got_sha got_lines got_bytes
        got_sha=$(sha256sum "$dir/$file" | cut -d' ' -f1)
        got_lines=$(wc -l <"$dir/$file")
        got_bytes=$(stat -c %s "$dir/$file")
        [ "$got_lines" = "$lines" ] || fail "$file: $got_lines rows, dbgen has $lines"
        [ "$got_bytes" = "$bytes" ] || fail "$file: $got_bytes bytes, dbgen has $bytes"
        [ "$got_sha" = "$sha" ] || fail "$file: sha256 differs from dbgen's"
        n=$((n + 1))
    done < <(awk -v sf="## SF $sf" '$0 == sf {on = 1; next} /^##/ {on = 0} on && NF == 4' \
        "$DKB_TESTDATA/dbgen-hashes.txt")
    [ "$n" -gt 0 ] || fail "no hashes for SF $sf"
    pass "$n files at SF $sf match dbgen (sha256, rows, bytes)"
}

# need_duckdb STORE [SQL]: dkb sql can load libduckdb (and plan SQL, default
# --explain=tree of SELECT 1; with SQL, run it through the translator).
# Without libduckdb the test FAILS, unless DKB_ALLOW_NO_DUCKDB=1, where it
# exits 77 (skipped); any other failure of the probe fails the test.
need_duckdb() {
    local probe args=(--explain=tree -e 'SELECT 1')
    [ $# -lt 2 ] || args=(-e "$2")
    probe=$("$DKB" sql --data "$1" "${args[@]}" 2>&1) || {
        case $probe in
        *"libduckdb not found"*)
            if [ "${DKB_ALLOW_NO_DUCKDB:-0}" = 1 ]; then
                echo "skip: $probe"
                exit 77
            fi
            fail "$probe (run tools/install-deps.sh, or set DKB_ALLOW_NO_DUCKDB=1 to skip)" ;;
        *) fail "dkb sql ${args[*]}: $probe" ;;
        esac
    }
}
