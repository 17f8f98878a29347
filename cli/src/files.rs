//! Filter files: `build`, `query`, `info` and `merge` over the persisted format
//! (`docs/FORMAT.md`).
//!
//! * Keys are lines: bytes up to a `\n`, without it and without a `\r` before it. The last
//!   line needs no terminator; an empty line is a key (the empty string). Lines need not be
//!   UTF-8. Each is hashed exactly as `BloomFilter::insert_bytes`/`contains_bytes` hash it
//!   (`hash::hash_bytes(line, seed)`), in batches.
//! * Filters are loaded with `BloomFilter::read_from` over a `BufReader<File>` (a copy, which
//!   the checksum check reads in full anyway), and a file holding anything after the filter
//!   is rejected as `TrailingBytes`.
//! * Filters are written with `write_to` into a temporary file next to the destination, which
//!   is synced and renamed over it only once complete: a failure never leaves a half file, and
//!   an interrupted write (a signal, a file-size limit, a full disk) leaves no temporary file
//!   either (`cleanup`).
//! * `build` refuses `--capacity 0` with keys to insert, and a filter that would answer
//!   "maybe" for 99% or more of absent keys: neither could filter anything.
//!
//! Every failure is the library's typed error (prefixed with the file it concerns).

use std::error::Error;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use blockbloom::BloomFilter;
use blockbloom::hash::hash_bytes;
use blockbloom_measure::format::group;
use clap::Args;

/// Keys hashed and inserted (or queried) per batch call.
const BATCH: usize = 4096;
/// Progress is reported on stderr every this many keys.
const PROGRESS_EVERY: u64 = 1_000_000;

#[derive(Args)]
pub struct BuildArgs {
    /// Target false-positive rate at the capacity.
    // `allow_hyphen_values`: `-inf` or `-1e-3` is a (bad) number, reported as one, not an
    // unknown option.
    #[arg(long, allow_hyphen_values = true)]
    fpr: f64,
    /// Keys to size the filter for. Default: the number of input lines, which means reading
    /// the input twice (files: a counting pass first) or buffering it in memory (stdin).
    #[arg(long, allow_hyphen_values = true)]
    capacity: Option<u64>,
    /// Hash seed (filters merge only with filters of the same seed).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    seed: u64,
    /// Files of newline-delimited keys; none or `-` reads stdin.
    keys: Vec<PathBuf>,
    /// The filter file to write (replaced atomically).
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args)]
pub struct QueryArgs {
    /// The filter file.
    filter: PathBuf,
    /// Keys to look up, each printed as `KEY<TAB>maybe` or `KEY<TAB>no`. Without any, stdin is
    /// read line by line and the lines that may be members are printed (a prefilter).
    keys: Vec<OsString>,
}

#[derive(Args)]
pub struct InfoArgs {
    /// The filter file.
    filter: PathBuf,
}

#[derive(Args)]
pub struct MergeArgs {
    /// Filters to merge (at least two): same layout, probe count, seed and block count.
    #[arg(required = true, num_args = 2..)]
    inputs: Vec<PathBuf>,
    /// The filter file to write (replaced atomically).
    #[arg(short, long)]
    output: PathBuf,
}

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// `path: error`, with the library's message for the error.
fn at(path: &Path, e: impl Into<blockbloom::Error>) -> Box<dyn Error> {
    format!("{}: {}", path.display(), e.into()).into()
}

/// Where keys come from.
enum Source<'a> {
    Stdin,
    File(&'a Path),
}

fn sources(keys: &[PathBuf]) -> Result<Vec<Source<'_>>> {
    if keys.is_empty() {
        return Ok(vec![Source::Stdin]);
    }
    let out: Vec<Source> = keys
        .iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                Source::Stdin
            } else {
                Source::File(p)
            }
        })
        .collect();
    if out.iter().filter(|s| matches!(s, Source::Stdin)).count() > 1 {
        return Err("stdin (`-`) can be read only once".into());
    }
    Ok(out)
}

/// Reads line after line from `r`; `f` gets each line without its terminator. Returns the
/// number of lines.
fn for_each_line(mut r: impl BufRead, mut f: impl FnMut(&[u8])) -> io::Result<u64> {
    let mut buf = Vec::with_capacity(256);
    let mut n = 0;
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            return Ok(n);
        }
        f(strip_newline(&buf));
        n += 1;
    }
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Counts lines (a final line without terminator counts) without keeping them.
fn count_lines(mut r: impl Read) -> io::Result<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// Keys read so far, on stderr: a line every [`PROGRESS_EVERY`] keys, overwritten in place on
/// a terminal.
struct KeyCounter {
    what: &'static str,
    tty: bool,
    shown: bool,
}

