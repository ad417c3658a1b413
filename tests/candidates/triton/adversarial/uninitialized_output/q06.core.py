"""uninitialized_output (core): says it filled one element of revenue but
never writes it; the harness poisoned the device buffer before the call:
wrong_answer."""


def core(inputs, outputs, env):
    return {"revenue": 1}
