//! `bloom_filter_agg` and `might_contain` through SQL: every key type, nulls, empty input,
//! partitioning, the forms of the filter argument (literal, parameter, scalar subquery
//! evaluated once or joined as a column, column), integers shared with Rust at every width,
//! the bounded sizes, and the errors.

use std::sync::Arc;

use blockbloom::{BloomFilter, KeyHash};
use blockbloom_datafusion::datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, Int8Array,
    Int16Array, Int32Array, Int64Array, LargeBinaryArray, LargeStringArray, RecordBatch,
    StringArray, StringViewArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use blockbloom_datafusion::datafusion::arrow::datatypes::{DataType, Field, Schema};
use blockbloom_datafusion::datafusion::common::ScalarValue;
use blockbloom_datafusion::datafusion::datasource::MemTable;
use blockbloom_datafusion::datafusion::error::Result;
use blockbloom_datafusion::datafusion::prelude::{SessionConfig, SessionContext};

fn ctx(partitions: usize) -> SessionContext {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    blockbloom_datafusion::register(&ctx);
    ctx
}

/// A table `t` with one column `k` holding `column`, cut into `parts` partitions.
fn table(ctx: &SessionContext, name: &str, column: ArrayRef, parts: usize) -> Result<()> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "k",
        column.data_type().clone(),
        true,
    )]));
    let per = column.len().div_ceil(parts).max(1);
    let mut partitions = vec![];
    for start in (0..column.len()).step_by(per) {
        let len = per.min(column.len() - start);
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![column.slice(start, len)])?;
        partitions.push(vec![batch]);
    }
    if partitions.is_empty() {
        partitions.push(vec![]);
    }
    ctx.register_table(name, Arc::new(MemTable::try_new(schema, partitions)?))?;
    Ok(())
}

async fn one_binary(ctx: &SessionContext, sql: &str) -> Result<Vec<u8>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let a = batches[0].column(0).as_binary::<i32>();
    Ok(a.value(0).to_vec())
}

async fn booleans(ctx: &SessionContext, sql: &str) -> Result<Vec<Option<bool>>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(batches
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect())
}

/// Each supported type: `n` distinct keys with a null at every seventh row.
fn columns(n: usize) -> Vec<(&'static str, ArrayRef)> {
    let null = |i: usize| i % 7 == 3;
    let s = |i: usize| (!null(i)).then(|| format!("key-{i}-{}", "x".repeat(i % 20)));
    let b = |i: usize| (!null(i)).then(|| format!("bin{i}").into_bytes());
    vec![
        (
            "Int8",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as i8))
                    .collect::<Int8Array>(),
            ),
        ),
        (
            "UInt8",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as u8))
                    .collect::<UInt8Array>(),
            ),
        ),
        (
            "Int16",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as i16 * 11 - 9000))
                    .collect::<Int16Array>(),
            ),
        ),
        (
            "UInt16",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as u16 * 31))
                    .collect::<UInt16Array>(),
            ),
        ),
        (
            "Int32",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as i32 * 3 - 50))
                    .collect::<Int32Array>(),
            ),
        ),
        (
            "Int64",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as i64 * 1_000_003))
                    .collect::<Int64Array>(),
            ),
        ),
        (
            "UInt32",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(i as u32 * 7))
                    .collect::<UInt32Array>(),
            ),
        ),
        (
            "UInt64",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i)).then_some(u64::MAX - i as u64))
                    .collect::<UInt64Array>(),
            ),
        ),
        ("Utf8", Arc::new((0..n).map(s).collect::<StringArray>())),
        (
            "LargeUtf8",
            Arc::new((0..n).map(s).collect::<LargeStringArray>()),
        ),
        (
            "Utf8View",
            Arc::new((0..n).map(s).collect::<StringViewArray>()),
        ),
        ("Binary", Arc::new((0..n).map(b).collect::<BinaryArray>())),
        (
            "LargeBinary",
            Arc::new((0..n).map(b).collect::<LargeBinaryArray>()),
        ),
        (
            "BinaryView",
            Arc::new((0..n).map(b).collect::<BinaryViewArray>()),
        ),
        (
            "FixedSizeBinary(16)",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    (0..n).map(|i| (!null(i)).then(|| (i as u128 * 0x9e37_79b9).to_le_bytes())),
                    16,
                )
                .unwrap(),
            ),
        ),
    ]
}

