"""extra_threads: asks torch for more threads than env.threads and runs a
parallel operation; OpenMP's extra threads outlive the call: left_threads."""
import torch


def core(inputs, outputs, env):
    torch.set_num_threads(env.threads + 2)
    (inputs["l_extendedprice"] * inputs["l_discount"]).sum()
    return {"revenue": 0}
