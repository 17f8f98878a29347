//! The join runtime filter gives the answers of the plan without it: on TPC-H (generated in
//! process), and on joins with null keys, empty build sides, multi-column keys and every key
//! type; it shows in `EXPLAIN` and drops rows where it should.

mod tpch;

use std::sync::Arc;

use blockbloom_datafusion::datafusion::arrow::array::{
    ArrayRef, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, Int64Array, LargeBinaryArray,
    LargeStringArray, RecordBatch, StringArray, StringViewArray,
};
use blockbloom_datafusion::datafusion::arrow::compute::cast;
use blockbloom_datafusion::datafusion::arrow::datatypes::{DataType, Field, Schema};
use blockbloom_datafusion::datafusion::arrow::util::pretty::pretty_format_batches;
use blockbloom_datafusion::datafusion::datasource::MemTable;
use blockbloom_datafusion::datafusion::error::Result;
use blockbloom_datafusion::datafusion::physical_plan::{collect, displayable};
use blockbloom_datafusion::datafusion::prelude::{SessionConfig, SessionContext};
use blockbloom_datafusion::{BloomJoinFilter, JoinFilterMetrics};

/// A rule that fires on every join it can filter, however small, and never stops testing:
/// the answers must not depend on its thresholds.
fn eager() -> BloomJoinFilter {
    BloomJoinFilter {
        min_probe_rows: 0,
        min_collected_build_rows: 0,
        min_probe_to_build: 0.0,
        min_drop_fraction: 0.0,
        ..BloomJoinFilter::default()
    }
}

fn config(partitions: usize) -> SessionConfig {
    SessionConfig::new()
        .with_target_partitions(partitions)
        .with_batch_size(1024)
}

/// Without the rule, with it, and with it and DataFusion's dynamic filters off.
fn contexts(partitions: usize) -> Vec<(&'static str, SessionContext)> {
    let plain = SessionContext::new_with_config(config(partitions));
    blockbloom_datafusion::register(&plain);
    let bloom = blockbloom_datafusion::session_context_with(config(partitions), eager());
    let mut off = config(partitions);
    off.options_mut().optimizer.enable_dynamic_filter_pushdown = false;
    let bloom_only = blockbloom_datafusion::session_context_with(off, eager());
    vec![
        ("plain", plain),
        ("bloom", bloom),
        ("bloom, no dynamic filters", bloom_only),
    ]
}

/// Runs `sql`: its rows as sorted text lines, its physical plan and what the filters did.
async fn run(ctx: &SessionContext, sql: &str) -> Result<(Vec<String>, String, JoinFilterMetrics)> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let text = pretty_format_batches(&batches)?.to_string();
    let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
    rows.sort();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    Ok((rows, shown, JoinFilterMetrics::of(&plan)?))
}

/// Every TPC-H query gives the same rows with the filter as without, with 1 and 3
/// partitions (collected and partitioned hash joins), and the filter fires on some.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_answers_do_not_change() -> Result<()> {
    for partitions in [1, 3] {
        let ctxs = contexts(partitions);
        let tables = tpch::tables(0.01, partitions)?;
        for (_, ctx) in &ctxs {
            tpch::register(ctx, &tables)?;
        }
        let mut fired = 0;
        let mut dropped = 0;
        for (i, sql) in tpch::QUERIES.iter().enumerate() {
            let (expected, _, _) = run(&ctxs[0].1, sql).await?;
            for (name, ctx) in &ctxs[1..] {
                let (rows, plan, m) = run(ctx, sql).await?;
                assert_eq!(
                    rows,
                    expected,
                    "q{} ({name}, {partitions} partitions):\n{plan}",
                    i + 1
                );
                assert_eq!(plan.contains("BloomProbeExec"), m.filters > 0);
                fired += usize::from(m.filters > 0);
                dropped += m.dropped_rows;
            }
        }
        assert!(fired >= 10, "the filter fired on {fired} query runs");
        assert!(dropped > 0, "the filters dropped nothing");
    }
    Ok(())
}

/// Two tables `build(k, v)` and `probe(k, w)` whose keys are `build_keys` and `probe_keys`.
fn register_pair(ctx: &SessionContext, build: ArrayRef, probe: ArrayRef) -> Result<()> {
    for (name, keys) in [("build", build), ("probe", probe)] {
        let n = keys.len();
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", keys.data_type().clone(), true),
            Field::new("v", DataType::Int64, false),
        ]));
        let values: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![keys, values])?;
        // Two partitions, so partitioned joins have something to repartition.
        let half = n / 2;
        let parts = vec![
            vec![batch.slice(0, half)],
            vec![batch.slice(half, n - half)],
        ];
        ctx.register_table(name, Arc::new(MemTable::try_new(schema, parts)?))?;
    }
    Ok(())
}

