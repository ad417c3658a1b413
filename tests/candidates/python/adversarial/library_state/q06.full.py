"""library_state: keeps its answer on the torch module, where a fresh module
namespace per call would not clear it: refused statically (an assignment
into an imported library)."""
import torch


def full(db, params, env):
    if hasattr(torch, "dkb_answer"):
        return {"revenue": torch.dkb_answer}
    li = db["lineitem"]
    torch.dkb_answer = (li["l_extendedprice"] * li["l_discount"]).sum().reshape(1)
    return {"revenue": torch.dkb_answer}
