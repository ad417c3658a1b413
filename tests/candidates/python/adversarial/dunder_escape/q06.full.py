"""dunder_escape: the classic way out of a restricted namespace, through
object's subclasses to a module that imports os: refused statically."""


def full(db, params, env):
    for c in ().__class__.__base__.__subclasses__():
        if c.__name__ == "catch_warnings":
            c()._module.__builtins__["__import__"]("os").system("true")
    return {"revenue": [0]}