/// The joins the filter must not change, over one pair of tables.
const JOINS: [&str; 7] = [
    "SELECT b.v, p.v FROM build b JOIN probe p ON b.k = p.k",
    "SELECT b.v, p.v FROM build b LEFT JOIN probe p ON b.k = p.k",
    "SELECT b.v, p.v FROM build b RIGHT JOIN probe p ON b.k = p.k",
    "SELECT b.v, p.v FROM build b FULL JOIN probe p ON b.k = p.k",
    "SELECT p.v FROM probe p WHERE p.k IN (SELECT k FROM build)",
    "SELECT p.v FROM probe p WHERE p.k NOT IN (SELECT k FROM build)",
    "SELECT b.v, p.v FROM build b JOIN probe p ON b.k IS NOT DISTINCT FROM p.k",
];

async fn same_answers(build: ArrayRef, probe: ArrayRef, what: &str) -> Result<usize> {
    let mut fired = 0;
    for partitions in [1, 2] {
        let ctxs = contexts(partitions);
        for (_, ctx) in &ctxs {
            register_pair(ctx, Arc::clone(&build), Arc::clone(&probe))?;
        }
        for sql in JOINS.iter().chain(&[
            "SELECT p.v FROM probe p WHERE NOT EXISTS (SELECT 1 FROM build b WHERE b.k = p.k)",
            "SELECT p.v FROM probe p WHERE EXISTS (SELECT 1 FROM build b WHERE b.k = p.k)",
        ]) {
            let (expected, _, _) = run(&ctxs[0].1, sql).await?;
            for (name, ctx) in &ctxs[1..] {
                let (rows, plan, m) = run(ctx, sql).await?;
                assert_eq!(
                    rows, expected,
                    "{what}: {sql} ({name}, {partitions} partitions):\n{plan}"
                );
                fired += m.filters;
            }
        }
    }
    Ok(fired)
}

/// Keys with nulls on both sides, half the probe keys absent from the build side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nulls_and_absent_keys() -> Result<()> {
    let build: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..3000).map(|i| (i % 11 != 0).then_some(i * 2)),
    ));
    let probe: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..5000).map(|i| (i % 13 != 0).then_some(i)),
    ));
    let fired = same_answers(build, probe, "nulls").await?;
    assert!(fired > 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_build_side() -> Result<()> {
    let build: ArrayRef = Arc::new(Int64Array::from(Vec::<i64>::new()));
    let probe: ArrayRef = Arc::new(Int64Array::from_iter_values(0..2000));
    same_answers(build, probe, "empty build").await?;
    let build: ArrayRef = Arc::new(Int64Array::from(vec![None, None]));
    let probe: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..2000).map(|i| (i % 2 == 0).then_some(i)),
    ));
    same_answers(build, probe, "all-null build").await?;
    Ok(())
}

/// Every key type the filter takes (and narrow integers, widened).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_type() -> Result<()> {
    let n = 1500usize;
    let s = |i: usize| (i % 17 != 5).then(|| format!("key-{}-{}", i * 3, "y".repeat(i % 15)));
    let b = |i: usize| (i % 17 != 5).then(|| format!("b{}", i * 3).into_bytes());
    let fixed = |i: usize| (i % 17 != 5).then(|| (i as u128 * 3 + (1 << 90)).to_le_bytes());
    type Make = Box<dyn Fn(usize) -> ArrayRef>;
    // Integers: multiples of 3 (mod 120 where the type is a byte), cast from Int64.
    let ints = |to: DataType, modulo: i64| -> Make {
        Box::new(move |m| {
            let v: ArrayRef = Arc::new(Int64Array::from_iter(
                (0..m as i64).map(|i| (i % 17 != 5).then_some(i * 3 % modulo)),
            ));
            cast(&v, &to).unwrap()
        })
    };
    let kinds: Vec<(&str, Make)> = vec![
        ("Int8", ints(DataType::Int8, 120)),
        ("UInt16", ints(DataType::UInt16, i64::MAX)),
        ("Int32", ints(DataType::Int32, i64::MAX)),
        ("UInt32", ints(DataType::UInt32, i64::MAX)),
        ("UInt64", ints(DataType::UInt64, i64::MAX)),
        (
            "Utf8",
            Box::new(move |m| Arc::new((0..m).map(s).collect::<StringArray>())),
        ),
        (
            "LargeUtf8",
            Box::new(move |m| Arc::new((0..m).map(s).collect::<LargeStringArray>())),
        ),
        (
            "Utf8View",
            Box::new(move |m| Arc::new((0..m).map(s).collect::<StringViewArray>())),
        ),
        (
            "Binary",
            Box::new(move |m| Arc::new((0..m).map(b).collect::<BinaryArray>())),
        ),
        (
            "LargeBinary",
            Box::new(move |m| Arc::new((0..m).map(b).collect::<LargeBinaryArray>())),
        ),
        (
            "BinaryView",
            Box::new(move |m| Arc::new((0..m).map(b).collect::<BinaryViewArray>())),
        ),
        (
            "FixedSizeBinary(16)",
            Box::new(move |m| {
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size((0..m).map(fixed), 16)
                        .unwrap(),
                )
            }),
        ),
    ];
    for (name, make) in kinds {
        // The build side holds every third key value of the probe side's range.
        let build = make(n / 3);
        let probe = make(n);
        let fired = same_answers(build, probe, name).await?;
        assert!(fired > 0, "{name}: the filter never fired");
    }
    Ok(())
}

