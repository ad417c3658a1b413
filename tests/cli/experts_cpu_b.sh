# experts_cpu_b.sh: the expert CPU candidates for Q12..Q22 are all verdict ok under
# `dkb eval` at SF 0.1 (lib/experts.bash says what is checked); the sibling
# experts_cpu_a.sh covers Q1..Q11 (two tests, so CTest runs them in parallel).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/experts.bash"
check_experts q12,q13,q14,q15,q16,q17,q18,q19,q20,q21,q22
