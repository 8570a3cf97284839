"""The client chunk from the memory at hand (issue 23, item 2): how many clients' minibatch gradients one vmapped call
computes, chosen before training so that a default run does not run out of memory.

One local step evaluates the gradient of every client at once (``vmap`` over the m rows); its memory is about m times
one client's: the activations of a batch kept for the backward pass and their gradients, and a few parameter-sized
tensors. :func:`per_client_bytes` estimates one client's share,
:func:`dfltheory.empirical.budget.free_bytes` reads what the device has free, and :func:`choose` takes all clients in
one call where ``m`` shares fit in :data:`FRACTION` of it, else the largest chunk that fits, and refuses, with the
numbers, a run in which one client does not fit. An explicit ``--client-chunk`` is checked the same way
(:func:`check`). The estimate is an upper-bound model, not a measurement (on a GPU the first round's peak,
``torch.cuda.max_memory_allocated``, is the measurement to compare it with: ``benchmarks/gpu_check.py`` records it).
"""

from __future__ import annotations

import torch

from dfltheory.empirical.budget import free_bytes, gib

FRACTION = 0.5  # the share of the free memory the local steps' gradients may take
FACTOR = 3.0  # activations kept for the backward pass, their gradients and the vmapped copies, per activation


def per_client_bytes(module: torch.nn.Module, sample: torch.Tensor, batch: int, dim: int) -> float:
    """Estimated bytes of one client's gradient call: FACTOR x the activations of ``batch`` samples (every module's
    output on one ``sample``, measured by forward hooks, times ``batch``) plus 6 parameter-sized tensors (the model,
    its gradient, SAM's perturbed point, the local rule's state and the step's temporaries) of ``dim`` entries."""
    sizes: list[int] = []

    def hook(_module, _inputs, output):
        if torch.is_tensor(output):
            sizes.append(output.numel() * output.element_size())

    leaves = [m for m in module.modules() if not list(m.children())]
    handles = [m.register_forward_hook(hook) for m in leaves]
    try:
        with torch.no_grad():
            module(sample[:1])
    finally:
        for h in handles:
            h.remove()
    element = sample.element_size() if sample.is_floating_point() else 4
    return FACTOR * batch * float(sum(sizes)) + 6.0 * dim * element


def choose(m: int, per_client: float, free: float | None, fraction: float = FRACTION) -> int | None:
    """None (all ``m`` clients in one call) where they fit in ``fraction`` of ``free``; else the largest chunk that
    fits; a ValueError naming the numbers where one client does not fit. ``free`` None: no choice (None)."""
    if free is None:
        return None
    budget = fraction * free
    if m * per_client <= budget:
        return None
    chunk = int(budget // per_client)
    if chunk < 1:
        raise ValueError(f"one client's local gradient needs about {gib(per_client)} and {gib(free)} is free "
                         f"({fraction:g} of it for the local steps): lower --batch-size, use a smaller --model, or "
                         "free the device")
    return chunk


def check(chunk: int, m: int, per_client: float, free: float | None, fraction: float = FRACTION) -> None:
    """Refuse, before training and with the numbers, a ``--client-chunk`` whose clients do not fit."""
    if free is None:
        return
    need = min(chunk, m) * per_client
    if need > fraction * free:
        fits = max(0, int(fraction * free // per_client))
        fix = f"--client-chunk {fits} or less" if fits else "a smaller --batch-size or --model"
        raise ValueError(f"--client-chunk {chunk} needs about {gib(need)} for its clients' gradients, and "
                         f"{gib(free)} is free ({fraction:g} of it for the local steps); give {fix}, or leave "
                         "--client-chunk out to have it chosen")


def for_engine(model, sample: torch.Tensor, batch: int, m: int, device: torch.device, given: int | None
               ) -> int | None:
    """The engine's client chunk: ``given`` (checked) or the chosen one."""
    per = per_client_bytes(model.module, sample, batch, model.dim)
    free = free_bytes(device)
    if given is not None:
        check(given, m, per, free)
        return given
    return choose(m, per, free)

