"""blockbloom from Python against rbloom and a Python set: ns per key, printed as Markdown.

    python bench/bench.py                 # 1M and 50M keys (needs ~6 GB of RAM for the set)
    python bench/bench.py --sizes 1000000 --repeat 5

Measured per size n (keys are distinct uint64 values in a NumPy array; the probes are n other
keys, so a query answers "no" except for false positives):

* batch insert / contains: blockbloom's `insert_batch`/`contains_batch` on the NumPy array;
  rbloom's `update(list)` and `[k in b for k in list]`, and the set's `update(list)` and the
  same comprehension. The NumPy -> list conversion that rbloom and the set need is *not*
  counted (reported on its own line), which favours them;
* single keys: `f.add(k)` and `k in f` in a Python loop, for all three;
* threads: `contains_batch` on one BloomFilter and `insert_batch` on one AtomicBloomFilter
  from 1 and from T threads (T = CPUs), each thread on its own slice, GIL released.

Every figure is the best of `--repeat` runs (one run at sizes above 5M keys).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import threading
import time

import numpy as np

import blockbloom as bb

from importlib import metadata

try:
    import rbloom
except ImportError:  # the bench still runs; the rbloom columns say n/a
    rbloom = None


def best(fn, repeat):
    t = float("inf")
    for _ in range(repeat):
        gc.collect()
        s = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - s)
    return t


def cpu_line():
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "unknown":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [x for x in ("avx512f", "avx2") if x in flags]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{model}; flags: {', '.join(isa) or 'neither avx512f nor avx2'}; "
            f"{os.cpu_count()} CPUs; load average {load} at start")


def threaded(fn, parts):
    ts = [threading.Thread(target=fn, args=(p,)) for p in parts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def bench_size(n, fpr, repeat, threads):
    reps = repeat if n <= 5_000_000 else 1
    rng = np.random.default_rng(42)
    keys = rng.choice(np.iinfo(np.int64).max, size=2 * n, replace=False).astype(np.uint64)
    members, probes = keys[:n].copy(), keys[n:].copy()
    del keys
    rows = []

    def row(what, ours, theirs=None, pyset=None):
        rows.append((what, ours, theirs, pyset))

    # -- batches --------------------------------------------------------------------------
    def bb_insert():
        f = bb.BloomFilter(n, fpr)
        f.insert_batch(members)
        return f

    t_ins = best(bb_insert, reps)
    f = bb_insert()
    t_has = best(lambda: f.contains_batch(probes), reps)
    fp_ours = int(f.contains_batch(probes).sum()) / n
    assert f.contains_batch(members).all()

    s = time.perf_counter()
    mlist, plist = members.tolist(), probes.tolist()
    t_list = (time.perf_counter() - s) / 2

    t_rins = t_rhas = t_sins = t_shas = None
    fp_r = None
    if rbloom is not None:
        def r_insert():
            b = rbloom.Bloom(n, fpr)
            b.update(mlist)
            return b

        t_rins = best(r_insert, reps)
        rb = r_insert()
        t_rhas = best(lambda: [k in rb for k in plist], reps)
        fp_r = sum(k in rb for k in plist) / n

    def s_insert():
        st = set()
        st.update(mlist)
        return st

    t_sins = best(s_insert, reps)
    st = s_insert()
    t_shas = best(lambda: [k in st for k in plist], reps)
    del st
    gc.collect()

    row("batch insert (NumPy uint64)", t_ins, t_rins, t_sins)
    row("batch contains (NumPy uint64)", t_has, t_rhas, t_shas)
    row("NumPy -> list for rbloom/set (not counted above)", None, t_list, t_list)

    # -- single keys ----------------------------------------------------------------------
    m = min(n, 1_000_000)
    sl, sp = mlist[:m], plist[:m]
    g = bb.BloomFilter(n, fpr)

    def bb_add():
        add = g.add
        for k in sl:
            add(k)

    t_add = best(bb_add, reps) * n / m
    t_in = best(lambda: [k in g for k in sp], reps) * n / m
    t_radd = t_rin = None
    if rbloom is not None:
        rb2 = rbloom.Bloom(n, fpr)

        def r_add():
            add = rb2.add
            for k in sl:
                add(k)

        t_radd = best(r_add, reps) * n / m
        t_rin = best(lambda: [k in rb2 for k in sp], reps) * n / m
    st2 = set()

    def s_add():
        add = st2.add
        for k in sl:
            add(k)

    t_sadd = best(s_add, reps) * n / m
    t_sin = best(lambda: [k in st2 for k in sp], reps) * n / m
    row("single add (Python loop)", t_add, t_radd, t_sadd)
    row("single `in` (Python loop)", t_in, t_rin, t_sin)
    del mlist, plist, sl, sp, st2
    gc.collect()

    # -- threads ----------------------------------------------------------------------------
    parts = np.array_split(probes, threads)
    t1 = best(lambda: [f.contains_batch(p) for p in parts], reps)
    tt = best(lambda: threaded(f.contains_batch, parts), reps)
    mparts = np.array_split(members, threads)

    def atomic(th):
        a = bb.AtomicBloomFilter(n, fpr)
        if th:
            threaded(a.insert_batch, mparts)
        else:
            for p in mparts:
                a.insert_batch(p)

    a1 = best(lambda: atomic(False), reps)
    at = best(lambda: atomic(True), reps)
    threads_rows = [
        (f"contains_batch, 1 thread vs {threads}", t1, tt),
        (f"AtomicBloomFilter insert_batch, 1 thread vs {threads}", a1, at),
    ]
    return rows, threads_rows, fp_ours, fp_r, f.size_in_bytes


def ns(t, n):
    return "n/a" if t is None else f"{t / n * 1e9:.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000000,50000000")
    p.add_argument("--fpr", type=float, default=0.01)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = p.parse_args()
    print(f"CPU: {cpu_line()}")
    print(
        f"Python {platform.python_version()}, NumPy {np.__version__}, blockbloom {bb.__version__} "
        f"(kernel {bb.kernel()}), rbloom {metadata.version('rbloom') if rbloom else 'not installed'}; "
        f"fpr {args.fpr}"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        rows, trows, fp_ours, fp_r, size = bench_size(n, args.fpr, args.repeat, args.threads)
        print()
        print(f"### {n:,} keys (blockbloom filter {size / 2**20:.1f} MiB; measured FPR "
              f"blockbloom {fp_ours:.4f}" + (f", rbloom {fp_r:.4f}" if fp_r is not None else "") + ")")
        print()
        print("| ns per key | blockbloom | rbloom | set | vs rbloom |")
        print("| :--- | ---: | ---: | ---: | ---: |")
        for what, ours, theirs, pyset in rows:
            ratio = f"{theirs / ours:.1f}x" if ours and theirs else ""
            print(f"| {what} | {ns(ours, n)} | {ns(theirs, n)} | {ns(pyset, n)} | {ratio} |")
        print()
        print("| threads (GIL released), ns per key | 1 thread | all threads | speed-up |")
        print("| :--- | ---: | ---: | ---: |")
        for what, t1, tt in trows:
            print(f"| {what} | {ns(t1, n)} | {ns(tt, n)} | {t1 / tt:.2f}x |")


if __name__ == "__main__":
    main()
