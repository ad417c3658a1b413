"""raises: raises an exception: returned_error naming it."""


def full(db, params, env):
    raise ValueError("no plan for this query")
