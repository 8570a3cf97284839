"""Memory a run will need, checked against what its device has free before anything large is allocated.

The empirical pillar's one place for the check (issue 24 item 2): the synthetic data before they are generated
(:func:`dfltheory.empirical.data.load`), the clients' stacked state before the engine builds it (its layout drawn on
PyTorch's ``meta`` device, which allocates nothing), and the local steps' gradients
(:mod:`dfltheory.empirical.chunk`, which splits the clients into chunks rather than refuse). A refusal gives the
need, what is free and the options that lower the need.
"""

from __future__ import annotations

import torch

FRACTION = 0.75  # of the free memory a run's data or state may take


def free_bytes(device: torch.device) -> float | None:
    """The device's free memory in bytes (None where it cannot be read)."""
    device = torch.device(device)
    if device.type == "cuda":
        return float(torch.cuda.mem_get_info(device)[0])
    if device.type == "cpu":
        from dfltheory.topology.memory import available_bytes

        free = available_bytes()
        return free if free != float("inf") else None
    return None


def gib(x: float) -> str:
    return f"{x / 2**30:.3g} GiB"


def require(need: float, what: str, fix: str, device="cpu") -> None:
    """ValueError naming ``what`` needs ``need`` bytes, what is free, and ``fix``, where ``need`` is more than
    :data:`FRACTION` of the device's free memory."""
    free = free_bytes(device)
    if free is not None and need > FRACTION * free:
        raise ValueError(f"{what} would need about {gib(need)}, and {gib(free)} is free on {torch.device(device)} "
                         f"(at most {FRACTION:g} of it is used); {fix}")
