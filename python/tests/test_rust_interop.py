"""Python keys and bytes against the Rust crate: its golden files and filters its CLI writes.

The CLI tests need the `blockbloom` binary: `BLOCKBLOOM_CLI=/path/to/blockbloom`, or else
`cargo` on PATH to build it from this checkout (`cargo build -p blockbloom-cli`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import blockbloom as bb

pa = pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "data"
GOLDEN_SEED = 0x0123_4567_89AB_CDEF


def golden(name: str) -> bytes:
    path = GOLDEN / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    return path.read_bytes()


def test_golden_plain_filter_is_rebuilt_bit_for_bit():
    # tests/format.rs: capacity 100, fpr 0.01, seed GOLDEN_SEED, layout 8x64, the u64 keys
    # 0..100 and `insert("golden")` (Rust's Hash for str appends 0xff to the bytes).
    stored = golden("v1-8x64.bin")
    f = bb.BloomFilter(100, 0.01, seed=GOLDEN_SEED, layout="8x64", key_hash="xxh3-64")
    f.insert_batch(np.arange(100, dtype=np.uint64))
    f.add(b"golden\xff")
    assert f.to_bytes() == stored
    g = bb.BloomFilter.from_bytes(stored)
    assert g == f and all(k in g for k in range(100))


def test_golden_hash_id_2_filter_is_rebuilt_bit_for_bit():
    # tests/format.rs: capacity 200, fpr 0.01, seed GOLDEN_SEED, hash id 2 (the default): the
    # prefixes of one sentence (0 to 40 bytes), the 16-byte keys i << 64 | i and the u64 keys
    # 0..40, and two single keys.
    stored = golden("v1-aesh.bin")
    f = bb.BloomFilter(200, 0.01, seed=GOLDEN_SEED, key_hash="aesh-64", least_memory=True)
    text = "the quick brown fox jumps over the lazy dog"
    f.insert_batch(pa.array([text[:n] for n in range(41)]))
    f.insert_batch(pa.array([(i << 64 | i).to_bytes(16, "little") for i in range(40)], pa.binary(16)))
    f.insert_batch(np.arange(40, dtype=np.uint64))
    f.add("golden, hash id 2")
    f.add((0xFEED).to_bytes(16, "little"))
    assert f.key_hash == "aesh-64"
    assert f.to_bytes() == stored
    g = bb.BloomFilter.from_bytes(stored)
    assert g == f and g.key_hash == "aesh-64" and all(text[:n] in g for n in range(41))


@pytest.mark.parametrize("name,key_hash,hash_id", [("v1-mx32.bin", "mx32-64", 3), ("v1-moremur.bin", "moremur-64", 4)])
def test_golden_hash_id_3_and_4_filters_are_rebuilt_bit_for_bit(name, key_hash, hash_id):
    # tests/format.rs: capacity 250, fpr 0.01, seed GOLDEN_SEED, hash id 3 or 4: the keys of
    # the hash id 2 file, the u32 keys i << 20 for i in 0..40, and three single keys.
    stored = golden(name)
    f = bb.BloomFilter(250, 0.01, seed=GOLDEN_SEED, key_hash=key_hash, least_memory=True)
    text = "the quick brown fox jumps over the lazy dog"
    f.insert_batch(pa.array([text[:n] for n in range(41)]))
    f.insert_batch(pa.array([(i << 64 | i).to_bytes(16, "little") for i in range(40)], pa.binary(16)))
    f.insert_batch(np.arange(40, dtype=np.uint64))
    # Python widens integers to 64 bits; a u32 key is its 4 little-endian bytes.
    f.insert_batch(pa.array([(i << 20).to_bytes(4, "little") for i in range(40)]))
    f.add(f"golden, hash id {hash_id}")
    f.add((0xFEED).to_bytes(16, "little"))
    f.add((7).to_bytes(4, "little"))
    assert f.to_bytes() == stored
    g = bb.BloomFilter.from_bytes(stored)
    assert g == f and g.key_hash == key_hash and all(text[:n] in g for n in range(41))


# tests/format.rs `ints`: capacity 64, fpr 0.001, seed GOLDEN_SEED, integers at every width
# (each the key of its 64-bit value), as batches of their Rust type and two single keys.
INT_BATCHES = [
    ("int8", [-128, -1, 0, 1, 5, 127]),
    ("uint8", [200, 255]),
    ("int16", [-32768, 300]),
    ("uint16", [65535]),
    ("int32", [-(2**31), 1 << 20]),
    ("uint32", [2**32 - 1]),
    ("int64", [-(2**40), 2**63 - 1]),
    ("uint64", [2**64 - 2]),
]
INT_SINGLES = [-7, 9]
INT_RANGES = {
    "int8": (-(2**7), 2**7), "uint8": (0, 2**8),
    "int16": (-(2**15), 2**15), "uint16": (0, 2**16),
    "int32": (-(2**31), 2**31), "uint32": (0, 2**32),
    "int64": (-(2**63), 2**63), "uint64": (0, 2**64),
}


@pytest.mark.parametrize(
    "name,key_hash",
    [("v1-ints-aesh.bin", "aesh-64"), ("v1-ints-mx32.bin", "mx32-64"), ("v1-ints-moremur.bin", "moremur-64")],
)
@pytest.mark.parametrize("source", ["numpy", "pyarrow", "int"])
def test_integers_are_one_key_with_rust_at_every_width(name, key_hash, source):
    # Rust -> Python: Python rebuilds Rust's filter bit for bit from NumPy arrays, pyarrow
    # arrays or ints of the same values. Python -> Rust: the file then answers every value
    # as a batch of every dtype that can hold it, and as an int.
    stored = golden(name)
    f = bb.BloomFilter(64, 0.001, seed=GOLDEN_SEED, key_hash=key_hash, least_memory=True)
    for dtype, values in INT_BATCHES:
        if source == "numpy":
            f.insert_batch(np.array(values, dtype=dtype))
        elif source == "pyarrow":
            f.insert_batch(pa.array(values, type=getattr(pa, dtype)()))
        else:
            for v in values:
                f.add(v)
    for v in INT_SINGLES:
        f.add(v)
    assert f.to_bytes() == stored
    g = bb.BloomFilter.from_bytes(stored)
    every = [v for _, values in INT_BATCHES for v in values] + INT_SINGLES
    misses = []
    for dtype, (lo, hi) in INT_RANGES.items():
        held = [v for v in every if lo <= v < hi]
        if not g.contains_batch(np.array(held, dtype=dtype)).all():
            misses.append(f"numpy {dtype}")
        if g.contains_batch(pa.array(held, type=getattr(pa, dtype)())).false_count:
            misses.append(f"pyarrow {dtype}")
    misses += [f"int {v}" for v in every if v not in g]
    assert misses == []


def test_golden_scalable_filter_is_rebuilt_bit_for_bit():
    stored = golden("scalable-v1.bin")
    f = bb.ScalableBloomFilter(20, 0.01, seed=GOLDEN_SEED)
    f.insert_batch(np.arange(100, dtype=np.uint64))
    f.add(b"golden\xff")
    assert f.to_bytes() == stored


@pytest.mark.parametrize(
    "name, kind",
    [
        ("v1-4x128.bin", bb.BloomFilter),
        ("counting-v1.bin", bb.CountingBloomFilter),
        ("scalable-v1.bin", bb.ScalableBloomFilter),
    ],
)
def test_golden_files_round_trip_identically(name, kind):
    stored = golden(name)
    f = kind.from_bytes(stored)
    assert f.to_bytes() == stored


def test_golden_file_of_another_kind_is_a_typed_error():
    with pytest.raises(bb.DecodeError) as e:
        bb.BloomFilter.from_bytes(golden("counting-v1.bin"))
    assert e.value.kind == "WrongKind"


@pytest.fixture(scope="module")
def cli() -> str:
    exe = os.environ.get("BLOCKBLOOM_CLI")
    if exe:
        return exe
    cargo = shutil.which("cargo")
    if cargo is None or not (REPO / "cli" / "Cargo.toml").exists():
        pytest.skip("no BLOCKBLOOM_CLI and no cargo to build the blockbloom CLI")
    subprocess.run([cargo, "build", "-q", "-p", "blockbloom-cli"], cwd=REPO, check=True)
    meta = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--no-deps"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    import json

    target = Path(json.loads(meta.stdout)["target_directory"])
    return str(target / "debug" / "blockbloom")


LINES = ["alpha", "42", "héllo wörld", "", "10.0.0.1"] + [f"user:{i}" for i in range(2000)]


def test_filter_built_by_the_cli_matches_python(cli, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out = tmp_path / "keys.bloom"
    subprocess.run(
        [cli, "build", "--fpr", "0.001", "--capacity", "3000", "--seed", "99", "-q",
         str(keys), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    stored = out.read_bytes()
    f = bb.BloomFilter.from_bytes(stored)
    # Each line is a key's bytes: str keys are their UTF-8, so every line is a member.
    assert all(line in f for line in LINES)
    assert all(line.encode() in f for line in LINES)
    # The same keys through Python give the same bytes.
    g = bb.BloomFilter(3000, 0.001, seed=99)
    g.update(LINES)
    assert g.to_bytes() == stored
    # And through a pyarrow batch.
    pa = pytest.importorskip("pyarrow")
    h = bb.BloomFilter(3000, 0.001, seed=99)
    h.insert_batch(pa.array(LINES, type=pa.large_string()))
    assert h.to_bytes() == stored


def test_cli_queries_a_filter_python_wrote(cli, tmp_path):
    f = bb.BloomFilter(1000, 0.01, seed=5)
    f.update([f"in-{i}" for i in range(500)])
    path = tmp_path / "py.bloom"
    path.write_bytes(f.to_bytes())
    probes = [f"in-{i}" for i in range(0, 500, 7)] + [f"out-{i}" for i in range(300)]
    res = subprocess.run(
        [cli, "query", str(path), *probes], check=True, capture_output=True, text=True
    )
    answers = dict(line.split("\t") for line in res.stdout.splitlines())
    assert answers == {p: ("maybe" if p in f else "no") for p in probes}
    info = subprocess.run([cli, "info", str(path)], check=True, capture_output=True, text=True)
    assert "seed" in info.stdout.lower() or info.stdout
