"""opens_file: reads a file through an allowed library (numpy.load, which
opens it with Python's open: no import or name the static check refuses)
and swallows the error. The bridge's audit hook refuses the open and
remembers it: forbidden_symbol, whatever the candidate does next."""
import numpy as np


def full(db, params, env):
    try:
        np.load("/etc/hostname")
    except Exception:
        pass
    return {"revenue": [0]}
