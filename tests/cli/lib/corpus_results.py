#!/usr/bin/env python3
# corpus_results.py RESULTS.JSON "CLASS [fast|slow]" CANDIDATE_DIR EXT: the
# candidate corpus checks of eval_corpus.sh (EXT .c) and eval_corpus_cuda.sh
# (EXT .cu): results.json is valid UTF-8 JSON; every candidate file of the
# directory has one row, of the expected class (and speed: "fast" valid,
# counted and faster than the baseline; "slow" valid, not counted, slower);
# no harness errors; no extra rows; where CANDIDATE_DIR has a DETAIL file,
# every row's detail contains its text. Exit 1 with a FAIL line per problem.
import json, os, sys
path, expected, cand_dir, ext = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
want, speed = expected[0], expected[1] if len(expected) > 1 else None
try:   # results.json must be valid UTF-8 and JSON, whatever the candidate printed
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
except (UnicodeDecodeError, ValueError) as e:
    print(f"FAIL: {os.path.basename(cand_dir)}: {path} is not valid UTF-8 JSON: {e}", file=sys.stderr)
    sys.exit(1)
files = sorted(f for f in os.listdir(cand_dir) if f.endswith(ext))
detail_path = os.path.join(cand_dir, "DETAIL")
want_detail = open(detail_path).read().strip() if os.path.exists(detail_path) else None
rows = {(r["query"], r["mode"]): r for r in doc["candidates"]}
bad = []
for f in files:
    q, mode = f.split(".")[0], f.split(".")[1]
    r = rows.get((q, mode))
    if r is None:
        bad.append(f"{f}: no row in results.json")
        continue
    got = f"{r['class']}"
    what = f"{f}: {got}"
    if r.get("raw_speedup") is not None:
        what += f", raw speedup {r['raw_speedup']:.2f}"
    if r.get("detail"):
        what += f" ({r['detail']})"
    if r.get("baseline_ms") is not None:
        what += f" baseline {r['baseline_ms']} candidate {r.get('candidate_ms')}"
    if got != want:
        bad.append(f"{what}; expected {want}")
    elif want_detail is not None and want_detail not in (r.get("detail") or ""):
        bad.append(f"{what}; expected a detail containing {want_detail!r}")
    elif speed == "fast" and not (r["valid"] and r["counted"] and r["raw_speedup"] > 1):
        bad.append(f"{what}; expected valid, counted, raw speedup > 1")
    elif speed == "slow" and not (r["valid"] and not r["counted"] and r["raw_speedup"] < 1):
        bad.append(f"{what}; expected valid, not counted, raw speedup < 1")
    else:
        print(f"ok: {os.path.basename(cand_dir)}/{what}")
if doc.get("harness_errors"):
    bad.append(f"harness_errors = {doc['harness_errors']}")
if len(doc["candidates"]) != len(files):
    bad.append(f"{len(doc['candidates'])} rows for {len(files)} files")
for b in bad:
    print(f"FAIL: {os.path.basename(cand_dir)}/{b}", file=sys.stderr)
sys.exit(1 if bad else 0)
