//! How `demo` and `bench` print what they measured: the context header, then a table per
//! size; wrong answers are printed first and then returned as the error.

use std::error::Error;

use crate::concurrent::ConcurrentResult;
use crate::suite::SizeResult;
use crate::system::Context;

/// The context facts, without the command and the commit (a terminal run needs neither).
pub fn print_header(ctx: &Context) {
    for (k, v) in ctx.facts() {
        if k != "command" && k != "commit" {
            println!("{k:<8} {v}");
        }
    }
}

/// Prints one size; an error if any filter gave a wrong answer (after printing the table).
pub fn print_size(r: &SizeResult, ctx: &Context) -> Result<(), Box<dyn Error>> {
    println!();
    print!("{}", r.describe(&ctx.caches));
    print!("{}", r.table().text());
    wrong_answers(std::slice::from_ref(r))
}

/// A false negative or a count that disagrees with the per-key answers is a bug, not noise.
pub fn wrong_answers(results: &[SizeResult]) -> Result<(), Box<dyn Error>> {
    let problems: Vec<String> = results.iter().flat_map(|r| r.problems()).collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong answers: {}", problems.join("; ")).into())
    }
}

/// Prints a concurrent-insert result; an error if a build was wrong (after printing it).
pub fn print_concurrent(r: &ConcurrentResult, ctx: &Context) -> Result<(), Box<dyn Error>> {
    let ts: Vec<String> = r.plan.threads.iter().map(ToString::to_string).collect();
    println!("\nConcurrent insert, {} threads", ts.join(" / "));
    print!("{}", r.describe(&ctx.caches));
    print!("{}", r.table().text());
    wrong_builds(std::slice::from_ref(r))
}

/// A concurrent build that differs from the single-thread one is a bug.
pub fn wrong_builds(results: &[ConcurrentResult]) -> Result<(), Box<dyn Error>> {
    let problems: Vec<String> = results
        .iter()
        .flat_map(|r| r.problems.iter().cloned())
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong concurrent builds: {}", problems.join("; ")).into())
    }
}
