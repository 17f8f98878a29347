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
