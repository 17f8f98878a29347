"""Behaviour of the Python bindings: answers, batches, encodings, errors."""

from __future__ import annotations

import copy
import math
import pickle
import threading

import numpy as np
import pytest

import blockbloom as bb

pa = pytest.importorskip("pyarrow")

SEED = 12345

# Filters of every kind for 20,000 keys at 1%.
MAKERS = {
    "bloom": lambda: bb.BloomFilter(20_000, 0.01, seed=SEED),
    "bloom-xxh3": lambda: bb.BloomFilter(20_000, 0.01, seed=SEED, key_hash="xxh3-64"),
    "bloom-mx32": lambda: bb.BloomFilter(20_000, 0.01, seed=SEED, key_hash="mx32-64"),
    "atomic": lambda: bb.AtomicBloomFilter(20_000, 0.01, seed=SEED),
    "counting": lambda: bb.CountingBloomFilter(20_000, 0.01, seed=SEED),
    "scalable": lambda: bb.ScalableBloomFilter(5_000, 0.01, seed=SEED),
    "split": lambda: bb.SplitBlockFilter(20_000, 0.01),
}


@pytest.fixture(params=sorted(MAKERS))
def make(request):
    return MAKERS[request.param]


def wilson_upper(fp: int, n: int, z: float = 3.0) -> float:
    """Upper end of the Wilson score interval of fp/n (z = 3: a generous test bound)."""
    p = fp / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    m = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (c + m) / d


# --- answers -------------------------------------------------------------------------------


def test_no_false_negatives_and_fpr_within_bounds():
    n, fpr = 200_000, 0.01
    f = bb.BloomFilter(n, fpr, seed=7)
    members = np.arange(n, dtype=np.uint64) * np.uint64(2654435761)
    f.insert_batch(members)
    assert f.contains_batch(members).all()  # 0 false negatives
    probes = np.arange(n, n + 1_000_000, dtype=np.uint64) * np.uint64(2654435761) + np.uint64(1)
    fp = int(f.contains_batch(probes).sum())
    measured = fp / len(probes)
    assert wilson_upper(fp, len(probes)) >= measured
    # The crate sizes with the exact model: the measured rate is at most the target (within
    # the sampling error of a million probes).
    assert measured <= fpr * 1.15, measured
    assert abs(f.estimated_len() - n) / n < 0.05


def test_every_kind_no_false_negatives(make):
    f = make()
    keys = np.arange(10_000, dtype=np.int64) - 5_000
    f.insert_batch(keys)
    assert f.contains_batch(keys).all()
    words = [f"w{i}" for i in range(1000)]
    f.update(words)
    assert all(w in f for w in words)
    assert 0 < f.estimated_len() < 2 * 11_000


def test_python_keys_hash_as_documented():
    f = bb.BloomFilter(1000, 0.001)
    f.add(42)
    f.add("héllo")
    f.add(b"\x00raw")
    f.add(-1)
    assert 42 in f and "héllo" in f and b"\x00raw" in f
    # str is its UTF-8 bytes; bytearray and memoryview are bytes.
    assert "héllo".encode() in f and bytearray(b"\x00raw") in f
    # int is its 64-bit little-endian form: -1 and 2**64 - 1 are the same key.
    assert 2**64 - 1 in f
    # NumPy integer scalars are ints.
    assert np.int64(42) in f and np.uint32(42) in f
    assert 43 not in f or f.expected_fpr() > 0


def test_key_hash_is_chosen_kept_and_checked():
    new = bb.BloomFilter(1000, 0.01)
    v2 = bb.BloomFilter(1000, 0.01, key_hash="aesh-64", least_memory=True)
    old = bb.BloomFilter(1000, 0.01, key_hash="xxh3-64", least_memory=True)
    assert (new.key_hash, v2.key_hash, old.key_hash) == ("mx32-64", "aesh-64", "xxh3-64")
    assert bb.AtomicBloomFilter(1000, 0.01).key_hash == "mx32-64"
    mm = bb.BloomFilter(1000, 0.01, key_hash="moremur-64")
    # The library's default layout at 1% (8x32, within 5% of the least memory), or the least.
    assert new.layout == "8x32" and v2.layout == "8x64"
    for f in (new, v2, old, mm):
        f.add("user:17")
        f.add(7)
        g = bb.BloomFilter.from_bytes(f.to_bytes())
        assert g.key_hash == f.key_hash and "user:17" in g and 7 in g
    assert [bytes(f.to_bytes())[12] for f in (new, v2, old, mm)] == [3, 2, 1, 4]
    assert mm.key_hash == "moremur-64"
    with pytest.raises(bb.IncompatibleFiltersError, match="key hash"):
        mm.union(new)
    # Integers hash alike under ids 1 and 2; strings do not, so the two cannot merge; nor
    # can either merge with id 3, which hashes integers with MX32-64.
    with pytest.raises(bb.IncompatibleFiltersError, match="key hash"):
        v2.union(old)
    mx = bb.BloomFilter(1000, 0.01, key_hash="mx32-64", least_memory=True)
    with pytest.raises(bb.IncompatibleFiltersError, match="key hash"):
        v2.union(mx)
    with pytest.raises(ValueError, match="key_hash"):
        bb.BloomFilter(1000, 0.01, key_hash="md5")


