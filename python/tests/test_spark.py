"""The Spark example on PySpark in local mode: a Bloom-filter semi-join equals the exact join.

Needs PySpark (with pandas) and a Java runtime; skipped without them. Run with `-s` to see the
example's report (rows dropped before the shuffle, filter bytes broadcast, wall times).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("no Java runtime for Spark", allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "spark_semi_join.py"
ROWS = int(os.environ.get("BLOCKBLOOM_SPARK_ROWS", "2000000"))


def load_example():
    spec = importlib.util.spec_from_file_location("spark_semi_join", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["spark_semi_join"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def spark():
    ex = load_example()
    s = ex.make_spark("local[2]")
    yield s
    s.stop()


@pytest.mark.parametrize("probe", ["udf", "arrow-udf", "map-in-arrow"])
def test_spark_semi_join_equals_exact_join(spark, probe, tmp_path):
    ex = load_example()
    if probe == "arrow-udf":
        from pyspark.sql import functions

        if not hasattr(functions, "arrow_udf"):
            pytest.skip("arrow_udf needs PySpark 4.1 or newer")
    # `run` asserts that the filtered join (and Spark's own runtime filter's) equals the
    # exact join.
    # The pandas-UDF run also times each stage and uses the filter outside Spark.
    breakdown = probe == "udf"
    r = ex.run(spark, rows=ROWS, workdir=str(tmp_path), repeat=1, probe=probe,
               compare_spark_bloom=probe == "udf", breakdown=breakdown)
    print()
    ex.print_report(r)
    assert r["fact_rows"] == ROWS and r["rows_seen"] == ROWS
    assert r["result_rows"] == ROWS // 1000
    assert r["rows_kept"] >= r["result_rows"]  # no false negatives
    # 1 in 1000 rows can join; at a 1% filter at most a few percent of the rest survive.
    assert r["rows_dropped_before_shuffle"] >= 0.95 * ROWS
    assert r["filter_bytes_broadcast"] < 4096
    if breakdown:
        stages = r["breakdown"]
        assert all(secs > 0 for secs in stages.values()), stages
        assert {"scan + probe (udf)", "scan + probe (map-in-arrow)"} <= set(stages)
        o = r["outside_spark"]
        assert o["rows"] == ROWS
        # The Spark-built filter, used outside Spark, keeps what the Spark probe kept.
        assert o["kept"] == r["rows_kept"]
