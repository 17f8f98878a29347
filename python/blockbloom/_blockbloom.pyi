"""Type stubs of the compiled module (re-exported by ``blockbloom``)."""

from __future__ import annotations

from typing import Any, Iterable, Literal, Union, overload

import numpy as np
import numpy.typing as npt

Key = Union[int, str, bytes, bytearray]
"""A key: ``int`` hashes as its 64-bit little-endian form (in ``[-2**63, 2**64)``), ``str`` as
UTF-8, ``bytes``/``bytearray`` as they are."""

NumpyKeys = Union[
    npt.NDArray[np.uint64],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint32],
    npt.NDArray[np.int32],
    npt.NDArray[np.uint16],
    npt.NDArray[np.int16],
    npt.NDArray[np.uint8],
    npt.NDArray[np.int8],
]
"""A 1-D C-contiguous NumPy array of keys (an integer of every width hashes as its 64-bit value,
like ``int``; 16-byte ``S16``/``V16`` records as bytes)."""

Layout = Literal["8x64", "4x128", "8x32"]

class _Filter:
    def add(self, key: Key, /) -> None:
        """Adds one key."""
    def update(self, keys: Iterable[Key] | NumpyKeys | Any, /) -> None:
        """Adds every key of an iterable (NumPy and pyarrow arrays go through ``insert_batch``).
        A key of an unsupported type raises before any key is added."""
    def __contains__(self, key: object, /) -> bool: ...
    def insert_batch(self, keys: NumpyKeys | Any, /) -> None:
        """Inserts a NumPy array (int8 to int64, uint8 to uint64) or a pyarrow Array/ChunkedArray
        (those integers, string, large_string, binary, large_binary, fixed_size_binary(16);
        nulls skipped), read in place with the GIL released. Raises
        ``UnsupportedKeyTypeError`` (a dtype or Arrow type it does not take) or
        ``InvalidKeysError`` (not 1-D, not C-contiguous, invalid offsets) before inserting
        anything."""
    @overload
    def contains_batch(self, keys: NumpyKeys, /) -> npt.NDArray[np.bool_]: ...
    @overload
    def contains_batch(self, keys: Any, /) -> Any:
        """pyarrow input: a ``pyarrow.BooleanArray`` (null where the key is null), or a
        ``ChunkedArray`` of them."""
    def estimated_len(self) -> float:
        """Estimated number of distinct keys inserted."""
    def to_bytes(self) -> bytes:
        """The Rust crate's encoding of this filter (the same bytes as its ``to_bytes``)."""
    def copy(self) -> Any: ...
    def __copy__(self) -> Any: ...
    def __deepcopy__(self, memo: Any, /) -> Any: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> Any: ...
    __hash__: None  # type: ignore[assignment]
    @property
    def size_in_bytes(self) -> int: ...

class BloomFilter(_Filter):
    """A cache-line-blocked Bloom filter for ``capacity`` keys at a false-positive rate at or
    below ``fpr``. ``keyed=True`` draws a secret random seed (against crafted keys);
    ``key_hash="xxh3-64"`` builds on hash id 1, as every filter before hash id 2 (to merge with
    one of them); ``key_hash="mx32-64"`` on hash id 3, whose integer hash is faster on AVX2."""

    def __init__(
        self,
        capacity: int,
        fpr: float,
        seed: int = 0,
        *,
        layout: Layout | None = None,
        probes: int | None = None,
        keyed: bool = False,
        key_hash: Literal["aesh-64", "mx32-64", "moremur-64", "xxh3-64"] = "mx32-64",
        least_memory: bool = False,
    ) -> None:
        """A filter for ``capacity`` keys at ``fpr``, in the library's default configuration:
        hash id 3 (``"mx32-64"``) and layout ``"8x32"`` where that costs at most 5% more memory
        than the smallest filter for the rate, else the smallest. ``least_memory=True`` asks
        for the smallest always; ``layout`` fixes one."""
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, /) -> BloomFilter:
        """Raises ``DecodeError`` (with the crate's message) on corrupt or foreign bytes."""
    def fill_ratio(self) -> float: ...
    def expected_fpr(self) -> float: ...
    def clear(self) -> None: ...
    def copy(self) -> BloomFilter: ...
    def union(self, other: BloomFilter, /) -> BloomFilter:
        """Raises ``IncompatibleFiltersError`` unless shape and seed match."""
    def intersection(self, other: BloomFilter, /) -> BloomFilter: ...
    def __or__(self, other: BloomFilter, /) -> BloomFilter: ...
    def __and__(self, other: BloomFilter, /) -> BloomFilter: ...
    def __ior__(self, other: BloomFilter, /) -> BloomFilter: ...
    def __iand__(self, other: BloomFilter, /) -> BloomFilter: ...
    @property
    def capacity(self) -> int: ...
    @property
    def target_fpr(self) -> float | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def key_hash(self) -> Literal["aesh-64", "mx32-64", "moremur-64", "xxh3-64"]:
        """The key hash: ``"mx32-64"`` (hash id 3, the default: MX32-64 for keys of 4, 8 and 16
        bytes, the integers among them, AESH-64 for the others), ``"aesh-64"`` (hash id 2:
        AESH-64, XXH3-64 for keys of 4 and 8 bytes), ``"moremur-64"`` (hash id 4: MM64 where id 3
        takes MX32-64, single keys hashed sooner, batches slower on AVX2) or ``"xxh3-64"`` (hash
        id 1, every filter's hash before id 2)."""
    @property
    def probes(self) -> int: ...
    @property
    def num_blocks(self) -> int: ...
    @property
    def bits_per_key(self) -> float: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def isa(self) -> str: ...

