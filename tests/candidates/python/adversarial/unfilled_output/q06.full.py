"""unfilled_output (full): returns a fresh, uninitialised tensor
(torch.empty); torch's allocator fills new tensors with junk in the worker,
so it never holds an earlier call's answer: wrong_answer."""
import torch


def full(db, params, env):
    return {"revenue": torch.empty(1, dtype=torch.int64)}
