//! `reliability`: the crate tried as a hostile user and a careless operator would, with the
//! outcome of each trial, written as markdown into `perf-reports/reliability.md`:
//!
//! * **mutated inputs**: valid encodings of every kind with bytes flipped, cut, extended or
//!   overwritten (deterministic seeds), through every decoder: the count of decodes that
//!   panicked must be 0;
//! * **crafted headers**: headers claiming 2^32..2^64 blocks or bodies, for every kind:
//!   typed errors, and no allocation beyond what the input justifies (the test binary checks
//!   the latter; here, that they return at once);
//! * **faults**: a writer that fails after N bytes and a reader that fails after N bytes, for
//!   every kind: a typed `Io` error each time, and the filter untouched;
//! * **concurrency**: writers and readers on one atomic filter, every tier: keys lost.
//!
//! * **fuzzing** (with `--fuzz-seconds N`): every cargo-fuzz target (`fuzz/`) for N seconds,
//!   with the executions libFuzzer reports and the crashes (must be 0).
//!
//! Miri (`tests/unsafe_paths.rs`, run by `.ci/run`) goes further; without fuzzing this report
//! is what the library itself can show in a few seconds.

mod fuzzing;

use std::error::Error;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use blockbloom::{
    AtomicBloomFilter, BloomFilter, BloomierFilter, CountingBloomFilter, DeletableBloomFilter, Isa,
    ScalableBloomFilter,
};
use blockbloom_measure::format::group;
use blockbloom_measure::keys::{GAMMA, mix};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::system::Context;
use blockbloom_measure::table::Table;

/// Writes a filter's encoding to a writer.
type WriteTo = Box<dyn Fn(&mut dyn Write) -> Result<(), blockbloom::Error>>;

/// One kind's encoding, its writer and its decoders.
struct Kind {
    name: &'static str,
    bytes: Vec<u8>,
    write_to: WriteTo,
    from_bytes: fn(&[u8]) -> bool,
    read_from: fn(&mut dyn Read) -> bool,
}

fn kinds() -> Result<Vec<Kind>, Box<dyn Error>> {
    let keys: Vec<u64> = (0..2000).collect();
    let mut plain = BloomFilter::with_capacity(2000, 0.01)?;
    plain.insert_batch(&keys);
    let mut counting = CountingBloomFilter::with_capacity(2000, 0.01)?;
    counting.insert_batch(&keys);
    let mut deletable = DeletableBloomFilter::with_capacity(2000, 0.01)?;
    deletable.insert_batch(&keys);
    let mut scalable = ScalableBloomFilter::new(500, 0.01)?;
    scalable.insert_batch(&keys)?;
    let pairs: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k & 0xff)).collect();
    let bloomier = BloomierFilter::build(&pairs, 8, 8)?;
    Ok(vec![
        Kind {
            name: "plain",
            bytes: plain.to_bytes(),
            write_to: {
                let f = plain.clone();
                Box::new(move |w| f.write_to(w))
            },
            from_bytes: |b| BloomFilter::from_bytes(b).is_ok(),
            read_from: |r| BloomFilter::read_from(r).is_ok(),
        },
        Kind {
            name: "counting",
            bytes: counting.to_bytes(),
            write_to: Box::new(move |w| counting.write_to(w)),
            from_bytes: |b| CountingBloomFilter::from_bytes(b).is_ok(),
            read_from: |r| CountingBloomFilter::read_from(r).is_ok(),
        },
        Kind {
            name: "deletable",
            bytes: deletable.to_bytes(),
            write_to: Box::new(move |w| deletable.write_to(w)),
            from_bytes: |b| DeletableBloomFilter::from_bytes(b).is_ok(),
            read_from: |r| DeletableBloomFilter::read_from(r).is_ok(),
        },
        Kind {
            name: "scalable",
            bytes: scalable.to_bytes(),
            write_to: Box::new(move |w| scalable.write_to(w)),
            from_bytes: |b| ScalableBloomFilter::from_bytes(b).is_ok(),
            read_from: |r| ScalableBloomFilter::read_from(r).is_ok(),
        },
        Kind {
            name: "Bloomier",
            bytes: bloomier.to_bytes(),
            write_to: Box::new(move |w| bloomier.write_to(w)),
            from_bytes: |b| BloomierFilter::from_bytes(b).is_ok(),
            read_from: |r| BloomierFilter::read_from(r).is_ok(),
        },
        Kind {
            name: "compressed",
            bytes: plain.to_compressed_bytes()?,
            write_to: {
                let wire = plain.to_compressed_bytes()?;
                Box::new(move |w| w.write_all(&wire).map_err(blockbloom::Error::from))
            },
            from_bytes: |b| BloomFilter::from_compressed_bytes_limited(b, 1 << 24).is_ok(),
            read_from: |r| {
                let mut v = Vec::new();
                r.read_to_end(&mut v).is_ok()
                    && BloomFilter::from_compressed_bytes_limited(&v, 1 << 24).is_ok()
            },
        },
    ])
}

