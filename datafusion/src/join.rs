//! The join runtime filter: [`BloomJoinFilter`], a physical optimizer rule that puts a
//! blockbloom filter between the two sides of a hash join.
//!
//! For an eligible [`HashJoinExec`] the rule adds two nodes sharing one filter:
//!
//! * [`BloomBuildExec`] on the build side (below its `RepartitionExec` or
//!   `CoalescePartitionsExec`, so it sees every build row once), which passes the rows on and
//!   inserts each row's key into the filter;
//! * [`BloomProbeExec`] on the probe side (below its `RepartitionExec`, so that dropped rows
//!   are neither repartitioned nor hashed), which waits until every build partition has ended
//!   and then drops each row whose key the filter answers "no" for: a row no build row can
//!   match.
//!
//! A row is dropped only when the join would emit nothing for it: the rule fires only for join
//! types that emit no unmatched probe row (inner, left, left semi, left anti but not its
//! null-aware form, right semi), and a null key passes when the join matches nulls to nulls.
//! If the build ends without finishing (an error, a cancelled query) the probe passes every
//! row. The answers are those of the plan without the rule, always.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use blockbloom::BloomFilter;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{JoinType, NullEquality, Result, internal_err};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::joins::{HashJoinExec, PartitionMode};
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, Gauge, MetricBuilder, MetricsSet, Time,
};
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::work_table::WorkTableExec;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
    RecordBatchStream, SendableRecordBatchStream, StatisticsArgs, StatisticsContext,
};
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use tokio::sync::watch;

use crate::keys::{key_array, key_type};

/// A physical optimizer rule that adds a blockbloom join runtime filter to the hash joins it
/// can filter (see the [module](self) and the [crate](crate) docs). Add it last, after
/// DataFusion's own rules:
///
/// ```
/// use std::sync::Arc;
/// use blockbloom_datafusion::BloomJoinFilter;
/// use blockbloom_datafusion::datafusion::execution::SessionStateBuilder;
/// use blockbloom_datafusion::datafusion::prelude::SessionContext;
///
/// let state = SessionStateBuilder::new()
///     .with_default_features()
///     .with_physical_optimizer_rule(Arc::new(BloomJoinFilter::default()))
///     .build();
/// let ctx = SessionContext::new_with_state(state);
/// # let _ = ctx;
/// ```
///
/// The thresholds are public fields; `Default` gives the values documented on each.
#[derive(Debug, Clone)]
pub struct BloomJoinFilter {
    /// The false-positive rate each filter is sized for. Default 0.01.
    pub fpr: f64,
    /// No filter for a build side estimated above this many rows: a filter of it would not
    /// stay small, and a join that large rarely drops much. Default 32 Mi rows (a filter of
    /// about 38 MiB at 1%).
    pub max_build_rows: usize,
    /// The capacity of a filter whose build side has no row estimate. Default 4 Mi keys: the
    /// filter is folded to the keys that came once the build side has ended.
    pub unknown_build_rows: usize,
    /// A join that collects its build side into one hash table (`CollectLeft`) gets a filter
    /// only when that side is estimated at this many rows or more (and not without an
    /// estimate): the join probes a smaller table about as fast as the filter answers, so the
    /// filter pays only where the table outgrows the caches. A partitioned join's probe rows
    /// are repartitioned first, which the filter saves, so it has no such floor. Default
    /// 1 Mi rows.
    pub min_collected_build_rows: usize,
    /// No filter when the probe side is estimated below this many rows: too little to save.
    /// Default 16 Ki rows.
    pub min_probe_rows: usize,
    /// No filter when both sides have estimates and the probe side's is below this multiple
    /// of the build side's: every build row costs an insert, and few probe rows cannot repay
    /// them. Default 2.
    pub min_probe_to_build: f64,
    /// After this many probe rows in a partition, a filter that dropped fewer than
    /// [`min_drop_fraction`](Self::min_drop_fraction) of them stops testing (its remaining
    /// rows pass untested): a join whose keys all match pays for a sample only. Default
    /// 64 Ki rows.
    pub sample_rows: usize,
    /// See [`sample_rows`](Self::sample_rows). Default 0.25: testing a row costs about a
    /// quarter of what dropping it saves before a repartition.
    pub min_drop_fraction: f64,
}

impl Default for BloomJoinFilter {
    fn default() -> Self {
        BloomJoinFilter {
            fpr: 0.01,
            max_build_rows: 32 << 20,
            unknown_build_rows: 4 << 20,
            min_collected_build_rows: 1 << 20,
            min_probe_rows: 16 << 10,
            min_probe_to_build: 2.0,
            sample_rows: 64 << 10,
            min_drop_fraction: 0.25,
        }
    }
}

