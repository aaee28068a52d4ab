"""Which torch device a local model runs on: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.

Why one place: the causal LM (:mod:`.lm`) and the sentence-transformers embedder (:mod:`.embed_st`) take
the same device names, and both must refuse the same way. A CUDA device asked for on a machine without
one is a one-line :class:`~logichunk.errors.ModelUnavailable` naming it, never a silent run on the CPU
(a corpus pass planned for a GPU would take hours there); only ``auto`` chooses, and says what it chose
(:attr:`Device.note`). torch is imported on first use, like every torch backend here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError, ModelUnavailable

__all__ = ["DEVICE_NAMES", "Device", "is_device_name", "resolve_device"]

DEVICE_NAMES = "cpu, cuda, cuda:N or auto"
_NAME = re.compile(r"cpu|auto|cuda(?::\d+)?")


@dataclass(frozen=True)
class Device:
    """``name``: what torch is given (``cpu``, ``cuda``, ``cuda:1``); ``note``: how ``auto`` chose it
    (``''`` when the device was named)."""

    name: str
    note: str = ""

    @property
    def cuda(self) -> bool:
        return self.name.startswith("cuda")


def is_device_name(name: str) -> bool:
    """Whether ``name`` is a device this module knows (``cpu``, ``auto``, ``cuda``, ``cuda:N``)."""
    return bool(_NAME.fullmatch(name.strip().lower()))


def resolve_device(name: str | None = "cpu") -> Device:
    """The device ``name`` asks for (None: ``cpu``). ``auto``: ``cuda`` when torch sees a CUDA device, else
    ``cpu``, said in the note. ``cuda``/``cuda:N`` without that device: :class:`ModelUnavailable`."""
    name = (name or "cpu").strip().lower()
    if not is_device_name(name):
        raise InputError(f"device must be {DEVICE_NAMES}, got {name!r}")
    if name == "cpu":
        return Device("cpu")
    try:
        import torch
    except ImportError:  # pragma: no cover - the callers check torch first
        if name == "auto":
            return Device("cpu", "auto: cpu (torch is not installed)")
        raise ModelUnavailable(f"device {name}: torch is not installed") from None
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if name == "auto":
        if count:
            return Device("cuda", f"auto: cuda ({torch.cuda.get_device_name(0)})")
        return Device("cpu", "auto: cpu (torch sees no CUDA device)")
    index = int(name.partition(":")[2] or 0)
    if index >= count:
        why = ("this torch build has no CUDA" if torch.version.cuda is None
               else f"torch sees {count} CUDA device{'s' if count != 1 else ''}")
        raise ModelUnavailable(f"device {name} is not available: {why}; ask for cpu or auto")
    return Device(name)
