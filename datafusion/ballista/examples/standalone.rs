//! blockbloom on an in-process Ballista cluster: the SQL functions, and the runtime filter
//! on a join, from Parquet files this example writes.
//!
//! ```text
//! cd datafusion && cargo run --release -p blockbloom-ballista --example standalone
//! ```

use std::fs::File;
use std::sync::Arc;

use blockbloom_ballista::datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use blockbloom_ballista::datafusion::arrow::datatypes::{DataType, Field, Schema};
use blockbloom_ballista::datafusion::error::Result;
use blockbloom_ballista::datafusion::parquet::arrow::ArrowWriter;
use blockbloom_ballista::datafusion::prelude::ParquetReadOptions;

/// Writes `batch` as `dir/name/part-0.parquet`.
fn write(dir: &std::path::Path, name: &str, batch: &RecordBatch) -> Result<String> {
    let table = dir.join(name);
    std::fs::create_dir_all(&table)?;
    let mut w = ArrowWriter::try_new(
        File::create(table.join("part-0.parquet"))?,
        batch.schema(),
        None,
    )?;
    w.write(batch)?;
    w.close()?;
    Ok(table.to_str().expect("a UTF-8 path").to_string())
}

#[tokio::main]
async fn main() -> Result<()> {
    let dir = std::env::temp_dir().join("blockbloom-ballista-example");
    // A fact table of 2M events over 100,000 users, and the 1,000 users of one country.
    let n = 2_000_000i64;
    let events = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("user_id", DataType::Int64, false),
            Field::new("amount", DataType::Int64, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| (i * 7919) % 100_000),
            )),
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 97))),
        ],
    )?;
    let users = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("country", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..100_000)),
            Arc::new(StringArray::from_iter_values(
                (0..100_000).map(|i| if i % 100 == 0 { "IS" } else { "other" }),
            )),
        ],
    )?;
    let events_path = write(&dir, "events", &events)?;
    let users_path = write(&dir, "users", &users)?;

    let ctx = blockbloom_ballista::standalone().await?;
    ctx.register_parquet("events", &events_path, ParquetReadOptions::default())
        .await?;
    ctx.register_parquet("users", &users_path, ParquetReadOptions::default())
        .await?;

    // The functions, run by the cluster's executor.
    ctx.sql(
        "SELECT count(*) AS maybe_icelandic FROM events WHERE might_contain(\
         (SELECT bloom_filter_agg(id, 1000, 0.01) FROM users WHERE country = 'IS'), user_id)",
    )
    .await?
    .show()
    .await?;

    // The runtime filter: this example's tables are far below its default thresholds (its
    // docs say why they are what they are), so they are lowered here.
    for set in [
        "SET blockbloom.runtime_filter_min_probe_bytes = 0",
        "SET datafusion.optimizer.hash_join_single_partition_threshold = 0",
        "SET ballista.optimizer.broadcast_join_threshold_bytes = 0",
    ] {
        ctx.sql(set).await?.collect().await?;
    }
    let join = "SELECT sum(e.amount) FROM events e JOIN users u ON e.user_id = u.id \
                WHERE u.country = 'IS'";
    ctx.sql(join).await?.show().await?;
    let plan = ctx.sql(&format!("EXPLAIN {join}")).await?.collect().await?;
    let text = blockbloom_ballista::datafusion::arrow::util::pretty::pretty_format_batches(&plan)?
        .to_string();
    println!(
        "the physical plan, where the filter went:\n{}",
        text.lines()
            .filter(|l| l.contains("might_contain") || l.contains("bloom_filter_agg"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok(())
}
