"""run.py: the PyTorch peer of docs/gpu.md: carefully written
TorchPlan-style PyTorch plans of all 22 TPC-H queries (plans.py and the
plans_q*.py groups) on the same store as dkb, eager and torch.compile, each
result checked against `dkb run QUERY --data STORE --format json` (seed 0,
or --seed S: the parameters and answer of that seed),
timed with CUDA events (median of --reps after --warmup), next to dkb's CUDA
baseline time of the same session. Timed: the core (the array program) and
the copy of its outputs to the host (numpy arrays: the result, with strings
as dictionary codes and row numbers); finish, which turns those into
Python rows with strings (the form of dkb's JSON rows, for the check), is
timed apart (finish_ms in the JSON) and not counted.

  python3 bench/torch/run.py --store /tmp/dkb-sf10 --dkb build/dkb \\
      [--dkb-cuda-json cuda-sf10.json] [--json out.json] [--queries "q01 q06"]
  python3 bench/torch/run.py --store data/sf0.01 --dkb build/dkb --device cpu   # torch on the CPU
  python3 bench/torch/run.py --store data/sf0.01 --dkb build/dkb --backend numpy   # logic check, no torch

The check: the same number of rows, in dkb's order (rows that tie under
ORDER BY may come in any order); strings, INT, DATE and DECIMAL cells
exactly equal (a DECIMAL is the correctly rounded double of its exact
value on both sides, so equal decimals give equal doubles), FLOAT cells
(AVG, quotients: doubles whose last bits depend on the order of
operations) within 1e-9 + 1e-9 relative.
--dkb-cuda-json: the output of `dkb run all --backend cuda --format json
--time ...` on the same store (bench/gpu_bench.sh writes it); without it
the dkb column is empty. Columns are copied to the device once (load time
and bytes printed); key maps are built at load time, untimed, like an index.
torch.compile is tried per query (best effort: a query whose compile fails
keeps its eager time and says why); --budget-s bounds the whole run: once
spent, torch.compile is skipped for the queries left (reported as such).
"best" is the better of eager and compile, and the mode it came from. On
--device cpu (and --backend numpy) times are wall clock. Exit 1 when any
result differs from dkb's, 0 otherwise."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plans  # noqa: E402
import store as st  # noqa: E402

# H200, SF 10, best of eager/compile (the anchor), ms.
ANCHOR_MS = {"q01": 19.6, "q03": 2.4, "q05": 2.7, "q06": 0.85, "q09": 3.7, "q18": 1.1}


def dkb_reference(dkb, store, q, seed=0):
    out = subprocess.run([dkb, "run", q, "--data", store, "--format", "json", "--seed", str(seed)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("dkb run %s --data %s failed (%d): %s" % (q, store, out.returncode, out.stderr.strip()))
    return json.loads(out.stdout)


def dkb_references(dkb, store, queries, seed=0):
    """{query: dkb's JSON answer}: one `dkb run all` process when more than
    one query is wanted (the store opened once), else `dkb run QUERY`."""
    if len(queries) > 1:
        d = dkb_reference(dkb, store, "all", seed)
        got = {x["query"]: x for x in (d if isinstance(d, list) else [d])}
        if all(q in got for q in queries):
            return {q: got[q] for q in queries}
    return {q: dkb_reference(dkb, store, q, seed) for q in queries}


def cell_ok(got, want, col=None):
    """One cell against dkb's; col is dkb's column entry ({"type", "scale"})."""
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, str) or isinstance(got, str):
        return str(got).rstrip() == str(want).rstrip()
    kind = (col or {}).get("type")
    if kind == "INT":
        return float(got) == float(want) and int(got) == int(want)
    if kind == "DECIMAL":
        # exactly equal doubles: dkb prints the exact decimal (json reads its correctly rounded double) and
        # the plans divide the exact int64 by 10^scale as Python ints (correctly rounded as well)
        return float(got) == float(want)
    g, w = float(got), float(want)
    return abs(g - w) <= 1e-9 + 1e-9 * abs(w)


def rows_ok(got, want, cols=None):
    """'' when equal (in order, or as a multiset: ORDER BY ties), else why."""
    if len(got) != len(want):
        return "%d rows, dkb has %d" % (len(got), len(want))
    cols = cols or []
    def row_ok(a, b):
        return len(a) == len(b) and all(cell_ok(x, y, cols[i] if i < len(cols) else None)
                                        for i, (x, y) in enumerate(zip(a, b)))
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if not row_ok(a, b)]
    if not bad:
        return ""
    left = list(got)
    for w in want:
        k = next((i for i, a in enumerate(left) if row_ok(a, w)), None)
        if k is None:
            i = bad[0]
            return "row %d: got %s, dkb %s" % (i, got[i], want[i])
        left.pop(k)
    return ""


def to_host(ops, out):
    """The core's outputs (arrays, possibly nested in lists and tuples)
    copied to the host as numpy arrays: the end of the timed region."""
    if isinstance(out, (list, tuple)):
        return type(out)(to_host(ops, x) for x in out)
    return ops.host(out)


class Timer:
    """Median ms of reps calls after warmup: CUDA events on a CUDA device, wall clock otherwise."""

    def __init__(self, ops):
        self.ops = ops
        self.cuda = ops.name == "torch" and ops.device != "cpu"
        if self.cuda:
            self.torch = ops.torch

    def run(self, fn, reps, warmup):
        ms = []
        for k in range(warmup + reps):
            if self.cuda:
                a = self.torch.cuda.Event(enable_timing=True)
                b = self.torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                t = a.elapsed_time(b)
            else:
                t0 = time.perf_counter()
                fn()
                t = (time.perf_counter() - t0) * 1e3
            if k >= warmup:
                ms.append(t)
        ms.sort()
        n = len(ms)
        return ms[n // 2] if n % 2 else (ms[n // 2 - 1] + ms[n // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True)
    ap.add_argument("--dkb", default="build/dkb")
    ap.add_argument("--queries", default=" ".join("q%02d" % n for n in range(1, 23)))
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="torch's device (default cuda)")
    ap.add_argument("--seed", type=int, default=0, help="dkb's parameter seed (default 0: the qualification values)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--budget-s", type=float, default=300)
    ap.add_argument("--dkb-cuda-json")
    ap.add_argument("--json")
    a = ap.parse_args()
    t_start = time.perf_counter()
    queries = a.queries.split()
    for q in queries:
        if q not in plans.PLANS:
            sys.exit("run.py: no plan for %s (have %s)" % (q, " ".join(plans.PLANS)))

    if a.backend == "torch":
        import torch
        if a.device == "cuda":
            if not torch.cuda.is_available():
                sys.exit("run.py: torch sees no CUDA device (--device cpu runs the plans on the CPU)")
            device = torch.cuda.get_device_name(0)
        else:
            device = "cpu (torch, %d threads)" % torch.get_num_threads()
        ops = st.TorchOps(torch, a.device)
        version = torch.__version__
    else:
        torch = None
        ops = st.NumpyOps()
        device, version = "host (numpy)", "numpy"

    dkb_ms = {}
    if a.dkb_cuda_json:
        try:
            with open(a.dkb_cuda_json) as f:
                d = json.load(f)
            for x in d if isinstance(d, list) else [d]:
                if "timing" in x:
                    dkb_ms[x["query"]] = x["timing"]["median_ms"]
        except (OSError, ValueError, KeyError) as e:
            print("run.py: ignoring --dkb-cuda-json %s: %s" % (a.dkb_cuda_json, e), file=sys.stderr)

    store = st.Store(a.store)
    t_ref = time.perf_counter()
    refs = dkb_references(a.dkb, a.store, queries, a.seed)
    t_ref = time.perf_counter() - t_ref
    L = st.Loaded(store, ops, queries)
    plans.prepare_extra(L)
    print("torch peer: %s, %s, store %s (SF %g); loaded %d columns, %.1f MB in %.3f s (%.2f GB/s); "
          "key maps %.3f s (untimed); dkb's answers %.1f s" % (
              device, version, a.store, store.sf, L.columns, L.bytes / 1e6, L.seconds,
              L.bytes / max(L.seconds, 1e-9) / 1e9, L.index_seconds, t_ref), flush=True)

    timer = Timer(ops)
    results, failed = [], 0
    for q in queries:
        prep, core, finish = plans.PLANS[q]
        ref = refs[q]
        p = ref["params"]
        r = {"query": q, "params": p, "eager_ms": None, "compile_ms": None, "check": "", "compile_note": ""}
        try:
            s = prep(L, p)
            got = finish(L, p, to_host(ops, core(L, s)))
            why = rows_ok(got, ref["rows"], ref.get("columns"))
            r["check"] = "ok" if not why else "DIFFERS: " + why
            r["eager_ms"] = timer.run(lambda: to_host(ops, core(L, s)), a.reps, a.warmup)
            out = to_host(ops, core(L, s))
            r["finish_ms"] = timer.run(lambda: finish(L, p, out), 3, 1)
        except Exception as e:  # report and go on with the next query
            r["check"] = "FAILED: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        if torch is not None and not a.no_compile and r["check"] == "ok":
            if not hasattr(torch, "compile"):
                r["compile_note"] = "skipped: torch %s has no torch.compile" % torch.__version__
            elif time.perf_counter() - t_start > a.budget_s:
                r["compile_note"] = "skipped: --budget-s %g spent" % a.budget_s
            else:
                try:
                    torch._dynamo.reset()
                    cc = torch.compile(core)
                    t0 = time.perf_counter()
                    got = finish(L, p, to_host(ops, cc(L, s)))
                    r["compile_s"] = time.perf_counter() - t0
                    why = rows_ok(got, ref["rows"], ref.get("columns"))
                    if why:
                        r["check"] = "compile DIFFERS: " + why
                    else:
                        r["compile_ms"] = timer.run(lambda: to_host(ops, cc(L, s)), a.reps, a.warmup)
                except Exception as e:
                    r["compile_note"] = "failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        if r["check"] != "ok":
            failed += 1
        modes = [(x, m) for x, m in ((r["eager_ms"], "eager"), (r["compile_ms"], "compile"))
                 if x is not None and r["check"] == "ok"]        # a time counts only for a right answer
        best = min(modes)[0] if modes else None
        r["best_ms"] = best
        r["best_mode"] = min(modes)[1] if modes else None
        r["dkb_cuda_ms"] = dkb_ms.get(q)
        r["dkb_over_torch"] = r["dkb_cuda_ms"] / best if best and r["dkb_cuda_ms"] else None
        r["anchor_ms"] = ANCHOR_MS.get(q)
        results.append(r)
        print("  %s: eager %s ms, compile %s ms %s; check %s" % (
            q, fmt(r["eager_ms"]), fmt(r["compile_ms"]), r["compile_note"], r["check"]), flush=True)

    total = totals(results)
    print()
    for line in table(results, total):
        print(line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": device, "version": version, "store": a.store, "sf": store.sf,
                       "load": {"columns": L.columns, "bytes": L.bytes, "seconds": L.seconds,
                                "index_seconds": L.index_seconds},
                       "reps": a.reps, "warmup": a.warmup, "total": total, "results": results}, f, indent=1)
    sys.exit(1 if failed else 0)


def totals(results):
    """Sums over the queries that have a best time (and, for dkb, over those
    that have both): the 22-query total of best-of(eager, compile)."""
    have = [r for r in results if r["best_ms"] is not None]
    both = [r for r in have if r["dkb_cuda_ms"] is not None]
    return {"queries": len(have), "ok": sum(r["check"] == "ok" for r in results), "of": len(results),
            "best_ms": sum(r["best_ms"] for r in have) if have else None,
            "eager_ms": sum(r["eager_ms"] for r in have if r["eager_ms"] is not None) if have else None,
            "compared": len(both),
            "best_ms_compared": sum(r["best_ms"] for r in both) if both else None,
            "dkb_cuda_ms_compared": sum(r["dkb_cuda_ms"] for r in both) if both else None}


def table(results, total):
    """The markdown table (also what gpu_bench.sh's summary prints from torch.json)."""
    out = ["| query | torch eager ms | torch compile ms | best ms (mode) | dkb cuda ms | dkb / best torch | "
           "anchor ms (H200 SF10) | check |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["query"], fmt(r["eager_ms"]), fmt(r["compile_ms"]),
            fmt(r["best_ms"]) + (" (%s)" % r["best_mode"] if r.get("best_mode") else ""),
            fmt(r["dkb_cuda_ms"]), fmt(r["dkb_over_torch"], 2), fmt(r["anchor_ms"]),
            r["check"] + (" (compile " + r["compile_note"] + ")" if r["compile_note"] else "")))
    ratio = (total["dkb_cuda_ms_compared"] / total["best_ms_compared"]
             if total["dkb_cuda_ms_compared"] and total["best_ms_compared"] else None)
    out.append("| all (%d) | %s | | %s | %s | %s | | %d/%d ok |" % (
        total["queries"], fmt(total["eager_ms"]), fmt(total["best_ms"]),
        fmt(total["dkb_cuda_ms_compared"]) + ("" if total["compared"] in (0, total["queries"])
                                             else " (%d queries)" % total["compared"]),
        fmt(ratio, 2), total["ok"], total["of"]))
    return out


def fmt(x, digits=3):
    return "-" if x is None else ("%.*f" % (digits, x))


if __name__ == "__main__":
    main()
