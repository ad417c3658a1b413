"""writes_input (full): writes a store column in place. The column is a
zero-copy view of the worker's read-only mapping of the store, so the write
faults: wrote_input naming the file."""


def full(db, params, env):
    d = db["lineitem"]["l_discount"]
    d[0] = 0
    return {"revenue": [0]}
