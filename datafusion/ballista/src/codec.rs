//! The extension codecs: Ballista's own, plus what blockbloom's functions need to cross a
//! process boundary.
//!
//! A plan names a function by its name, and the process that decodes it looks the name up in
//! its registry. Two of blockbloom's calls carry more than their name:
//!
//! * a `might_contain` whose filter argument was a literal has been simplified into a
//!   one-argument call holding the decoded filter ([`MightContain::planned_filter`]); its
//!   bytes travel with the call, and are checked where they are decoded (a corrupt filter is
//!   an error);
//! * a `bloom_filter_agg` carries the bounds (`blockbloom.max_num_items`,
//!   `blockbloom.max_num_bits`) the session planned it with, so that every executor's partial
//!   filter has the shape the query asked for.
//!
//! The physical codec also carries [`RuntimeFilterExec`], the node the scheduler plans the
//! runtime filter's semi join as: its filter column and its key expression (as DataFusion
//! encodes expressions), behind a prefix no protobuf message of Ballista's begins with.
//!
//! Every other node and function goes to Ballista's codecs unchanged. A process without
//! these codecs (a stock Ballista executor) fails such a plan with DataFusion's error naming
//! the function, and one without the functions fails any plan that calls them the same way:
//! never a wrong answer.

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use blockbloom_datafusion::{BloomFilterAgg, MightContain};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::PhysicalExprNode;
use prost::Message;

use crate::exec::RuntimeFilterExec;

/// The first byte of a function's definition as these codecs write it: which form follows.
const PLANNED_FILTER: u8 = 1;
/// A `bloom_filter_agg`'s bounds follow: two little-endian `u64`s.
const AGG_BOUNDS: u8 = 2;
/// The start of a [`RuntimeFilterExec`] as the physical codec writes it. Ballista's codec
/// writes a protobuf message, whose first byte (a field's tag, field numbers under 16) is
/// never 0xff.
const RUNTIME_FILTER_EXEC: &[u8] = b"\xffblockbloom.RuntimeFilterExec/1\0";

fn encode_udf(node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<bool> {
    let Some(filter) = MightContain::planned_filter(node) else {
        return Ok(false);
    };
    buf.push(PLANNED_FILTER);
    filter.write_to(&mut *buf).map_err(|e| {
        DataFusionError::Internal(format!("might_contain: encoding its filter: {e}"))
    })?;
    Ok(true)
}

fn decode_udf(name: &str, buf: &[u8]) -> Result<Option<Arc<ScalarUDF>>> {
    match buf.split_first() {
        Some((&PLANNED_FILTER, bytes)) if name == "might_contain" => {
            let udf = MightContain::with_planned_filter(bytes).map_err(|e| {
                DataFusionError::Plan(format!(
                    "might_contain: the filter shipped with the plan is not a blockbloom filter \
                     ({} bytes): {e}",
                    bytes.len()
                ))
            })?;
            Ok(Some(Arc::new(udf)))
        }
        _ => Ok(None),
    }
}

fn encode_udaf(node: &AggregateUDF, buf: &mut Vec<u8>) -> bool {
    let Some(agg) = node.inner().as_ref().downcast_ref::<BloomFilterAgg>() else {
        return false;
    };
    let Some((items, bits)) = agg.bounds() else {
        return false;
    };
    buf.push(AGG_BOUNDS);
    buf.extend_from_slice(&items.to_le_bytes());
    buf.extend_from_slice(&bits.to_le_bytes());
    true
}

fn decode_udaf(name: &str, buf: &[u8]) -> Result<Option<Arc<AggregateUDF>>> {
    match buf.split_first() {
        Some((&AGG_BOUNDS, bounds)) if name == "bloom_filter_agg" => {
            let (Some(items), Some(bits)) = (bounds.get(..8), bounds.get(8..16)) else {
                return Err(DataFusionError::Plan(format!(
                    "bloom_filter_agg: its bounds in the plan are {} bytes, not 16",
                    bounds.len()
                )));
            };
            let items = u64::from_le_bytes(items.try_into().expect("8 bytes"));
            let bits = u64::from_le_bytes(bits.try_into().expect("8 bytes"));
            Ok(Some(Arc::new(AggregateUDF::from(
                BloomFilterAgg::with_bounds(items, bits)?,
            ))))
        }
        _ => Ok(None),
    }
}

/// The four methods both codecs share: blockbloom's forms first, then Ballista's codec
/// (`self.inner`).
macro_rules! function_methods {
    () => {
        fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
            match decode_udf(name, buf)? {
                Some(udf) => Ok(udf),
                None => self.inner.try_decode_udf(name, buf),
            }
        }

        fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
            if encode_udf(node, buf)? {
                return Ok(());
            }
            self.inner.try_encode_udf(node, buf)
        }

        fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
            match decode_udaf(name, buf)? {
                Some(udaf) => Ok(udaf),
                None => self.inner.try_decode_udaf(name, buf),
            }
        }

        fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
            if encode_udaf(node, buf) {
                return Ok(());
            }
            self.inner.try_encode_udaf(node, buf)
        }
    };
}