/// SplitMix64 (the measurement crate's mixer), for deterministic mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `good`: flip bits, overwrite bytes, cut, extend, or edit the header.
fn mutate(good: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = good.to_vec();
    match rng.below(5) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let i = rng.below(b.len());
            let n = (1 + rng.below(16)).min(b.len() - i);
            for x in &mut b[i..i + n] {
                *x = rng.next() as u8;
            }
        }
        2 => b.truncate(rng.below(b.len())),
        3 => b.extend((0..1 + rng.below(64)).map(|_| rng.next() as u8)),
        _ => {
            // The header: one of its u64 fields set to an extreme.
            let field = 8 * (1 + rng.below(7));
            let v = [u64::MAX, 1 << 32, (1 << 32) + 1, 0, 1 << 63][rng.below(5)];
            b[field..field + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    b
}

/// Calls `f`, turning a panic into `None` (and silencing its message).
fn no_panic<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// Mutated inputs and crafted headers, per kind: (trials, decoded, typed errors, panics).
fn decoding(kinds: &[Kind], per_kind: usize) -> Table {
    let mut t = Table::new([
        "kind",
        "mutated inputs",
        "still valid",
        "typed errors",
        "panics",
        "crafted headers",
        "crafted: panics",
    ]);
    for (k, kind) in kinds.iter().enumerate() {
        let mut rng = Rng(0x5eed + k as u64);
        let (mut ok, mut err, mut panics) = (0u64, 0u64, 0u64);
        for i in 0..per_kind {
            let bad = mutate(&kind.bytes, &mut rng);
            let outcome = if i % 2 == 0 {
                no_panic(|| (kind.from_bytes)(&bad))
            } else {
                no_panic(|| (kind.read_from)(&mut &bad[..]))
            };
            match outcome {
                Some(true) => ok += 1,
                Some(false) => err += 1,
                None => panics += 1,
            }
        }
        // Crafted: every u64 field of the header at every extreme, as the whole input and
        // followed by the real body.
        let (mut crafted, mut crafted_panics) = (0u64, 0u64);
        for field in (8..64).step_by(8) {
            for v in [u64::MAX, u64::MAX / 64, 1 << 32, (1 << 32) + 1, 1 << 40, 0] {
                let mut b = kind.bytes.clone();
                b[field..field + 8].copy_from_slice(&v.to_le_bytes());
                for input in [&b[..64], &b[..]] {
                    crafted += 2;
                    if no_panic(|| (kind.from_bytes)(input)).is_none() {
                        crafted_panics += 1;
                    }
                    if no_panic(|| (kind.read_from)(&mut &input[..])).is_none() {
                        crafted_panics += 1;
                    }
                }
            }
        }
        t.row(vec![
            kind.name.to_string(),
            group(per_kind as u64),
            group(ok),
            group(err),
            group(panics),
            group(crafted),
            group(crafted_panics),
        ]);
    }
    t
}

/// A writer that fails after `left` bytes, as a full disk does.
struct FailingWriter {
    left: usize,
}

impl Write for FailingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "injected: disk full",
            ));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A reader that fails after `left` bytes, as a broken connection does.