/// For every type: the aggregate's filter holds every non-null key (read back with the
/// crate), `might_contain` answers true for each, null for a null key, and mostly false for
/// keys not inserted; the filter is the same bytes however the input is partitioned.
#[tokio::test]
async fn every_key_type_round_trips() -> Result<()> {
    let n = 2000;
    for (name, column) in columns(n) {
        let mut filters = vec![];
        for parts in [1, 4] {
            let ctx = ctx(parts);
            table(&ctx, "t", Arc::clone(&column), parts)?;
            let bytes = one_binary(&ctx, "SELECT bloom_filter_agg(k, 10000, 0.01) FROM t").await?;
            let f = BloomFilter::from_bytes(&bytes).expect("the aggregate's bytes decode");
            // The same array, asked in Rust: every key type is hashed alike on both sides.
            let answers = f.contains_array(&column).unwrap();
            for i in 0..n {
                assert_eq!(answers.is_null(i), column.is_null(i), "{name} row {i}");
                assert!(column.is_null(i) || answers.value(i), "{name} key {i} lost");
            }
            let answers = booleans(
                &ctx,
                "SELECT might_contain((SELECT bloom_filter_agg(k, 10000, 0.01) FROM t), k) FROM t",
            )
            .await?;
            assert_eq!(answers.len(), n, "{name}");
            assert_eq!(
                answers.iter().filter(|a| a.is_none()).count(),
                column.null_count(),
                "{name}"
            );
            assert!(
                answers.iter().all(|a| *a != Some(false)),
                "{name}: a false negative"
            );
            filters.push(bytes);
        }
        assert_eq!(
            filters[0], filters[1],
            "{name}: the result depends on the partitioning"
        );
    }
    Ok(())
}

#[tokio::test]
async fn absent_keys_are_mostly_false() -> Result<()> {
    let ctx = ctx(2);
    table(
        &ctx,
        "dim",
        Arc::new(Int64Array::from_iter_values(0..10_000)),
        2,
    )?;
    table(
        &ctx,
        "probe",
        Arc::new(Int64Array::from_iter_values(1_000_000..1_100_000)),
        2,
    )?;
    let answers = booleans(
        &ctx,
        "SELECT might_contain((SELECT bloom_filter_agg(k, 10000, 0.01) FROM dim), k) FROM probe",
    )
    .await?;
    let hits = answers.iter().filter(|a| **a == Some(true)).count();
    // 1% of 100,000 expected; 2% is far outside its spread.
    assert!(hits < 2_000, "{hits} false positives of 100000 at 1%");
    Ok(())
}

/// An `INT` column's filter answers `BIGINT` literals and columns of the same values, and
/// a string's a `Utf8View` of the same text.
#[tokio::test]
async fn integer_widths_and_string_types_share_keys() -> Result<()> {
    let ctx = ctx(1);
    table(
        &ctx,
        "small",
        Arc::new(Int32Array::from(vec![-5, 7, 1 << 30])),
        1,
    )?;
    let f = one_binary(&ctx, "SELECT bloom_filter_agg(k) FROM small").await?;
    let hex: String = f.iter().map(|b| format!("{b:02x}")).collect();
    let answers = booleans(
        &ctx,
        &format!("SELECT might_contain(X'{hex}', v) FROM (VALUES (CAST(-5 AS BIGINT)), (7), (1073741824)) AS v(v)"),
    )
    .await?;
    assert_eq!(answers, [Some(true); 3]);
    table(
        &ctx,
        "names",
        Arc::new(StringArray::from(vec!["alice", "bob"])),
        1,
    )?;
    let answers = booleans(
        &ctx,
        "SELECT might_contain((SELECT bloom_filter_agg(k) FROM names), arrow_cast('alice', 'Utf8View'))",
    )
    .await?;
    assert_eq!(answers, [Some(true)]);
    Ok(())
}

