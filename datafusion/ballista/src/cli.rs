//! The two binaries, `blockbloom-scheduler` and `blockbloom-executor`: Ballista's scheduler
//! and executor processes with blockbloom's functions, codecs and runtime filter installed,
//! taking the flags of Ballista's own binaries that a cluster on one network needs.

use std::collections::HashMap;
use std::sync::Arc;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;

use crate::{BloomLogicalCodec, BloomPhysicalCodec, session_config, session_state};

/// A flag's name, its default (shown in `--help`; `None`: unset unless given) and meaning.
type Spec = (&'static str, Option<&'static str>, &'static str);

const SCHEDULER_FLAGS: &[Spec] = &[
    (
        "scheduler-policy",
        Some("push-staged"),
        "push-staged (the scheduler hands out tasks) or pull-staged (executors ask for them); the scheduler's and its executors' must agree",
    ),
    ("bind-host", Some("0.0.0.0"), "the address to listen on"),
    ("bind-port", Some("50050"), "the port to listen on"),
    (
        "external-host",
        Some("localhost"),
        "the host name executors and clients reach this scheduler by",
    ),
    (
        "executor-timeout-seconds",
        Some("180"),
        "an executor silent this long is taken for dead and its tasks run elsewhere",
    ),
    (
        "expire-dead-executor-interval-seconds",
        Some("15"),
        "how often the scheduler looks for dead executors",
    ),
];

const EXECUTOR_FLAGS: &[Spec] = &[
    (
        "scheduler-policy",
        Some("push-staged"),
        "push-staged (the scheduler hands out tasks) or pull-staged (executors ask for them); the scheduler's and its executors' must agree",
    ),
    ("bind-host", Some("0.0.0.0"), "the address to listen on"),
    (
        "bind-port",
        Some("50051"),
        "the Arrow Flight port (shuffle reads)",
    ),
    ("bind-grpc-port", Some("50052"), "the gRPC port"),
    (
        "external-host",
        None,
        "the host name others reach this executor by (default: its address as the scheduler sees it)",
    ),
    ("scheduler-host", Some("localhost"), "the scheduler's host"),
    ("scheduler-port", Some("50050"), "the scheduler's port"),
    (
        "concurrent-tasks",
        None,
        "tasks run at once (default: the number of CPUs)",
    ),
    (
        "work-dir",
        None,
        "where shuffle files are written (default: a temporary directory)",
    ),
    (
        "executor-heartbeat-interval-seconds",
        Some("60"),
        "how often this executor tells the scheduler it is alive",
    ),
];

/// An exit status (2: a bad command line; 1: anything else) and its message.
type Failure = (i32, String);

/// The flags of one command line, checked against `specs`.
struct Flags {
    values: HashMap<&'static str, String>,
}

impl Flags {
    /// `Ok(None)` when `--help` was asked for (the usage is printed).
    fn parse(program: &str, specs: &[Spec], args: &[String]) -> Result<Option<Flags>, String> {
        let mut values = HashMap::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if arg == "--help" || arg == "-h" {
                println!("{}", usage(program, specs));
                return Ok(None);
            }
            let Some(flag) = arg.strip_prefix("--") else {
                return Err(format!(
                    "unexpected argument {arg:?}\n\n{}",
                    usage(program, specs)
                ));
            };
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n, v.to_string()),
                None => (
                    flag,
                    args.next()
                        .ok_or_else(|| format!("--{flag} needs a value"))?
                        .clone(),
                ),
            };
            let spec = specs
                .iter()
                .find(|s| s.0 == name)
                .ok_or_else(|| format!("unknown flag --{name}\n\n{}", usage(program, specs)))?;
            values.insert(spec.0, value);
        }
        for (name, default, _) in specs {
            if let Some(d) = default {
                values.entry(*name).or_insert_with(|| d.to_string());
            }
        }
        Ok(Some(Flags { values }))
    }

    fn policy(&self) -> Result<TaskSchedulingPolicy, Failure> {
        match self.get("scheduler-policy") {
            Some("push-staged") => Ok(TaskSchedulingPolicy::PushStaged),
            Some("pull-staged") => Ok(TaskSchedulingPolicy::PullStaged),
            other => Err((
                2,
                format!("--scheduler-policy is push-staged or pull-staged, got {other:?}"),
            )),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    fn string(&self, name: &str) -> String {
        self.get(name).expect("a flag with a default").to_string()
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, Failure> {
        self.get(name)
            .map(|v| {
                v.parse()
                    .map_err(|_| (2, format!("--{name} takes a number, got {v:?}")))
            })
            .transpose()
    }

    /// The number of a flag that has a default.
    fn defaulted<T: std::str::FromStr>(&self, name: &str) -> Result<T, Failure> {
        Ok(self.number(name)?.expect("a flag with a default"))
    }
}

fn usage(program: &str, specs: &[Spec]) -> String {
    let mut out = format!(
        "{program}: Ballista's {} with blockbloom's functions, codecs and runtime filter\n\n\
         usage: {program} [--flag value]...\n",
        if program.ends_with("scheduler") {
            "scheduler"
        } else {
            "executor"
        }
    );
    for (name, default, help) in specs {
        out.push_str(&format!("  --{name:<18} {help}"));
        if let Some(d) = default {
            out.push_str(&format!(" (default {d})"));
        }
        out.push('\n');
    }
    out.push_str("\nLogging: RUST_LOG=error|warn|info|debug|trace (default info), on stderr.");
    out
}

/// Writes Ballista's log records to standard error.
struct StderrLog(log::LevelFilter);

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= self.0
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!("[{} {}] {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

fn init_log() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(log::LevelFilter::Info);
    if log::set_logger(Box::leak(Box::new(StderrLog(level)))).is_ok() {
        log::set_max_level(level);
    }
}

/// Runs a command's main on its flags (none when `--help` was asked for), with its error
/// on standard error and exit status 2 (a bad command line) or 1.
fn run(program: &str, specs: &[Spec], main: impl FnOnce(Flags) -> Result<(), Failure>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match Flags::parse(program, specs, &args) {
        Ok(Some(flags)) => main(flags),
        Ok(None) => Ok(()),
        Err(e) => Err((2, e)),
    };
    if let Err((code, message)) = result {
        eprintln!("error: {message}");
        std::process::exit(code);
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Ballista's binaries give planning threads this much: deep plans recurse.
        .thread_stack_size(32 << 20)
        .build()
        .map_err(|e| (1, format!("cannot start the runtime: {e}")))
}

/// `blockbloom-scheduler`'s main.
pub fn scheduler_main() {
    run("blockbloom-scheduler", SCHEDULER_FLAGS, |flags| {
        let mut config = SchedulerConfig {
            bind_host: flags.string("bind-host"),
            bind_port: flags.defaulted("bind-port")?,
            external_host: flags.string("external-host"),
            scheduling_policy: flags.policy()?,
            executor_timeout_seconds: flags.defaulted("executor-timeout-seconds")?,
            expire_dead_executor_interval_seconds: flags
                .defaulted("expire-dead-executor-interval-seconds")?,
            ..SchedulerConfig::default()
        };
        config.override_config_producer = Some(Arc::new(session_config));
        config.override_session_builder = Some(Arc::new(session_state));
        config.override_logical_codec = Some(Arc::new(BloomLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(BloomPhysicalCodec::default()));
        let addr = format!("{}:{}", config.bind_host, config.bind_port)
            .parse()
            .map_err(|e| (2, format!("--bind-host/--bind-port: {e}")))?;
        init_log();
        runtime()?.block_on(async {
            let cluster = BallistaCluster::new_from_config(&config)
                .await
                .map_err(|e| (1, e.to_string()))?;
            log::info!("blockbloom-scheduler listening on {addr}");
            start_server(cluster, addr, Arc::new(config))
                .await
                .map_err(|e| (1, e.to_string()))
        })
    });
}

/// `blockbloom-executor`'s main.
pub fn executor_main() {
    run("blockbloom-executor", EXECUTOR_FLAGS, |flags| {
        let defaults = ExecutorProcessConfig::default();
        let mut config = ExecutorProcessConfig {
            bind_host: flags.string("bind-host"),
            port: flags.defaulted("bind-port")?,
            grpc_port: flags.defaulted("bind-grpc-port")?,
            external_host: flags.get("external-host").map(str::to_string),
            scheduler_host: flags.string("scheduler-host"),
            scheduler_port: flags.defaulted("scheduler-port")?,
            vcores: flags.number("concurrent-tasks")?.unwrap_or(defaults.vcores),
            work_dir: flags.get("work-dir").map(str::to_string),
            task_scheduling_policy: flags.policy()?,
            executor_heartbeat_interval_seconds: flags
                .defaulted("executor-heartbeat-interval-seconds")?,
            ..defaults
        };
        let state = session_state(session_config()).map_err(|e| (1, e.to_string()))?;
        config.override_function_registry = Some(Arc::new(BallistaFunctionRegistry::from(&state)));
        config.override_config_producer = Some(Arc::new(session_config));
        config.override_logical_codec = Some(Arc::new(BloomLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(BloomPhysicalCodec::default()));
        init_log();
        runtime()?.block_on(async {
            start_executor_process(Arc::new(config))
                .await
                .map_err(|e| (1, e.to_string()))
        })
    });
}
