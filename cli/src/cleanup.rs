//! Nothing left behind by an interrupted write.
//!
//! `build` and `merge` write a temporary file beside the target (`.NAME.tmpPID.RANDOM`, made by
//! `tempfile`, which removes it on every error path) and rename it
//! over the target only once it is complete and synced, so the target is never harmed. This
//! module makes sure the temporary file does not outlive the process either:
//!
//! * SIGINT, SIGTERM and SIGHUP remove the registered temporary file, then end the process
//!   with the same signal (so the exit status still says what happened);
//! * SIGXFSZ (a file-size limit) is ignored, so the write fails with `EFBIG` and the normal
//!   error path removes the file and reports the error;
//! * a process killed outright (SIGKILL, a crash, power loss) cannot clean up, so the next
//!   write to the same target removes temporary files whose process is gone. They were never
//!   a filter: the target's name is only ever given to a complete, synced file.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The temporary file a signal must remove: a leaked `CString`, or null. An atomic swap is
/// async-signal-safe, so the handler can take it without a lock.
static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(ptr::null_mut());

const FATAL: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_fatal_signal(sig: libc::c_int) {
    let path = TEMP.swap(ptr::null_mut(), Ordering::SeqCst);
    if !path.is_null() {
        // SAFETY: `path` is a NUL-terminated string leaked by `Registered::new` and never
        // freed while registered (the swap made it ours); `unlink` is async-signal-safe.
        unsafe { libc::unlink(path) };
    }
    // SAFETY: `signal` and `raise` are async-signal-safe. The default action of these signals
    // ends the process once this handler returns (the signal is blocked until then).
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs the handlers (once, before the first temporary file).
pub fn install() {
    for sig in FATAL {
        // SAFETY: `on_fatal_signal` only calls async-signal-safe functions and touches one
        // atomic; installing a handler has no other precondition.
        unsafe { libc::signal(sig, on_fatal_signal as *const () as libc::sighandler_t) };
    }
    // SAFETY: ignoring a signal has no precondition.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// A temporary file a signal will remove while this value lives.
pub struct Registered(());

impl Registered {
    /// Registers `path` (replacing any earlier registration, which `build` and `merge` never
    /// have: they write one file).
    pub fn new(path: &Path) -> Registered {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap_or_default();
        let old = TEMP.swap(c.into_raw(), Ordering::SeqCst);
        free(old);
        Registered(())
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        free(TEMP.swap(ptr::null_mut(), Ordering::SeqCst));
    }
}

fn free(p: *mut libc::c_char) {
    if !p.is_null() {
        // SAFETY: every non-null pointer in `TEMP` came from `CString::into_raw`, and the swap
        // that returned it removed it from `TEMP`, so it is freed exactly once.
        drop(unsafe { CString::from_raw(p) });
    }
}

/// Removes the temporary files of `name` in `dir` left by processes that no longer exist.
/// A file of a live process (or one this user cannot signal) is left alone.
pub fn remove_stale(dir: &Path, name: &std::ffi::OsStr) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".tmp");
    let prefix = prefix.as_bytes();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.as_bytes().strip_prefix(prefix) else {
            continue;
        };
        // `PID.RANDOM` (or `PID` from versions before the random part).
        let pid = rest.split(|&b| b == b'.').next().unwrap_or(rest);
        let Some(pid) = std::str::from_utf8(pid)
            .ok()
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|&p| p > 0)
        else {
            continue;
        };
        // SAFETY: signal 0 checks for existence only; nothing is sent.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
