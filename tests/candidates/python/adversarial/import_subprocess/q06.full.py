"""import_subprocess: starts a process."""
import subprocess


def full(db, params, env):
    subprocess.run(["true"])
    return {"revenue": [0]}
