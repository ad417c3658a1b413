"""import_ctypes: calls libc directly."""
import ctypes


def core(inputs, outputs, env):
    ctypes.CDLL(None).abort()
    return {"revenue": 0}
