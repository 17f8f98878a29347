"""A Bloom-filter semi-join on Spark, with the filters built where the data is.

A fact table of millions of rows joins a dimension table filtered to a small key set. Instead
of shuffling every fact row to the join, the job

1. builds one blockbloom filter per partition of the small side (``mapInArrow``: each Arrow
   batch of keys goes to ``insert_batch`` in place, the GIL released),
2. unions the partition filters on the driver (exact for Bloom filters of one shape),
3. broadcasts the filter's bytes (``to_bytes``), and
4. drops the fact rows that cannot join before the shuffle of the join: a vectorised
   (Arrow) UDF sends only the key column to Python, where ``contains_batch`` answers each
   batch in place, and the JVM drops the rows (``prefilter_map_in_arrow`` is the variant that
   sends whole rows through ``mapInArrow``).

The join is forced to a shuffle (sort-merge) join, as when the dimension side is too large to
broadcast. The result is checked against the exact join, and the script prints the rows
dropped before the shuffle, the bytes broadcast, and the wall times of the job with and
without the filter; where Spark has its own runtime Bloom filter
(``spark.sql.optimizer.runtime.bloomFilter.enabled``, Spark >= 3.3), the same join runs with
it too, and the script says whether Spark's plan used it.

Run: ``python spark_semi_join.py [--rows 5000000] [--partitions 8]`` (PySpark and a Java
runtime, 17 or newer for PySpark 4).
"""

from __future__ import annotations

import argparse
import functools
import operator
import os
import sys
import tempfile
import time

import pandas as pd  # PySpark's Arrow UDFs need it
import pyarrow as pa

import blockbloom as bb


def make_spark(master: str = "local[2]"):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("blockbloom-semi-join")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "2g")
        # The small side is a stand-in for one too large to broadcast: a shuffle join.
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "65536")
        .getOrCreate()
    )
    if __name__ != "__main__":
        # Imported (as the tests do): the workers import this module for its functions.
        spark.sparkContext.addPyFile(__file__)
    return spark


def build_filter(small_keys, capacity: int, fpr: float, seed: int) -> bb.BloomFilter:
    """One filter per partition of `small_keys` (a one-column DataFrame of keys), each of the
    same shape, unioned on the driver."""

    def per_partition(batches):
        f = bb.BloomFilter(capacity, fpr, seed)
        for batch in batches:
            f.insert_batch(batch.column(0))
        yield pa.RecordBatch.from_pydict({"filter": [f.to_bytes()]}, schema=_FILTER_SCHEMA)

    rows = small_keys.mapInArrow(per_partition, "filter binary").collect()
    parts = [bb.BloomFilter.from_bytes(r["filter"]) for r in rows]
    return functools.reduce(operator.or_, parts)


_FILTER_SCHEMA = pa.schema([("filter", pa.binary())])


_FILTERS: dict = {}


def _broadcast_filter(bc) -> bb.BloomFilter:
    """The broadcast filter, decoded once per Python worker (workers are reused)."""
    value = bc.value  # loaded once per worker by Spark, the same object afterwards
    hit = _FILTERS.get(id(value))
    if hit is None or hit[0] is not value:
        hit = _FILTERS[id(value)] = (value, bb.BloomFilter.from_bytes(value))
    return hit[1]


def prefilter(fact, key: str, filter_bytes_bc, kept_acc, seen_acc):
    """The rows of `fact` whose `key` may be in the broadcast filter, dropped in the map stage
    (before any shuffle). Only the key column goes to Python (an Arrow batch per call, handed
    to `contains_batch` in place); the rows stay in the JVM, which drops them."""
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("boolean")
    def may_join(keys: pd.Series) -> pd.Series:
        hits = _broadcast_filter(filter_bytes_bc).contains_batch(keys.to_numpy())
        seen_acc.add(len(hits))
        kept_acc.add(int(hits.sum()))
        return pd.Series(hits)

    # Nondeterministic, so the optimizer does not copy the predicate to the other side of the
    # join through the join keys (it would evaluate the filter on the small side too).
    return fact.filter(may_join.asNondeterministic()(key))