/// Ballista's logical codec ([`BallistaLogicalExtensionCodec`]) with blockbloom's functions
/// (see the [module](self) docs). Clients and schedulers use it.
#[derive(Debug, Default)]
pub struct BloomLogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for BloomLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        self.inner
            .try_decode_table_provider(buf, table_ref, schema, ctx)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    function_methods!();
}

/// Ballista's physical codec ([`BallistaPhysicalExtensionCodec`]) with blockbloom's
/// functions (see the [module](self) docs). Schedulers and executors use it.
#[derive(Debug, Default)]
pub struct BloomPhysicalCodec {
    inner: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for BloomPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.strip_prefix(RUNTIME_FILTER_EXEC) {
            Some(rest) => self.decode_runtime_filter(rest, inputs, ctx, proto_converter),
            None => self.inner.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(exec) = node.downcast_ref::<RuntimeFilterExec>() else {
            return self.inner.try_encode(node, buf, proto_converter);
        };
        let column = u32::try_from(exec.filter_column()).map_err(|_| {
            DataFusionError::Internal("RuntimeFilterExec: filter column past u32".into())
        })?;
        let key = proto_converter.physical_expr_to_proto(exec.key(), self)?;
        buf.extend_from_slice(RUNTIME_FILTER_EXEC);
        buf.extend_from_slice(&column.to_le_bytes());
        buf.extend_from_slice(&key.encode_to_vec());
        Ok(())
    }

    function_methods!();
}

impl BloomPhysicalCodec {
    /// A [`RuntimeFilterExec`] from what [`try_encode`](PhysicalExtensionCodec::try_encode)
    /// wrote after its prefix: the filter column (`u32`, little-endian) and the key.
    fn decode_runtime_filter(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [filter_input, probe] = inputs else {
            return Err(DataFusionError::Internal(format!(
                "RuntimeFilterExec: {} inputs in the plan, not 2",
                inputs.len()
            )));
        };
        let (Some(column), Some(key)) = (buf.get(..4), buf.get(4..)) else {
            return Err(DataFusionError::Internal(
                "RuntimeFilterExec: its encoding is cut short".into(),
            ));
        };
        let column = u32::from_le_bytes(column.try_into().expect("4 bytes")) as usize;
        let key = PhysicalExprNode::decode(key)
            .map_err(|e| DataFusionError::Internal(format!("RuntimeFilterExec: its key: {e}")))?;
        let key = proto_converter.proto_to_physical_expr(
            &key,
            &probe.schema(),
            &PhysicalPlanDecodeContext::new(ctx, self),
        )?;
        Ok(Arc::new(RuntimeFilterExec::try_new(
            Arc::clone(filter_input),
            Arc::clone(probe),
            column,
            key,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planned_filter_round_trips_and_a_corrupt_one_is_an_error() {
        let mut filter = blockbloom::BloomFilter::with_capacity(1000, 0.01).unwrap();
        filter.insert(&42u64);
        let udf = MightContain::with_planned_filter(&filter.to_bytes()).unwrap();
        let mut buf = Vec::new();
        assert!(encode_udf(&udf, &mut buf).unwrap());
        let back = decode_udf("might_contain", &buf).unwrap().expect("ours");
        assert_eq!(MightContain::planned_filter(&back), Some(&filter));

        let last = buf.len() - 1;
        buf[last] ^= 1;
        let err = decode_udf("might_contain", &buf).unwrap_err().to_string();
        assert!(err.contains("not a blockbloom filter"), "{err}");
        // Another function's definition, or the plain function, is not ours to decode.
        assert!(decode_udf("might_contain", &[]).unwrap().is_none());
        assert!(decode_udf("upper", &buf).unwrap().is_none());
    }

    #[test]
    fn the_aggregate_keeps_its_bounds() {
        let agg = AggregateUDF::from(BloomFilterAgg::with_bounds(1234, 56789).unwrap());
        let mut buf = Vec::new();
        assert!(encode_udaf(&agg, &mut buf));
        let back = decode_udaf("bloom_filter_agg", &buf)
            .unwrap()
            .expect("ours");
        let back = back
            .inner()
            .as_ref()
            .downcast_ref::<BloomFilterAgg>()
            .unwrap();
        assert_eq!(back.bounds(), Some((1234, 56789)));
        // Unplanned (no bounds yet): the name alone, as Ballista would send it.
        assert!(!encode_udaf(
            &AggregateUDF::from(BloomFilterAgg::default()),
            &mut Vec::new()
        ));
        assert!(decode_udaf("bloom_filter_agg", &buf[..9]).is_err());
        assert!(
            decode_udaf(
                "bloom_filter_agg",
                &[AGG_BOUNDS, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
            )
            .is_err()
        );
    }
}
