"""bad_entry: defines no full()."""


def fulll(db, params, env):
    return {}
