"""import_os: imports os."""
import os


def full(db, params, env):
    os.system("true")
    return {"revenue": [0]}