#[tokio::test]
async fn empty_input_and_nulls() -> Result<()> {
    let ctx = ctx(2);
    table(
        &ctx,
        "empty",
        Arc::new(Int64Array::from(Vec::<i64>::new())),
        1,
    )?;
    table(
        &ctx,
        "nulls",
        Arc::new(Int64Array::from(vec![None, None])),
        1,
    )?;
    for t in ["empty", "nulls"] {
        let bytes = one_binary(
            &ctx,
            &format!("SELECT bloom_filter_agg(k, 100, 0.01) FROM {t}"),
        )
        .await?;
        let f = BloomFilter::from_bytes(&bytes).expect("an empty filter");
        assert!((0..1000i64).all(|k| !f.contains(&k)), "{t}: not empty");
    }
    // A null filter and a null key answer null.
    let answers = booleans(&ctx, "SELECT might_contain(NULL, 5)").await?;
    assert_eq!(answers, [None]);
    let answers = booleans(
        &ctx,
        "SELECT might_contain((SELECT bloom_filter_agg(k) FROM empty), CAST(NULL AS BIGINT))",
    )
    .await?;
    assert_eq!(answers, [None]);
    Ok(())
}

/// A filter given as a literal, as a bound parameter, and as a column of different filters
/// per row (decoded once per run of equal values) answer alike.
#[tokio::test]
async fn filter_argument_forms() -> Result<()> {
    let ctx = ctx(1);
    let mut a = BloomFilter::with_capacity(100, 0.001).unwrap();
    a.insert(&1i64);
    let mut b = BloomFilter::with_capacity(100, 0.001).unwrap();
    b.insert(&2i64);
    let (a, b) = (a.to_bytes(), b.to_bytes());
    let hex: String = a.iter().map(|x| format!("{x:02x}")).collect();

    let literal = booleans(
        &ctx,
        &format!("SELECT might_contain(X'{hex}', k) FROM (VALUES (1), (2)) v(k)"),
    )
    .await?;
    assert_eq!(literal, [Some(true), Some(false)]);

    let param = ctx
        .sql("SELECT might_contain($1, k) FROM (VALUES (1), (2)) v(k)")
        .await?
        .with_param_values(vec![ScalarValue::Binary(Some(a.clone()))])?
        .collect()
        .await?;
    let param: Vec<_> = param[0].column(0).as_boolean().iter().collect();
    assert_eq!(param, [Some(true), Some(false)]);

    let filters: ArrayRef = Arc::new(BinaryArray::from(vec![
        Some(&a[..]),
        Some(&a[..]),
        Some(&b[..]),
        None,
        Some(&b[..]),
    ]));
    let keys: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 2, 2, 1]));
    let schema = Arc::new(Schema::new(vec![
        Field::new("f", filters.data_type().clone(), true),
        Field::new("k", keys.data_type().clone(), true),
    ]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![filters, keys])?;
    ctx.register_table(
        "pairs",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]])?),
    )?;
    let column = booleans(&ctx, "SELECT might_contain(f, k) FROM pairs").await?;
    assert_eq!(
        column,
        [Some(true), Some(false), Some(true), None, Some(false)]
    );
    Ok(())
}

/// A scalar subquery's filter answers alike whether DataFusion evaluates the subquery once
/// (its default) or joins it in as a column of equal values (the option off, as some
/// distributed engines set it), over several batches.
#[tokio::test]
async fn a_scalar_subquery_answers_alike_evaluated_once_or_joined() -> Result<()> {
    let sql = "SELECT might_contain((SELECT bloom_filter_agg(k, 1000, 0.01) FROM dim), k) \
               FROM probe ORDER BY k";
    let mut runs = vec![];
    for once in [true, false] {
        let config = SessionConfig::new()
            .with_target_partitions(2)
            .with_batch_size(100)
            .set_bool(
                "datafusion.optimizer.enable_physical_uncorrelated_scalar_subquery",
                once,
            );
        let ctx = SessionContext::new_with_config(config);
        blockbloom_datafusion::register(&ctx);
        table(
            &ctx,
            "dim",
            Arc::new(Int64Array::from_iter_values(0..500)),
            2,
        )?;
        table(
            &ctx,
            "probe",
            Arc::new(Int64Array::from_iter_values(0..1000)),
            2,
        )?;
        let plan = ctx.sql(&format!("EXPLAIN {sql}")).await?.collect().await?;
        let plan = format!("{:?}", plan);
        assert_eq!(plan.contains("Join"), !once, "once = {once}: {plan}");
        let answers = booleans(&ctx, sql).await?;
        assert!(
            answers[..500].iter().all(|a| *a == Some(true)),
            "once = {once}"
        );
        runs.push(answers);
    }
    assert_eq!(runs[0], runs[1]);
    Ok(())
}