# --- batches == single keys ------------------------------------------------------------------


INT_DTYPES = [np.uint64, np.int64, np.uint32, np.int32, np.uint16, np.int16, np.uint8, np.int8]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_numpy_batch_equals_single(make, dtype):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    keys = rng.integers(info.min, info.max, size=5000, dtype=dtype, endpoint=True)
    a, b = make(), make()
    a.insert_batch(keys)
    for k in keys.tolist():
        b.add(k)
    if isinstance(a, bb.SplitBlockFilter) and np.dtype(dtype).itemsize <= 4:
        # Parquet hashes an integer of up to 32 bits as INT32, 4 bytes: single ints are
        # INT64, so only the batch forms agree with each other.
        c = make()
        for i in range(0, len(keys), 1000):
            c.insert_batch(keys[i : i + 1000])
        assert a == c
    else:
        assert a == b
    probe = rng.integers(info.min, info.max, size=5000, dtype=dtype, endpoint=True)
    got = a.contains_batch(probe)
    assert got.dtype == np.bool_ and got.shape == probe.shape
    if not (isinstance(a, bb.SplitBlockFilter) and np.dtype(dtype).itemsize <= 4):
        assert got.tolist() == [k in a for k in probe.tolist()]


def test_integer_keys_are_their_64_bit_values_at_every_width():
    f = bb.BloomFilter(1000, 0.0001)
    f.insert_batch(np.array([-7, 5, 2**31 - 1], dtype=np.int32))
    f.insert_batch(np.array([2**32 - 1], dtype=np.uint32))
    f.insert_batch(np.array([-128, 100], dtype=np.int8))
    f.insert_batch(pa.array([65535, 1], type=pa.uint16()))
    assert all(k in f for k in (-7, 5, 2**31 - 1, 2**32 - 1, -128, 100, 65535, 1))
    assert f.contains_batch(np.array([-7, 5, -128, 100, 1], dtype=np.int64)).all()
    assert f.contains_batch(np.array([5, 100, 1], dtype=np.uint8)).all()
    assert f.contains_batch(np.array([-7, -128, 100], dtype=np.int16)).all()
    assert f.contains_batch(pa.array([5, -7], type=pa.int8())).to_pylist() == [True, True]
    # -1 is the 64 bits of u64::MAX, at every width.
    g = bb.BloomFilter(10, 0.0001)
    g.add(-1)
    assert g.contains_batch(np.array([-1], dtype=np.int8))[0]
    assert g.contains_batch(np.array([2**64 - 1], dtype=np.uint64))[0]
    assert not g.contains_batch(np.array([255], dtype=np.uint8))[0]


def test_unaligned_numpy_batch():
    raw = np.zeros(8 * 1001, dtype=np.uint8)
    keys = np.frombuffer(raw.data, dtype=np.uint64, count=1000, offset=1)
    keys = np.frombuffer(raw[1 : 1 + 8 * 1000].tobytes(), dtype=np.uint64)  # aligned copy
    odd = np.frombuffer(raw.data, dtype=np.uint8)[1 : 1 + 8 * 1000].view(np.uint64)
    assert odd.__array_interface__["data"][0] % 8 == 1
    odd[:] = np.arange(1000, dtype=np.uint64)
    f, g = bb.BloomFilter(2000, 0.01), bb.BloomFilter(2000, 0.01)
    f.insert_batch(odd)
    g.insert_batch(np.arange(1000, dtype=np.uint64))
    assert f == g
    assert f.contains_batch(odd).all()
    del keys


