"""store.py: read a dkb store (docs/store.md) into arrays of an array
backend, once: numpy memmaps of the raw little-endian column files, copied
to the device for torch. Also the two array backends the plans run on
(TorchOps on a CUDA device, or on the CPU with --device cpu; NumpyOps on
the host for checking plan logic without PyTorch), the columns each query
reads (QUERY_COLUMNS) and the key indexes built at load time (not timed,
like an index): a dense map primary key -> row for orders, customer,
supplier, part and nation, and partsupp's (partkey, suppkey) composite keys
sorted with their rows."""
import json
import os
import time

import numpy as np


def days(ymd):
    """Days since 1970-01-01 of 'YYYY-MM-DD'."""
    return int((np.datetime64(ymd) - np.datetime64("1970-01-01")).astype(int))


def add_months(ymd, months):
    y, m, d = (int(x) for x in ymd.split("-"))
    m0 = (y * 12 + m - 1) + months
    return "%04d-%02d-%02d" % (m0 // 12, m0 % 12 + 1, d)


def date_str(d):
    return str(np.datetime64("1970-01-01") + np.timedelta64(int(d), "D"))


class Store:
    """The manifest and host (memmap) views of a store's columns."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "manifest.json")) as f:
            m = json.load(f)
        if m.get("format") != "dkb-store" or m.get("format_version") != 1:
            raise SystemExit("%s: not a dkb store of format version 1" % path)
        self.sf = m["scale_factor"]
        self.tables = {t["name"]: t for t in m["tables"]}
        self.cols = {}
        for t in m["tables"]:
            for c in t["columns"]:
                self.cols[c["name"]] = (t, c)

    def rows(self, table):
        return self.tables[table]["rows"]

    def _file(self, col, i):
        t, c = self.cols[col]
        return os.path.join(self.path, c["files"][i]["path"]), t, c

    def host(self, col):
        """The column's main array (values, codes or text offsets), memmapped."""
        path, t, c = self._file(col, 0)
        n = t["rows"] + (1 if c["type"] == "text" else 0)
        if n == 0:
            return np.zeros(0, dtype=c["dtype"])
        return np.memmap(path, dtype="<" + np.dtype(c["dtype"]).str[1:], mode="r", shape=(n,))

    def text_bytes(self, col):
        path, t, c = self._file(col, 1)
        if os.path.getsize(path) == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.memmap(path, dtype=np.uint8, mode="r")

    def text(self, col, row):
        off = self.host(col)
        return bytes(self.text_bytes(col)[off[row]:off[row + 1]]).decode()

    def dictionary(self, col):
        _, c = self.cols[col]
        with open(os.path.join(self.path, c["dictionary"]["path"]), "rb") as f:
            return f.read().decode().split("\n")[:-1]

    def nbytes(self, col):
        """Bytes as dkb counts them: rows x element size; TEXT offsets + bytes."""
        b = self.host(col).nbytes
        if self.cols[col][1]["type"] == "text":
            b += self.text_bytes(col).nbytes
        return b


class NumpyOps:
    """The array operations the plans use, on numpy (host)."""
    name = "numpy"

    def put(self, a):
        return np.ascontiguousarray(a)

    def zeros(self, n, dtype):
        return np.zeros(n, dtype={"i64": np.int64, "i32": np.int32, "bool": np.bool_}[dtype])

    def full(self, n, value, dtype):
        return np.full(n, value, dtype={"i64": np.int64, "i32": np.int32}[dtype])

    def i64(self, a):
        return a.astype(np.int64)

    def take(self, a, idx):
        return a[idx]

    def index_add(self, target, idx, vals):
        np.add.at(target, idx, vals)
        return target

    def nonzero(self, m):
        return np.nonzero(m)[0]

    def where(self, m, a, b):
        return np.where(m, a, b)

    def sum(self, a):
        return a.sum(dtype=a.dtype if a.dtype == np.int64 else None)

    def argsort(self, a, descending=False):
        return np.argsort(-a if descending else a, kind="stable")

    def sort(self, a):
        return np.sort(a, kind="stable")

    def arange(self, n):
        return np.arange(n, dtype=np.int64)

    def cat(self, arrays):
        return np.concatenate(arrays)

    def minimum(self, a, v):
        return np.minimum(a, v)

    def scatter_min(self, target, idx, vals):
        np.minimum.at(target, idx, vals)
        return target

    def scatter_max(self, target, idx, vals):
        np.maximum.at(target, idx, vals)
        return target

    def mark(self, n, idx):
        """Bool (n,): True at the rows idx (any int dtype), False elsewhere."""
        m = np.zeros(n, dtype=np.bool_)
        m[idx] = True
        return m

    def searchsorted(self, sorted_a, v, right=False):
        return np.searchsorted(sorted_a, v, side="right" if right else "left")

    def host(self, a):
        return np.asarray(a)

    def sync(self):
        pass


class TorchOps:
    """The same operations on torch tensors on a CUDA device (or the CPU)."""
    name = "torch"

    def __init__(self, torch, device="cuda"):
        self.torch = torch
        self.device = device
        self.dt = {"i64": torch.int64, "i32": torch.int32, "bool": torch.bool}

    def put(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def zeros(self, n, dtype):
        return self.torch.zeros(n, dtype=self.dt[dtype], device=self.device)

    def full(self, n, value, dtype):
        return self.torch.full((n,), value, dtype=self.dt[dtype], device=self.device)

    def i64(self, a):
        return a.to(self.torch.int64)

    def take(self, a, idx):
        return self.torch.index_select(a, 0, idx)   # int32 or int64 idx

    def index_add(self, target, idx, vals):
        return target.index_add_(0, idx, vals)

    def nonzero(self, m):
        return self.torch.nonzero(m).squeeze(1)

    def where(self, m, a, b):
        return self.torch.where(m, a, b)

    def sum(self, a):
        return a.sum()

    def argsort(self, a, descending=False):
        return self.torch.sort(a, descending=descending, stable=True).indices

    def sort(self, a):
        return self.torch.sort(a).values

    def arange(self, n):
        return self.torch.arange(n, dtype=self.torch.int64, device=self.device)

    def cat(self, arrays):
        return self.torch.cat(arrays)

    def minimum(self, a, v):
        return self.torch.clamp(a, max=v)

    def scatter_min(self, target, idx, vals):
        return target.scatter_reduce_(0, idx.to(self.torch.int64), vals, "amin")

    def scatter_max(self, target, idx, vals):
        return target.scatter_reduce_(0, idx.to(self.torch.int64), vals, "amax")

    def mark(self, n, idx):
        m = self.torch.zeros(n, dtype=self.torch.bool, device=self.device)
        return m.index_fill_(0, idx.to(self.torch.int64), True)

    def searchsorted(self, sorted_a, v, right=False):
        return self.torch.searchsorted(sorted_a, v, right=right)

    def host(self, a):
        return a if isinstance(a, np.ndarray) else a.cpu().numpy()

    def sync(self):
        if self.device != "cpu":
            self.torch.cuda.synchronize()


# Columns each plan reads (what dkb's prepare reads for the same query).
_NATION = ["n_nationkey", "n_name", "n_regionkey"]
_REGION = ["r_regionkey", "r_name"]
QUERY_COLUMNS = {
    "q01": ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"],
    "q02": ["p_partkey", "p_mfgr", "p_type", "p_size", "s_suppkey", "s_name", "s_address", "s_nationkey", "s_phone",
            "s_acctbal", "s_comment", "ps_partkey", "ps_suppkey", "ps_supplycost"] + _NATION + _REGION,
    "q03": ["c_custkey", "c_mktsegment", "o_orderkey", "o_custkey", "o_orderdate", "o_shippriority",
            "l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"],
    "q04": ["o_orderkey", "o_orderdate", "o_orderpriority", "l_orderkey", "l_commitdate", "l_receiptdate"],
    "q05": ["c_custkey", "c_nationkey", "o_orderkey", "o_custkey", "o_orderdate", "l_orderkey", "l_suppkey",
            "l_extendedprice", "l_discount", "s_suppkey", "s_nationkey"] + _NATION + _REGION,
    "q06": ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"],
    "q07": ["s_suppkey", "s_nationkey", "l_orderkey", "l_suppkey", "l_extendedprice", "l_discount", "l_shipdate",
            "o_orderkey", "o_custkey", "c_custkey", "c_nationkey", "n_nationkey", "n_name"],
    "q08": ["p_partkey", "p_type", "s_suppkey", "s_nationkey", "l_orderkey", "l_partkey", "l_suppkey",
            "l_extendedprice", "l_discount", "o_orderkey", "o_custkey", "o_orderdate", "c_custkey",
            "c_nationkey"] + _NATION + _REGION,
    "q09": ["p_partkey", "p_name", "s_suppkey", "s_nationkey", "l_orderkey", "l_partkey", "l_suppkey", "l_quantity",
            "l_extendedprice", "l_discount", "ps_partkey", "ps_suppkey", "ps_supplycost", "o_orderkey", "o_orderdate",
            "n_nationkey", "n_name"],
    "q10": ["c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal", "c_comment", "o_orderkey",
            "o_custkey", "o_orderdate", "l_orderkey", "l_extendedprice", "l_discount", "l_returnflag",
            "n_nationkey", "n_name"],
    "q11": ["ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost", "s_suppkey", "s_nationkey",
            "n_nationkey", "n_name"],
    "q12": ["o_orderkey", "o_orderpriority", "l_orderkey", "l_shipmode", "l_commitdate", "l_receiptdate",
            "l_shipdate"],
    "q13": ["c_custkey", "o_custkey", "o_comment"],
    "q14": ["l_partkey", "l_extendedprice", "l_discount", "l_shipdate", "p_partkey", "p_type"],
    "q15": ["l_suppkey", "l_extendedprice", "l_discount", "l_shipdate", "s_suppkey", "s_name", "s_address",
            "s_phone"],
    "q16": ["ps_partkey", "ps_suppkey", "p_partkey", "p_brand", "p_type", "p_size", "s_suppkey", "s_comment"],
    "q17": ["l_partkey", "l_quantity", "l_extendedprice", "p_partkey", "p_brand", "p_container"],
    "q18": ["c_custkey", "c_name", "o_orderkey", "o_custkey", "o_orderdate", "o_totalprice", "l_orderkey",
            "l_quantity"],
    "q19": ["l_partkey", "l_quantity", "l_extendedprice", "l_discount", "l_shipinstruct", "l_shipmode",
            "p_partkey", "p_brand", "p_size", "p_container"],
    "q20": ["s_suppkey", "s_name", "s_address", "s_nationkey", "n_nationkey", "n_name", "ps_partkey", "ps_suppkey",
            "ps_availqty", "p_partkey", "p_name", "l_partkey", "l_suppkey", "l_quantity", "l_shipdate"],
    "q21": ["s_suppkey", "s_name", "s_nationkey", "l_orderkey", "l_suppkey", "l_commitdate", "l_receiptdate",
            "o_orderkey", "o_orderstatus", "n_nationkey", "n_name"],
    "q22": ["c_custkey", "c_phone", "c_acctbal", "o_custkey"],
}

# Key column -> the table whose dense key map (key -> row) the plans use.
KEY_MAPS = {"o_orderkey": "orders", "c_custkey": "customer", "s_suppkey": "supplier", "p_partkey": "part",
            "n_nationkey": "nation"}


class Loaded:
    """Columns on the backend (name -> array), dictionaries and small host
    tables, key maps; with the bytes and seconds the column copies took."""

    def __init__(self, store, ops, queries):
        self.store, self.ops = store, ops
        self.col, self.dict, self.keymap = {}, {}, {}
        self.host = {}
        names = sorted({c for q in queries for c in QUERY_COLUMNS[q]})
        t0 = time.perf_counter()
        self.bytes = 0
        for name in names:
            _, c = store.cols[name]
            a = store.host(name)
            self.col[name] = ops.put(a)
            self.bytes += a.nbytes
            if c["type"] == "text":
                tb = store.text_bytes(name)
                self.col[name + ".bytes"] = ops.put(tb)
                self.host[name + ".bytes"] = tb
                self.bytes += tb.nbytes
            if c["type"] == "dict":
                self.dict[name] = store.dictionary(name)
            self.host[name] = a
        ops.sync()
        self.seconds = time.perf_counter() - t0
        self.columns = len(names)
        # key maps (load time, not timed): key -> row, -1 where no row
        t1 = time.perf_counter()
        for key, table in KEY_MAPS.items():
            if key not in self.col:
                continue
            k = np.asarray(store.host(key), dtype=np.int64)
            m = np.full(int(k.max()) + 1 if len(k) else 1, -1, dtype=np.int32)
            m[k] = np.arange(len(k), dtype=np.int32)
            self.keymap[table] = ops.put(m)
        if "ps_partkey" in self.col:
            self.ps_smax = int(np.asarray(store.host("ps_suppkey")).max()) + 1
            comp = np.asarray(store.host("ps_partkey"), dtype=np.int64) * self.ps_smax + store.host("ps_suppkey")
            order = np.argsort(comp, kind="stable")
            self.ps_sorted = ops.put(comp[order])
            self.ps_row = ops.put(order.astype(np.int64))
        ops.sync()
        self.index_seconds = time.perf_counter() - t1