struct FailingReader<'a> {
    data: &'a [u8],
    left: usize,
}

impl Read for FailingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "injected: connection reset",
            ));
        }
        let n = buf.len().min(self.left).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.left -= n;
        Ok(n)
    }
}

/// Writes and reads that fail after N bytes, for every N at a stride: (faults, typed errors,
/// silent successes, panics).
fn faults(kinds: &[Kind]) -> Table {
    let mut t = Table::new([
        "kind",
        "failing writes",
        "typed Io errors",
        "failing reads",
        "typed errors",
        "panics",
    ]);
    for kind in kinds {
        let len = kind.bytes.len();
        let stride = (len / 97).max(1);
        let (mut writes, mut write_errors, mut panics) = (0u64, 0u64, 0u64);
        for left in (0..len).step_by(stride) {
            writes += 1;
            match no_panic(|| (kind.write_to)(&mut FailingWriter { left })) {
                Some(Err(blockbloom::Error::Io { .. })) => write_errors += 1,
                Some(_) => {}
                None => panics += 1,
            }
        }
        let (mut reads, mut read_errors) = (0u64, 0u64);
        for left in (0..len).step_by(stride) {
            reads += 1;
            let mut r = FailingReader {
                data: &kind.bytes,
                left,
            };
            match no_panic(|| (kind.read_from)(&mut r)) {
                Some(false) => read_errors += 1,
                Some(true) => {}
                None => panics += 1,
            }
        }
        t.row(vec![
            kind.name.to_string(),
            if writes > 0 {
                group(writes)
            } else {
                "-".into()
            },
            if writes > 0 {
                group(write_errors)
            } else {
                "-".into()
            },
            group(reads),
            group(read_errors),
            group(panics),
        ]);
    }
    t
}

/// Writers and readers on one atomic filter per tier: every key inserted before a reader's
/// check must be found.
fn concurrency(writers: usize, keys_per_writer: u64) -> Result<Table, Box<dyn Error>> {
    let mut t = Table::new([
        "tier",
        "writers",
        "readers",
        "keys",
        "reader checks",
        "keys lost",
    ]);
    for isa in Isa::supported() {
        let total = writers as u64 * keys_per_writer;
        let f: AtomicBloomFilter = BloomFilter::builder()
            .capacity(total)
            .isa(isa)
            .build_atomic()?;
        let done = AtomicBool::new(false);
        let (lost, checks) = std::thread::scope(|s| {
            let mut handles = Vec::new();
            for w in 0..writers as u64 {
                let f = &f;
                s.spawn(move || {
                    let keys: Vec<u64> = (w * keys_per_writer..(w + 1) * keys_per_writer).collect();
                    for chunk in keys.chunks(1024) {
                        f.insert_batch(chunk);
                    }
                });
            }
            for r in 0..2u64 {
                let (f, done) = (&f, &done);
                handles.push(s.spawn(move || {
                    // Each reader inserts its own keys, then must find them (its own writes
                    // happen-before its reads), while the writers go on.
                    let mine: Vec<u64> =
                        (0..20_000).map(|i| u64::MAX - r * 1_000_000 - i).collect();
                    let (mut lost, mut checks) = (0u64, 0u64);
                    while !done.load(Ordering::Relaxed) || checks == 0 {
                        f.insert_batch(&mine);
                        let found = f.count_batch(&mine);
                        lost += (mine.len() - found) as u64;
                        checks += mine.len() as u64;
                        if checks > 2_000_000 {
                            break;
                        }
                    }
                    (lost, checks)
                }));
            }
            let results: Vec<(u64, u64)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            done.store(true, Ordering::Relaxed);
            results
                .iter()
                .fold((0, 0), |(l, c), &(l2, c2)| (l + l2, c + c2))
        });
        let all: Vec<u64> = (0..total).collect();
        let lost_writes = total - f.count_batch(&all) as u64;
        t.row(vec![
            isa.name().to_string(),
            writers.to_string(),
            "2".to_string(),
            group(total),
            group(checks),
            group(lost + lost_writes),
        ]);
    }
    Ok(t)
}

