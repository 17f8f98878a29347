//! The SQL functions: `bloom_filter_agg` (an aggregate returning a filter's bytes) and
//! `might_contain` (a filter's answer for each key).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use blockbloom::BloomFilter;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, new_null_array};
use datafusion::arrow::compute::concat;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    Accumulator, AggregateUDFImpl, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr::expressions::Literal;

use crate::keys::{as_key_array, bloom_error, sql_key_type, unsupported_key};

/// Keys a `bloom_filter_agg` filter is sized for when the query does not say: Spark's
/// default (`spark.sql.optimizer.runtime.bloomFilter.expectedNumItems`).
pub const DEFAULT_EXPECTED_ITEMS: u64 = 1_000_000;
/// The false-positive rate a `bloom_filter_agg` filter is sized for when the query does not
/// say: Spark's default (`DEFAULT_FPP` of its `BloomFilter`).
pub const DEFAULT_FPR: f64 = 0.03;

/// How big a filter the aggregate builds: for `items` keys at a false-positive rate, or a
/// number of bits (Spark's third argument).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Size {
    Fpr(f64),
    Bits(i64),
}

/// `bloom_filter_agg(expr [, expected_items [, fpr | num_bits]])`.
///
/// The aggregate of a key column: the bytes (`Binary`) of a blockbloom filter holding every
/// non-null key, sized for `expected_items` keys (default [`DEFAULT_EXPECTED_ITEMS`]) at
/// false-positive rate `fpr` (a float in (0, 1), default [`DEFAULT_FPR`]) or, when the third
/// argument is an integer, `num_bits` bits (Spark's form). Each partition builds a partial
/// filter of the same shape; partial states merge by union, so the result equals the filter
/// one pass over all the keys builds. No rows, or only nulls, give an empty filter.
/// The bytes are blockbloom's checked file format (`BloomFilter::from_bytes` reads them).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BloomFilterAgg {
    signature: Signature,
}