ARROW_CASES = {
    "int64": (pa.int64(), lambda i: i * 3 - 500),
    "uint64": (pa.uint64(), lambda i: i * 7 + 2**63),
    "int32": (pa.int32(), lambda i: i - 1000),
    "uint32": (pa.uint32(), lambda i: i * 11),
    "int16": (pa.int16(), lambda i: i * 7 - 10000),
    "uint16": (pa.uint16(), lambda i: i * 13),
    "int8": (pa.int8(), lambda i: i % 256 - 128),
    "uint8": (pa.uint8(), lambda i: i % 256),
    "string": (pa.string(), lambda i: f"key-{i}-é"),
    "large_string": (pa.large_string(), lambda i: f"k{i}"),
    "binary": (pa.binary(), lambda i: bytes([i % 256]) * (i % 5)),
    "large_binary": (pa.large_binary(), lambda i: f"b{i}".encode()),
    "fixed16": (pa.binary(16), lambda i: i.to_bytes(16, "little")),
}


@pytest.mark.parametrize("case", sorted(ARROW_CASES))
def test_arrow_batch_equals_single(make, case):
    ty, value = ARROW_CASES[case]
    values = [value(i) for i in range(3000)]
    values[5] = None
    values[2999] = None
    arr = pa.array(values, type=ty)
    a, b = make(), make()
    a.insert_batch(arr)
    narrow = isinstance(a, bb.SplitBlockFilter) and case in (
        "int32", "uint32", "int16", "uint16", "int8", "uint8"
    )
    if not narrow:
        for v in values:
            if v is not None:
                b.add(v)
        assert a == b
    # Sliced arrays (non-zero offset) and chunked arrays answer the same.
    sliced = arr.slice(3, 2000)
    got = a.contains_batch(sliced)
    assert isinstance(got, pa.BooleanArray) and len(got) == 2000
    assert got.null_count == sliced.null_count == 1
    assert got.is_null().to_pylist() == sliced.is_null().to_pylist()
    assert all(x for x in got.to_pylist() if x is not None)
    if not narrow:
        expect = [None if v is None else (v in a) for v in sliced.to_pylist()]
        assert got.to_pylist() == expect
    chunked = pa.chunked_array([arr.slice(0, 100), arr.slice(100)])
    got = a.contains_batch(chunked)
    assert isinstance(got, pa.ChunkedArray) and got.num_chunks == 2
    c = make()
    c.insert_batch(chunked)
    assert c == a


def test_arrow_numpy_agree():
    keys = np.arange(5000, dtype=np.uint64)
    a, b = bb.BloomFilter(10_000, 0.01), bb.BloomFilter(10_000, 0.01)
    a.insert_batch(keys)
    b.insert_batch(pa.array(keys))
    assert a == b
    out = a.contains_batch(pa.array(keys))
    assert out.null_count == 0 and all(out.to_pylist())


def test_numpy_fixed16_equals_bytes():
    keys = np.frombuffer(b"".join(i.to_bytes(16, "little") for i in range(100)), dtype="V16")
    f = bb.BloomFilter(1000, 0.01)
    f.insert_batch(keys)
    assert all(i.to_bytes(16, "little") in f for i in range(100))


def test_empty_batches(make):
    f = make()
    before = f.to_bytes()
    f.insert_batch(np.array([], dtype=np.uint64))
    f.insert_batch(pa.array([], type=pa.string()))
    assert f.contains_batch(np.array([], dtype=np.int32)).shape == (0,)
    assert len(f.contains_batch(pa.array([], type=pa.binary()))) == 0
    assert f.to_bytes() == before


# --- set-like surface ------------------------------------------------------------------------


def test_union_intersection_copy_eq():
    a, b = bb.BloomFilter(1000, 0.01, seed=3), bb.BloomFilter(1000, 0.01, seed=3)
    a.update(range(0, 500))
    b.update(range(500, 1000))
    u = a | b
    assert all(k in u for k in range(1000))
    assert u != a and (a | b) == (b | a)
    c = a.copy()
    c |= b
    assert c == u and a != u
    i = u & a
    assert all(k in i for k in range(500))
    assert copy.copy(a) == a and copy.deepcopy(a) == a and copy.copy(a) is not a
    with pytest.raises(bb.IncompatibleFiltersError, match="incompatible filters"):
        a | bb.BloomFilter(1000, 0.01, seed=4)
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        len(a)