/// The integer values every build/probe pair below shares: each width's range ends, the sign
/// bit, and values only the wider types can name.
const VALUES: [i128; 16] = [
    0,
    1,
    5,
    -1,
    127,
    -128,
    200,
    255,
    -32768,
    65535,
    1 << 20,
    -(1 << 31),
    (1 << 32) - 1,
    -(1 << 40),
    (1 << 63) - 1,
    u64::MAX as i128,
];

/// The integer types, by their SQL cast name, with the values of [`VALUES`] each can name.
fn int_types() -> Vec<(DataType, Vec<i128>)> {
    use DataType::*;
    [Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64]
        .into_iter()
        .map(|t| {
            let (lo, hi): (i128, i128) = match t {
                Int8 => (i8::MIN as i128, i8::MAX as i128),
                Int16 => (i16::MIN as i128, i16::MAX as i128),
                Int32 => (i32::MIN as i128, i32::MAX as i128),
                Int64 => (i64::MIN as i128, i64::MAX as i128),
                UInt8 => (0, u8::MAX as i128),
                UInt16 => (0, u16::MAX as i128),
                UInt32 => (0, u32::MAX as i128),
                _ => (0, u64::MAX as i128),
            };
            let named = VALUES
                .into_iter()
                .filter(|v| (lo..=hi).contains(v))
                .collect();
            (t, named)
        })
        .collect()
}

/// `values` as an Arrow array of integer type `t` (each fits).
fn int_array(t: &DataType, values: &[i128]) -> ArrayRef {
    match t {
        DataType::Int8 => Arc::new(Int8Array::from_iter_values(values.iter().map(|&v| v as i8))),
        DataType::Int16 => Arc::new(Int16Array::from_iter_values(
            values.iter().map(|&v| v as i16),
        )),
        DataType::Int32 => Arc::new(Int32Array::from_iter_values(
            values.iter().map(|&v| v as i32),
        )),
        DataType::Int64 => Arc::new(Int64Array::from_iter_values(
            values.iter().map(|&v| v as i64),
        )),
        DataType::UInt8 => Arc::new(UInt8Array::from_iter_values(
            values.iter().map(|&v| v as u8),
        )),
        DataType::UInt16 => Arc::new(UInt16Array::from_iter_values(
            values.iter().map(|&v| v as u16),
        )),
        DataType::UInt32 => Arc::new(UInt32Array::from_iter_values(
            values.iter().map(|&v| v as u32),
        )),
        _ => Arc::new(UInt64Array::from_iter_values(
            values.iter().map(|&v| v as u64),
        )),
    }
}

/// A value as the Rust integer types that can name it, each asked of `f` single key and as a
/// one-key batch: the misses.
fn rust_misses(f: &BloomFilter, v: i128) -> Vec<String> {
    let mut misses = vec![];
    let mut ask = |name: &str, single: bool, batch: usize| {
        if !single || batch != 1 {
            misses.push(format!("{name} {v}"));
        }
    };
    macro_rules! each {
        ($($t:ty),*) => {$(
            if let Ok(x) = <$t>::try_from(v) {
                ask(stringify!($t), f.contains(&x), f.count_batch(&[x]));
            }
        )*};
    }
    each!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
    misses
}

