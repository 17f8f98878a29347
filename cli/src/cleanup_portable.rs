//! Off Unix there are no signal handlers to install: an interrupted write can leave its
//! temporary file (never the target), and nothing removes stale ones. See `cleanup.rs`.

use std::ffi::OsStr;
use std::path::Path;

pub fn install() {}

pub struct Registered(());

impl Registered {
    pub fn new(_: &Path) -> Registered {
        Registered(())
    }
}

pub fn remove_stale(_: &Path, _: &OsStr) {}
