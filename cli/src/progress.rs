//! Progress of a long `build` on stderr: bytes read with rate and ETA (when the input's size is
//! known), keys so far. Drawn by `indicatif`, which hides it when stderr is not a terminal, so
//! logs and pipes get nothing; `--quiet` hides it on a terminal too.

use std::io::Read;

use blockbloom_measure::format::group;
use indicatif::{ProgressBar, ProgressStyle};

/// One phase of a build (counting lines, reading stdin, inserting).
pub struct Phase {
    bar: ProgressBar,
}

impl Phase {
    /// A phase over `total` bytes of input (`None`: unknown, so no ETA).
    pub fn new(what: &'static str, total: Option<u64>, quiet: bool) -> Phase {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            match total {
                Some(n) => ProgressBar::new(n).with_style(
                    ProgressStyle::with_template(
                        "{prefix} [{elapsed}] {bar:25} {percent:>3}% {binary_bytes}/{binary_total_bytes} \
                         {msg} ({binary_bytes_per_sec}, ETA {eta})",
                    )
                    .expect("a valid template"),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template(
                        "{prefix} [{elapsed}] {spinner} {binary_bytes} {msg} ({binary_bytes_per_sec})",
                    )
                    .expect("a valid template"),
                ),
            }
        };
        bar.set_prefix(what);
        Phase { bar }
    }

    /// `r`, counting the bytes read into this phase's position.
    pub fn wrap<R: Read>(&self, r: R) -> impl Read {
        self.bar.wrap_read(r)
    }

    /// Shows the keys (lines) seen so far.
    pub fn keys(&self, keys: u64) {
        if !self.bar.is_hidden() {
            self.bar.set_message(format!("{} keys", group(keys)));
        }
    }

    /// Removes the bar (the summary on stdout says what was done).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        // An error path must not leave a half-drawn bar under its message.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}
