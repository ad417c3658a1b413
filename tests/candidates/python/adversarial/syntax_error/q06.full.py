"""syntax_error: does not parse."""


def full(db, params, env)
    return {}
