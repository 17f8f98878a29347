//! Ballista's executor with blockbloom's functions and codecs: `blockbloom-executor --help`.

fn main() {
    blockbloom_ballista::cli::executor_main();
}