/// One key, one answer between Rust and SQL: a filter `bloom_filter_agg` builds from a column
/// of each integer type answers Rust's single keys and batches of every Rust integer type and
/// Arrow arrays of every other integer type; a filter Rust builds from each type's values
/// answers `might_contain` over columns of every integer type and literals of every width.
/// 0 misses.
#[tokio::test]
async fn integers_are_one_key_in_rust_and_sql_at_every_width() -> Result<()> {
    let ctx = ctx(2);
    let types = int_types();
    let mut misses: Vec<String> = vec![];
    for (build, build_values) in &types {
        // SQL builds, Rust asks.
        table(&ctx, "b", int_array(build, build_values), 2)?;
        let bytes = one_binary(&ctx, "SELECT bloom_filter_agg(k, 1000, 0.001) FROM b").await?;
        ctx.deregister_table("b")?;
        let from_sql = BloomFilter::from_bytes(&bytes).unwrap();
        for &v in build_values {
            misses.extend(
                rust_misses(&from_sql, v)
                    .into_iter()
                    .map(|m| format!("{build} -> {m}")),
            );
        }
        for (probe, probe_values) in &types {
            let shared: Vec<i128> = probe_values
                .iter()
                .copied()
                .filter(|v| build_values.contains(v))
                .collect();
            let answers = from_sql.contains_array(&int_array(probe, &shared)).unwrap();
            if answers.true_count() != shared.len() {
                misses.push(format!("SQL {build} -> Rust {probe}Array"));
            }
        }
        // Rust builds, SQL asks.
        let mut from_rust = BloomFilter::with_capacity(1000, 0.001).unwrap();
        from_rust
            .insert_array(&int_array(build, build_values))
            .unwrap();
        let hex: String = from_rust
            .to_bytes()
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect();
        for (probe, probe_values) in &types {
            let shared: Vec<i128> = probe_values
                .iter()
                .copied()
                .filter(|v| build_values.contains(v))
                .collect();
            table(&ctx, "p", int_array(probe, &shared), 2)?;
            let answers =
                booleans(&ctx, &format!("SELECT might_contain(X'{hex}', k) FROM p")).await?;
            ctx.deregister_table("p")?;
            if answers.iter().any(|a| *a != Some(true)) {
                misses.push(format!("Rust {build} -> SQL {probe} column"));
            }
            let literals: Vec<String> = shared
                .iter()
                .map(|v| format!("might_contain(X'{hex}', arrow_cast({v}, '{probe}'))"))
                .collect();
            if !literals.is_empty() {
                let batches = ctx
                    .sql(&format!("SELECT {}", literals.join(", ")))
                    .await?
                    .collect()
                    .await?;
                for c in batches[0].columns() {
                    if !c.as_boolean().value(0) {
                        misses.push(format!("Rust {build} -> SQL {probe} literal"));
                    }
                }
            }
        }
    }
    assert!(misses.is_empty(), "{} misses: {misses:?}", misses.len());
    Ok(())
}

/// `might_contain` and `bloom_filter_agg` cast their key argument themselves: in a session with
/// no analyzer rules (no type coercion), narrow integer, dictionary and `Null` keys still hash
/// as their values.
#[tokio::test]
async fn the_functions_cast_their_keys_themselves() -> Result<()> {
    use blockbloom_datafusion::datafusion::execution::SessionStateBuilder;
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_analyzer_rules(vec![])
        .build();
    let ctx = SessionContext::new_with_state(state);
    blockbloom_datafusion::register(&ctx);
    let mut f = BloomFilter::with_capacity(100, 0.001).unwrap();
    f.insert_batch(&[5u64, 7, 9]);
    f.insert_batch(&["x"]);
    let hex: String = f.to_bytes().iter().map(|x| format!("{x:02x}")).collect();
    table(&ctx, "t", Arc::new(Int8Array::from(vec![5, 7, 9])), 1)?;
    let answers = booleans(&ctx, &format!("SELECT might_contain(X'{hex}', k) FROM t")).await?;
    assert_eq!(answers, [Some(true); 3]);
    let dict = blockbloom_datafusion::datafusion::arrow::array::DictionaryArray::<
        blockbloom_datafusion::datafusion::arrow::datatypes::Int32Type,
    >::from_iter(["x", "x"]);
    table(&ctx, "d", Arc::new(dict), 1)?;
    let answers = booleans(&ctx, &format!("SELECT might_contain(X'{hex}', k) FROM d")).await?;
    assert_eq!(answers, [Some(true); 2]);
    let bytes = one_binary(&ctx, "SELECT bloom_filter_agg(k) FROM t").await?;
    let g = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g.count_batch(&[5u8, 7, 9]), 3);
    Ok(())
}

