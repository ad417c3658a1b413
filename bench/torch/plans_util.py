"""plans_util.py: the pieces the TPC-H plans (plans_q*.py) share: scalars
back to the host, dictionary predicates as code tables, nation and region
lookups by name, ORDER BY as chained stable sorts, LIKE over TEXT columns
as byte-window matches, text values and ranks for the result rows, and the
year table for EXTRACT(YEAR ...).

Everything here takes L (a store.Loaded) and works on both backends
(store.TorchOps, store.NumpyOps). Strings never reach the device as
strings: a dictionary predicate is a small bool table indexed by code
(codes are in string order, docs/store.md), a TEXT predicate is computed
from the column's bytes and offsets."""
import numpy as np

from store import days

YEAR0, NYEARS = 1970, 80   # years EXTRACT(YEAR ...) handles: 1970..2049 (group = year - YEAR0)


def scalar(ops, a):
    """A 0-d device value (or a Python number) as a Python int."""
    return int(ops.host(a.reshape(1))[0]) if hasattr(a, "reshape") else int(a)


def year_of(L, d):
    """Per date (int32 days): year - YEAR0 (0 .. NYEARS-1)."""
    return L.ops.searchsorted(L.year_starts, d, right=True) - 1


def prepare_years(L):
    starts = np.array([days("%04d-01-01" % (YEAR0 + k)) for k in range(NYEARS + 1)], dtype=np.int32)
    L.year_starts = L.ops.put(starts)


# ---- dictionary columns ----
def code_of(L, col, value):
    """The dictionary code of value in col, or None when absent."""
    d = L.dict[col]
    return d.index(value) if value in d else None


def code_table(L, col, pred):
    """Bool device table over col's codes: pred(string) per code (256 entries,
    so any uint8 code indexes it)."""
    t = np.zeros(256, dtype=np.bool_)
    for k, v in enumerate(L.dict[col]):
        t[k] = bool(pred(v))
    return L.ops.put(t)


def dict_in(L, col, table):
    """Per row of col: table[code] (table from code_table)."""
    return L.ops.take(table, L.ops.i64(L.col[col]))


def dict_eq(L, col, value):
    """Per row of col: col = value (all false when value is not in the dictionary)."""
    k = code_of(L, col, value)
    if k is None:
        return L.col[col] != L.col[col]
    return L.col[col] == k


# ---- nation and region ----
def nation_keys(L):
    """{n_nationkey: n_name} from the host columns."""
    h = L.host
    return {int(k): L.dict["n_name"][code] for k, code in zip(h["n_nationkey"], h["n_name"])}


def nation_key(L, name):
    """n_nationkey of the nation called name, or -1."""
    for k, n in nation_keys(L).items():
        if n == name:
            return k
    return -1


def nation_bins(L):
    """Size of tables indexed by n_nationkey."""
    h = L.host["n_nationkey"]
    return int(np.max(h)) + 1 if len(h) else 1


def region_nations(L, region):
    """Bool device table indexed by n_nationkey: the nation lies in the region named region."""
    h = L.host
    rk = {int(k) for k, code in zip(h["r_regionkey"], h["r_name"]) if L.dict["r_name"][code] == region}
    t = np.zeros(nation_bins(L), dtype=np.bool_)
    for k, r in zip(h["n_nationkey"], h["n_regionkey"]):
        t[int(k)] = int(r) in rk
    return L.ops.put(t)


# ---- ORDER BY ----
def order_by(ops, keys):
    """Permutation sorting by keys [(array, descending), ...], major key
    first: stable sorts from the minor key to the major one."""
    perm = None
    for a, desc in reversed(keys):
        v = a if perm is None else ops.take(a, perm)
        o = ops.argsort(v, descending=desc)
        perm = o if perm is None else ops.take(perm, o)
    return perm


