//! Filter files: `build`, `query`, `info` and `merge` over the persisted format
//! (`docs/FORMAT.md`).
//!
//! * Keys are lines: bytes up to a `\n`, without it and without a `\r` before it. The last
//!   line needs no terminator; an empty line is a key (the empty string). Lines need not be
//!   UTF-8. Each is hashed exactly as `BloomFilter::insert_bytes`/`contains_bytes` hash it
//!   (the filter's key hash and seed: `KeyForm::Bytes(line).hash_with(..)`), in batches.
//!   With `--key-type int` a line is a decimal integer in [-2^63, 2^64) (spaces around it
//!   allowed) and the key is its 64-bit value, as Rust's `insert(&5u8)`, SQL's `5` and
//!   Python's `5` are: a line that is not one is an error naming the file and line.
//! * A line is at most [`MAX_LINE_BYTES`] (1 MiB) without its terminator: a longer one is an
//!   error naming the file and line, never a line held in memory whatever its length.
//! * `build` writes the library's default, hash id 3 (MX32-64 for lines of 4, 8 and 16 bytes,
//!   AESH-64 for the others), in the library's default layout for the rate, unless given
//!   `--hash aesh-64` or `--hash xxh3-64`; `query` and `info` read every id, and `info` prints
//!   which.
//! * Filters are loaded with the kind's `read_from` over a `BufReader<File>` (a copy, which
//!   the checksum check reads in full anyway; `query` and `info` take every kind, `kinds`), and
//!   a file holding anything after the filter is rejected as `TrailingBytes`.
//! * Filters are written with `write_to` into a `tempfile` next to the destination, which is
//!   synced and renamed over it only once complete: a failure never leaves a half file, and
//!   an interrupted write (a signal, a file-size limit, a full disk) leaves no temporary file
//!   either (`cleanup`). Every error of the write names the output as the user gave it,
//!   never the temporary file.
//! * `build` and `merge` refuse an output that is one of their inputs (a key file, the file
//!   stdin is redirected from, a filter to merge) before reading anything: the rename would
//!   put the filter where that input was. The same file is found however it is reached:
//!   another spelling of the path, a symlink either way round, a hard link (device and inode;
//!   off unix, the canonical path, which sees neither hard links nor stdin's file). Only an
//!   output that exists can be an input.
//! * `build` refuses `--capacity 0` with keys to insert, and a filter that would answer
//!   "maybe" for 99% or more of absent keys: neither could filter anything.
//! * `merge` warns when the union's expected false-positive rate, from its bits
//!   (`expected_fpr`), is over twice the target: shards each sized for their own line count
//!   merge into a filter holding several times the keys it was sized for. The target is the
//!   first input's, the one the output records (the union keeps the first input's header)
//!   and `info` shows; without one (a filter the library sized by bits per key or bytes)
//!   there is nothing to compare with, and no warning. The help of `build --capacity` and of
//!   `merge` says to build every shard with `--capacity` set to the total key count.
//! * `build --keyed` seeds the hash from the operating system's randomness
//!   (`Builder::keyed`) instead of `--seed` (clap refuses both together): a keyed filter
//!   against keys crafted to collide. The seed is stored in the file like any seed.
//! * Without `--capacity`, `build` counts the keys first: files are read twice, and stdin is
//!   copied to an anonymous temporary file while it is counted (so memory stays flat however
//!   much is piped in; the disk holds one copy of the input until the build ends).
//!
//! Every failure names the file it concerns, as the user gave it: with the library's typed
//! error, or with what was refused and why.

use std::error::Error;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use blockbloom::{BloomFilter, KeyForm, KeyHash};
use clap::builder::PossibleValuesParser;
use clap::{Args, ValueEnum};

use crate::kinds::AnyFilter;
use crate::progress::Phase;

/// Keys hashed and inserted (or queried) per batch call.
const BATCH: usize = 4096;

/// The longest line (key) read, in bytes without its terminator: 1 MiB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What a line is as a key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum KeyType {
    /// The line's bytes.
    #[default]
    Text,
    /// A decimal integer in [-2^63, 2^64), the key of its 64-bit value.
    Int,
}