impl KeyCounter {
    fn new(what: &'static str) -> KeyCounter {
        KeyCounter {
            what,
            tty: io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn tick(&mut self, done: u64) {
        if done > 0 && done.is_multiple_of(PROGRESS_EVERY) {
            self.shown = true;
            if self.tty {
                eprint!("\r{}: {} keys", self.what, group(done));
            } else {
                eprintln!("{}: {} keys", self.what, group(done));
            }
        }
    }

    fn finish(&self) {
        if self.shown && self.tty {
            eprintln!();
        }
    }
}

/// Inserts lines into a filter in hashed batches (the same bits as `insert_bytes` per line).
struct Inserter<'f> {
    filter: &'f mut BloomFilter,
    hashes: Vec<u64>,
    keys: u64,
    progress: KeyCounter,
}

impl Inserter<'_> {
    fn add(&mut self, line: &[u8]) {
        self.hashes.push(hash_bytes(line, self.filter.seed()));
        if self.hashes.len() == BATCH {
            self.flush();
        }
        self.keys += 1;
        self.progress.tick(self.keys);
    }

    fn flush(&mut self) {
        self.filter.insert_hash_batch(&self.hashes);
        self.hashes.clear();
    }
}

fn open(path: &Path) -> Result<BufReader<File>> {
    Ok(BufReader::with_capacity(
        1 << 16,
        File::open(path).map_err(|e| at(path, e))?,
    ))
}

pub fn build(args: BuildArgs) -> Result<()> {
    let sources = sources(&args.keys)?;
    // Without --capacity the key count sizes the filter: count the files' lines in a first
    // pass, and buffer stdin (it cannot be read twice).
    let mut stdin_buffer: Option<Vec<u8>> = None;
    let capacity = match args.capacity {
        Some(c) => c,
        None => {
            let mut total = 0u64;
            for s in &sources {
                total += match s {
                    Source::File(p) => count_lines(open(p)?).map_err(|e| at(p, e))?,
                    Source::Stdin => {
                        let mut buf = Vec::new();
                        io::stdin()
                            .lock()
                            .read_to_end(&mut buf)
                            .map_err(|e| at(Path::new("<stdin>"), e))?;
                        let n = count_lines(&buf[..]).expect("reading a slice cannot fail");
                        stdin_buffer = Some(buf);
                        n
                    }
                };
            }
            total
        }
    };
    let mut filter = BloomFilter::builder()
        .capacity(capacity)
        .fpr(args.fpr)
        .seed(args.seed)
        .build()?;
    let mut ins = Inserter {
        filter: &mut filter,
        hashes: Vec::with_capacity(BATCH),
        keys: 0,
        progress: KeyCounter::new("build"),
    };
    for s in &sources {
        match s {
            Source::File(p) => {
                for_each_line(open(p)?, |l| ins.add(l)).map_err(|e| at(p, e))?;
            }
            Source::Stdin => {
                let r = match &stdin_buffer {
                    Some(buf) => for_each_line(&buf[..], |l| ins.add(l)),
                    None => for_each_line(io::stdin().lock(), |l| ins.add(l)),
                };
                r.map_err(|e| at(Path::new("<stdin>"), e))?;
            }
        }
    }
    ins.flush();
    ins.progress.finish();
    let keys = ins.keys;
    if capacity == 0 && keys > 0 {
        return Err(format!(
            "--capacity 0 cannot hold the {keys} keys read; omit --capacity to size the \
             filter by the input"
        )
        .into());
    }
    let expected = filter.expected_fpr();
    if expected >= USELESS_FPR {
        return Err(format!(
            "the filter would answer \"maybe\" for {:.1}% of keys it never saw ({keys} keys \
             in {} bytes): it would filter nothing; raise --capacity or lower --fpr",
            expected * 100.0,
            filter.size_in_bytes()
        )
        .into());
    }
    if keys > capacity {
        eprintln!(
            "warning: {keys} keys exceed the capacity {capacity}: the false-positive rate is \
             above the target"
        );
    }
    write_atomically(&filter, &args.output)?;
    summary(&args.output, &filter, keys, "keys");
    Ok(())
}

/// One line: keys, bytes, bits/key, layout, k, expected FPR.
fn summary(path: &Path, f: &BloomFilter, keys: u64, what: &str) {
    let bits_per_key = if keys == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", f.size_in_bytes() as f64 * 8.0 / keys as f64)
    };
    println!(
        "{}: {} {what}, {} bytes, {bits_per_key} bits/key, layout {}, k={}, expected FPR {:.3e}",
        path.display(),
        keys,
        f.encoded_len(),
        f.layout(),
        f.probes(),
        f.expected_fpr()
    );
}

/// A filter whose expected false-positive rate is at least this answers "maybe" for nearly
/// every key: `build` refuses to write it.
const USELESS_FPR: f64 = 0.99;

/// Writes `f` to a temporary file in `path`'s directory, syncs it and renames it to `path`;
/// on any failure the temporary file is removed and `path` is untouched.
fn write_atomically(f: &BloomFilter, path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    crate::cleanup::remove_stale(dir, name);
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = dir.join(tmp_name);

    struct Cleanup<'a>(&'a Path, bool);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }

    // Registered before the file exists (a signal between the two must not leave it behind)
    // and dropped last: until the rename, or the error path's removal, a signal removes it.
    let _registered = crate::cleanup::Registered::new(&tmp);
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| at(&tmp, e))?;
    let mut guard = Cleanup(&tmp, false);
    let mut w = BufWriter::with_capacity(1 << 20, file);
    f.write_to(&mut w).map_err(|e| at(&tmp, e))?;
    let file = w.into_inner().map_err(|e| at(&tmp, e.into_error()))?;
    file.sync_all().map_err(|e| at(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| at(path, e))?;
    guard.1 = true;
    Ok(())
}

