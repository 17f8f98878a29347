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
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Expr, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr::expressions::Literal;

use crate::keys::{bloom_error, key_array, key_type, unsupported_key};
use crate::options::{BloomOptions, Limits};

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
///
/// **Bounded sizes**, as Spark bounds them: `expected_items` is clamped to
/// `blockbloom.max_num_items` and the filter's bits to `blockbloom.max_num_bits` (defaults
/// [`BloomOptions`]: Spark's 4,000,000 items and 67,108,864 bits, 8 MiB), both settable with
/// `SET` where the session holds [`BloomOptions`] ([`register`](crate::register) adds them).
/// A filter of the fpr form that the clamped budget cannot hold at that rate is built at the
/// budget, with a higher rate. A size the allocator refuses is an error, never an abort.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BloomFilterAgg {
    signature: Signature,
    /// The bounds, read from the session's configuration when the plan is simplified (`None`:
    /// not yet; the defaults apply if it never is).
    limits: Option<Limits>,
}

impl Default for BloomFilterAgg {
    fn default() -> Self {
        BloomFilterAgg {
            signature: Signature::user_defined(Volatility::Immutable),
            limits: None,
        }
    }
}

impl BloomFilterAgg {
    /// The bounds this call was planned with, `(max_num_items, max_num_bits)`, or `None` if
    /// it has not been simplified yet (the defaults apply). A codec that ships a plan to
    /// another process carries them, so that its partial filters take the shape the session
    /// that planned the query asked for.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        self.limits.map(|l| (l.max_items, l.max_bits))
    }

    /// The aggregate with the bounds a plan was made with (see [`bounds`](Self::bounds));
    /// an error if either is 0.
    pub fn with_bounds(max_num_items: u64, max_num_bits: u64) -> Result<BloomFilterAgg> {
        let limits = BloomOptions {
            max_num_items,
            max_num_bits,
            ..BloomOptions::default()
        }
        .limits()?;
        Ok(BloomFilterAgg {
            limits: Some(limits),
            ..BloomFilterAgg::default()
        })
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
            key_type(&arg_types[0])
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
        let shape = Shape::bounded(items, size, self.limits.unwrap_or_default())?;
        Ok(Box::new(BloomAccumulator {
            shape,
            filter: None,
        }))
    }

    /// Reads the bounds from the session's configuration into the call (once: the call it
    /// returns has them and is not simplified again).
    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        if self.limits.is_some() {
            return None;
        }
        Some(Box::new(
            |call: AggregateFunction, info: &SimplifyContext| {
                let limits = info
                    .config_options()
                    .extensions
                    .get::<BloomOptions>()
                    .map(BloomOptions::limits)
                    .transpose()?
                    .unwrap_or_default();
                let udaf = AggregateUDF::from(BloomFilterAgg {
                    signature: Signature::user_defined(Volatility::Immutable),
                    limits: Some(limits),
                });
                Ok(Expr::AggregateFunction(AggregateFunction {
                    func: Arc::new(udaf),
                    params: call.params,
                }))
            },
        ))
    }
}

/// The filter every partition of one `bloom_filter_agg` call builds: `items` keys, and a
/// false-positive rate or a number of bytes, within the session's bounds.
#[derive(Debug, Clone, Copy)]
struct Shape {
    items: u64,
    size: Size,
    /// The size in bytes, when a number of bits or the bounds set it.
    bytes: Option<u64>,
}

impl Shape {
    /// The shape of a call asking for `items` keys and `size`, clamped to `limits` as Spark
    /// clamps them. Refuses, at planning rather than per partition, a shape blockbloom
    /// cannot build (checked with the planner, not by allocating a filter: an accumulator is
    /// made per partition and per group).
    fn bounded(items: u64, size: Size, limits: Limits) -> Result<Shape> {
        let items = items.min(limits.max_items);
        let max_bytes = limits.max_bits.div_ceil(8);
        let bytes = match size {
            Size::Bits(bits) => Some((bits as u64).min(limits.max_bits).div_ceil(8)),
            Size::Fpr(p) => {
                let plan = blockbloom::sizing::plan(items, p).map_err(|e| {
                    DataFusionError::Plan(format!(
                        "bloom_filter_agg cannot build a filter for {items} keys at {size:?}: {e}"
                    ))
                })?;
                (plan.num_blocks * 64 > max_bytes).then_some(max_bytes)
            }
        };
        if let Some(b) = bytes
            && b.div_ceil(64) > blockbloom::layout::MAX_BLOCKS
        {
            return plan_err!(
                "bloom_filter_agg cannot build a filter of {b} bytes: blockbloom's filters hold \
                 at most 2^32 blocks of 64 bytes (256 GiB)"
            );
        }
        Ok(Shape { items, size, bytes })
    }

    fn error(&self, e: blockbloom::Error, kind: fn(String) -> DataFusionError) -> DataFusionError {
        kind(format!(
            "bloom_filter_agg cannot build a filter for {} keys at {:?}{}: {e}",
            self.items,
            self.size,
            match self.bytes {
                Some(b) => format!(" in {b} bytes"),
                None => String::new(),
            }
        ))
    }

    fn builder(&self) -> blockbloom::Builder {
        let b = BloomFilter::builder().capacity(self.items);
        match (self.bytes, self.size) {
            (Some(bytes), _) => b.size_in_bytes(bytes),
            (None, Size::Fpr(p)) => b.fpr(p),
            (None, Size::Bits(bits)) => b.size_in_bytes((bits as u64).div_ceil(8)),
        }
    }