impl Default for BloomFilterAgg {
    fn default() -> Self {
        BloomFilterAgg {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for BloomFilterAgg {
    fn name(&self) -> &str {
        "bloom_filter_agg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if !(1..=3).contains(&arg_types.len()) {
            return plan_err!(
                "bloom_filter_agg takes 1 to 3 arguments (expr [, expected_items [, fpr | \
                 num_bits]]), got {}",
                arg_types.len()
            );
        }
        let mut out = vec![
            sql_key_type(&arg_types[0])
                .ok_or_else(|| unsupported_key("bloom_filter_agg", &arg_types[0]))?,
        ];
        if let Some(t) = arg_types.get(1) {
            if !t.is_integer() && !t.is_null() {
                return plan_err!("bloom_filter_agg's expected_items must be an integer, got {t}");
            }
            out.push(DataType::Int64);
        }
        if let Some(t) = arg_types.get(2) {
            out.push(if t.is_integer() {
                DataType::Int64
            } else if t.is_floating() || matches!(t, DataType::Decimal128(..)) {
                DataType::Float64
            } else {
                return plan_err!(
                    "bloom_filter_agg's third argument is a false-positive rate (a float) or \
                     a number of bits (an integer), got {t}"
                );
            });
        }
        Ok(out)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format!("{}[bloom_filter]", args.name),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let constant = |i: usize, what: &str| -> Result<Option<ScalarValue>> {
            let Some(e) = args.exprs.get(i) else {
                return Ok(None);
            };
            match e.downcast_ref::<Literal>() {
                Some(l) => Ok(Some(l.value().clone())),
                None => plan_err!("bloom_filter_agg's {what} must be a constant, got {e}"),
            }
        };
        let items = match constant(1, "expected_items")? {
            None | Some(ScalarValue::Int64(None)) => DEFAULT_EXPECTED_ITEMS,
            Some(ScalarValue::Int64(Some(n))) if n > 0 => n as u64,
            Some(v) => {
                return plan_err!("bloom_filter_agg's expected_items must be above 0, got {v}");
            }
        };
        let size = match constant(2, "third argument")? {
            None | Some(ScalarValue::Float64(None)) | Some(ScalarValue::Int64(None)) => {
                Size::Fpr(DEFAULT_FPR)
            }
            Some(ScalarValue::Float64(Some(p))) if p > 0.0 && p < 1.0 => Size::Fpr(p),
            Some(ScalarValue::Int64(Some(bits))) if bits > 0 => Size::Bits(bits),
            Some(v) => {
                return plan_err!(
                    "bloom_filter_agg's false-positive rate must be in (0, 1) and its number \
                     of bits above 0, got {v}"
                );
            }
        };
        let shape = Shape { items, size };
        // Refuse a shape blockbloom cannot build now, at planning, not per partition; an
        // accumulator is made per partition and per group, so a rate is checked with the
        // planner rather than by allocating a filter.
        shape.check()?;
        Ok(Box::new(BloomAccumulator {
            shape,
            key_type: args.expr_fields[0].data_type().clone(),
            filter: None,
        }))
    }
}

/// The filter every partition of one `bloom_filter_agg` call builds.
#[derive(Debug, Clone, Copy)]
struct Shape {
    items: u64,
    size: Size,
}

impl Shape {
    fn check(&self) -> Result<()> {
        match self.size {
            Size::Fpr(p) => blockbloom::sizing::plan(self.items, p)
                .map(|_| ())
                .map_err(|e| self.error(e)),
            Size::Bits(_) => self.build().map(|_| ()),
        }
    }

    fn error(&self, e: blockbloom::Error) -> DataFusionError {
        DataFusionError::Plan(format!(
            "bloom_filter_agg cannot build a filter for {} keys at {:?}: {e}",
            self.items, self.size
        ))
    }

    fn build(&self) -> Result<BloomFilter> {
        let b = BloomFilter::builder().capacity(self.items);
        let b = match self.size {
            Size::Fpr(p) => b.fpr(p),
            Size::Bits(bits) => b.size_in_bytes((bits as u64).div_ceil(8)),
        };
        b.build().map_err(|e| self.error(e))
    }
}

#[derive(Debug)]
struct BloomAccumulator {
    shape: Shape,
    key_type: DataType,
    /// Built at the first key or state, so that a partition with no keys sends a null state.
    filter: Option<BloomFilter>,
}

impl BloomAccumulator {
    fn filter(&mut self) -> Result<&mut BloomFilter> {
        if self.filter.is_none() {
            self.filter = Some(self.shape.build()?);
        }
        Ok(self.filter.as_mut().expect("built above"))
    }
}

impl Accumulator for BloomAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let keys = as_key_array(&values[0], &self.key_type)?;
        if keys.null_count() == keys.len() {
            return Ok(());
        }
        self.filter()?
            .insert_array(&keys)
            .map_err(|e| bloom_error("bloom_filter_agg", e))
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states = states[0].as_binary::<i32>();
        for bytes in states.iter().flatten() {
            let other = BloomFilter::from_bytes(bytes)
                .map_err(|e| bloom_error("bloom_filter_agg: a partial state", e))?;
            match &mut self.filter {
                None => self.filter = Some(other),
                Some(f) => f
                    .union(&other)
                    .map_err(|e| bloom_error("bloom_filter_agg: merging partial states", e))?,
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Binary(
            self.filter.as_ref().map(BloomFilter::to_bytes),
        )])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.filter()?.to_bytes())))
    }

    fn size(&self) -> usize {
        size_of::<Self>() + self.filter.as_ref().map_or(0, |f| f.size_in_bytes())
    }
}

/// `might_contain(filter, expr)`: whether each key may be in `filter` (the bytes
/// `bloom_filter_agg` returns): `false` means certainly not; `true` means in the filter or a
/// false positive. Null in, null out (a null key or a null filter).
///
/// The filter is decoded once: at planning when it is a literal or a parameter (a corrupt
/// one is a plan error), else once per distinct value (a scalar subquery arrives as a column
/// of equal values) with the last one kept between batches.
#[derive(Debug)]
pub struct MightContain {
    signature: Signature,
    /// The last filter decoded from a column, and its bytes.
    last: Mutex<Option<(Vec<u8>, Arc<BloomFilter>)>>,
}