/// Loads a filter file: exactly one filter, nothing after it.
pub fn load(path: &Path) -> Result<BloomFilter> {
    let mut r = open(path)?;
    let f = BloomFilter::read_from(&mut r).map_err(|e| at(path, e))?;
    let mut extra = [0u8; 1];
    let n = r.read(&mut extra).map_err(|e| at(path, e))?;
    if n > 0 {
        let got = std::fs::metadata(path).map_err(|e| at(path, e))?.len();
        return Err(at(
            path,
            blockbloom::Error::TrailingBytes {
                expected: f.encoded_len() as u128,
                got: got as u128,
            },
        ));
    }
    Ok(f)
}

/// Ok on a closed stdout (`query ... | head`), which ends the output early but is no error.
fn quiet_pipe(r: io::Result<()>) -> Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| at(Path::new("<stdout>"), e)),
    }
}

pub fn query(args: QueryArgs) -> Result<()> {
    let f = load(&args.filter)?;
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    if !args.keys.is_empty() {
        let r = (|| {
            for k in &args.keys {
                let bytes = k.as_encoded_bytes();
                out.write_all(bytes)?;
                let answer = if f.contains_bytes(bytes) {
                    "\tmaybe\n"
                } else {
                    "\tno\n"
                };
                out.write_all(answer.as_bytes())?;
            }
            out.flush()
        })();
        return quiet_pipe(r);
    }
    // Prefilter: batches of lines (kept with their terminators), hashed together and answered
    // with one batch call.
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut text: Vec<u8> = Vec::with_capacity(BATCH * 64);
    let mut ends: Vec<usize> = Vec::with_capacity(BATCH);
    let mut hashes: Vec<u64> = Vec::with_capacity(BATCH);
    let mut answers = vec![false; BATCH];
    let mut eof = false;
    while !eof {
        text.clear();
        ends.clear();
        hashes.clear();
        while ends.len() < BATCH {
            let start = text.len();
            let n = input
                .read_until(b'\n', &mut text)
                .map_err(|e| at(Path::new("<stdin>"), e))?;
            if n == 0 {
                eof = true;
                break;
            }
            hashes.push(hash_bytes(strip_newline(&text[start..]), f.seed()));
            ends.push(text.len());
        }
        f.contains_hash_batch(&hashes, &mut answers[..hashes.len()]);
        let r = (|| {
            let mut start = 0;
            for (&end, &maybe) in ends.iter().zip(&answers) {
                if maybe {
                    let line = &text[start..end];
                    out.write_all(line)?;
                    if !line.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                }
                start = end;
            }
            Ok(())
        })();
        if let Err(e) = r {
            return quiet_pipe(Err(e));
        }
    }
    quiet_pipe(out.flush())
}

pub fn info(args: InfoArgs) -> Result<()> {
    let f = load(&args.filter)?;
    let target = match f.target_fpr() {
        Some(p) => format!("{p}"),
        None => "none (sized by a bit budget)".to_string(),
    };
    let rows: [(&str, String); 15] = [
        ("file", args.filter.display().to_string()),
        // The only version `read_from` accepts.
        ("version", blockbloom::format::VERSION.to_string()),
        ("layout", f.layout().to_string()),
        ("k", f.probes().to_string()),
        ("hash", "XXH3-64".to_string()),
        ("seed", f.seed().to_string()),
        ("blocks", f.num_blocks().to_string()),
        ("bytes", f.encoded_len().to_string()),
        ("capacity", f.capacity().to_string()),
        ("target FPR", target),
        ("bits/key", format!("{:.2} at capacity", f.bits_per_key())),
        ("fill ratio", format!("{:.4}", f.fill_ratio())),
        ("est. keys", format!("{:.0}", f.estimated_len())),
        ("expected FPR", format!("{:.3e}", f.expected_fpr())),
        ("kernel", f.isa().to_string()),
    ];
    let mut out = io::stdout().lock();
    let r = rows
        .iter()
        .try_for_each(|(k, v)| writeln!(out, "{k:<13} {v}"));
    quiet_pipe(r)
}

pub fn merge(args: MergeArgs) -> Result<()> {
    let (first, rest) = args.inputs.split_first().expect("clap requires two inputs");
    let mut f = load(first)?;
    for p in rest {
        let g = load(p)?;
        f.union(&g).map_err(|e| at(p, e))?;
    }
    write_atomically(&f, &args.output)?;
    summary(
        &args.output,
        &f,
        f.estimated_len().round() as u64,
        "keys (estimated)",
    );
    Ok(())
}
