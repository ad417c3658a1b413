"""never_ends: loops for ever; the sandbox kills the worker: timeout."""


def full(db, params, env):
    n = 0
    while True:
        n += 1