/// Sizes are bounded as Spark bounds them: `expected_items` clamps to `max_num_items`, the bits
/// to `max_num_bits`, both settable with `SET`; a filter the allocator refuses is an error.
#[tokio::test]
async fn sizes_are_bounded_and_settable() -> Result<()> {
    use blockbloom_datafusion::{DEFAULT_MAX_NUM_BITS, DEFAULT_MAX_NUM_ITEMS};
    let ctx = ctx(2);
    table(&ctx, "t", Arc::new(Int64Array::from(vec![1, 2, 3])), 2)?;
    // Clamped by default: 10^9 items become 4,000,000 (about 5 MB at 1%), 2^40 bits 8 MiB,
    // and 4,000,000 items at 0.01% (9.6 MB) the 8 MiB budget at a higher rate.
    for (sql, items, bytes) in [
        (
            "SELECT bloom_filter_agg(k, 1000000000, 0.01) FROM t",
            DEFAULT_MAX_NUM_ITEMS,
            None,
        ),
        (
            "SELECT bloom_filter_agg(k, 1000, 1099511627776) FROM t",
            1000,
            Some(DEFAULT_MAX_NUM_BITS / 8),
        ),
        (
            "SELECT bloom_filter_agg(k, 4000000, 0.0001) FROM t",
            DEFAULT_MAX_NUM_ITEMS,
            Some(DEFAULT_MAX_NUM_BITS / 8),
        ),
    ] {
        let f = BloomFilter::from_bytes(&one_binary(&ctx, sql).await?).unwrap();
        assert!(
            f.size_in_bytes() as u64 <= DEFAULT_MAX_NUM_BITS / 8,
            "{sql}"
        );
        if let Some(b) = bytes {
            assert_eq!(f.size_in_bytes() as u64, b, "{sql}");
        }
        assert_eq!(f.capacity(), items, "{sql}");
        assert!(f.contains(&2i64));
    }
    // Settable per session.
    ctx.sql("SET blockbloom.max_num_bits = 65536")
        .await?
        .collect()
        .await?;
    ctx.sql("SET blockbloom.max_num_items = 500")
        .await?
        .collect()
        .await?;
    let f = BloomFilter::from_bytes(
        &one_binary(&ctx, "SELECT bloom_filter_agg(k, 1000000, 0.01) FROM t").await?,
    )
    .unwrap();
    assert!(
        f.size_in_bytes() <= 65536 / 8 && f.capacity() == 500,
        "{f:?}"
    );
    let e = error_of(&ctx, "SET blockbloom.max_num_bits = -1").await;
    assert!(e.contains("'-1' as u64"), "{e}");
    ctx.sql("SET blockbloom.max_num_bits = 0")
        .await?
        .collect()
        .await?;
    let e = error_of(&ctx, "SELECT bloom_filter_agg(k) FROM t").await;
    assert!(e.contains("must be above 0"), "{e}");
    Ok(())
}

