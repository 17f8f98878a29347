//! Off Unix there are no signal handlers to install: an interrupted write can leave its
//! temporary file (never the target), and nothing removes stale ones. See `cleanup.rs`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub fn install() {}

pub struct Registered(());

impl Registered {
    pub fn new(_: &Path) -> Registered {
        Registered(())
    }
}

pub fn temp_name(dir: &Path, name: &OsStr, pid: u32) -> PathBuf {
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".tmp{pid}"));
    dir.join(tmp)
}

pub fn remove_stale(_: &Path, _: &OsStr) {}
