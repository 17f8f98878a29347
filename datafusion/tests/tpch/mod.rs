//! TPC-H generated in process (the `tpchgen` and `tpchgen-arrow` crates: no download) into
//! DataFusion memory tables, and the 22 queries (`queries/`, the specification's text with
//! its validation parameters; query 15's view written as a common table expression). Shared
//! by the tests (`tests/join.rs`) and the measurement (`examples/tpch.rs`).

#![allow(dead_code)]

use std::sync::Arc;

use blockbloom_datafusion::datafusion::arrow::array::RecordBatch;
use blockbloom_datafusion::datafusion::datasource::MemTable;
use blockbloom_datafusion::datafusion::error::Result;
use blockbloom_datafusion::datafusion::prelude::SessionContext;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow,
    RecordBatchIterator, RegionArrow, SupplierArrow,
};

/// The 22 queries, `QUERIES[i]` being query `i + 1`.
pub const QUERIES: [&str; 22] = [
    include_str!("queries/q1.sql"),
    include_str!("queries/q2.sql"),
    include_str!("queries/q3.sql"),
    include_str!("queries/q4.sql"),
    include_str!("queries/q5.sql"),
    include_str!("queries/q6.sql"),
    include_str!("queries/q7.sql"),
    include_str!("queries/q8.sql"),
    include_str!("queries/q9.sql"),
    include_str!("queries/q10.sql"),
    include_str!("queries/q11.sql"),
    include_str!("queries/q12.sql"),
    include_str!("queries/q13.sql"),
    include_str!("queries/q14.sql"),
    include_str!("queries/q15.sql"),
    include_str!("queries/q16.sql"),
    include_str!("queries/q17.sql"),
    include_str!("queries/q18.sql"),
    include_str!("queries/q19.sql"),
    include_str!("queries/q20.sql"),
    include_str!("queries/q21.sql"),
    include_str!("queries/q22.sql"),
];

/// One table's batches in `parts` partitions.
fn table<I: RecordBatchIterator>(parts: usize, make: impl Fn(i32, i32) -> I) -> Result<MemTable> {
    let mut partitions: Vec<Vec<RecordBatch>> = Vec::with_capacity(parts);
    let mut schema = None;
    for part in 1..=parts as i32 {
        let it = make(part, parts as i32);
        schema.get_or_insert_with(|| Arc::clone(it.schema()));
        partitions.push(it.collect());
    }
    MemTable::try_new(schema.expect("at least one part"), partitions)
}

/// The eight tables of TPC-H at `scale`, each in `parts` partitions (nation and region, 25
/// and 5 rows, in one), to register in any number of contexts.
pub fn tables(scale: f64, parts: usize) -> Result<Vec<(&'static str, Arc<MemTable>)>> {
    let s = scale;
    let tables: Vec<(&str, MemTable)> = vec![
        (
            "nation",
            table(1, |p, n| NationArrow::new(NationGenerator::new(s, p, n)))?,
        ),
        (
            "region",
            table(1, |p, n| RegionArrow::new(RegionGenerator::new(s, p, n)))?,
        ),
        (
            "part",
            table(parts, |p, n| PartArrow::new(PartGenerator::new(s, p, n)))?,
        ),
        (
            "supplier",
            table(parts, |p, n| {
                SupplierArrow::new(SupplierGenerator::new(s, p, n))
            })?,
        ),
        (
            "partsupp",
            table(parts, |p, n| {
                PartSuppArrow::new(PartSuppGenerator::new(s, p, n))
            })?,
        ),
        (
            "customer",
            table(parts, |p, n| {
                CustomerArrow::new(CustomerGenerator::new(s, p, n))
            })?,
        ),
        (
            "orders",
            table(parts, |p, n| OrderArrow::new(OrderGenerator::new(s, p, n)))?,
        ),
        (
            "lineitem",
            table(parts, |p, n| {
                LineItemArrow::new(LineItemGenerator::new(s, p, n))
            })?,
        ),
    ];
    Ok(tables
        .into_iter()
        .map(|(name, t)| (name, Arc::new(t)))
        .collect())
}

/// Registers `tables` in `ctx`.
pub fn register(ctx: &SessionContext, tables: &[(&'static str, Arc<MemTable>)]) -> Result<()> {
    for (name, t) in tables {
        ctx.register_table(*name, Arc::clone(t) as _)?;
    }
    Ok(())
}
