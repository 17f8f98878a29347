"""Exceptions raised by blockbloom.

Every error of the Rust crate arrives as one of these classes, with the crate's message as
its text and the Rust variant's name in ``kind`` (for example ``"ChecksumMismatch"``). Each
class also derives from the built-in exception a Python caller would catch.
"""

from __future__ import annotations


class BlockbloomError(Exception):
    """Base class of every blockbloom error. ``kind`` names the Rust error variant."""

    kind: str = "Error"


class InvalidParameterError(BlockbloomError, ValueError):
    """A parameter is out of range (fpr, capacity, probes, layout, counter bits, ...)."""


class DecodeError(BlockbloomError, ValueError):
    """``from_bytes``: the bytes are not a filter this build reads (bad magic, truncated,
    trailing bytes, checksum mismatch, invalid header, wrong kind, bad bitset length)."""


class IncompatibleFiltersError(BlockbloomError, ValueError):
    """Two filters cannot be combined (different shape, seed, key hash or size)."""


class NotPresentError(BlockbloomError, KeyError):
    """``CountingBloomFilter.remove``: the key is certainly not in the filter."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the crate's message.
        return str(self.args[0]) if self.args else ""


class AllocationError(BlockbloomError, MemoryError):
    """The allocator refused the filter's memory."""


class UnsupportedKeyTypeError(BlockbloomError, TypeError):
    """A key, dtype or Arrow type the filters do not hash."""


class InvalidKeysError(BlockbloomError, ValueError):
    """A batch of keys is unusable: not 1-D, not contiguous, or with invalid buffers or
    offsets."""


__all__ = [
    "BlockbloomError",
    "InvalidParameterError",
    "DecodeError",
    "IncompatibleFiltersError",
    "NotPresentError",
    "AllocationError",
    "UnsupportedKeyTypeError",
    "InvalidKeysError",
]