def prefilter_arrow_udf(fact, key: str, filter_bytes_bc, kept_acc, seen_acc):
    """As `prefilter`, with an Arrow UDF (``arrow_udf``, PySpark >= 4.1): the key column
    reaches Python as a pyarrow array and `contains_batch` answers it in place, with no pandas
    conversion either way."""
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("boolean")
    def may_join(keys: pa.Array) -> pa.Array:
        hits = _broadcast_filter(filter_bytes_bc).contains_batch(keys)
        seen_acc.add(len(hits))
        kept_acc.add(hits.true_count)
        return hits

    return fact.filter(may_join.asNondeterministic()(key))


PROBES = {
    "udf": prefilter,
    "arrow-udf": prefilter_arrow_udf,
    "map-in-arrow": None,  # set below
}


def prefilter_map_in_arrow(fact, key: str, filter_bytes_bc, kept_acc, seen_acc):
    """As `prefilter`, with whole Arrow batches of rows through Python (`mapInArrow`): every
    column crosses to the Python worker and back, so it is slower for wide rows."""

    def per_partition(batches):
        f = _broadcast_filter(filter_bytes_bc)
        for batch in batches:
            mask = f.contains_batch(batch.column(key))  # a pyarrow BooleanArray
            kept = batch.filter(mask)
            seen_acc.add(batch.num_rows)
            kept_acc.add(kept.num_rows)
            yield kept

    return fact.mapInArrow(per_partition, fact.schema)


PROBES["map-in-arrow"] = prefilter_map_in_arrow