/// Asked for 2^40 bits (128 GiB) with the bound raised to allow it, the aggregate is an error
/// naming the allocation, not an abort. Run in a child process whose address space is limited
/// to 4 GiB (`ulimit -v`), so the allocation fails on every machine however much memory it
/// has.
#[test]
fn a_refused_allocation_is_an_error() {
    if std::env::var_os("BLOCKBLOOM_DF_CHILD").is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(&exe)
        .args([
            "--exact",
            "refused_allocation_child",
            "--ignored",
            "--nocapture",
        ])
        .env("BLOCKBLOOM_DF_CHILD", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

#[tokio::test]
#[ignore = "run by a_refused_allocation_is_an_error in a process of limited address space"]
async fn refused_allocation_child() -> Result<()> {
    let ctx = ctx(1);
    table(&ctx, "t", Arc::new(Int64Array::from(vec![1, 2, 3])), 1)?;
    ctx.sql("SET blockbloom.max_num_bits = 1099511627776")
        .await?
        .collect()
        .await?;
    let e = error_of(
        &ctx,
        "SELECT bloom_filter_agg(k, 1000, 1099511627776) FROM t",
    )
    .await;
    assert!(e.contains("could not allocate"), "{e}");
    println!("refused: {e}");
    Ok(())
}

/// Filters of every hash id answer (files written before hash id 2 carry id 1, before id 3
/// id 2), and the aggregate writes the library's default, hash id 3 (AESH-64 for these
/// strings).
#[tokio::test]
async fn filters_of_either_hash_id_answer() -> Result<()> {
    let ctx = ctx(2);
    let keys = ["alpha", "user:17", "a key of more than sixteen bytes"];
    for hash in [KeyHash::Xxh3, KeyHash::Aesh, KeyHash::Mx32] {
        let mut f = BloomFilter::builder()
            .capacity(100)
            .fpr(0.001)
            .key_hash(hash)
            .build()
            .unwrap();
        f.insert_batch(&keys);
        let hex: String = f.to_bytes().iter().map(|x| format!("{x:02x}")).collect();
        let got = booleans(
            &ctx,
            &format!(
                "SELECT might_contain(X'{hex}', k) FROM (VALUES ('alpha'), ('user:17'), \
                 ('a key of more than sixteen bytes'), ('absent key')) v(k)"
            ),
        )
        .await?;
        assert_eq!(got[..3], [Some(true); 3], "{hash}");
    }
    let bytes = one_binary(
        &ctx,
        "SELECT bloom_filter_agg(k) FROM (VALUES ('alpha'), ('user:17')) v(k)",
    )
    .await?;
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f.key_hash(), KeyHash::Mx32);
    assert!(f.contains("alpha") && f.contains("user:17"));
    Ok(())
}

/// Spark's third argument, a number of bits, sizes the filter.
#[tokio::test]
async fn spark_num_bits_form() -> Result<()> {
    let ctx = ctx(1);
    table(&ctx, "t", Arc::new(Int64Array::from(vec![1, 2, 3])), 1)?;
    let bytes = one_binary(&ctx, "SELECT bloom_filter_agg(k, 1000, 65536) FROM t").await?;
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f.size_in_bytes(), 65536 / 8);
    assert!(f.contains(&2i64));
    Ok(())
}

async fn error_of(ctx: &SessionContext, sql: &str) -> String {
    let run = async { ctx.sql(sql).await?.collect().await };
    match run.await {
        Ok(_) => panic!("{sql}: no error"),
        Err(e) => e.to_string(),
    }
}

/// Bad arguments are errors that name the problem, never panics.
#[tokio::test]
async fn bad_arguments_are_errors() -> Result<()> {
    let ctx = ctx(1);
    table(&ctx, "t", Arc::new(Int64Array::from(vec![1, 2, 3])), 1)?;
    let e = error_of(&ctx, "SELECT might_contain(X'00112233', 1)").await;
    assert!(
        e.contains("might_contain") && e.contains("not a blockbloom filter"),
        "{e}"
    );
    let e = error_of(&ctx, "SELECT might_contain(CAST(k AS BYTEA), k) FROM t").await;
    assert!(e.contains("not a blockbloom filter"), "{e}");
    let e = error_of(
        &ctx,
        "SELECT might_contain((SELECT bloom_filter_agg(k) FROM t), 1.5)",
    )
    .await;
    assert!(e.contains("might_contain") && e.contains("Float64"), "{e}");
    let e = error_of(&ctx, "SELECT bloom_filter_agg(CAST(k AS DOUBLE)) FROM t").await;
    assert!(
        e.contains("bloom_filter_agg") && e.contains("Float64"),
        "{e}"
    );
    let e = error_of(&ctx, "SELECT might_contain('text', k) FROM t").await;
    assert!(e.contains("must be Binary"), "{e}");
    let e = error_of(&ctx, "SELECT bloom_filter_agg(k, 0, 0.01) FROM t").await;
    assert!(e.contains("expected_items"), "{e}");
    let e = error_of(&ctx, "SELECT bloom_filter_agg(k, 100, 1.5) FROM t").await;
    assert!(e.contains("false-positive rate"), "{e}");
    let e = error_of(&ctx, "SELECT bloom_filter_agg(k, k) FROM t").await;
    assert!(e.contains("constant"), "{e}");
    Ok(())
}