/// Rows estimated for `plan`, if any.
fn estimated_rows(plan: &Arc<dyn ExecutionPlan>) -> Option<usize> {
    let stats = StatisticsContext::new()
        .compute(plan.as_ref(), &StatisticsArgs::new())
        .ok()?;
    match stats.num_rows {
        Precision::Exact(n) | Precision::Inexact(n) => Some(n),
        Precision::Absent => None,
    }
}

impl PhysicalOptimizerRule for BloomJoinFilter {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // A recursive query runs its plan again for each iteration over a changed work
        // table; its joins are left alone.
        let mut recursive = false;
        plan.apply(|p| {
            recursive |= p.is::<WorkTableExec>();
            Ok(if recursive {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })?;
        if recursive {
            return Ok(plan);
        }
        plan.transform_up(|node| match node.downcast_ref::<HashJoinExec>() {
            Some(join) => Ok(match self.rewrite(&node, join)? {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            }),
            None => Ok(Transformed::no(node)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "BloomJoinFilter"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

impl BloomJoinFilter {
    /// The join with a filter added, or `None` if the rule does not fire on it.
    fn rewrite(
        &self,
        node: &Arc<dyn ExecutionPlan>,
        join: &HashJoinExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let filterable = matches!(
            join.join_type,
            JoinType::Inner | JoinType::Left | JoinType::LeftSemi | JoinType::RightSemi
        ) || (join.join_type == JoinType::LeftAnti && !join.null_aware);
        if !filterable || join.on.is_empty() {
            return Ok(None);
        }
        let (left, right) = (&join.left, &join.right);
        // The first key column of a type the filter takes (a multi-column key is filtered
        // on that column: a row whose value of it no build row has cannot match).
        let (left_schema, right_schema) = (left.schema(), right.schema());
        let Some((build_key, probe_key, key_type)) = join.on.iter().find_map(|(l, r)| {
            let lt = l.data_type(&left_schema).ok()?;
            let rt = r.data_type(&right_schema).ok()?;
            let t = key_type(&lt)?;
            (lt == rt).then(|| (Arc::clone(l), Arc::clone(r), t))
        }) else {
            return Ok(None);
        };
        // Where the build completes whatever order the join's partitions run in: a
        // collected build side, or a repartitioned one (its input is drained by the
        // repartition's own tasks). A probe side that is repartitioned is filtered before.
        let build_below = match join.mode {
            PartitionMode::CollectLeft => true,
            PartitionMode::Partitioned => left.is::<RepartitionExec>(),
            PartitionMode::Auto => false,
        };
        if !build_below {
            return Ok(None);
        }
        let build_rows = estimated_rows(left);
        if build_rows.is_some_and(|n| n > self.max_build_rows) {
            return Ok(None);
        }
        if join.mode == PartitionMode::CollectLeft
            && build_rows.is_none_or(|n| n < self.min_collected_build_rows)
        {
            return Ok(None);
        }
        let probe_rows = estimated_rows(right);
        if probe_rows.is_some_and(|n| n < self.min_probe_rows) {
            return Ok(None);
        }
        if let (Some(p), Some(b)) = (probe_rows, build_rows)
            && (p as f64) < self.min_probe_to_build * b as f64
        {
            return Ok(None);
        }
        let capacity = build_rows.unwrap_or(self.unknown_build_rows).max(1024);
        let shared = Arc::new(Shared {
            capacity: capacity as u64,
            fpr: self.fpr,
            build_partitions: AtomicUsize::new(0),
            epoch: Mutex::new(None),
        });
        // The filter must be plannable now (no allocation at planning); otherwise no rule.
        if shared.filter_bytes().is_err() {
            return Ok(None);
        }
        let new_left = under_exchange(left, |input| {
            Ok(Arc::new(BloomBuildExec::new(
                input,
                Arc::clone(&build_key),
                key_type.clone(),
                Arc::clone(&shared),
            )))
        })?;
        let nulls_pass = join.null_equality == NullEquality::NullEqualsNull;
        let new_right = under_exchange(right, |input| {
            Ok(Arc::new(BloomProbeExec {
                cache: Arc::clone(input.properties()),
                input,
                key: Arc::clone(&probe_key),
                key_type: key_type.clone(),
                shared: Arc::clone(&shared),
                nulls_pass,
                sample_rows: self.sample_rows,
                min_drop_fraction: self.min_drop_fraction,
                metrics: ExecutionPlanMetricsSet::new(),
            }))
        })?;
        #[expect(
            deprecated,
            reason = "replace_children's options are not public in 55.2"
        )]
        let new = Arc::clone(node).with_new_children(vec![new_left, new_right])?;
        Ok(Some(new))
    }
}

/// `wrap` applied below `plan` when `plan` is an exchange (a `RepartitionExec` or a
/// `CoalescePartitionsExec`, which keep their input's schema), else to `plan` itself.
fn under_exchange(
    plan: &Arc<dyn ExecutionPlan>,
    wrap: impl FnOnce(Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let input = if let Some(r) = plan.downcast_ref::<RepartitionExec>() {
        r.input()
    } else if let Some(c) = plan.downcast_ref::<CoalescePartitionsExec>() {
        c.input()
    } else {
        return wrap(Arc::clone(plan));
    };
    let wrapped = wrap(Arc::clone(input))?;
    #[expect(
        deprecated,
        reason = "replace_children's options are not public in 55.2"
    )]
    Arc::clone(plan).with_new_children(vec![wrapped])
}

/// What a build node and its probe node share: the filter's size, and the filter of the
/// current execution.
#[derive(Debug)]
struct Shared {
    capacity: u64,
    fpr: f64,
    /// Partitions of the build node's input (set when the node is made).
    build_partitions: AtomicUsize,
    epoch: Mutex<Option<Arc<Epoch>>>,
}

/// How far the build of one execution has come.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Status {
    Building,
    /// Every build partition ended: the filter holds every build key.
    Ready,
    /// A build partition stopped before its end: the filter is not to be used.
    Abandoned,
}

/// One build's filter. The build node starts a new one when it is executed after the last
/// ended (a plan run again); the probe node takes the newest when it is first polled, which
/// is after the join has its build side: either this execution's build, or, when the join
/// kept its hash table from an earlier execution (a collected build side is built once), the
/// build that table came from.
#[derive(Debug)]
struct Epoch {
    /// The union of the partitions' filters that ended so far.
    merged: Mutex<Option<BloomFilter>>,
    /// The filter the probe uses, set before the status becomes `Ready`.
    filter: OnceLock<BloomFilter>,
    /// Build partitions not yet ended.
    remaining: AtomicUsize,
    /// Build partitions executed.
    started: AtomicUsize,
    status: watch::Sender<Status>,
}

impl Shared {
    /// A build partition's filter: for the estimated keys at the rate, rounded up to a power
    /// of two blocks, so that the merged filter can be folded to the keys that came.
    fn new_filter(&self) -> Result<BloomFilter, blockbloom::Error> {
        BloomFilter::builder()
            .capacity(self.capacity)
            .size_in_bytes(self.filter_bytes()?)
            .build()
    }

    /// The bytes of a build partition's filter: the planner's size for the estimate at the
    /// rate (what `with_capacity` allocates), rounded up to a power of two.
    fn filter_bytes(&self) -> Result<u64, blockbloom::Error> {
        let blocks = blockbloom::sizing::plan(self.capacity, self.fpr)?.num_blocks;
        Ok((blocks * 64).next_power_of_two())
    }

    /// The epoch a build partition joins: the one being built if some of its partitions
    /// have not started, else a new one.
    fn build_epoch(&self) -> Result<Arc<Epoch>> {
        let partitions = self.build_partitions.load(Ordering::Acquire);
        let mut current = self.epoch.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = &*current
            && *e.status.borrow() == Status::Building
        {
            if e.started.fetch_add(1, Ordering::AcqRel) < partitions {
                return Ok(Arc::clone(e));
            }
            // More partitions than the input has: the count cannot tell when the build is
            // complete, so that filter is not used.
            e.finish(Status::Abandoned);
        }
        let e = Arc::new(Epoch {
            merged: Mutex::new(None),
            filter: OnceLock::new(),
            remaining: AtomicUsize::new(partitions),
            started: AtomicUsize::new(1),
            status: watch::Sender::new(Status::Building),
        });
        *current = Some(Arc::clone(&e));
        Ok(e)
    }

    /// The newest epoch, if any build started.
    fn newest(&self) -> Option<Arc<Epoch>> {
        self.epoch.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Epoch {
    /// Adds a build partition's filter; the last one folds the union while it stays within
    /// `fpr` (a build side smaller than estimated gets a smaller filter) and makes it ready.
    fn merge(&self, filter: BloomFilter, fpr: f64) -> Result<()> {
        let mut merged = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *merged {
            None => *merged = Some(filter),
            Some(m) => m
                .union(&filter)
                .map_err(|e| crate::keys::bloom_error("BloomBuildExec", e))?,
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut f = merged.take().expect("merged above");
            while let Ok(half) = f.fold() {
                if half.expected_fpr() > fpr {
                    break;
                }
                f = half;
            }
            // The first and only set of this epoch's filter.
            let _ = self.filter.set(f);
            self.finish(Status::Ready);
        }
        Ok(())
    }

    fn finish(&self, status: Status) {
        self.status.send_if_modified(|s| {
            let change = *s == Status::Building;
            if change {
                *s = status;
            }
            change
        });
    }
}

/// The `ExecutionPlan` methods both nodes share: one input, passed through in order, with
/// the input's properties, one key expression and a metrics set.
macro_rules! pass_through_node {
    () => {
        fn properties(&self) -> &Arc<PlanProperties> {
            &self.cache
        }

        fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
            vec![&self.input]
        }

        fn maintains_input_order(&self) -> Vec<bool> {
            vec![true]
        }

        fn benefits_from_input_partitioning(&self) -> Vec<bool> {
            vec![false]
        }

        fn apply_expressions(
            &self,
            f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
        ) -> Result<TreeNodeRecursion> {
            f(&self.key)
        }

        fn metrics(&self) -> Option<MetricsSet> {
            Some(self.metrics.clone_inner())
        }
    };
}

/// The build side of a [`BloomJoinFilter`]: passes its input on and inserts each row's key
/// into the shared filter.
#[derive(Debug)]
pub struct BloomBuildExec {
    input: Arc<dyn ExecutionPlan>,
    key: Arc<dyn PhysicalExpr>,
    key_type: DataType,
    shared: Arc<Shared>,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl BloomBuildExec {
    fn new(
        input: Arc<dyn ExecutionPlan>,
        key: Arc<dyn PhysicalExpr>,
        key_type: DataType,
        shared: Arc<Shared>,
    ) -> Self {
        let partitions = input.output_partitioning().partition_count();
        shared.build_partitions.store(partitions, Ordering::Release);
        BloomBuildExec {
            cache: Arc::clone(input.properties()),
            input,
            key,
            key_type,
            shared,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl DisplayAs for BloomBuildExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "BloomBuildExec: key={}, capacity={}, fpr={}",
            self.key, self.shared.capacity, self.shared.fpr
        )
    }
}

impl ExecutionPlan for BloomBuildExec {
    fn name(&self) -> &str {
        "BloomBuildExec"
    }

    pass_through_node!();

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("BloomBuildExec has one child");
        }
        Ok(Arc::new(BloomBuildExec::new(
            children.swap_remove(0),
            Arc::clone(&self.key),
            self.key_type.clone(),
            Arc::clone(&self.shared),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let epoch = self.shared.build_epoch()?;
        let input = self.input.execute(partition, context)?;
        let filter = self
            .shared
            .new_filter()
            .map_err(|e| crate::keys::bloom_error("BloomBuildExec", e))?;
        Ok(Box::pin(BuildStream {
            schema: self.input.schema(),
            input,
            filter: Some(filter),
            fpr: self.shared.fpr,
            key: Arc::clone(&self.key),
            epoch,
            ended: false,
            build_rows: MetricBuilder::new(&self.metrics).counter("build_rows", partition),
            elapsed: MetricBuilder::new(&self.metrics).elapsed_compute(partition),
        }))
    }
}

struct BuildStream {
    schema: SchemaRef,
    input: SendableRecordBatchStream,
    /// This partition's keys, until its end merges them into the epoch's.
    filter: Option<BloomFilter>,
    fpr: f64,
    key: Arc<dyn PhysicalExpr>,
    epoch: Arc<Epoch>,
    ended: bool,
    build_rows: Count,
    /// Time spent inserting keys.
    elapsed: Time,
}

impl BuildStream {
    fn insert(&mut self, batch: &RecordBatch) -> Result<()> {
        let _timer = self.elapsed.timer();
        let keys = key_column(&self.key, batch)?;
        self.filter
            .as_mut()
            .expect("a partition inserts until its end")
            .insert_array(&keys)
            .map_err(|e| crate::keys::bloom_error("BloomBuildExec", e))?;
        self.build_rows.add(batch.num_rows());
        Ok(())
    }
}

/// The key column of `batch`, as the filter takes it.
fn key_column(key: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> Result<ArrayRef> {
    let keys = key.evaluate(batch)?.into_array(batch.num_rows())?;
    key_array("the Bloom join filter", &keys)
}

impl Stream for BuildStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.input.poll_next_unpin(cx);
        match &next {
            Poll::Ready(Some(Ok(batch))) => {
                if let Err(e) = self.insert(batch) {
                    self.epoch.finish(Status::Abandoned);
                    return Poll::Ready(Some(Err(e)));
                }
            }
            Poll::Ready(Some(Err(_))) => self.epoch.finish(Status::Abandoned),
            Poll::Ready(None) if !self.ended => {
                self.ended = true;
                let filter = self.filter.take().expect("one end");
                let _timer = self.elapsed.timer();
                if let Err(e) = self.epoch.merge(filter, self.fpr) {
                    self.epoch.finish(Status::Abandoned);
                    return Poll::Ready(Some(Err(e)));
                }
            }
            _ => {}
        }
        next
    }
}

impl Drop for BuildStream {
    fn drop(&mut self) {
        if !self.ended {
            self.epoch.finish(Status::Abandoned);
        }
    }
}

impl RecordBatchStream for BuildStream {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

/// The probe side of a [`BloomJoinFilter`]: waits for the build, then drops the rows whose
/// key the filter answers "no" for.
#[derive(Debug)]
pub struct BloomProbeExec {
    input: Arc<dyn ExecutionPlan>,
    key: Arc<dyn PhysicalExpr>,
    key_type: DataType,
    shared: Arc<Shared>,
    nulls_pass: bool,
    sample_rows: usize,
    min_drop_fraction: f64,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl DisplayAs for BloomProbeExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "BloomProbeExec: key={}", self.key)?;
        if self.nulls_pass {
            write!(f, ", nulls pass")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for BloomProbeExec {
    fn name(&self) -> &str {
        "BloomProbeExec"
    }

    pass_through_node!();

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("BloomProbeExec has one child");
        }
        let input = children.swap_remove(0);
        Ok(Arc::new(BloomProbeExec {
            cache: Arc::clone(input.properties()),
            input,
            key: Arc::clone(&self.key),
            key_type: self.key_type.clone(),
            shared: Arc::clone(&self.shared),
            nulls_pass: self.nulls_pass,
            sample_rows: self.sample_rows,
            min_drop_fraction: self.min_drop_fraction,
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let m = MetricBuilder::new(&self.metrics);
        let metrics = ProbeMetrics {
            probe_rows: m.clone().counter("probe_rows", partition),
            dropped_rows: m.clone().counter("rows_dropped", partition),
            filter_bytes: m.clone().gauge("filter_bytes", partition),
            elapsed: m.elapsed_compute(partition),
        };
        Ok(Box::pin(ProbeStream {
            schema: self.input.schema(),
            input: self.input.execute(partition, context)?,
            shared: Arc::clone(&self.shared),
            wait: None,
            polled: false,
            epoch: None,
            key: Arc::clone(&self.key),
            nulls_pass: self.nulls_pass,
            sample_rows: self.sample_rows,
            min_drop_fraction: self.min_drop_fraction,
            seen: 0,
            dropped: 0,
            metrics,
        }))
    }
}

struct ProbeMetrics {
    probe_rows: Count,
    dropped_rows: Count,
    /// Time spent testing rows and dropping them.
    elapsed: Time,
    filter_bytes: Gauge,
}

struct ProbeStream {
    schema: SchemaRef,
    input: SendableRecordBatchStream,
    shared: Arc<Shared>,
    /// Whether it was polled (and took the newest epoch).
    polled: bool,
    /// The build's end, until it came: `Some(epoch)` when the filter is ready.
    wait: Option<BoxFuture<'static, Option<Arc<Epoch>>>>,
    /// The filter, while it tests rows.
    epoch: Option<Arc<Epoch>>,
    key: Arc<dyn PhysicalExpr>,
    nulls_pass: bool,
    sample_rows: usize,
    min_drop_fraction: f64,
    seen: usize,
    dropped: usize,
    metrics: ProbeMetrics,
}

impl ProbeStream {
    fn drop_rows(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let Some(filter) = self.epoch.as_ref().and_then(|e| e.filter.get()) else {
            return Ok(batch);
        };
        let _timer = self.metrics.elapsed.timer();
        let keys = key_column(&self.key, &batch)?;
        let answers = filter
            .contains_array(&keys)
            .map_err(|e| crate::keys::bloom_error("BloomProbeExec", e))?;
        let mask = keep_mask(&answers, self.nulls_pass);
        let kept = mask.values().count_set_bits();
        let out = if kept == batch.num_rows() {
            batch
        } else {
            filter_record_batch(&batch, &mask)?
        };
        let dropped = keys.len() - kept;
        self.seen += keys.len();
        self.dropped += dropped;
        self.metrics.probe_rows.add(keys.len());
        self.metrics.dropped_rows.add(dropped);
        // A filter that drops too little stops testing: the rest of the partition passes.
        if self.seen >= self.sample_rows
            && (self.dropped as f64) < self.min_drop_fraction * self.seen as f64
        {
            self.epoch = None;
        }
        Ok(out)
    }
}

/// Which rows to keep: those the filter answered "maybe" for, and (when the join matches
/// null keys) those with a null key.
fn keep_mask(answers: &BooleanArray, nulls_pass: bool) -> BooleanArray {
    let values = answers.values().clone();
    let keep = match answers.nulls() {
        // A null key's value bit is 0: it matches nothing unless nulls match nulls.
        Some(nulls) if nulls_pass => &values | &!nulls.inner(),
        _ => values,
    };
    BooleanArray::new(keep, None)
}

impl Stream for ProbeStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if !self.polled {
            self.polled = true;
            // No build started: the join did not build (or not through this node); every
            // row passes.
            if let Some(epoch) = self.shared.newest() {
                let mut status = epoch.status.subscribe();
                self.wait = Some(
                    async move {
                        match status.wait_for(|s| *s != Status::Building).await {
                            Ok(s) if *s == Status::Ready => Some(epoch),
                            _ => None,
                        }
                    }
                    .boxed(),
                );
            }
        }
        if let Some(wait) = &mut self.wait {
            match wait.poll_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(epoch) => {
                    if let Some(f) = epoch.as_ref().and_then(|e| e.filter.get()) {
                        self.metrics.filter_bytes.set(f.size_in_bytes());
                    }
                    self.epoch = epoch;
                    self.wait = None;
                }
            }
        }
        loop {
            return match self.input.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(batch))) => {
                    let out = self.drop_rows(batch);
                    // An empty batch is not passed on.
                    if matches!(&out, Ok(b) if b.num_rows() == 0) {
                        continue;
                    }
                    Poll::Ready(Some(out))
                }
                other => other,
            };
        }
    }
}

impl RecordBatchStream for ProbeStream {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

/// What the join filters of an executed plan did, summed over its [`BloomProbeExec`] nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JoinFilterMetrics {
    /// Probe nodes in the plan.
    pub filters: usize,
    /// Rows the filters tested.
    pub probe_rows: usize,
    /// Rows they dropped.
    pub dropped_rows: usize,
    /// Bytes of the filters (each filter once).
    pub filter_bytes: usize,
}

impl JoinFilterMetrics {
    /// Sums the metrics of every [`BloomProbeExec`] in `plan` (after it ran).
    pub fn of(plan: &Arc<dyn ExecutionPlan>) -> Result<JoinFilterMetrics> {
        let mut m = JoinFilterMetrics::default();
        plan.apply(|p| {
            if let Some(probe) = p.downcast_ref::<BloomProbeExec>() {
                m.filters += 1;
                let set = probe.metrics.clone_inner();
                let sum = |name: &str| set.sum_by_name(name).map_or(0, |v| v.as_usize());
                m.probe_rows += sum("probe_rows");
                m.dropped_rows += sum("rows_dropped");
                // Every partition sets the same filter's size: count it once.
                m.filter_bytes += set
                    .iter()
                    .filter(|v| v.value().name() == "filter_bytes")
                    .map(|v| v.value().as_usize())
                    .max()
                    .unwrap_or(0);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(m)
    }
}

impl fmt::Display for JoinFilterMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} filters, {} of {} probe rows dropped, {} filter bytes",
            self.filters, self.dropped_rows, self.probe_rows, self.filter_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_keys_pass_only_when_nulls_match_nulls() {
        let answers = BooleanArray::from(vec![Some(true), None, Some(false)]);
        let keep: Vec<bool> = keep_mask(&answers, false).values().iter().collect();
        assert_eq!(keep, [true, false, false]);
        let keep: Vec<bool> = keep_mask(&answers, true).values().iter().collect();
        assert_eq!(keep, [true, true, false]);
        let _: &dyn Array = &answers;
    }
}
