"""recursion: infinite recursion raises RecursionError (the interpreter's
limit): returned_error naming the exception."""


def down(n):
    return down(n + 1) + 1


def core(inputs, outputs, env):
    return {"revenue": down(0)}
