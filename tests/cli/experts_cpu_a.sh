# experts_cpu_a.sh: the expert CPU candidates for Q1..Q11 are all verdict ok under
# `dkb eval` at SF 0.1 (lib/experts.bash says what is checked); the sibling
# experts_cpu_b.sh covers Q12..Q22 (two tests, so CTest runs them in parallel).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/experts.bash"
check_experts q01,q02,q03,q04,q05,q06,q07,q08,q09,q10,q11