def timed(action, repeat: int = 1):
    """The action's result and its best wall time of `repeat` runs (the first run of a job
    also pays for the JVM's warm-up, which would favour whichever variant runs later)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = action()
        best = min(best, time.perf_counter() - t)
    return out, best


def run(spark, rows: int = 5_000_000, dim_keys: int = 200_000, fpr: float = 0.01, seed: int = 0,
        workdir: str | None = None, compare_spark_bloom: bool = True, repeat: int = 2,
        probe: str = "udf", breakdown: bool = False) -> dict:
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    tmp = workdir or tempfile.mkdtemp(prefix="blockbloom-spark-")
    # The fact table: `rows` rows with a key into the dimension and a payload, stored as
    # Parquet (a file scan, as Spark's runtime Bloom filter needs on the probe side).
    fact_path = os.path.join(tmp, "fact.parquet")
    (
        spark.range(rows, numPartitions=8)
        .select(
            ((F.col("id") * 7919) % dim_keys).alias("key"),
            (F.col("id") % 1000).cast("int").alias("qty"),
            F.concat(F.lit("order-"), F.col("id").cast("string")).alias("order"),
        )
        .write.mode("overwrite")
        .parquet(fact_path)
    )
    fact = spark.read.parquet(fact_path)
    # The dimension: `dim_keys` keys; the filter keeps 1 in 1000 of them ("gold" customers).
    dim = spark.range(dim_keys, numPartitions=4).select(
        F.col("id").alias("key"),
        F.when(F.col("id") % 1000 == 7, "gold").otherwise("basic").alias("tier"),
    )
    small = dim.filter(F.col("tier") == "gold").cache()
    n_small = small.count()

    # Exact join, no filter.
    exact, t_plain = timed(lambda: sorted(fact.join(small, "key").select("order", "key", "tier").collect()), repeat)

    # With blockbloom: build per partition, union, broadcast, drop rows before the shuffle.
    def with_filter():
        f = build_filter(small.select("key"), max(n_small, 1), fpr, seed)
        data = f.to_bytes()
        bc = sc.broadcast(data)
        kept, seen = sc.accumulator(0), sc.accumulator(0)
        pruned = PROBES[probe](fact, "key", bc, kept, seen)
        out = sorted(pruned.join(small, "key").select("order", "key", "tier").collect())
        return out, f, len(data), kept.value, seen.value

    (got, f, nbytes, kept, seen), t_filter = timed(with_filter, repeat)
    assert got == exact, "the Bloom-filtered join differs from the exact join"

    report = {
        "fact_rows": rows,
        "small_keys": n_small,
        "result_rows": len(exact),
        "rows_seen": seen,
        "rows_kept": kept,
        "rows_dropped_before_shuffle": seen - kept,
        "filter_bytes_broadcast": nbytes,
        "filter_estimated_len": f.estimated_len(),
        "repeat": repeat,
        "probe": probe,
        "seconds_without_filter": t_plain,
        "seconds_with_blockbloom": t_filter,
        "kernel": bb.kernel(),
    }

    if breakdown:
        report["breakdown"] = stage_breakdown(spark, fact, small, n_small, fpr, seed, repeat)
        report["outside_spark"] = outside_spark(fact_path, small, n_small, fpr, seed, repeat)

    if compare_spark_bloom:
        conf = {
            "spark.sql.optimizer.runtime.bloomFilter.enabled": "true",
            "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "1",
            "spark.sql.optimizer.runtimeFilter.semiJoinReduction.enabled": "false",
        }
        old = {}
        try:
            for k, v in conf.items():
                old[k] = spark.conf.get(k, None)
                spark.conf.set(k, v)
            q = fact.join(small, "key").select("order", "key", "tier")
            plan = q._jdf.queryExecution().executedPlan().toString()
            used = "bloom_filter_agg" in plan.lower() or "might_contain" in plan.lower()
            spark_out, t_spark = timed(lambda: sorted(q.collect()), repeat)
            assert spark_out == exact
            report["spark_runtime_bloom_filter_in_plan"] = used
            report["seconds_with_spark_runtime_bloom_filter"] = t_spark
        except Exception as e:  # a Spark without the option: say so, keep the rest
            report["spark_runtime_bloom_filter_error"] = f"{type(e).__name__}: {e}"
        finally:
            for k, v in old.items():
                if v is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, v)
    small.unpersist()
    return report


def stage_breakdown(spark, fact, small, n_small: int, fpr: float, seed: int, repeat: int) -> dict:
    """Where the blockbloom path's time goes: each stage as its own Spark job, best of
    `repeat` runs (seconds)."""
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    out = {}
    f, out["build filter (mapInArrow job, collect, union)"] = timed(
        lambda: build_filter(small.select("key"), max(n_small, 1), fpr, seed), repeat)
    data = f.to_bytes()
    bc, out["broadcast"] = timed(lambda: sc.broadcast(data), repeat)
    # The fact scan alone (the key column summed in the JVM), then with each probe: the
    # difference is what the Python crossing costs.
    _, out["scan fact keys, JVM only"] = timed(lambda: fact.agg(F.sum("key")).collect(), repeat)
    for name, pick in PROBES.items():
        if name == "arrow-udf" and not hasattr(F, "arrow_udf"):
            continue  # PySpark before 4.1
        kept, seen = sc.accumulator(0), sc.accumulator(0)
        _, out[f"scan + probe ({name})"] = timed(
            lambda pick=pick: pick(fact, "key", bc, kept, seen).agg(F.count("*")).collect(), repeat)
    # The join's shuffle: all rows, and only the rows that can join (what a perfect filter
    # leaves), both without Python.
    _, out["join, no filter"] = timed(lambda: fact.join(small, "key").agg(F.count("*")).collect(), repeat)
    keys = [r["key"] for r in small.select("key").collect()]
    _, out["join, rows pre-dropped in the JVM (isin)"] = timed(
        lambda: fact.filter(F.col("key").isin(keys)).join(small, "key").agg(F.count("*")).collect(), repeat)
    return out


def outside_spark(fact_path: str, small, n_small: int, fpr: float, seed: int, repeat: int) -> dict:
    """The filter built by Spark's tasks, used outside Spark: the fact's Parquet files read by
    pyarrow and their keys answered by `contains_batch`, no JVM or Python worker on the probe
    side (seconds, rows)."""
    import pyarrow.parquet as pq

    f = build_filter(small.select("key"), max(n_small, 1), fpr, seed)

    def probe():
        table = pq.read_table(fact_path)
        mask = f.contains_batch(table.column("key"))
        return table.num_rows, table.filter(mask).num_rows

    (rows, kept), secs = timed(probe, repeat)
    (rows2, _), read_secs = timed(lambda: (pq.read_table(fact_path).num_rows, 0), repeat)
    assert rows == rows2
    return {"rows": rows, "kept": kept, "seconds_read_and_probe": secs, "seconds_read_only": read_secs}


def print_report(r: dict) -> None:
    print(f"fact rows:                     {r['fact_rows']:,}")
    print(f"small-side keys:               {r['small_keys']:,}")
    print(f"join result rows:              {r['result_rows']:,} (equal to the exact join)")
    print(f"rows dropped before shuffle:   {r['rows_dropped_before_shuffle']:,} of {r['rows_seen']:,}"
          f" ({r['rows_dropped_before_shuffle'] / max(r['rows_seen'], 1):.2%});"
          f" {r['rows_kept']:,} kept")
    print(f"filter bytes broadcast:        {r['filter_bytes_broadcast']:,}")
    print(f"wall times: best of {r['repeat']} runs each")
    print(f"wall time, no filter:          {r['seconds_without_filter']:.2f} s")
    print(f"wall time, blockbloom filter:  {r['seconds_with_blockbloom']:.2f} s"
          f" (filter build, union and broadcast included; probe {r['probe']}; kernel {r['kernel']})")
    if "seconds_with_spark_runtime_bloom_filter" in r:
        used = "used" if r["spark_runtime_bloom_filter_in_plan"] else "NOT injected by the optimizer"
        print(f"wall time, Spark runtime Bloom filter: {r['seconds_with_spark_runtime_bloom_filter']:.2f} s ({used})")
    elif "spark_runtime_bloom_filter_error" in r:
        print(f"Spark runtime Bloom filter: unavailable ({r['spark_runtime_bloom_filter_error']})")
    if "breakdown" in r:
        print(f"where the time goes (each stage its own job, best of {r['repeat']}):")
        for stage, secs in r["breakdown"].items():
            print(f"  {stage:<48} {secs:6.2f} s")
        b, rows, dropped = r["breakdown"], r["fact_rows"], r["rows_dropped_before_shuffle"]
        probe_cost = min(b[f"scan + probe ({p})"] for p in PROBES if f"scan + probe ({p})" in b)
        probe_cost -= b["scan fact keys, JVM only"]
        shuffle_saving = b["join, no filter"] - b["join, rows pre-dropped in the JVM (isin)"]
        print(f"the cheapest Python probe costs {probe_cost / rows * 1e9:.0f} ns a row over the JVM's"
              f" own scan; dropping a row before the join saves {shuffle_saving / max(dropped, 1) * 1e9:.0f} ns")
        if probe_cost >= shuffle_saving:
            print("  so inside a Spark join, Spark's own runtime Bloom filter is the one to use: it runs in"
                  " the JVM; a blockbloom filter pays where the filter leaves Spark (below)")
        else:
            print("  so the blockbloom probe pays inside Spark on this data")
        o = r["outside_spark"]
        print(f"outside Spark: pyarrow reads the fact Parquet ({o['seconds_read_only']:.2f} s) and the"
              f" Spark-built filter answers its {o['rows']:,} keys: {o['seconds_read_and_probe']:.2f} s"
              f" in all, {o['kept']:,} rows kept")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--dim-keys", type=int, default=200_000)
    p.add_argument("--fpr", type=float, default=0.01)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--probe", choices=list(PROBES), default="udf",
                   help="drop rows with a pandas UDF or an Arrow UDF on the key column, or whole"
                        " rows through mapInArrow")
    p.add_argument("--breakdown", action="store_true",
                   help="time each stage as its own job, and the filter used outside Spark")
    p.add_argument("--no-spark-bloom", action="store_true")
    args = p.parse_args(argv)
    spark = make_spark(args.master)
    try:
        r = run(spark, rows=args.rows, dim_keys=args.dim_keys, fpr=args.fpr,
                compare_spark_bloom=not args.no_spark_bloom, repeat=args.repeat, probe=args.probe,
                breakdown=args.breakdown)
    finally:
        spark.stop()
    print_report(r)
    return r


if __name__ == "__main__":
    main()
