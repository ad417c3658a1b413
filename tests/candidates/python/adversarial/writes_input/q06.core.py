"""writes_input (core): adds to a prepared input in place (read-only
memory: the write faults): wrote_input."""


def core(inputs, outputs, env):
    inputs["l_discount"].add_(1)
    return {"revenue": 0}
