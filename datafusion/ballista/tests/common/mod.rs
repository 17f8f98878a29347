//! What the tests and the measurement share: TPC-H written as Parquet files, the 22
//! queries, and a cluster of `blockbloom-scheduler` and `blockbloom-executor` processes on
//! 127.0.0.1 that is stopped when it is dropped.

#![allow(dead_code)]

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use blockbloom_ballista::datafusion::arrow::array::RecordBatch;
use blockbloom_ballista::datafusion::arrow::util::pretty::pretty_format_batches;
use blockbloom_ballista::datafusion::error::{DataFusionError, Result};
use blockbloom_ballista::datafusion::parquet::arrow::ArrowWriter;
use blockbloom_ballista::datafusion::prelude::{ParquetReadOptions, SessionContext};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow,
    RecordBatchIterator, RegionArrow, SupplierArrow,
};

/// blockbloom-datafusion's TPC-H (its 22 queries: the specification's text with its
/// validation parameters).
#[path = "../../../tests/tpch/mod.rs"]
mod tpch;

pub use tpch::QUERIES;

pub const TABLES: [&str; 8] = [
    "nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];

/// Writes one table as `parts` Parquet files under `dir/name/`.
fn write_table<I: RecordBatchIterator>(
    dir: &Path,
    name: &str,
    parts: usize,
    make: impl Fn(i32, i32) -> I,
) -> Result<()> {
    let table = dir.join(name);
    std::fs::create_dir_all(&table)?;
    for part in 1..=parts as i32 {
        let it = make(part, parts as i32);
        let schema = Arc::clone(it.schema());
        let file = File::create(table.join(format!("part-{part}.parquet")))?;
        let mut w = ArrowWriter::try_new(file, schema, None)?;
        for batch in it {
            w.write(&batch)?;
        }
        w.close()?;
    }
    Ok(())
}

/// TPC-H at `scale` as Parquet files under `dir` (a directory a table, `parts` files each;
/// nation and region in one), unless a previous call wrote them (`dir/done`).
pub fn write_tpch(dir: &Path, scale: f64, parts: usize) -> Result<()> {
    if dir.join("done").exists() {
        return Ok(());
    }
    let s = scale;
    write_table(dir, "nation", 1, |p, n| {
        NationArrow::new(NationGenerator::new(s, p, n))
    })?;
    write_table(dir, "region", 1, |p, n| {
        RegionArrow::new(RegionGenerator::new(s, p, n))
    })?;
    write_table(dir, "part", parts, |p, n| {
        PartArrow::new(PartGenerator::new(s, p, n))
    })?;
    write_table(dir, "supplier", parts, |p, n| {
        SupplierArrow::new(SupplierGenerator::new(s, p, n))
    })?;
    write_table(dir, "partsupp", parts, |p, n| {
        PartSuppArrow::new(PartSuppGenerator::new(s, p, n))
    })?;
    write_table(dir, "customer", parts, |p, n| {
        CustomerArrow::new(CustomerGenerator::new(s, p, n))
    })?;
    write_table(dir, "orders", parts, |p, n| {
        OrderArrow::new(OrderGenerator::new(s, p, n))
    })?;
    write_table(dir, "lineitem", parts, |p, n| {
        LineItemArrow::new(LineItemGenerator::new(s, p, n))
    })?;
    File::create(dir.join("done"))?;
    Ok(())
}

/// Registers the tables [`write_tpch`] wrote under `dir` in `ctx`.
pub async fn register_tpch(ctx: &SessionContext, dir: &Path) -> Result<()> {
    for name in TABLES {
        let path = dir.join(name);
        ctx.register_parquet(
            name,
            path.to_str().expect("a UTF-8 path"),
            ParquetReadOptions::default(),
        )
        .await?;
    }
    Ok(())
}

/// A directory under the target directory, made empty.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `sql`'s rows as sorted lines of text.
pub async fn rows(ctx: &SessionContext, sql: &str) -> Result<Vec<String>> {
    let batches: Vec<RecordBatch> = ctx.sql(sql).await?.collect().await?;
    let text = pretty_format_batches(&batches)?.to_string();
    let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
    rows.sort();
    Ok(rows)
}

/// Turns the runtime filter on or off for `ctx`'s session.
pub async fn set_rule(ctx: &SessionContext, on: bool) -> Result<()> {
    ctx.sql(&format!("SET blockbloom.runtime_filter = {on}"))
        .await?
        .collect()
        .await?;
    Ok(())
}

/// `EXPLAIN sql`'s text.
pub async fn explain(ctx: &SessionContext, sql: &str) -> Result<String> {
    let batches = ctx.sql(&format!("EXPLAIN {sql}")).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

/// The processes' log level: `BLOCKBLOOM_TEST_LOG` (`info`, `debug`, ...), else `warn`.
fn log_level() -> String {
    std::env::var("BLOCKBLOOM_TEST_LOG").unwrap_or_else(|_| "warn".into())
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until something listens on `port` of 127.0.0.1, or `child` has exited.
fn wait_for_port(port: u16, child: &mut Child, what: &str) -> Result<()> {
    let start = Instant::now();
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(DataFusionError::Execution(format!(
                "{what} exited ({status}) before it listened on {port}"
            )));
        }
        if start.elapsed() > Duration::from_secs(60) {
            return Err(DataFusionError::Execution(format!(
                "{what} did not listen on {port} within 60 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `command`, killed by the kernel if this process dies first (a test that aborts on a
/// stack overflow runs no destructor).
fn dies_with_parent(mut command: Command) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl,
    // which is async-signal-safe; it touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

/// A scheduler and executors as processes on 127.0.0.1, killed (and waited for) on drop,
/// whether the test passed or panicked.
pub struct Cluster {
    pub scheduler_port: u16,
    scheduler: Child,
    pub executors: Vec<Child>,
    work: PathBuf,
    policy: String,
}

impl Cluster {
    /// A `blockbloom-scheduler` and `executors` `blockbloom-executor`s, each running
    /// `tasks` tasks at once, their shuffle files under `work`.
    pub fn start(executors: usize, tasks: usize, work: &Path) -> Result<Cluster> {
        Cluster::start_with(executors, tasks, work, "push-staged")
    }

    /// [`start`](Self::start) with a scheduling policy (`push-staged`, `pull-staged`).
    pub fn start_with(
        executors: usize,
        tasks: usize,
        work: &Path,
        policy: &str,
    ) -> Result<Cluster> {
        let scheduler_port = free_port();
        let scheduler = dies_with_parent(Command::new(env!("CARGO_BIN_EXE_blockbloom-scheduler")))
            .args(["--scheduler-policy", policy])
            .args(["--bind-host", "127.0.0.1", "--external-host", "127.0.0.1"])
            .args(["--bind-port", &scheduler_port.to_string()])
            // A killed executor is found within seconds (the tests kill one).
            .args(["--executor-timeout-seconds", "6"])
            .args(["--expire-dead-executor-interval-seconds", "1"])
            .env("RUST_LOG", log_level())
            .stdout(Stdio::null())
            .spawn()?;
        let mut cluster = Cluster {
            scheduler_port,
            scheduler,
            executors: Vec::new(),
            work: work.to_path_buf(),
            policy: policy.to_string(),
        };
        wait_for_port(
            scheduler_port,
            &mut cluster.scheduler,
            "blockbloom-scheduler",
        )?;
        for _ in 0..executors {
            cluster.add_executor(tasks)?;
        }
        Ok(cluster)
    }

    /// Starts one more `blockbloom-executor`.
    pub fn add_executor(&mut self, tasks: usize) -> Result<()> {
        let (flight, grpc) = (free_port(), free_port());
        let dir = self.work.join(format!("executor-{}", self.executors.len()));
        std::fs::create_dir_all(&dir)?;
        let mut child = dies_with_parent(Command::new(env!("CARGO_BIN_EXE_blockbloom-executor")))
            .args(["--scheduler-policy", &self.policy])
            .args(["--bind-host", "127.0.0.1", "--external-host", "127.0.0.1"])
            .args(["--scheduler-host", "127.0.0.1"])
            .args(["--scheduler-port", &self.scheduler_port.to_string()])
            .args(["--bind-port", &flight.to_string()])
            .args(["--bind-grpc-port", &grpc.to_string()])
            .args(["--concurrent-tasks", &tasks.to_string()])
            .args(["--work-dir", dir.to_str().expect("a UTF-8 path")])
            .args(["--executor-heartbeat-interval-seconds", "1"])
            .env("RUST_LOG", log_level())
            .stdout(Stdio::null())
            .spawn()?;
        let ready = wait_for_port(flight, &mut child, "blockbloom-executor");
        self.executors.push(child);
        ready
    }

    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.scheduler_port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in self.executors.iter_mut().chain([&mut self.scheduler]) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