impl Default for MightContain {
    fn default() -> Self {
        MightContain {
            signature: Signature::user_defined(Volatility::Immutable),
            last: Mutex::new(None),
        }
    }
}

impl PartialEq for MightContain {
    fn eq(&self, other: &Self) -> bool {
        self.signature == other.signature
    }
}

impl Eq for MightContain {}

impl Hash for MightContain {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.signature.hash(state);
    }
}

fn might_contain_types(arg_types: &[DataType]) -> Result<Vec<DataType>> {
    let [filter, key] = arg_types else {
        return plan_err!(
            "might_contain takes 2 arguments (filter, expr), got {}",
            arg_types.len()
        );
    };
    let filter = match filter {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => filter.clone(),
        DataType::Null => DataType::Binary,
        t => {
            return plan_err!(
                "might_contain's filter must be Binary (the bytes of bloom_filter_agg), got {t}"
            );
        }
    };
    let key = sql_key_type(key).ok_or_else(|| unsupported_key("might_contain", key))?;
    Ok(vec![filter, key])
}

/// Decodes a filter argument's bytes.
fn decode(bytes: &[u8]) -> Result<BloomFilter> {
    BloomFilter::from_bytes(bytes).map_err(|e| {
        DataFusionError::Execution(format!(
            "might_contain: the filter argument is not a blockbloom filter ({} bytes): {e}",
            bytes.len()
        ))
    })
}

/// The answers of `filter` for `keys` as the function's result.
fn answer(filter: &BloomFilter, keys: &ArrayRef) -> Result<ArrayRef> {
    Ok(Arc::new(
        filter
            .contains_array(keys)
            .map_err(|e| bloom_error("might_contain", e))?,
    ))
}

/// The result for a batch from an array result, a scalar when every argument was one.
fn columnar(result: ArrayRef, scalar: bool) -> Result<ColumnarValue> {
    Ok(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&result, 0)?)
    } else {
        ColumnarValue::Array(result)
    })
}

impl MightContain {
    /// The filter of `bytes`, decoded unless they are the last ones seen.
    fn decoded(&self, bytes: &[u8]) -> Result<Arc<BloomFilter>> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((b, f)) = &*last
            && b.as_slice() == bytes
        {
            return Ok(Arc::clone(f));
        }
        let f = Arc::new(decode(bytes)?);
        *last = Some((bytes.to_vec(), Arc::clone(&f)));
        Ok(f)
    }

    /// Answers for a column of filters: each run of rows whose filter is the same bytes
    /// answered as one batch with one decode.
    fn by_runs(&self, filters: &ArrayRef, keys: &ArrayRef) -> Result<ArrayRef> {
        let n = keys.len();
        let value = |i: usize| -> Option<&[u8]> {
            if filters.is_null(i) {
                return None;
            }
            Some(match filters.data_type() {
                DataType::LargeBinary => filters.as_binary::<i64>().value(i),
                DataType::BinaryView => filters.as_binary_view().value(i),
                _ => filters.as_binary::<i32>().value(i),
            })
        };
        let same = |a: Option<&[u8]>, b: Option<&[u8]>| match (a, b) {
            (None, None) => true,
            // The same bytes in place (a view or a repeated offset) before a comparison.
            (Some(a), Some(b)) => std::ptr::eq(a, b) || a == b,
            _ => false,
        };
        let mut pieces: Vec<ArrayRef> = Vec::new();
        let mut start = 0;
        while start < n {
            let first = value(start);
            let mut end = start + 1;
            while end < n && same(first, value(end)) {
                end += 1;
            }
            let keys = keys.slice(start, end - start);
            pieces.push(match first {
                None => new_null_array(&DataType::Boolean, end - start),
                Some(bytes) => answer(self.decoded(bytes)?.as_ref(), &keys)?,
            });
            start = end;
        }
        if pieces.len() == 1 {
            return Ok(pieces.pop().expect("one piece"));
        }
        let refs: Vec<&dyn Array> = pieces.iter().map(|a| a.as_ref()).collect();
        if refs.is_empty() {
            return Ok(Arc::new(BooleanArray::from(Vec::<bool>::new())));
        }
        Ok(concat(&refs)?)
    }
}

