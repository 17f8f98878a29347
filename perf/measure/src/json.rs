//! Results as JSON, for the measurement tools' `--format json` (what performance-regression
//! jobs parse): every figure as a number in its base unit (ns per key, bytes, rates as
//! fractions), every timing with its samples, and the context that says what was measured.
//!
//! A document is `{"tool", "version", "command", "context", "results"}`; `results` is the
//! command's own (see `blockbloom-perf --help`).

use serde_json::{Value, json};

use crate::concurrent::ConcurrentResult;
use crate::subject::Measurement;
use crate::suite::{Kind, SizeResult};
use crate::system::{self, Context};
use crate::timing::Timing;

/// A number as JSON: NaN and infinities (a figure that was not measured) become `null`.
pub fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The context facts.
pub fn context(ctx: &Context) -> Value {
    let supported: Vec<String> = blockbloom::Isa::supported()
        .iter()
        .map(ToString::to_string)
        .collect();
    json!({
        "command": ctx.command,
        "date": ctx.date,
        "time_utc": ctx.time,
        "cpu": ctx.cpu,
        "logical_cpus": system::logical_cpus(),
        "caches": ctx.caches.iter().map(|c| json!({"level": c.level, "bytes": c.bytes})).collect::<Vec<_>>(),
        "kernels_supported": supported,
        "dispatch": ctx.dispatch,
        "commit": ctx.commit,
        "modified": ctx.modified,
        "rustc": ctx.rustc,
        "build": system::build_profile(),
        "optimised": system::optimised(),
    })
}

/// A timing: median, min, max, spread and the samples, in ns per item.
pub fn timing(t: &Timing) -> Value {
    let min = t.samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = t.samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    json!({
        "median": number(t.median()),
        "min": number(min),
        "max": number(max),
        "spread": number(t.spread()),
        "samples": t.samples.iter().map(|&s| number(s)).collect::<Vec<_>>(),
    })
}

/// One subject's measurement.
pub fn measurement(m: &Measurement) -> Value {
    let (lo, hi) = m.fpr_interval95();
    json!({
        "insert_ns_per_key": timing(&m.insert),
        "contains_ns_per_key": timing(&m.contains),
        "false_positives": m.false_positives,
        "non_members": m.non_members,
        "fpr": number(m.fpr()),
        "fpr_interval95": [number(lo), number(hi)],
        "false_negatives": m.false_negatives,
        "count_mismatch": m.count_mismatch,
        "size_in_bytes": m.size_in_bytes,
        "probes": m.probes,
    })
}

/// Everything measured at one size.
pub fn size_result(r: &SizeResult) -> Value {
    let p = &r.plan;
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let (kind, isa) = match row.kind {
                Kind::Kernel(isa) => ("kernel", Some(isa.to_string())),
                Kind::SingleKey => ("single-key", None),
                Kind::Peer(_) => ("peer", None),
            };
            json!({
                "name": row.name,
                "kind": kind,
                "isa": isa,
                "api": row.api,
                "measurement": measurement(&row.m),
            })
        })
        .collect();
    json!({
        "n": p.n,
        "target_fpr": number(p.fpr),
        "batch": p.batch,
        "queries": p.queries,
        "seed": p.seed,
        "reps": p.reps,
        "bytes": r.bytes,
        "probes": r.probes,
        "model_fpr": number(r.model_fpr),
        "instance_fpr": number(r.instance_fpr),
        "non_members": r.non_members,
        "rows": rows,
        "problems": r.problems(),
    })
}

/// A concurrent-insert result: ns per key per method and thread count.
pub fn concurrent_result(r: &ConcurrentResult) -> Value {
    let p = &r.plan;
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<Value> = row
                .cells
                .iter()
                .map(|c| {
                    json!({
                        "threads": c.threads,
                        "ns_per_key": timing(&c.timing),
                        "merge_ns_per_key": c.merge.map(number),
                    })
                })
                .collect();
            json!({"method": row.method.name(), "cells": cells})
        })
        .collect();
    json!({
        "n": p.n,
        "target_fpr": number(p.fpr),
        "isa": p.isa.to_string(),
        "batch": p.batch,
        "threads": p.threads,
        "reps": p.reps,
        "bytes": r.bytes,
        "peer_bytes": r.peer_bytes,
        "rows": rows,
        "problems": r.problems,
    })
}

/// The whole document of one command.
pub fn document(tool: &str, command: &str, ctx: &Context, results: Value) -> Value {
    json!({
        "tool": tool,
        "version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "context": context(ctx),
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurements_are_numbers_in_base_units() {
        let m = Measurement {
            insert: Timing {
                samples: vec![2.0, 1.0, 3.0],
            },
            contains: Timing { samples: vec![] },
            false_positives: 3,
            non_members: 1_000_000,
            false_negatives: 0,
            count_mismatch: false,
            size_in_bytes: 4096,
            probes: 8,
        };
        let j = measurement(&m);
        assert_eq!(j["insert_ns_per_key"]["median"], 2.0);
        assert_eq!(j["insert_ns_per_key"]["samples"], json!([2.0, 1.0, 3.0]));
        // Nothing measured: null, not a NaN that JSON cannot hold.
        assert_eq!(j["contains_ns_per_key"]["median"], Value::Null);
        assert_eq!(j["fpr"], 3e-6);
        let (lo, hi) = m.fpr_interval95();
        assert_eq!(j["fpr_interval95"], json!([lo, hi]));
        assert!(lo > 0.0 && hi > 3e-6);
        let text = serde_json::to_string(&j).unwrap();
        assert!(serde_json::from_str::<Value>(&text).is_ok());
    }
}
