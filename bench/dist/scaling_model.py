#!/usr/bin/env python3
"""scaling_model.py: the paper model of dkb on K GPUs (docs/distributed.md,
"Scaling model"): per query, the bytes each rank reads, the bytes of
partials exchanged, and the expected time on K GPUs of one node from the
single-GPU SF 10 figures of docs/gpu.md, the measured host<->device copy
bandwidths and NVLink's published 900 GB/s per GPU. Prints Markdown.

Inputs: bench/dist/partials_sf1.txt (measured on the CPU backend) and the
SF 10 H200 medians below (docs/gpu.md: "Results (H200)" for the baseline,
"Experts II ... now ms" for the experts, q13 at its kept kernel's 1.347).
Usage: bench/dist/scaling_model.py [K ...]   (default 2 4 8)
"""
import os
import sys

BASE_MS = dict(zip([f"q{n:02d}" for n in range(1, 23)], [
    9.775, 2.224, 2.923, 2.123, 3.089, 1.293, 3.129, 3.038, 6.055, 2.726, 1.747,
    2.324, 5.008, 1.361, 1.772, 5.872, 1.703, 4.508, 1.984, 2.855, 6.693, 1.453]))
EXPERT_MS = dict(zip(BASE_MS, [
    0.641, 0.209, 0.624, 0.412, 0.656, 0.268, 0.612, 0.618, 1.316, 0.763, 0.565,
    0.236, 1.347, 0.175, 0.225, 0.983, 0.229, 0.444, 0.336, 0.915, 0.574, 0.190]))
PASSES = {"q17": 2}          # two passes; every other query one
NVLINK = 900e9               # bytes/s per GPU, H200 NVLink 4 (published)
D2H, H2D = 55.3e9, 51.6e9    # pinned copies, measured (issue 15)
LATENCY = 20e-6              # s per small collective: assumed, to be measured (issue 16 item 7)
SF = 10                      # the model's scale factor (inputs measured at SF 1)


def load(path):
    rows = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        q, res, stream, g2, g4, g2s, g4s = line.split()
        rows[q] = tuple(int(x) for x in (res, stream, g2, g4, g2s, g4s))
    return rows


def gathered(row, k):
    """Partials bytes at SF 10 on k ranks: linear in k through the two
    measured rank counts, grown from SF 1 to 10 as they grew from 0.1 to 1."""
    _, _, g2, g4, g2s, g4s = row
    per_rank = (g4 - g2) / 2
    at1 = max(g2 + per_rank * (k - 2), 0)
    growth = (g2 / g2s) if g2s else 1.0
    return at1 * growth


def model(row, t1_ms, k, passes):
    res, stream = row[0] * SF, row[1] * SF
    read = res + stream / k
    g = gathered(row, k)
    collectives = 4 + 4 * passes      # dkb__query_run_ranks' agreements and gathers, the CLI's agreement
    exchange = collectives * LATENCY + g * (k - 1) / k / NVLINK + g / k / D2H + g / H2D
    t = t1_ms * (res + stream / k) / (res + stream) + exchange * 1e3
    return read, g, t


def main():
    ks = [int(a) for a in sys.argv[1:]] or [2, 4, 8]
    rows = load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "partials_sf1.txt"))
    k = ks[len(ks) // 2]
    print(f"| query | resident MB | streamed MB | read per rank MB, K={k} | partials KB, K={k} | "
          f"baseline 1 GPU ms | K={k} ms | eff. | expert 1 GPU ms | K={k} ms | eff. |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = {kk: [0.0, 0.0] for kk in ks}
    for q, row in rows.items():
        p = PASSES.get(q, 1)
        for kk in ks:
            tot[kk][0] += model(row, BASE_MS[q], kk, p)[2]
            tot[kk][1] += model(row, EXPERT_MS[q], kk, p)[2]
        read, g, tb = model(row, BASE_MS[q], k, p)
        _, _, te = model(row, EXPERT_MS[q], k, p)
        print(f"| {q} | {row[0] * SF / 1e6:.1f} | {row[1] * SF / 1e6:.1f} | {read / 1e6:.1f} | {g / 1e3:.1f} | "
              f"{BASE_MS[q]:.3f} | {tb:.3f} | {BASE_MS[q] / (k * tb):.2f} | {EXPERT_MS[q]:.3f} | {te:.3f} | "
              f"{EXPERT_MS[q] / (k * te):.2f} |")
    b1, e1 = sum(BASE_MS.values()), sum(EXPERT_MS.values())
    print()
    print("| K | baseline sum ms | efficiency | experts sum ms | efficiency |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| 1 | {b1:.2f} | 1.00 | {e1:.2f} | 1.00 |")
    for kk in ks:
        print(f"| {kk} | {tot[kk][0]:.2f} | {b1 / (kk * tot[kk][0]):.2f} | {tot[kk][1]:.2f} | "
              f"{e1 / (kk * tot[kk][1]):.2f} |")


if __name__ == "__main__":
    main()