def test_atomic_and_split_union():
    a, b = bb.AtomicBloomFilter(1000, 0.01), bb.AtomicBloomFilter(1000, 0.01)
    a.add("x")
    b.add("y")
    u = a | b
    assert "x" in u and "y" in u
    a |= b
    assert a == u and a.snapshot() == u.snapshot()
    s, t = bb.SplitBlockFilter(1000, 0.01), bb.SplitBlockFilter(1000, 0.01)
    s.add(1)
    t.add(2)
    s |= t
    assert 1 in s and 2 in s and (s & t) == t
    with pytest.raises(bb.IncompatibleFiltersError):
        s | bb.SplitBlockFilter(100_000, 0.01)


def test_counting_remove():
    f = bb.CountingBloomFilter(1000, 0.01)
    f.add("a")
    f.add("a")
    assert f.count("a") == 2
    f.remove("a")
    assert "a" in f and f.count("a") == 1
    f.remove("a")
    assert "a" not in f
    before = f.to_bytes()
    with pytest.raises(bb.NotPresentError) as e:
        f.remove("a")
    assert isinstance(e.value, KeyError) and e.value.kind == "NotPresent"
    assert f.to_bytes() == before
    assert f.discard("a") is False
    assert isinstance(f.to_bloom(), bb.BloomFilter)


def test_scalable_grows():
    f = bb.ScalableBloomFilter(1000, 0.01)
    f.insert_batch(np.arange(50_000, dtype=np.uint64))
    assert f.stages > 1 and f.contains_batch(np.arange(50_000, dtype=np.uint64)).all()
    miss = f.contains_batch(np.arange(10**9, 10**9 + 100_000, dtype=np.uint64)).mean()
    assert miss <= 0.015


# --- encodings -------------------------------------------------------------------------------