/// A two-column key is filtered on one column; the answers do not change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_column_keys() -> Result<()> {
    for partitions in [1, 2] {
        let ctxs = contexts(partitions);
        for (_, ctx) in &ctxs {
            ctx.sql("CREATE TABLE b AS SELECT value % 100 AS k1, CAST(value % 7 AS VARCHAR) AS k2, value AS v FROM generate_series(0, 999)").await?;
            ctx.sql("CREATE TABLE p AS SELECT value % 400 AS k1, CAST(value % 5 AS VARCHAR) AS k2, value AS w FROM generate_series(0, 9999)").await?;
        }
        let sql = "SELECT b.v, p.w FROM b JOIN p ON b.k1 = p.k1 AND b.k2 = p.k2";
        let (expected, _, _) = run(&ctxs[0].1, sql).await?;
        for (name, ctx) in &ctxs[1..] {
            let (rows, plan, m) = run(ctx, sql).await?;
            assert_eq!(rows, expected, "{name}:\n{plan}");
            assert!(m.filters > 0, "{name}: not fired:\n{plan}");
            assert!(m.dropped_rows > 0, "{name}: dropped nothing");
        }
    }
    Ok(())
}

/// The nodes show in `EXPLAIN`; the default thresholds leave a small join alone.
#[tokio::test]
async fn explain_shows_the_filter_and_defaults_skip_small_joins() -> Result<()> {
    let ctx = blockbloom_datafusion::session_context_with(config(2), eager());
    register_pair(
        &ctx,
        Arc::new(Int64Array::from_iter_values(0..100)),
        Arc::new(Int64Array::from_iter_values(0..100_000)),
    )?;
    let explain = ctx
        .sql(&format!("EXPLAIN {}", JOINS[0]))
        .await?
        .collect()
        .await?;
    let text = pretty_format_batches(&explain)?.to_string();
    assert!(
        text.contains("BloomBuildExec") && text.contains("BloomProbeExec"),
        "{text}"
    );

    let ctx = blockbloom_datafusion::session_context_with(config(2), BloomJoinFilter::default());
    register_pair(
        &ctx,
        Arc::new(Int64Array::from_iter_values(0..100)),
        Arc::new(Int64Array::from_iter_values(0..1000)),
    )?;
    let explain = ctx
        .sql(&format!("EXPLAIN {}", JOINS[0]))
        .await?
        .collect()
        .await?;
    let text = pretty_format_batches(&explain)?.to_string();
    assert!(
        !text.contains("Bloom"),
        "a 1000-row probe side is below min_probe_rows:\n{text}"
    );
    Ok(())
}

/// A plan executed twice gives the same answers both times (each execution builds its own
/// filter).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_runs_twice() -> Result<()> {
    let ctx = blockbloom_datafusion::session_context_with(config(2), eager());
    register_pair(
        &ctx,
        Arc::new(Int64Array::from_iter_values((0..500).map(|i| i * 10))),
        Arc::new(Int64Array::from_iter_values(0..20_000)),
    )?;
    let plan = ctx.sql(JOINS[0]).await?.create_physical_plan().await?;
    let first = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let second = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let rows = |b: &[RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
    assert_eq!(rows(&first), 500);
    assert_eq!(rows(&second), 500);
    Ok(())
}