    /// The filter, allocated fallibly: a refused allocation is an execution error.
    fn build(&self) -> Result<BloomFilter> {
        self.builder()
            .build()
            .map_err(|e| self.error(e, DataFusionError::Execution))
    }
}

#[derive(Debug)]
struct BloomAccumulator {
    shape: Shape,
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

    /// The filter's bytes, reserved fallibly.
    fn encoded(f: &BloomFilter) -> Result<Vec<u8>> {
        f.try_to_bytes()
            .map_err(|e| bloom_error("bloom_filter_agg: encoding the filter", e))
    }
}

impl Accumulator for BloomAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let keys = key_array("bloom_filter_agg", &values[0])?;
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
        let bytes = self.filter.as_ref().map(Self::encoded).transpose()?;
        Ok(vec![ScalarValue::Binary(bytes)])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let f = self.filter()?;
        Ok(ScalarValue::Binary(Some(Self::encoded(f)?)))
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
/// one is a plan error), else once per distinct value with the last one kept between batches
/// (see the [crate] docs, "Decoding once", for a scalar subquery's two forms).
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
    let key = key_type(key).ok_or_else(|| unsupported_key("might_contain", key))?;
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

/// The answers of `filter` for `keys` (already [`key_array`]) as the function's result.
fn answer(filter: &BloomFilter, keys: &ArrayRef) -> Result<ArrayRef> {
    Ok(Arc::new(
        filter
            .contains_array(keys)
            .map_err(|e| bloom_error("might_contain", e))?,
    ))
}

/// Bytes of an encoding's header: its fields and the checksum of the whole encoding.
const HEADER: usize = 64;

/// Whether two rows' filter bytes are taken for one filter: the same bytes in place, or the
/// same length and header. The header holds the checksum of the header and body, which the
/// run's decode verified, so a row that matches it is that filter; comparing a large filter's
/// every byte per row would cost more than answering the row.
fn same_filter(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            std::ptr::eq(a, b)
                || (a.len() == b.len() && a[..HEADER.min(a.len())] == b[..HEADER.min(b.len())])
        }
        _ => false,
    }
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
    /// The filter a `might_contain` call decoded at planning carries (its filter argument was
    /// a literal or a parameter), or `None` if `udf` is not such a call. A codec that ships a
    /// plan to another process sends this filter's bytes: the call has one argument, the key,
    /// and no registry can rebuild it by name.
    pub fn planned_filter(udf: &ScalarUDF) -> Option<&BloomFilter> {
        udf.inner()
            .as_ref()
            .downcast_ref::<MightContainFilter>()
            .map(|f| f.filter.as_ref())
    }

    /// The one-argument `might_contain(key)` of the filter encoded in `bytes`, decoded here:
    /// what a literal filter argument simplifies to, and what a codec rebuilds from
    /// [`planned_filter`](Self::planned_filter)'s bytes. An error if they are not a filter.
    pub fn with_planned_filter(bytes: &[u8]) -> std::result::Result<ScalarUDF, blockbloom::Error> {
        let filter = BloomFilter::from_bytes(bytes)?;
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        Ok(ScalarUDF::from(MightContainFilter {
            signature: Signature::user_defined(Volatility::Immutable),
            filter: Arc::new(filter),
            fingerprint: h.finish(),
        }))
    }

    /// The filter a `might_contain` filter argument's `bytes` hold, checked; the error is the
    /// function's own ("not a blockbloom filter"). For an operator that evaluates
    /// `might_contain` itself, with [`answer_keys`](Self::answer_keys).
    pub fn decode_filter(bytes: &[u8]) -> Result<BloomFilter> {
        decode(bytes)
    }

    /// `might_contain(filter, key)` for a column of keys, as the function answers it: the keys
    /// hashed as `bloom_filter_agg` hashed them (cast to the key type the function takes
    /// where needed), null where a key is null.
    pub fn answer_keys(filter: &BloomFilter, keys: &ArrayRef) -> Result<BooleanArray> {
        let keys = key_array("might_contain", keys)?;
        filter
            .contains_array(&keys)
            .map_err(|e| bloom_error("might_contain", e))
    }

    /// The filter of `bytes`, decoded unless they are the last ones seen (matched as
    /// [`same_filter`] matches rows, by length and header: a runtime filter's column brings
    /// the same bytes with every batch, and comparing all of them would read the whole filter
    /// once a batch).
    fn decoded(&self, bytes: &[u8]) -> Result<Arc<BloomFilter>> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((b, f)) = &*last
            && same_filter(Some(b), Some(bytes))
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
        let mut pieces: Vec<ArrayRef> = Vec::new();
        let mut start = 0;
        while start < n {
            let first = value(start);
            let mut end = start + 1;
            while end < n && same_filter(first, value(end)) {
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
        let udf = MightContain::with_planned_filter(bytes).map_err(|e| {
            DataFusionError::Plan(format!(
                "might_contain: the filter argument is not a blockbloom filter ({} bytes): {e}",
                bytes.len()
            ))
        })?;
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
        let keys = key_array("might_contain", &key.to_array(args.number_rows)?)?;
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
            key_type(key).ok_or_else(|| unsupported_key("might_contain", key))?,
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
        let keys = key_array("might_contain", &key.to_array(args.number_rows)?)?;
        columnar(answer(&self.filter, &keys)?, scalar)
    }
}
