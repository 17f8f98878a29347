//! Progress of a long measurement: one line per step on stderr, with the time since start,
//! so stdout carries only the results.

use std::time::Instant;

/// Timestamped progress lines on stderr.
pub struct Progress {
    start: Instant,
    quiet: bool,
}

impl Progress {
    /// Starts the clock.
    pub fn new() -> Progress {
        Progress {
            start: Instant::now(),
            quiet: false,
        }
    }

    /// Prints nothing (for tests).
    pub fn quiet() -> Progress {
        Progress {
            start: Instant::now(),
            quiet: true,
        }
    }

    /// Prints one progress line.
    pub fn step(&self, msg: impl std::fmt::Display) {
        if self.quiet {
            return;
        }
        eprintln!("[{:>6.1}s] {msg}", self.start.elapsed().as_secs_f64());
    }
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::new()
    }
}
