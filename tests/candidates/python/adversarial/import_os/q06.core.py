"""import_os (core): reaches os through torch (torch.os), no import statement."""
import torch


def core(inputs, outputs, env):
    torch.os.system("true")
    return {"revenue": 0}
