"""bad_result: returns a column the result does not have."""


def full(db, params, env):
    return {"total": [1]}