impl KeyType {
    /// The key a line (without its terminator) names.
    pub fn key(self, line: &[u8]) -> std::result::Result<KeyForm<'_>, String> {
        match self {
            KeyType::Text => Ok(KeyForm::Bytes(line)),
            KeyType::Int => parse_int(line).map(KeyForm::U64).ok_or_else(|| {
                format!(
                    "not an integer in [-2^63, 2^64): {:?}",
                    String::from_utf8_lossy(&line[..line.len().min(64)])
                )
            }),
        }
    }
}

/// A decimal integer's 64-bit value (negative ones as their two's complement, as an `i64`
/// widens), spaces and tabs around it allowed.
fn parse_int(line: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(line).ok()?.trim_matches([' ', '\t']);
    if s.starts_with('-') {
        s.parse::<i64>().ok().map(|v| v as u64)
    } else {
        s.parse::<u64>().ok()
    }
}

#[derive(Args)]
pub struct BuildArgs {
    /// Target false-positive rate at the capacity.
    // `allow_hyphen_values`: `-inf` or `-1e-3` is a (bad) number, reported as one, not an
    // unknown option.
    #[arg(long, allow_hyphen_values = true)]
    fpr: f64,
    /// Keys to size the filter for. Default: the number of input lines, counted first: files
    /// are read twice, and stdin is copied to an anonymous temporary file (in $TMPDIR) while
    /// it is counted, so memory stays flat however much is piped in. Give --capacity to read
    /// stdin once, with no copy. Shards to be merged: build every shard with --capacity set
    /// to the total key count of all shards (and the same --fpr and --seed); sized by its own
    /// lines, each is as small as its share, and their union misses the --fpr target.
    #[arg(long, allow_hyphen_values = true)]
    capacity: Option<u64>,
    /// Hash seed (filters merge only with filters of the same seed).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    seed: u64,
    /// Hash with a secret seed drawn from the operating system's randomness instead of
    /// --seed, so that nobody without the filter file can predict where a key lands (for
    /// filters fed untrusted keys). The file stores the seed (`info` shows it): keep it as
    /// secret as the seed. Shards to be merged share one seed: build one with --keyed and the
    /// others with --seed set to its seed.
    // A default --seed is no conflict: clap counts only a --seed given.
    #[arg(long, conflicts_with = "seed")]
    keyed: bool,
    /// The key hash the filter is built with: mx32-64 (hash id 3, the library's default:
    /// MX32-64 for lines of 4, 8 and 16 bytes and every --key-type int key, AESH-64 for the
    /// others), aesh-64 (hash id 2: AESH-64 for lines of other lengths than 4 and 8 bytes,
    /// XXH3-64 for those), xxh3-64 (hash id 1, what every filter before hash id 2 used) or
    /// moremur-64 (hash id 4: MM64 where mx32-64 takes MX32-64; faster single keys, slower
    /// batches on AVX2). Filters merge only with filters of the same hash.
    #[arg(long, default_value = KeyHash::default().name(), value_parser = key_hash_names())]
    hash: String,
    /// Files of newline-delimited keys; none or `-` reads stdin. A line is at most 1 MiB.
    keys: Vec<PathBuf>,
    /// What a line is as a key: text (its bytes) or int (a decimal integer in [-2^63, 2^64),
    /// the key of its 64-bit value: the same key as Rust's `insert(&5u8)`, SQL's 5 or
    /// Python's 5). The file does not record it: query with the same --key-type.
    #[arg(long, value_enum, default_value_t = KeyType::Text)]
    key_type: KeyType,
    /// The filter file to write (replaced atomically).
    #[arg(short, long)]
    output: PathBuf,
    /// No progress bar. (It is drawn on stderr only when stderr is a terminal.)
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
pub struct QueryArgs {
    /// The filter file (any kind `info` reads; a Bloomier map answers whether a key maps to
    /// a value).
    filter: PathBuf,
    /// Keys to look up, each printed as `KEY<TAB>maybe` or `KEY<TAB>no`. Without any, stdin is
    /// read line by line and the lines that may be members are printed (a prefilter).
    // Negative numbers are keys (`--key-type int`), not options.
    #[arg(allow_negative_numbers = true)]
    keys: Vec<OsString>,
    /// Print only the keys (or stdin lines) that are certainly not members, without an
    /// answer column: the complement of the default (spell checks, set reconciliation).
    #[arg(long)]
    absent: bool,
    /// What a key (argument or stdin line) is: text (its bytes) or int (a decimal integer,
    /// the key of its 64-bit value), as the filter was built.
    #[arg(long, value_enum, default_value_t = KeyType::Text)]
    key_type: KeyType,
}

#[derive(Args)]
pub struct InfoArgs {
    /// The filter file: any kind the library writes (plain, counting, deletable, scalable,
    /// compressed plain or classic, Bloomier, classic).
    filter: PathBuf,
}

#[derive(Args)]
pub struct MergeArgs {
    /// Filters to merge (at least two): same layout, probe count, seed and block count.
    /// The union holds every input's keys at one input's size: build every shard with
    /// --capacity set to the total key count of all shards (and the same --fpr and --seed),
    /// or its false-positive rate exceeds the target (a warning says by how much).
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

/// A file however it is reached: its device and inode, so another spelling of the path, a
/// symlink and a hard link are all the same file.
#[cfg(unix)]
#[derive(PartialEq)]
struct FileId(u64, u64);

#[cfg(unix)]
impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileId(m.dev(), m.ino()))
    }

    /// The file stdin is redirected from (`< keys.txt`), through a duplicate of the
    /// descriptor, so stdin itself is untouched.
    fn stdin() -> Option<FileId> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
        let m = File::from(fd).metadata().ok()?;
        Some(FileId(m.dev(), m.ino()))
    }
}

