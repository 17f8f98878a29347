//! The share of a scan's rows its own filters keep, measured on a sample of its Parquet files:
//! what the runtime filter rule takes the probe side's output to be, in place of DataFusion's
//! fixed guess (`datafusion.optimizer.default_filter_selectivity`, 20%), which cannot tell
//! q19's lineitem (3.5% of its rows kept) from q10's (25%).

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::Schema;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::execution_props::ExecutionProps;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{LogicalPlan, TableScan};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::physical_expr::create_physical_expr;

/// Row groups a sample reads at most, spread evenly over the files' row groups in order, so
/// that a table sorted by a filtered column (dates, say) is read at several places, not only
/// at its start.
pub(crate) const SAMPLE_GROUPS: usize = 8;

/// Rows a sample reads from each row group it picks: with [`SAMPLE_GROUPS`], at most 65,536
/// rows of the filters' columns.
pub(crate) const SAMPLE_ROWS: usize = 8192;

/// The share of the rows of `plan`'s scan (one table's scan under projections, filters and
/// aliases) that its filters keep, from a sample of `files` (the table's files): the filters
/// pushed into the scan and those of `Filter` nodes over the table's own columns, evaluated
/// together on up to [`SAMPLE_ROWS`] rows of each of up to [`SAMPLE_GROUPS`] row groups.
/// `None` where there is no such filter, a file is not Parquet or lacks a column, or the
/// sample holds no rows.
pub(crate) fn filter_share(plan: &LogicalPlan, files: &[(PathBuf, u64)]) -> Option<f64> {
    let mut scan: Option<&TableScan> = None;
    let mut predicates = Vec::new();
    plan.apply(|node| {
        match node {
            LogicalPlan::TableScan(s) => {
                scan = Some(s);
                predicates.extend(s.filters.iter().cloned());
            }
            LogicalPlan::Filter(f) => predicates.push(f.predicate.clone()),
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .ok()?;
    let scan = scan?;
    let table = scan.source.schema();
    let qualified = DFSchema::try_from_qualified_schema(scan.table_name.clone(), &table).ok()?;
    // A filter above an alias names the alias's columns: only the table's own are evaluated
    // (a filter left out only makes the share larger, and the rule more willing).
    predicates.retain(|p| p.column_refs().iter().all(|c| qualified.has_column(c)));
    let predicate = conjunction(predicates)?;
    let mut columns: Vec<usize> = predicate
        .column_refs()
        .iter()
        .filter_map(|c| table.index_of(c.name()).ok())
        .collect();
    columns.sort_unstable();
    columns.dedup();
    let projected = Arc::new(table.project(&columns).ok()?);
    let schema = DFSchema::try_from_qualified_schema(scan.table_name.clone(), &projected).ok()?;
    let predicate = create_physical_expr(
        &predicate,
        &schema,
        &ExecutionProps::new(),
        &PhysicalPlanningContext::default(),
    )
    .ok()?;

    let mut groups = Vec::new();
    for (path, _) in files {
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).ok()?).ok()?;
        groups.extend((0..builder.metadata().num_row_groups()).map(|g| (path, g)));
    }
    let picks = groups.len().min(SAMPLE_GROUPS);
    let (mut rows, mut kept) = (0usize, 0usize);
    for i in 0..picks {
        let (path, group) = groups[i * groups.len() / picks];
        for batch in read(path, group, &projected).ok()? {
            let mask = predicate.evaluate(&batch).ok()?;
            let mask = mask.into_array(batch.num_rows()).ok()?;
            rows += batch.num_rows();
            kept += mask.as_boolean_opt()?.true_count();
        }
    }
    (rows > 0).then(|| kept as f64 / rows as f64)
}

/// The first [`SAMPLE_ROWS`] rows of row group `group` of the Parquet file at `path`, of the
/// columns of `schema` (found by name), each cast to its type there (the table may read
/// strings as views where the file holds plain strings).
fn read(path: &PathBuf, group: usize, schema: &Arc<Schema>) -> Result<Vec<RecordBatch>> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let file_schema = Arc::clone(builder.schema());
    let at: Vec<usize> = schema
        .fields()
        .iter()
        .map(|f| file_schema.index_of(f.name()))
        .collect::<Result<_, _>>()?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), at.iter().copied());
    let reader = builder
        .with_row_groups(vec![group])
        .with_projection(mask)
        .with_limit(SAMPLE_ROWS)
        .build()?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch?;
        // The projected batch's columns are in the file's order; the schema's may differ.
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let column = batch.column(batch.schema().index_of(f.name())?);
                Ok(cast(column, f.data_type())?)
            })
            .collect::<Result<Vec<Arc<dyn Array>>>>()?;
        out.push(RecordBatch::try_new(Arc::clone(schema), columns)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::properties::WriterProperties;
    use datafusion::prelude::{ParquetReadOptions, SessionContext};

    /// A Parquet file of `a` = 0..20,000 and `s` = "x" on every tenth row, in row groups of
    /// 10,000 rows.
    fn table(dir: &std::path::Path) -> PathBuf {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let a = Int64Array::from_iter_values(0..20_000);
        let s =
            StringArray::from_iter_values((0..20_000).map(|i| if i % 10 == 0 { "x" } else { "y" }));
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(a), Arc::new(s)]).unwrap();
        let path = dir.join("t.parquet");
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(10_000))
            .build();
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    }

    async fn share(ctx: &SessionContext, file: &PathBuf, sql: &str) -> Option<f64> {
        let plan = ctx.sql(sql).await.unwrap().into_optimized_plan().unwrap();
        let len = std::fs::metadata(file).unwrap().len();
        filter_share(&plan, &[(file.clone(), len)])
    }

    #[tokio::test]
    async fn the_share_is_measured_on_row_groups_spread_over_the_files() {
        let dir = std::env::temp_dir().join(format!("blockbloom-sample-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = table(&dir);
        let ctx = SessionContext::new();
        ctx.register_parquet("t", file.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap();
        // The first 8,192 rows of each of the two row groups: 16,384 rows.
        let got = share(&ctx, &file, "SELECT a FROM t WHERE a < 200").await;
        assert_eq!(got, Some(200.0 / 16_384.0));
        // Rows from the second row group: a sample of the first alone would see none.
        let got = share(
            &ctx,
            &file,
            "SELECT a FROM t WHERE a >= 10000 AND a < 10100",
        )
        .await;
        assert_eq!(got, Some(100.0 / 16_384.0));
        // A string column, read as the table's type; and a filter that keeps every row.
        let got = share(&ctx, &file, "SELECT a FROM t WHERE s = 'x'")
            .await
            .unwrap();
        assert!((got - 0.1).abs() < 0.01, "{got}");
        assert_eq!(
            share(&ctx, &file, "SELECT a FROM t WHERE a >= 0").await,
            Some(1.0)
        );
        // No filter of its own, and a file that is not Parquet.
        assert_eq!(share(&ctx, &file, "SELECT a FROM t").await, None);
        let text = dir.join("t.csv");
        std::fs::write(&text, "a\n1\n").unwrap();
        let plan = ctx
            .sql("SELECT a FROM t WHERE a < 5")
            .await
            .unwrap()
            .into_optimized_plan()
            .unwrap();
        assert_eq!(filter_share(&plan, &[(text, 4)]), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
