//! Arrow arrays from DataFusion's arrow into blockbloom's Arrow API, and the SQL functions:
//! what failed to compile when a fresh lock file put the library on another arrow.

use blockbloom::BloomFilter;
use blockbloom_datafusion::datafusion::arrow::array::{AsArray, Int16Array, Int64Array};

#[tokio::main(flavor = "current_thread")]
async fn main() -> blockbloom_datafusion::datafusion::error::Result<()> {
    let mut f = BloomFilter::with_capacity(100, 0.01).unwrap();
    f.insert_array(&Int16Array::from(vec![1, 2, 3])).unwrap();
    let hits = f.contains_array(&Int64Array::from(vec![1, 2, 3])).unwrap();
    assert_eq!(hits.true_count(), 3);
    let ctx = blockbloom_datafusion::session_context();
    let hex: String = f.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let batches = ctx
        .sql(&format!("SELECT might_contain(X'{hex}', arrow_cast(2, 'Int8'))"))
        .await?
        .collect()
        .await?;
    assert!(batches[0].column(0).as_boolean().value(0));
    println!("downstream: built from a fresh lock file and ran");
    Ok(())
}