/// A file however its path is spelled: its canonical path (symlinks resolved; hard links
/// are not seen).
#[cfg(not(unix))]
#[derive(PartialEq)]
struct FileId(PathBuf);

#[cfg(not(unix))]
impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        std::fs::canonicalize(path).ok().map(FileId)
    }

    /// Where stdin comes from has no portable name.
    fn stdin() -> Option<FileId> {
        None
    }
}

/// Refuses an `output` that is one of the `inputs`: the rename would put the filter where the
/// input was. Only an output that exists can be an input; an input that does not exist fails
/// later, when it is read.
fn refuse_input_as_output(output: &Path, inputs: &[Source]) -> Result<()> {
    let Some(out) = FileId::of(output) else {
        return Ok(());
    };
    for s in inputs {
        let (id, name) = match s {
            Source::File(p) => (FileId::of(p), *p),
            Source::Stdin => (FileId::stdin(), Path::new(STDIN)),
        };
        if id.as_ref() == Some(&out) {
            return Err(format!(
                "{}: the output is the same file as the input {}: writing the filter there \
                 would replace it; choose another output",
                output.display(),
                name.display()
            )
            .into());
        }
    }
    Ok(())
}

/// Reads line after line from `r`; `f` gets each line without its terminator and its number
/// (from 1), and may refuse it with a message. Returns the number of lines.
fn for_each_line(
    mut r: impl BufRead,
    mut f: impl FnMut(&[u8]) -> std::result::Result<(), String>,
) -> io::Result<u64> {
    let mut buf = Vec::with_capacity(256);
    let mut n = 0;
    loop {
        buf.clear();
        if read_line(&mut r, &mut buf, n + 1)? == 0 {
            return Ok(n);
        }
        n += 1;
        f(strip_newline(&buf)).map_err(|e| line_error(n, e))?;
    }
}

/// Appends one line of `r`, terminator included, to `buf`; returns its bytes (0 at the end of
/// the input). A line longer than [`MAX_LINE_BYTES`] is an error naming line `number`, read no
/// further than the limit.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, number: u64) -> io::Result<usize> {
    let start = buf.len();
    // The limit, a `\r` and a `\n`: a longer line shows as one without its terminator.
    let n = r
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 2)
        .read_until(b'\n', buf)?;
    if strip_newline(&buf[start..]).len() > MAX_LINE_BYTES {
        buf.truncate(start);
        return Err(line_error(
            number,
            format!("longer than {MAX_LINE_BYTES} bytes, the longest key a line may hold"),
        ));
    }
    Ok(n)
}

fn line_error(number: u64, message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("line {number}: {message}"),
    )
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Counts lines (a final line without terminator counts) without keeping them, copying the
/// bytes to `copy` on the way (`io::sink()` to keep nothing).
fn count_lines(mut r: impl Read, mut copy: impl Write) -> io::Result<u64> {
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
        copy.write_all(&buf[..n])?;
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// Inserts lines into a filter in hashed batches (the same bits as `insert_bytes`, or
/// `insert(&value)` with `--key-type int`, per line).
struct Inserter<'f> {
    filter: &'f mut BloomFilter,
    key_type: KeyType,
    hashes: Vec<u64>,
    keys: u64,
    progress: &'f Phase,
}