/// Runs every section and writes the report; returns its path and the tables as JSON.
pub fn command(
    ctx: &Context,
    quick: bool,
    fuzz_seconds: u64,
    out: &Path,
) -> Result<(PathBuf, serde_json::Value), Box<dyn Error>> {
    let progress = Progress::new();
    // The trials expect panics to be impossible; if one happens it is counted, not printed.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let kinds = kinds()?;
    let per_kind = if quick { 2_000 } else { 50_000 };
    progress.step("mutated inputs and crafted headers");
    let decoding = decoding(&kinds, per_kind);
    progress.step("faults");
    let faults = faults(&kinds);
    progress.step("concurrency");
    let concurrency = concurrency(
        if quick { 4 } else { 16 },
        if quick { 20_000 } else { 200_000 },
    );
    std::panic::set_hook(hook);
    let concurrency = concurrency?;
    let fuzzed = if fuzz_seconds == 0 {
        Err("not run (`--fuzz-seconds N` runs each target for N seconds)".to_string())
    } else {
        progress.step(format!("fuzzing, {fuzz_seconds} s per target"));
        fuzzing::run(fuzz_seconds, |target| progress.step(target))
    };

    let mut text = String::new();
    let _ = writeln!(text, "# blockbloom: reliability\n");
    for (k, v) in ctx.facts() {
        let _ = writeln!(text, "- {k}: {v}");
    }
    if quick {
        let _ = writeln!(text, "\nThis is a `--quick` report: fewer trials.");
    }
    let _ = writeln!(
        text,
        "\n## Mutated inputs and crafted headers\n\nValid encodings of each kind with bits \
         flipped, bytes overwritten, cut or extended, or a header field set to an extreme \
         (seeded), decoded alternately from bytes and from a reader; then every u64 header \
         field at 2^64-1, 2^58, 2^32, 2^32+1, 2^40 and 0, alone and before the real body. A \
         mutation can leave an input valid: bytes after a filter are not the reader's (it reads exactly one filter), and some header fields are informational; a flipped bit the checksum covers never is. \
         The panics columns must read 0.\n\n{}",
        decoding.markdown()
    );
    let _ = writeln!(
        text,
        "\n## Faults\n\nA writer that fails after N bytes (as a full disk does) and a reader \
         that fails after N bytes (as a broken connection does), for N from 0 to the \
         encoding's length at about 100 points. Every failing write must be a typed `Io` \
         error and every failing read an error.\n\n{}",
        faults.markdown()
    );
    let _ = writeln!(
        text,
        "\n## Concurrency\n\nWriters insert disjoint key ranges into one `AtomicBloomFilter` \
         while two readers insert and query their own keys over and over; afterwards every \
         writer's key is checked. Keys lost must be 0.\n\n{}",
        concurrency.markdown()
    );
    let _ = writeln!(
        text,
        "\n## Fuzzing\n\nEach cargo-fuzz target (`fuzz/fuzz_targets/`) from the corpus kept in \
         `fuzz/corpus/` and the seeds, for a fixed time (`.ci/run` runs the same targets for \
         45 s each). The decoders' targets also require `from_bytes` and `read_from` to \
         agree and an accepted input to re-encode to the same bytes; `differential` compares \
         every tier's batch answers with the scalar reference. Crashes must be 0.\n\n{}",
        match &fuzzed {
            Ok(t) => t.markdown(),
            Err(why) => format!("Fuzzing: {why}.\n"),
        }
    );
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = out.join("reliability.md");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    progress.step("done");
    let tables = serde_json::json!({
        "mutated_inputs": decoding.json(),
        "faults": faults.json(),
        "concurrency": concurrency.json(),
        "fuzzing": match &fuzzed {
            Ok(t) => t.json(),
            Err(why) => serde_json::json!({"not_run": why}),
        },
    });
    Ok((path, tables))
}
