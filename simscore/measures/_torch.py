"""Torch devices for the model-backed measures: checked before any work, named in signatures.

A device string is checked when a measure is configured -- ``"cpu"`` without importing
torch, ``"cuda"`` / ``"cuda:N"`` against the GPUs torch can see -- so a device that does not
exist stops a command before it reads a file, with a message that says what exists, instead
of torch's ``AssertionError`` at scoring time.

Examples
--------
>>> check_device("CPU")
'cpu'
>>> check_device("gpu")
Traceback (most recent call last):
...
simscore.errors.TextMeasureError: device must be 'cpu', 'cuda' or 'cuda:N', got 'gpu'
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from simscore.errors import MissingDependencyError, TextMeasureError

__all__ = ["check_device", "check_dtype", "device_label", "torch_threads", "exact_float32", "DTYPES"]

_DEVICE = re.compile(r"cpu|cuda(?::(\d+))?")


def check_device(device: object, *, name: str = "device") -> str:
    """``device`` normalised (``"cpu"``, ``"cuda:N"``), or an error naming what exists.

    Raises
    ------
    TextMeasureError
        Not a device string, or a CUDA device torch cannot see (torch built without CUDA,
        no GPU visible, or an index beyond the visible GPUs).
    MissingDependencyError
        A CUDA device without torch installed.
    """
    if not isinstance(device, str):
        raise TextMeasureError(f"{name} must be 'cpu', 'cuda' or 'cuda:N', got {type(device).__name__} {device!r}")
    text = device.strip().lower()
    match = _DEVICE.fullmatch(text)
    if match is None:
        raise TextMeasureError(f"{name} must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if text == "cpu":
        return "cpu"
    try:
        import torch
    except ImportError:
        raise MissingDependencyError(
            f"{name} {device!r}: torch is not installed (the text extra: pip install 'simscore-dialogue[text]'); "
            "without it everything runs on the CPU"
        ) from None

    index = int(match.group(1) or 0)
    if torch.version.cuda is None:
        raise TextMeasureError(
            f"{name} {device!r}: this torch ({torch.__version__}) was built without CUDA; "
            "use 'cpu', or install a CUDA build of torch"
        )
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        raise TextMeasureError(f"{name} {device!r}: torch sees no CUDA device (CUDA_VISIBLE_DEVICES, driver?); use 'cpu'")
    if index >= count:
        visible = ", ".join(f"cuda:{i}" for i in range(count))
        raise TextMeasureError(f"{name} {device!r}: torch sees {count} CUDA device(s): {visible}")
    return f"cuda:{index}"


def device_label(device: str) -> str:
    """A device as a signature names it: ``cpu``, or ``cuda(<GPU name>)`` (numbers can differ
    between GPU models, not between two GPUs of one model)."""
    if device == "cpu":
        return "cpu"
    import torch

    return f"cuda({torch.cuda.get_device_name(torch.device(device))})"


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run torch's CPU operations on ``threads`` threads inside the block, then restore.

    The model-backed measures set their thread count once per scoring call (not per batch),
    so torch's threads and numpy's BLAS threads never compete (BLAS is not used while torch
    works); the process-wide setting is restored on the way out.
    """
    import torch

    before = torch.get_num_threads()
    if before != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


#: The dtypes a model-backed measure can run its model in (its embeddings are float32 after).
DTYPES = ("float32", "bfloat16", "float16")


def check_dtype(dtype: object, device: str, *, name: str = "dtype") -> str:
    """``dtype`` if the model can run in it on ``device`` (float16 needs a CUDA device).

    >>> check_dtype("bfloat16", "cpu")
    'bfloat16'
    >>> check_dtype("float16", "cpu")
    Traceback (most recent call last):
    ...
    simscore.errors.TextMeasureError: dtype 'float16' needs a CUDA device; on the CPU use 'float32' or 'bfloat16'
    """
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise TextMeasureError(f"{name} must be one of {', '.join(map(repr, DTYPES))}, got {dtype!r}")
    if dtype == "float16" and device == "cpu":
        raise TextMeasureError(f"{name} 'float16' needs a CUDA device; on the CPU use 'float32' or 'bfloat16'")
    return dtype


@contextlib.contextmanager
def exact_float32() -> Iterator[None]:
    """float32 matrix products in float32 on CUDA inside the block (TF32 off), then restore.

    torch lets CUDA round float32 products through TF32 when a program allows it
    (``torch.backends.cuda.matmul.allow_tf32``, ``torch.set_float32_matmul_precision``, or
    cuDNN's default); TF32 keeps 10 mantissa bits and moves an embedding by ~1e-3, and by an
    amount that depends on the batch. The measures switch it off while they run their model
    and restore the caller's settings after.
    """
    import torch

    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    precision = torch.get_float32_matmul_precision()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if precision != "highest":
        torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
        if precision != "highest":
            torch.set_float32_matmul_precision(precision)