# ---- TEXT columns ----
def text_find(L, col, word):
    """(row, pos): every occurrence of word lying wholly inside a row of the
    TEXT column col (pos: byte offset in the column's bytes)."""
    ops, c = L.ops, L.col
    b, off = c[col + ".bytes"], c[col]
    pat = word.encode()
    n = b.shape[0] - len(pat) + 1
    if n <= 0 or not pat:
        e = ops.zeros(0, "i64")
        return e, e
    # one pass over the bytes for the first two pattern bytes, then the rest
    # only at the (few) candidate positions, by gathers
    hit = b[0:n] == pat[0]
    if len(pat) > 1:
        hit = hit & (b[1:n + 1] == pat[1])
    pos = ops.nonzero(hit)
    for j in range(2, len(pat)):
        pos = ops.take(pos, ops.nonzero(ops.take(b, pos + j) == pat[j]))
    row = ops.searchsorted(off, pos, right=True) - 1
    inside = ops.nonzero(pos + len(pat) <= ops.take(off, row + 1))
    return ops.take(row, inside), ops.take(pos, inside)


def text_contains(L, col, word, rows):
    """Bool per row: col LIKE '%word%'."""
    row, _ = text_find(L, col, word)
    return L.ops.mark(rows, row)


def text_contains2(L, col, w1, w2, rows):
    """Bool per row: col LIKE '%w1%w2%' (w2 starts after the first w1 ends):
    the first w1 per row against the last w2 per row."""
    ops = L.ops
    r1, p1 = text_find(L, col, w1)
    r2, p2 = text_find(L, col, w2)
    big = 1 << 62
    first1 = ops.scatter_min(ops.full(rows, big, "i64"), r1, ops.i64(p1))
    last2 = ops.scatter_max(ops.full(rows, -1, "i64"), r2, ops.i64(p2))
    return first1 + len(w1.encode()) <= last2


def text_prefix(L, col, prefix):
    """Bool per row: col LIKE 'prefix%'."""
    ops, c = L.ops, L.col
    b, off = c[col + ".bytes"], c[col]
    start, end = off[:-1], off[1:]
    pat = prefix.encode()
    ok = end - start >= len(pat)
    if b.shape[0] == 0:
        return ok
    for j, ch in enumerate(pat):
        ok = ok & (ops.take(b, ops.minimum(start + j, b.shape[0] - 1)) == ch)
    return ok


def text_prefix_codes(L, col, k):
    """Per row: the first k bytes as one integer (byte 0 most significant;
    -1 for rows shorter than k), so integer order is string order."""
    ops, c = L.ops, L.col
    b, off = c[col + ".bytes"], c[col]
    start, end = off[:-1], off[1:]
    v = start * 0
    if b.shape[0] == 0:
        return v - 1
    for j in range(k):
        v = v * 256 + ops.i64(ops.take(b, ops.minimum(start + j, b.shape[0] - 1)))
    return ops.where(end - start >= k, v, -1)


def text(L, col, row):
    """Row row of the TEXT column col, from the host copy."""
    off, b = L.host[col], L.host[col + ".bytes"]
    return bytes(b[off[row]:off[row + 1]]).decode()


def text_rank(L, col):
    """Device int64 per row: the row's rank in byte-wise order of col's
    values (equal values, equal rank). Built once, untimed, like a sorted
    index on the column (prep calls it)."""
    cache = L.__dict__.setdefault("_text_rank", {})
    if col not in cache:
        off, b = np.asarray(L.host[col]), L.host[col + ".bytes"]
        raw = bytes(b)
        vals = [raw[off[r]:off[r + 1]] for r in range(len(off) - 1)]
        order = sorted(range(len(vals)), key=vals.__getitem__)
        rank = np.zeros(len(vals), dtype=np.int64)
        k = 0
        for i, r in enumerate(order):
            if i and vals[r] != vals[order[i - 1]]:
                k = i
            rank[r] = k
        cache[col] = L.ops.put(rank)
    return cache[col]