impl ScalarUDFImpl for MightContain {
    fn name(&self) -> &str {
        "might_contain"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        might_contain_types(arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn simplify(&self, mut args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let bytes = match args.first() {
            Some(Expr::Literal(
                ScalarValue::Binary(Some(b))
                | ScalarValue::LargeBinary(Some(b))
                | ScalarValue::BinaryView(Some(b)),
                _,
            )) => b,
            _ => return Ok(ExprSimplifyResult::Original(args)),
        };
        // A literal or a bound parameter: decoded once, here; a corrupt one fails the plan.
        let filter = BloomFilter::from_bytes(bytes).map_err(|e| {
            DataFusionError::Plan(format!(
                "might_contain: the filter argument is not a blockbloom filter ({} bytes): {e}",
                bytes.len()
            ))
        })?;
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        let udf = ScalarUDF::from(MightContainFilter {
            signature: Signature::user_defined(Volatility::Immutable),
            filter: Arc::new(filter),
            fingerprint: h.finish(),
        });
        let key = args.pop().expect("two arguments (coerce_types)");
        Ok(ExprSimplifyResult::Simplified(udf.call(vec![key])))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [filter, key] = &args.args[..] else {
            return plan_err!("might_contain takes 2 arguments");
        };
        let scalar = matches!(
            (filter, key),
            (ColumnarValue::Scalar(_), ColumnarValue::Scalar(_))
        );
        let keys = key.to_array(args.number_rows)?;
        match filter {
            ColumnarValue::Scalar(
                ScalarValue::Binary(b) | ScalarValue::LargeBinary(b) | ScalarValue::BinaryView(b),
            ) => match b {
                None => columnar(new_null_array(&DataType::Boolean, keys.len()), scalar),
                Some(bytes) => columnar(answer(self.decoded(bytes)?.as_ref(), &keys)?, scalar),
            },
            ColumnarValue::Scalar(ScalarValue::Null) => {
                columnar(new_null_array(&DataType::Boolean, keys.len()), scalar)
            }
            ColumnarValue::Scalar(v) => plan_err!(
                "might_contain's filter must be Binary, got {}",
                v.data_type()
            ),
            ColumnarValue::Array(filters) => columnar(self.by_runs(filters, &keys)?, false),
        }
    }
}

/// `might_contain` with its filter decoded at planning (the filter was a literal).
#[derive(Debug)]
struct MightContainFilter {
    signature: Signature,
    filter: Arc<BloomFilter>,
    /// A hash of the filter's bytes, for `Hash`.
    fingerprint: u64,
}

impl PartialEq for MightContainFilter {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && (Arc::ptr_eq(&self.filter, &other.filter) || self.filter == other.filter)
    }
}

impl Eq for MightContainFilter {}

impl Hash for MightContainFilter {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.fingerprint.hash(state);
    }
}

impl ScalarUDFImpl for MightContainFilter {
    fn name(&self) -> &str {
        "might_contain"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [key] = arg_types else {
            return plan_err!("might_contain with a decoded filter takes 1 argument");
        };
        Ok(vec![
            sql_key_type(key).ok_or_else(|| unsupported_key("might_contain", key))?,
        ])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [key] = &args.args[..] else {
            return plan_err!("might_contain with a decoded filter takes 1 argument");
        };
        let scalar = matches!(key, ColumnarValue::Scalar(_));
        let keys = key.to_array(args.number_rows)?;
        columnar(answer(&self.filter, &keys)?, scalar)
    }
}
