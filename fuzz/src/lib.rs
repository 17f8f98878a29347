//! Shared checks of the fuzz targets: every decoder of the persisted format run on the same
//! bytes, with the properties they must share.

use std::io::{self, Read};

use blockbloom::{Block, BloomFilter, Error, FilterRef};

/// `bytes` copied into a buffer whose start is 64-byte aligned (as a memory map's is), at
/// `offset` bytes past an aligned address.
pub struct Aligned {
    blocks: Vec<Block>,
    offset: usize,
    len: usize,
}

impl Aligned {
    pub fn new(bytes: &[u8], offset: usize) -> Aligned {
        let n = (bytes.len() + offset).div_ceil(64);
        let mut a = Aligned {
            blocks: vec![Block([0; 8]); n],
            offset,
            len: bytes.len(),
        };
        a.all_mut()[offset..offset + bytes.len()].copy_from_slice(bytes);
        a
    }

    fn all_mut(&mut self) -> &mut [u8] {
        let len = self.blocks.len() * 64;
        // SAFETY: `Block` is 64 bytes of plain `u64`s; any byte pattern is valid, and the
        // slice borrows the vector mutably for its lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), len) }
    }

    pub fn bytes(&self) -> &[u8] {
        let len = self.blocks.len() * 64;
        // SAFETY: as in `all_mut`, shared.
        let all = unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), len) };
        &all[self.offset..self.offset + self.len]
    }
}

/// A reader that hands out at most `step` bytes per call and fails every third call with
/// `Interrupted`, which `read_from` must retry.
pub struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    calls: usize,
}

