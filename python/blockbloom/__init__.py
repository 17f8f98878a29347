"""blockbloom: cache-line-blocked Bloom filters with SIMD kernels, from Python.

Keys hash exactly as the Rust crate's documented key bytes: an ``int`` as its 64-bit
little-endian form (in ``[-2**63, 2**64)``), a ``str`` as its UTF-8 bytes, ``bytes`` as they
are. Batches (``insert_batch``/``contains_batch``) read NumPy and pyarrow arrays in place and
release the GIL; ``to_bytes``/``from_bytes`` are the crate's file format.
"""

from __future__ import annotations

from . import exceptions
from ._blockbloom import (
    AtomicBloomFilter,
    BloomFilter,
    CountingBloomFilter,
    ScalableBloomFilter,
    SplitBlockFilter,
    kernel,
)
from .exceptions import (
    AllocationError,
    BlockbloomError,
    DecodeError,
    IncompatibleFiltersError,
    InvalidKeysError,
    InvalidParameterError,
    NotPresentError,
    UnsupportedKeyTypeError,
)

__version__ = "0.1.0"


def _restore(cls, data):
    """Unpickles a filter: ``cls.from_bytes(data)``."""
    return cls.from_bytes(data)


__all__ = [
    "AtomicBloomFilter",
    "BloomFilter",
    "CountingBloomFilter",
    "ScalableBloomFilter",
    "SplitBlockFilter",
    "kernel",
    "exceptions",
    "AllocationError",
    "BlockbloomError",
    "DecodeError",
    "IncompatibleFiltersError",
    "InvalidKeysError",
    "InvalidParameterError",
    "NotPresentError",
    "UnsupportedKeyTypeError",
]
