//! `bloom_filter_agg` and `might_contain` through SQL: every key type, nulls, empty input,
//! partitioning, the forms of the filter argument (literal, parameter, scalar subquery,
//! column), and the errors.

use std::sync::Arc;

use blockbloom::{BloomFilter, KeyHash};
use blockbloom_datafusion::datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, Int32Array,
    Int64Array, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray, StringViewArray,
    UInt32Array, UInt64Array,
};
use blockbloom_datafusion::datafusion::arrow::compute::cast;
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
            // Integers are hashed as 64-bit values.
            let hashed = match column.data_type() {
                DataType::Int32 | DataType::UInt32 => cast(&column, &DataType::Int64)?,
                _ => Arc::clone(&column),
            };
            let answers = f.contains_array(&hashed).unwrap();
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

/// Filters of either hash id answer (files written before hash id 2 carry id 1), and the
/// aggregate writes the default, hash id 2, whose string keys hash with AESH-64.
#[tokio::test]
async fn filters_of_either_hash_id_answer() -> Result<()> {
    let ctx = ctx(2);
    let keys = ["alpha", "user:17", "a key of more than sixteen bytes"];
    for hash in [KeyHash::Xxh3, KeyHash::Aesh] {
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
    assert_eq!(f.key_hash(), KeyHash::Aesh);
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
