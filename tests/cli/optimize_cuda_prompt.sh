# optimize_cuda_prompt.sh: the parts of `dkb optimize --target cuda` that need
# no GPU (the loop itself on the GPU is optimize_cuda.sh): the prompt
# `dkb prompt q06 --target cuda` prints (file q06.core.cu / q06.full.cu, CUDA
# C, the CUDA ABI before candidate.h: device pointers, host descriptors, the
# stream; the hardware context: the GPU from dkb_tp_device_query, or a line
# saying none was found), the C prompt without the CUDA notes, and
# `dkb optimize --target cuda` without a GPU (CUDA_VISIBLE_DEVICES= hides
# one where there is one): exit 1 with one line, before it writes the run
# directory or asks the model anything. Runs on any machine.
source "$(dirname "$0")/lib/common.bash"

S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 --out $S failed"

has() {   # has WHAT TEXT PATTERN...: every fixed string PATTERN is in TEXT
    local what=$1 text=$2
    shift 2
    for want in "$@"; do grep -qF -- "$want" <<<"$text" || fail "$what lacks '$want'"; done
}

# ---- the CUDA prompt, core mode ----
p=$("$DKB" prompt q06 --data "$S" --target cuda --mode core) || fail "dkb prompt q06 --target cuda exited $?"
has "the CUDA core prompt" "$p" "### system" "correct CUDA C code" "core mode, CUDA C" "Write \`q06.core.cu\`" \
    "dkb_candidate_core" "static int core(" "/* CUDA target: how this ABI applies to your .cu file." \
    "DEVICE pointers" "set \`n\` (and \`nbytes\`) in the host" "dkb_cand_stream(env)" "__device__, __constant__" \
    "CUB and Thrust" "No state survives a call" "host callbacks (cudaLaunchHostFunc" \
    "#define DKB_CANDIDATE_ABI_VERSION" "Workload context" "l_discount between disc_lo and disc_hi: 0." \
    "Hardware context" "(\`\`\`cuda ... \`\`\`)"
grep -q "CPU: " <<<"$p" && fail "the CUDA prompt describes the CPU"
gpu=$(grep -E '^- GPU: ' <<<"$p" || true)
if grep -q "compute capability" <<<"$gpu"; then
    has "the CUDA hardware context" "$p" "- Global memory: " "- L2 cache: " "- Compiler: nvcc"
else
    grep -q "^- GPU: none found where this prompt was made (no GPU" <<<"$gpu" || fail "no GPU line in: $p"
fi
pass "dkb prompt --target cuda --mode core: CUDA ABI, workload and hardware context (${gpu:0:100})"

# without a GPU (hidden where there is one) the hardware section says so instead of failing
p=$(CUDA_VISIBLE_DEVICES='' "$DKB" prompt q06 --data "$S" --target cuda --mode core) \
    || fail "dkb prompt --target cuda without a GPU exited $?"
has "the CUDA prompt without a GPU" "$p" "- GPU: none found where this prompt was made (no GPU" "DEVICE pointers"
pass "dkb prompt --target cuda without a GPU: the hardware section says none was found"

# ---- full mode, the ablation, and the C prompt without the CUDA notes ----
p=$("$DKB" prompt q06 --data "$S" --target cuda --mode full --context none) || fail "full mode exited $?"
has "the CUDA full prompt" "$p" "Write \`q06.full.cu\`" "dkb_candidate_full" "static void draw(" \
    "full mode: every column's \`data\`/\`bytes\` is a DEVICE pointer" "whole dkb_cand_result are HOST memory"
grep -q "Workload context\|Hardware context" <<<"$p" && fail "--context none still has a context section"
p=$("$DKB" prompt q06 --data "$S" --target c --mode core) || fail "the C prompt exited $?"
grep -q "CUDA target:\|DEVICE pointers" <<<"$p" && fail "the C prompt has the CUDA notes"
has "the C prompt" "$p" "Write \`q06.core.c\`" "CPU: " "(\`\`\`c ... \`\`\`)"
pass "full mode (q06.full.cu), --context none, and the C prompt without CUDA notes"

# ---- dkb optimize --target cuda without a GPU: one line, exit 1, nothing written or asked ----
cat >"$WORK/model.sh" <<SH
#!/bin/sh
touch "$WORK/asked"
printf '\`\`\`cuda\nint x;\n\`\`\`\n'
SH
chmod +x "$WORK/model.sh"
for ctx in workload,hardware none; do
    rm -rf "$WORK/run" "$WORK/asked"
    expect_fail 1 "^dkb optimize: error: --target cuda: no usable GPU \(no GPU.*\); nothing was asked or evaluated$" \
        -- env CUDA_VISIBLE_DEVICES= "$DKB" optimize --model m --model-cmd "$WORK/model.sh" --data "$S" \
        --target cuda --queries q06 --context "$ctx" --rounds 1 --out "$WORK/run"
    [ ! -e "$WORK/asked" ] || fail "--context $ctx: the model was asked without a GPU"
    [ ! -e "$WORK/run" ] || fail "--context $ctx: $WORK/run was written without a GPU ($(ls -R "$WORK/run" | head -5))"
done
pass "dkb optimize --target cuda without a GPU fails early (any --context): nothing asked, nothing written"
