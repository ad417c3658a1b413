"""plans.py: the registry of the PyTorch peer's TPC-H plans (all 22), the
TorchPlan-style array programs of docs/gpu.md's PyTorch section, kept in
groups: plans_q01_q06.py, plans_q07_q12.py, plans_q13_q18.py,
plans_q19_q22.py, with the shared pieces in plans_util.py.

Each query is prep(L, p) -> constants (dates as days, strings as dictionary
codes or code tables, load-time ranks; host, untimed), core(L, s) -> small
arrays (the array program: timed, and what torch.compile compiles) and
finish(L, p, out) -> result rows on the host (timed). L is a
store.Loaded (columns on the device, key maps), p the parameters from dkb's
JSON (seed 0). Written as one would by hand for a GPU:
  - PK-FK joins through dense key maps (key -> row index tensors, built at
    load time like an index), so a join is one gather; partsupp's
    (partkey, suppkey) by searchsorted on its sorted composite keys;
  - few groups as masked reductions (Q1, Q4, Q12, Q22), many as index_add
    into dense tables indexed by row or by packed codes; MIN/MAX per group
    by scatter-min/max (Q2, Q13, Q21); COUNT(DISTINCT) by sorting packed
    (group, key) pairs (Q16); EXISTS / NOT EXISTS as bool tables that the
    matching rows set (Q4, Q20, Q22) or per-order min/max (Q21);
  - decimals stay int64 hundredths and sums are exact int64; comparisons
    with AVG or fractions are cross-multiplied (Q11, Q17, Q20, Q22);
  - strings: dictionary codes (in string order) compared as integers or
    looked up in small code tables; LIKE on TEXT columns as byte-window
    matches over the column's bytes, rows found by searchsorted on the
    offsets; ORDER BY a TEXT column through a rank built at load time.
The same code runs on numpy (store.NumpyOps) to check the logic without
PyTorch."""
import plans_q01_q06
import plans_q07_q12
import plans_q13_q18
import plans_q19_q22
from plans_util import prepare_years

# query -> (prep: parameters -> constants, host, untimed;
#           core: the array program, timed (what torch.compile compiles);
#           finish: core outputs -> result rows on the host, timed)
PLANS = {}
for _group in (plans_q01_q06, plans_q07_q12, plans_q13_q18, plans_q19_q22):
    PLANS.update(_group.PLANS)
PLANS = dict(sorted(PLANS.items()))


def prepare_extra(L):
    """Load-time constants some plans need (not timed)."""
    prepare_years(L)