impl Inserter<'_> {
    fn add(&mut self, line: &[u8]) -> std::result::Result<(), String> {
        let key = self.key_type.key(line)?;
        self.hashes.push(self.filter.hash(&key));
        self.keys += 1;
        if self.hashes.len() == BATCH {
            self.flush();
            self.progress.keys(self.keys);
        }
        Ok(())
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

/// The size of a key file, for the progress bar's ETA (none for a pipe or a special file).
fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

const STDIN: &str = "<stdin>";

pub fn build(args: BuildArgs) -> Result<()> {
    let sources = sources(&args.keys)?;
    refuse_input_as_output(&args.output, &sources)?;
    let quiet = args.quiet;
    let has_stdin = sources.iter().any(|s| matches!(s, Source::Stdin));
    // Bytes of the key files, for the ETA (unknown if one is a pipe).
    let files_len: Option<u64> = sources
        .iter()
        .filter_map(|s| match s {
            Source::File(p) => Some(file_len(p)),
            Source::Stdin => None,
        })
        .sum();
    // Without --capacity the key count sizes the filter: count the files' lines in a first
    // pass, and spill stdin to an anonymous temporary file while counting it (stdin cannot be
    // read twice, and holding it in memory would cost as much memory as the input).
    let mut spill: Option<File> = None;
    let capacity = match args.capacity {
        Some(c) => c,
        None => {
            let files_only = sources.iter().all(|s| matches!(s, Source::File(_)));
            let counting = Phase::new("count", files_len, quiet || !files_only);
            let mut total = 0u64;
            for s in &sources {
                total += match s {
                    Source::File(p) => count_lines(
                        counting.wrap(File::open(p).map_err(|e| at(p, e))?),
                        io::sink(),
                    )
                    .map_err(|e| at(p, e))?,
                    Source::Stdin => {
                        let stdin_at = |e| at(Path::new(STDIN), e);
                        let reading = Phase::new("read stdin", None, quiet);
                        let mut file = tempfile::tempfile()
                            .map_err(|e| at(Path::new("<temporary file for stdin>"), e))?;
                        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
                        let n = count_lines(reading.wrap(io::stdin().lock()), &mut w)
                            .map_err(stdin_at)?;
                        w.flush().map_err(stdin_at)?;
                        drop(w);
                        file.rewind().map_err(stdin_at)?;
                        reading.finish();
                        spill = Some(file);
                        n
                    }
                };
            }
            counting.finish();
            total
        }
    };
    // The parser admits only the names of known hashes (`key_hash_names`).
    let key_hash = KeyHash::from_name(&args.hash).unwrap_or_default();
    let builder = BloomFilter::builder()
        .capacity(capacity)
        .fpr(args.fpr)
        .key_hash(key_hash);
    let builder = if args.keyed {
        builder.keyed()
    } else {
        builder.seed(args.seed)
    };
    let mut filter = builder.build()?;
    let spilled = spill
        .as_ref()
        .map(|f| f.metadata().map(|m| m.len()))
        .transpose()
        .map_err(|e| at(Path::new(STDIN), e))?;
    // Known unless stdin streams (with --capacity) or a key file is a pipe.
    let total = match (has_stdin, spilled) {
        (false, _) => files_len,
        (true, Some(s)) => files_len.map(|f| f + s),
        (true, None) => None,
    };
    let inserting = Phase::new("build", total, quiet);
    let mut ins = Inserter {
        filter: &mut filter,
        key_type: args.key_type,
        hashes: Vec::with_capacity(BATCH),
        keys: 0,
        progress: &inserting,
    };
    for s in &sources {
        match s {
            Source::File(p) => {
                let r = BufReader::with_capacity(
                    1 << 16,
                    inserting.wrap(File::open(p).map_err(|e| at(p, e))?),
                );
                for_each_line(r, |l| ins.add(l)).map_err(|e| at(p, e))?;
            }
            Source::Stdin => {
                let r = match spill.take() {
                    Some(file) => for_each_line(
                        BufReader::with_capacity(1 << 16, inserting.wrap(file)),
                        |l| ins.add(l),
                    ),
                    None => for_each_line(
                        BufReader::with_capacity(1 << 16, inserting.wrap(io::stdin().lock())),
                        |l| ins.add(l),
                    ),
                };
                r.map_err(|e| at(Path::new(STDIN), e))?;
            }
        }
    }
    ins.flush();
    let keys = ins.keys;
    inserting.finish();
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
const USELESS_FPR: f64 = blockbloom::sizing::USELESS_FPR;

/// Writes `f` to a temporary file in `path`'s directory, syncs it and renames it to `path`;
/// on any failure the temporary file is removed, `path` is untouched, and the error names
/// `path`.
fn write_atomically(f: &BloomFilter, path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    crate::cleanup::remove_stale(dir, name);
    // `.NAME.tmpPID.RANDOM`: the pid lets a later write remove it if this process is killed
    // outright (`cleanup::remove_stale`).
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(format!(".tmp{}.", std::process::id()));

    // Declared first, so dropped last: the temporary file is removed (on an error) before the
    // signal handler forgets it, and each name is registered before it exists, so a signal
    // in between cannot leave it behind.
    let mut registered: Option<crate::cleanup::Registered> = None;
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .rand_bytes(6)
        .make_in(dir, |candidate| {
            registered = Some(crate::cleanup::Registered::new(candidate));
            // Plain `create_new`, so the file gets the same mode as any file the user creates.
            File::options().write(true).create_new(true).open(candidate)
        })
        .map_err(|e| at(path, e))?;
    // Errors name `path`, as the user gave it: the temporary file is ours, not theirs.
    let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
    f.write_to(&mut w).map_err(|e| at(path, e))?;
    w.into_inner().map_err(|e| at(path, e.into_error()))?;
    tmp.as_file().sync_all().map_err(|e| at(path, e))?;
    tmp.persist(path).map_err(|e| at(path, e.error))?;
    drop(registered);
    Ok(())
}

/// `path: error` for a file that did not load as a filter; for a Parquet file (which holds
/// Bloom filters of another format, per column chunk), the command that reads those.
fn load_error(path: &Path, e: blockbloom::Error) -> Box<dyn Error> {
    let mut magic = [0u8; 4];
    let parquet = matches!(e, blockbloom::Error::BadMagic)
        && File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && &magic == b"PAR1";
    if parquet {
        return format!(
            "{}: a Parquet file, not a blockbloom filter: its columns' Bloom filters answer \
             through `blockbloom parquet {} --column NAME VALUE...`",
            path.display(),
            path.display()
        )
        .into();
    }
    at(path, e)
}

/// Loads a filter file: exactly one filter, nothing after it.
pub fn load(path: &Path) -> Result<BloomFilter> {
    let mut r = open(path)?;
    let f = BloomFilter::read_from(&mut r).map_err(|e| load_error(path, e))?;
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

/// Loads a filter file of any kind: exactly one filter, nothing after it.
pub fn load_any(path: &Path) -> Result<AnyFilter> {
    let file = File::open(path).map_err(|e| at(path, e))?;
    let len = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    AnyFilter::read_exactly(BufReader::with_capacity(1 << 16, file), len)
        .map_err(|e| load_error(path, e))
}

/// Ok on a closed stdout (`query ... | head`), which ends the output early but is no error.
fn quiet_pipe(r: io::Result<()>) -> Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| at(Path::new("<stdout>"), e)),
    }
}

