//! Ballista's scheduler with blockbloom's functions, codecs and runtime filter:
//! `blockbloom-scheduler --help`.

fn main() {
    blockbloom_ballista::cli::scheduler_main();
}
