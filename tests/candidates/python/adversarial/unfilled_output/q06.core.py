"""unfilled_output (core): says it filled one element of revenue but never
writes it; the harness poisoned the buffer: wrong_answer."""


def core(inputs, outputs, env):
    return {"revenue": 1}