def test_bytes_and_pickle_round_trips(make):
    f = make()
    f.insert_batch(np.arange(3000, dtype=np.uint64))
    f.update(["a", b"b"])
    data = f.to_bytes()
    g = type(f).from_bytes(data)
    assert g == f and g.to_bytes() == data
    assert type(f).from_bytes(bytearray(data)) == f
    assert type(f).from_bytes(memoryview(data)) == f
    h = pickle.loads(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(h) is type(f) and h == f and "a" in h


def test_atomic_bytes_are_bloom_bytes():
    a, b = bb.AtomicBloomFilter(5000, 0.01, seed=9), bb.BloomFilter(5000, 0.01, seed=9)
    for f in (a, b):
        f.insert_batch(np.arange(1000, dtype=np.int64))
    assert a.to_bytes() == b.to_bytes()
    assert bb.BloomFilter.from_bytes(a.to_bytes()) == b


def test_corrupt_payload_and_wrong_length():
    f = bb.BloomFilter(1000, 0.01)
    f.update(range(100))
    data = bytearray(f.to_bytes())
    data[len(data) // 2] ^= 0x10
    with pytest.raises(bb.DecodeError, match="checksum") as e:
        bb.BloomFilter.from_bytes(bytes(data))
    assert e.value.kind == "ChecksumMismatch" and isinstance(e.value, ValueError)
    good = f.to_bytes()
    with pytest.raises(bb.DecodeError, match="truncated") as e:
        bb.BloomFilter.from_bytes(good[:-3])
    assert e.value.kind == "Truncated"
    with pytest.raises(bb.DecodeError) as e:
        bb.BloomFilter.from_bytes(good + b"\0")
    assert e.value.kind == "TrailingBytes"
    with pytest.raises(bb.DecodeError, match="magic"):
        bb.BloomFilter.from_bytes(b"not a filter at all, not at all")
    with pytest.raises(bb.DecodeError):
        bb.SplitBlockFilter.from_bytes(b"\0" * 33)
    with pytest.raises(bb.DecodeError):
        bb.CountingBloomFilter.from_bytes(good)  # a plain filter is the wrong kind
    with pytest.raises(TypeError):
        bb.BloomFilter.from_bytes("text")


def test_invalid_parameters():
    with pytest.raises(bb.InvalidParameterError, match="false-positive rate") as e:
        bb.BloomFilter(1000, 1.5)
    assert isinstance(e.value, ValueError) and e.value.kind == "InvalidFpr"
    with pytest.raises(bb.InvalidParameterError):
        bb.BloomFilter(1000, 0.01, layout="3x3")
    with pytest.raises(bb.InvalidParameterError):
        bb.CountingBloomFilter(1000, 0.01, counter_bits=5)
    with pytest.raises(OverflowError):
        bb.BloomFilter(1000, 0.01).add(2**64)


# --- bad batches change nothing --------------------------------------------------------------


BAD_BATCHES = {
    "float64": (lambda: np.arange(10, dtype=np.float64), bb.UnsupportedKeyTypeError, "float64"),
    "float16": (lambda: np.arange(10, dtype=np.float16), bb.UnsupportedKeyTypeError, "float16"),
    "non-contiguous": (lambda: np.arange(20, dtype=np.uint64)[::2], bb.InvalidKeysError, "contiguous"),
    "2-D": (lambda: np.arange(20, dtype=np.uint64).reshape(4, 5), bb.InvalidKeysError, "1-D"),
    "big-endian": (lambda: np.arange(10, dtype=">u8"), bb.UnsupportedKeyTypeError, "dtype"),
    "list": (lambda: [1, 2, 3], bb.UnsupportedKeyTypeError, "update"),
    "arrow float": (lambda: pa.array([1.0, 2.0]), bb.UnsupportedKeyTypeError, "double"),
    "arrow dict": (
        lambda: pa.array(["a", "b"]).dictionary_encode(),
        bb.UnsupportedKeyTypeError,
        "dictionary",
    ),
    "arrow fixed8": (lambda: pa.array([b"12345678"], type=pa.binary(8)), bb.UnsupportedKeyTypeError, "fixed_size_binary"),
}


@pytest.mark.parametrize("case", sorted(BAD_BATCHES))
def test_bad_batches_raise_and_change_nothing(make, case):
    build, exc, text = BAD_BATCHES[case]
    f = make()
    f.update(range(100))
    before = f.to_bytes()
    with pytest.raises(exc, match=text):
        f.insert_batch(build())
    with pytest.raises(exc, match=text):
        f.contains_batch(build())
    assert f.to_bytes() == before
    assert issubclass(exc, (TypeError, ValueError))


def test_corrupt_arrow_offsets_change_nothing(make):
    values = pa.py_buffer(b"abcdef")
    offsets = pa.py_buffer(np.array([0, 2, 1, 6], dtype=np.int32).tobytes())  # not monotone
    arr = pa.Array.from_buffers(pa.string(), 3, [None, offsets, values])
    f = make()
    f.add("x")
    before = f.to_bytes()
    with pytest.raises(bb.InvalidKeysError) as e:
        f.insert_batch(arr)
    assert e.value.kind == "InvalidOffsets"
    assert f.to_bytes() == before


def test_bad_single_keys_change_nothing():
    f = bb.BloomFilter(1000, 0.01)
    before = f.to_bytes()
    for bad in (1.5, None, object(), (1, 2)):
        with pytest.raises(bb.UnsupportedKeyTypeError):
            f.add(bad)
        with pytest.raises(TypeError):
            bad in f  # noqa: B015
    with pytest.raises(TypeError):
        f.update([1, 2, 3.5])  # the ints before the float are not added
    assert f.to_bytes() == before


# --- threads ---------------------------------------------------------------------------------


def test_threads_insert_and_query_with_gil_released():
    n, threads = 400_000, 4
    keys = np.arange(n, dtype=np.uint64)
    parts = np.array_split(keys, threads)
    shared = bb.AtomicBloomFilter(n, 0.01)
    plain = bb.BloomFilter(n, 0.01)

    def work(part):
        shared.insert_batch(part)
        plain.insert_batch(part)  # exclusive lock: threads wait for each other, no error

    ts = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    serial = bb.BloomFilter(n, 0.01)
    serial.insert_batch(keys)
    assert shared.snapshot() == serial and plain == serial
    results = [None] * threads

    def query(i):
        results[i] = plain.contains_batch(parts[i]).all()

    ts = [threading.Thread(target=query, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(results)


def test_layout_8x32_round_trips_and_finds_what_it_stored():
    f = bb.BloomFilter(10_000, 0.01, layout="8x32", key_hash="mx32-64")
    keys = np.arange(5_000, dtype=np.uint64)
    f.insert_batch(keys)
    assert f.layout == "8x32"
    assert f.contains_batch(keys).all()
    g = bb.BloomFilter.from_bytes(f.to_bytes())
    assert g.layout == "8x32" and g == f
    with pytest.raises(bb.InvalidParameterError):
        bb.BloomFilter(1000, 0.01, layout="8x16")


def test_repr_and_properties():
    f = bb.BloomFilter(1000, 0.01, seed=5, layout="4x128")
    assert "BloomFilter(capacity=1000" in repr(f)
    assert f.layout == "4x128" and f.seed == 5 and f.capacity == 1000
    assert f.isa == bb.kernel() and f.size_in_bytes == 64 * f.num_blocks
    assert bb.SplitBlockFilter.with_num_bytes(1024).num_bytes == 1024
