//! `family`: measurements of the filter kinds built on the engine (counting, deletable,
//! scalable, compressed transfer, Bloomier, classic, variable increment, the Floom experiment), written as one markdown report into
//! `perf-reports/`. Each kind's section lives in its own module and returns markdown; a
//! section that finds a wrong answer (a false negative, a lost value) returns an error.

mod bloomier;
mod classic;
mod compressed;
mod counting;
mod deletable;
mod scalable;

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

use blockbloom_measure::progress::Progress;
use blockbloom_measure::system::Context;
use blockbloom_measure::table::Table;
use serde_json::{Value, json};

/// How much work a section does: `quick` for CI and smoke runs (seconds), else the full
/// measurement quoted in the family guide, docs/guide/family.md (minutes at most).
#[derive(Clone, Copy)]
pub struct Scale {
    /// Smaller sizes, fewer repetitions.
    pub quick: bool,
}

/// The tables a section printed, kept for `--format json`.
#[derive(Default)]
pub struct Tables(Vec<Value>);

impl Tables {
    /// `t` as markdown, recording it.
    pub fn markdown(&mut self, t: &Table) -> String {
        self.0.push(t.json());
        t.markdown()
    }
}

/// A section: its title and the function that measures it and returns its markdown body.
type Section = (
    &'static str,
    fn(Scale, &Progress, &mut Tables) -> Result<String, Box<dyn Error>>,
);

/// What `family` wrote: the report's path and each section's tables.
pub struct Written {
    /// The markdown report.
    pub path: std::path::PathBuf,
    /// `{"title", "tables"}` per section, in report order.
    pub sections: Vec<Value>,
}

/// The sections, in report order.
const SECTIONS: &[Section] = &[
    (
        "Counting filter: 4-bit vs 8-bit counters",
        counting::section,
    ),
    ("Deletable Bloom filter", deletable::section),
    ("Scalable filter", scalable::section),
    ("Compressed transfer form", compressed::section),
    ("Bloomier filter", bloomier::section),
    (
        "Classic Bloom filter against the blocked filter",
        classic::section,
    ),
    (
        "Variable-increment counting filter against the counting filter",
        classic::variable_section,
    ),
    ("The Floom filter experiment", classic::floom_section),
];

/// Runs every section and writes `<out>/<date>-<commit>-family.md`.
pub fn command(ctx: &Context, scale: Scale, out: &Path) -> Result<Written, Box<dyn Error>> {
    let progress = Progress::new();
    let mut text = String::new();
    let _ = writeln!(text, "# blockbloom: the Bloom family\n");
    for (k, v) in ctx.facts() {
        let _ = writeln!(text, "- {k}: {v}");
    }
    if scale.quick {
        let _ = writeln!(
            text,
            "\nThis is a `--quick` report: smaller sizes, fewer repetitions."
        );
    }
    let mut sections = Vec::new();
    for (title, run) in SECTIONS {
        progress.step(format_args!("{title}"));
        let mut tables = Tables::default();
        let body = run(scale, &progress, &mut tables)?;
        let _ = writeln!(text, "\n## {title}\n\n{}", body.trim_end());
        sections.push(json!({"title": title, "tables": tables.0}));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = out.join(format!("{}-{}-family.md", ctx.date, ctx.commit));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    progress.step("done");
    Ok(Written { path, sections })
}