impl<'a> Trickle<'a> {
    pub fn new(data: &'a [u8], step: usize) -> Trickle<'a> {
        Trickle {
            data,
            step: step.max(1),
            calls: 0,
        }
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Hashes to probe decoded filters and views with.
const PROBES: [u64; 8] = [
    0,
    1,
    u64::MAX,
    0x0123_4567_89ab_cdef,
    0xdead_beef_0000_0001,
    0x8000_0000_0000_0000,
    0x0000_0000_ffff_ffff,
    0x9e37_79b9_7f4a_7c15,
];

/// Runs every decoder on `bytes` and checks that they agree:
///
/// * `BloomFilter::from_bytes`: `Ok` re-encodes to exactly `bytes`;
/// * `BloomFilter::read_from` (from a slice, and from a reader trickling `step` bytes at a
///   time with interruptions): the same result, except that bytes after a valid filter are
///   left unread rather than an error (then it decodes the filter before them);
/// * `FilterRef::from_bytes` on an aligned copy: the same result, and the same answers;
///   on a misaligned copy: the same error, or `Misaligned` where the others succeed.
///
/// None of them may panic. Returns `from_bytes`'s result.
pub fn check_decoders(bytes: &[u8], step: usize) -> Result<BloomFilter, Error> {
    let owned = BloomFilter::from_bytes(bytes);
    if let Ok(f) = &owned {
        assert_eq!(
            f.to_bytes(),
            bytes,
            "from_bytes then to_bytes changed the bytes"
        );
        assert_eq!(f.encoded_len(), bytes.len());
    }

    for read in [
        BloomFilter::read_from(bytes),
        BloomFilter::read_from(Trickle::new(bytes, step)),
    ] {
        match (&owned, &read) {
            // `from_bytes` checks the size before the checksum; `read_from` reads only the
            // declared bytes, so it answers as `from_bytes` does on those.
            (Err(Error::TrailingBytes { expected, .. }), _) => {
                let n = usize::try_from(*expected).unwrap();
                match (BloomFilter::from_bytes(&bytes[..n]), read) {
                    (Ok(f), Ok(g)) => {
                        assert_eq!(f, g);
                        assert_eq!(
                            g.to_bytes(),
                            &bytes[..n],
                            "read_from re-encodes differently"
                        );
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b, "from_bytes and read_from disagree"),
                    (a, b) => panic!("from_bytes (prefix): {a:?}, read_from: {b:?}"),
                }
            }
            (Ok(f), Ok(g)) => assert_eq!(f, g),
            (Err(a), Err(b)) => assert_eq!(a, b, "from_bytes and read_from disagree"),
            (a, b) => panic!("from_bytes: {a:?}, read_from: {b:?}"),
        }
    }

    let aligned = Aligned::new(bytes, 0);
    match (&owned, FilterRef::from_bytes(aligned.bytes())) {
        (Ok(f), Ok(view)) => {
            let copy = view.to_filter();
            assert_eq!(&copy, f);
            assert_eq!(copy.to_bytes(), bytes);
            assert_eq!(
                (view.capacity(), view.target_fpr().map(f64::to_bits)),
                (f.capacity(), f.target_fpr().map(f64::to_bits))
            );
            let mut batch = [false; PROBES.len()];
            view.contains_hash_batch(&PROBES, &mut batch);
            for (h, b) in PROBES.iter().zip(batch) {
                assert_eq!(view.contains_hash(*h), f.contains_hash(*h));
                assert_eq!(b, f.contains_hash(*h), "view batch vs single answer");
            }
            let mut batch = [false; PROBES.len()];
            view.contains_batch(&PROBES, &mut batch);
            for (k, b) in PROBES.iter().zip(batch) {
                assert_eq!(b, f.contains(k));
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, &b, "from_bytes and FilterRef disagree"),
        (a, b) => panic!("from_bytes: {a:?}, FilterRef: {b:?}"),
    }

    let misaligned = Aligned::new(bytes, 8);
    match (&owned, FilterRef::from_bytes(misaligned.bytes())) {
        (Ok(_), Err(Error::Misaligned { .. })) => {}
        (Err(a), Err(b)) => assert_eq!(a, &b, "misaligned FilterRef: a different error"),
        (a, b) => panic!("from_bytes: {a:?}, misaligned FilterRef: {b:?}"),
    }
    owned
}

/// The format's checksum of `bytes` (header without its checksum field, then the blocks),
/// written into the checksum field; no-op for a buffer shorter than the header.
pub fn fix_checksum(bytes: &mut [u8]) {
    if bytes.len() < 64 {
        return;
    }
    let mut x = xxhash_rust::xxh3::Xxh3::new();
    x.update(&bytes[..48]);
    x.update(&bytes[56..]);
    let sum = x.digest();
    bytes[48..56].copy_from_slice(&sum.to_le_bytes());
}

/// One kind of the format family, as the fuzz targets drive it.
pub struct Kind<T> {
    pub name: &'static str,
    pub from_bytes: fn(&[u8]) -> Result<T, Error>,
    pub read_from: fn(&mut dyn Read) -> Result<T, Error>,
    pub to_bytes: fn(&T) -> Vec<u8>,
    /// Queries the decoded filter with `PROBES` (answers are not checked, only that nothing
    /// panics on whatever a valid header allows).
    pub query: fn(&T),
}

/// Runs one kind's decoders on `bytes` and checks that they agree, as `check_decoders` does
/// for the plain filter: `from_bytes` `Ok` re-encodes to exactly `bytes`; `read_from` (from a
/// slice and trickled) gives the same result, or, when `from_bytes` saw trailing bytes, the
/// result of `from_bytes` on the declared prefix. Nothing may panic.
pub fn check_kind<T: PartialEq + std::fmt::Debug>(kind: &Kind<T>, bytes: &[u8], step: usize) {
    let owned = (kind.from_bytes)(bytes);
    if let Ok(f) = &owned {
        assert_eq!(
            (kind.to_bytes)(f),
            bytes,
            "{}: re-encoding changed the bytes",
            kind.name
        );
        (kind.query)(f);
    }
    let mut slice = bytes;
    let mut trickle = Trickle::new(bytes, step);
    for read in [(kind.read_from)(&mut slice), (kind.read_from)(&mut trickle)] {
        match (&owned, read) {
            (Err(Error::TrailingBytes { expected, .. }), read) => {
                let n = usize::try_from(*expected).unwrap();
                match ((kind.from_bytes)(&bytes[..n]), read) {
                    (Ok(f), Ok(g)) => assert_eq!(f, g, "{}", kind.name),
                    (Err(a), Err(b)) => assert_eq!(a, b, "{}: decoders disagree", kind.name),
                    (a, b) => panic!("{}: from_bytes (prefix) {a:?}, read_from {b:?}", kind.name),
                }
            }
            (Ok(f), Ok(g)) => assert_eq!(f, &g, "{}", kind.name),
            (Err(a), Err(b)) => assert_eq!(a, &b, "{}: decoders disagree", kind.name),
            (a, b) => panic!("{}: from_bytes {a:?}, read_from {b:?}", kind.name),
        }
    }
}

/// Every decoder of the format family's other kinds on `bytes`.
pub fn check_family(bytes: &[u8], step: usize) {
    use blockbloom::{
        BloomierFilter, CountingBloomFilter, DeletableBloomFilter, ScalableBloomFilter,
    };

    check_kind(
        &Kind {
            name: "counting",
            from_bytes: CountingBloomFilter::from_bytes,
            read_from: |r| CountingBloomFilter::read_from(r),
            to_bytes: CountingBloomFilter::to_bytes,
            query: |f| {
                let mut out = [false; PROBES.len()];
                f.contains_hash_batch(&PROBES, &mut out);
                for (&h, b) in PROBES.iter().zip(out) {
                    assert_eq!(f.contains_hash(h), b, "counting: batch vs single");
                    let _ = f.estimate_count_hash(h);
                }
                assert_eq!(
                    f.to_bloom().count_hash_batch(&PROBES),
                    out.iter().filter(|&&b| b).count()
                );
            },
        },
        bytes,
        step,
    );
    check_kind(
        &Kind {
            name: "classic",
            from_bytes: blockbloom::ClassicBloomFilter::from_bytes,
            read_from: |r| blockbloom::ClassicBloomFilter::read_from(r),
            to_bytes: blockbloom::ClassicBloomFilter::to_bytes,
            query: |f| {
                let mut out = [false; PROBES.len()];
                f.contains_batch(&PROBES, &mut out);
                for (k, b) in PROBES.iter().zip(out) {
                    assert_eq!(f.contains(k), b, "classic: batch vs single");
                }
                // Halving and merging a decoded filter must never panic either.
                let mut g = f.clone();
                let _ = g.halve();
                let _ = g.union(f);
            },
        },
        bytes,
        step,
    );
    check_kind(
        &Kind {
            name: "bloomier",
            from_bytes: BloomierFilter::from_bytes,
            read_from: |r| BloomierFilter::read_from(r),
            to_bytes: BloomierFilter::to_bytes,
            query: |f| {
                let mut out = [None; PROBES.len()];
                f.get_hash_batch(&PROBES, &mut out);
                for (&h, v) in PROBES.iter().zip(out) {
                    assert_eq!(f.get_hash(h), v, "bloomier: batch vs single");
                }
            },
        },
        bytes,
        step,
    );
    check_kind(
        &Kind {
            name: "deletable",
            from_bytes: DeletableBloomFilter::from_bytes,
            read_from: |r| DeletableBloomFilter::read_from(r),
            to_bytes: DeletableBloomFilter::to_bytes,
            query: |f| {
                let mut out = [false; PROBES.len()];
                f.contains_batch(&PROBES, &mut out);
                for (k, b) in PROBES.iter().zip(out) {
                    assert_eq!(f.contains(k), b, "deletable: batch vs single");
                    let _ = f.is_deletable_hash(*k);
                }
                // Removing from a decoded filter must never panic either.
                let mut g = f.clone();
                let _ = g.remove_batch(&PROBES);
            },
        },
        bytes,
        step,
    );
    check_kind(
        &Kind {
            name: "scalable",
            from_bytes: ScalableBloomFilter::from_bytes,
            read_from: |r| ScalableBloomFilter::read_from(r),
            to_bytes: ScalableBloomFilter::to_bytes,
            query: |f| {
                let mut out = [false; PROBES.len()];
                f.contains_batch(&PROBES, &mut out);
                for (k, b) in PROBES.iter().zip(out) {
                    assert_eq!(f.contains(k), b, "scalable: batch vs single");
                }
                // A decoded filter keeps growing within its schedule (or says why not).
                let mut g = f.clone();
                let _ = g.insert_batch(&PROBES);
            },
        },
        bytes,
        step,
    );
    // The transfer form re-encodes through the codec, so only its decoded filter must survive
    // a second trip; the limit keeps a lying header from decompressing a huge filter.
    if let Ok(f) = BloomFilter::from_compressed_bytes_limited(bytes, 1 << 24) {
        let again = f
            .to_compressed_bytes()
            .expect("compressing a decoded filter");
        assert_eq!(BloomFilter::from_compressed_bytes(&again).as_ref(), Ok(&f));
    }
    if let Ok(f) = blockbloom::ClassicBloomFilter::from_compressed_bytes_limited(bytes, 1 << 24) {
        let again = f
            .to_compressed_bytes()
            .expect("compressing a decoded classic filter");
        assert_eq!(
            blockbloom::ClassicBloomFilter::from_compressed_bytes(&again).as_ref(),
            Ok(&f)
        );
    }
}