class AtomicBloomFilter(_Filter):
    """A Bloom filter whose inserts run from many threads at once (same bits and bytes as
    ``BloomFilter``)."""

    def __init__(
        self,
        capacity: int,
        fpr: float,
        seed: int = 0,
        *,
        layout: Layout | None = None,
        probes: int | None = None,
        keyed: bool = False,
        key_hash: Literal["aesh-64", "mx32-64", "moremur-64", "xxh3-64"] = "mx32-64",
        least_memory: bool = False,
    ) -> None:
        """A filter for ``capacity`` keys at ``fpr``, in the library's default configuration:
        hash id 3 (``"mx32-64"``) and layout ``"8x32"`` where that costs at most 5% more memory
        than the smallest filter for the rate, else the smallest. ``least_memory=True`` asks
        for the smallest always; ``layout`` fixes one."""
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, /) -> AtomicBloomFilter: ...
    def snapshot(self) -> BloomFilter: ...
    def fill_ratio(self) -> float: ...
    def expected_fpr(self) -> float: ...
    def copy(self) -> AtomicBloomFilter: ...
    def union(self, other: AtomicBloomFilter, /) -> AtomicBloomFilter: ...
    def intersection(self, other: AtomicBloomFilter, /) -> AtomicBloomFilter: ...
    def __or__(self, other: AtomicBloomFilter, /) -> AtomicBloomFilter: ...
    def __and__(self, other: AtomicBloomFilter, /) -> AtomicBloomFilter: ...
    def __ior__(self, other: AtomicBloomFilter, /) -> AtomicBloomFilter: ...
    @property
    def capacity(self) -> int: ...
    @property
    def target_fpr(self) -> float | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def key_hash(self) -> Literal["aesh-64", "mx32-64", "moremur-64", "xxh3-64"]:
        """The key hash: ``"mx32-64"`` (hash id 3, the default: MX32-64 for keys of 4, 8 and 16
        bytes, the integers among them, AESH-64 for the others), ``"aesh-64"`` (hash id 2:
        AESH-64, XXH3-64 for keys of 4 and 8 bytes), ``"moremur-64"`` (hash id 4: MM64 where id 3
        takes MX32-64, single keys hashed sooner, batches slower on AVX2) or ``"xxh3-64"`` (hash
        id 1, every filter's hash before id 2)."""
    @property
    def probes(self) -> int: ...
    @property
    def isa(self) -> str: ...

class CountingBloomFilter(_Filter):
    """A Bloom filter of 4- or 8-bit saturating counters: keys can be removed and counted."""

    def __init__(
        self, capacity: int, fpr: float, seed: int = 0, *, counter_bits: Literal[4, 8] = 4
    ) -> None: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, /) -> CountingBloomFilter: ...
    def remove(self, key: Key, /) -> None:
        """Raises ``NotPresentError`` (a ``KeyError``) if the key is certainly absent."""
    def discard(self, key: Key, /) -> bool: ...
    def count(self, key: Key, /) -> int: ...
    def to_bloom(self) -> BloomFilter: ...
    def clear(self) -> None: ...
    def copy(self) -> CountingBloomFilter: ...
    @property
    def capacity(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def counter_bits(self) -> int: ...

class ScalableBloomFilter(_Filter):
    """A Bloom filter that adds stages as keys arrive, under a fixed false-positive target."""

    def __init__(
        self,
        initial_capacity: int,
        fpr: float,
        seed: int = 0,
        *,
        growth: float | None = None,
        ratio: float | None = None,
    ) -> None: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, /) -> ScalableBloomFilter: ...
    def expected_fpr(self) -> float: ...
    def copy(self) -> ScalableBloomFilter: ...
    @property
    def capacity(self) -> int: ...
    @property
    def stages(self) -> int: ...
    @property
    def seed(self) -> int: ...

class SplitBlockFilter(_Filter):
    """Parquet's split block Bloom filter. Keys hash as their Parquet plain encoding: ``int``
    as INT64, ``str``/``bytes`` as BYTE_ARRAY, 32-bit arrays as INT32."""

    def __init__(self, ndv: int, fpp: float) -> None: ...
    @staticmethod
    def with_num_bytes(num_bytes: int) -> SplitBlockFilter: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, /) -> SplitBlockFilter:
        """A filter over a Parquet bitset (a power of two of at least 32 bytes)."""
    def estimated_fpp(self) -> float: ...
    def copy(self) -> SplitBlockFilter: ...
    def union(self, other: SplitBlockFilter, /) -> SplitBlockFilter: ...
    def intersection(self, other: SplitBlockFilter, /) -> SplitBlockFilter: ...
    def __or__(self, other: SplitBlockFilter, /) -> SplitBlockFilter: ...
    def __and__(self, other: SplitBlockFilter, /) -> SplitBlockFilter: ...
    def __ior__(self, other: SplitBlockFilter, /) -> SplitBlockFilter: ...
    @property
    def num_bytes(self) -> int: ...
    @property
    def isa(self) -> str: ...

def kernel() -> str:
    """The SIMD kernel this process's batches run on (``BLOCKBLOOM_ISA`` forces one)."""