/// A key given as an argument, as `--key-type` reads it.
fn key_arg(key_type: KeyType, bytes: &[u8]) -> Result<KeyForm<'_>> {
    key_type
        .key(bytes)
        .map_err(|e| format!("key {:?}: {e}", String::from_utf8_lossy(bytes)).into())
}

pub fn query(args: QueryArgs) -> Result<()> {
    let f = load_any(&args.filter)?;
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    // The lines printed: possible members by default, certain non-members with --absent.
    let wanted = !args.absent;
    if !args.keys.is_empty() {
        let r = (|| -> Result<()> {
            for k in &args.keys {
                let bytes = k.as_encoded_bytes();
                let maybe = f.contains_key(key_arg(args.key_type, bytes)?);
                if args.absent {
                    if !maybe {
                        out.write_all(bytes)?;
                        out.write_all(b"\n")?;
                    }
                    continue;
                }
                out.write_all(bytes)?;
                let answer = if maybe { "\tmaybe\n" } else { "\tno\n" };
                out.write_all(answer.as_bytes())?;
            }
            Ok(out.flush()?)
        })();
        return match r {
            Err(e) => match e.downcast::<io::Error>() {
                Ok(io) => quiet_pipe(Err(*io)),
                Err(e) => Err(e),
            },
            Ok(()) => Ok(()),
        };
    }
    // Prefilter: batches of lines (kept with their terminators), hashed together and answered
    // with one batch call.
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut text: Vec<u8> = Vec::with_capacity(BATCH * 64);
    let mut ends: Vec<usize> = Vec::with_capacity(BATCH);
    let mut hashes: Vec<u64> = Vec::with_capacity(BATCH);
    let mut answers = vec![false; BATCH];
    let mut eof = false;
    let mut line = 0u64;
    while !eof {
        text.clear();
        ends.clear();
        hashes.clear();
        while ends.len() < BATCH {
            let start = text.len();
            let n =
                read_line(&mut input, &mut text, line + 1).map_err(|e| at(Path::new(STDIN), e))?;
            if n == 0 {
                eof = true;
                break;
            }
            line += 1;
            let key = args
                .key_type
                .key(strip_newline(&text[start..]))
                .map_err(|e| at(Path::new(STDIN), line_error(line, e)))?;
            hashes.push(f.hash_key(key));
            ends.push(text.len());
        }
        f.contains_hash_batch(&hashes, &mut answers[..hashes.len()]);
        let r = (|| {
            let mut start = 0;
            for (&end, &maybe) in ends.iter().zip(&answers) {
                if maybe == wanted {
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
    let f = load_any(&args.filter)?;
    let file_bytes = std::fs::metadata(&args.filter)
        .map_err(|e| at(&args.filter, e))?
        .len();
    let mut rows: Vec<(String, String)> = vec![
        ("file".into(), args.filter.display().to_string()),
        ("kind".into(), f.kind_name().to_string()),
        (
            "hash".into(),
            format!("{} (hash id {})", f.key_hash(), f.key_hash().id()),
        ),
        // The only version the decoders accept.
        ("version".into(), blockbloom::format::VERSION.to_string()),
    ];
    if !matches!(f, AnyFilter::Plain(_)) {
        rows.push(("file bytes".into(), file_bytes.to_string()));
    }
    rows.extend(f.info_rows(file_bytes));
    if let AnyFilter::Plain(p) = &f {
        // A filter read from a file grows as its bytes arrive: the room each growth adds is
        // advised before it is written, the rest afterwards (the kernel moves that part later,
        // if at all), so this may show part of the array.
        let thp = blockbloom::memory::transparent_huge_pages().unwrap_or("unknown");
        let huge = p
            .huge_page_bytes()
            .map_or("unknown".to_string(), |b| b.to_string());
        rows.push((
            "huge pages".into(),
            format!(
                "{huge} of {} bytes (system setting: {thp})",
                p.size_in_bytes()
            ),
        ));
        let depth = match p.prefetch_depth() {
            0 => "none (fits in L2)".to_string(),
            d => format!("{d} keys ahead"),
        };
        rows.push((
            "prefetch".into(),
            format!("{depth}; chosen by size for the {} tier", p.isa()),
        ));
    }
    let mut out = io::stdout().lock();
    let r = rows
        .iter()
        .try_for_each(|(k, v)| writeln!(out, "{k:<13} {v}"));
    quiet_pipe(r)
}

pub fn merge(args: MergeArgs) -> Result<()> {
    let inputs: Vec<Source> = args.inputs.iter().map(|p| Source::File(p)).collect();
    refuse_input_as_output(&args.output, &inputs)?;
    let (first, rest) = args.inputs.split_first().expect("clap requires two inputs");
    let mut f = load(first)?;
    for p in rest {
        let g = load(p)?;
        f.union(&g).map_err(|e| at(p, e))?;
    }
    // The union keeps the first input's header: its target is the one the output records.
    if let Some(target) = f.target_fpr() {
        let expected = f.expected_fpr();
        if expected > 2.0 * target {
            eprintln!(
                "warning: the merged filter's expected false-positive rate is {expected:.3e}, \
                 over twice the target {target} its inputs were built for (it holds about {:.0} \
                 keys and was sized for {}): build every shard with --capacity set to the \
                 total key count of all shards (and the same --fpr and --seed), then merge",
                f.estimated_len(),
                f.capacity()
            );
        }
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

/// What `build --hash` takes: the name of every hash this build of the library knows
/// ([`KeyHash::ALL`]), so that a new hash needs no change here.
fn key_hash_names() -> PossibleValuesParser {
    PossibleValuesParser::new(KeyHash::ALL.map(KeyHash::name))
}
