//! Arbitrary bytes into every decoder: `BloomFilter::from_bytes`, `BloomFilter::read_from`
//! (whole and trickled), `FilterRef::from_bytes` (aligned and not). Each returns `Ok` or a
//! typed error, never panics, and they agree; an `Ok` re-encodes to the same bytes.
//! Seeds: `fuzz/seeds/decode_bytes/` (valid filters of both layouts).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let step = data.first().map_or(1, |&b| b as usize % 97 + 1);
    let _ = blockbloom_fuzz::check_decoders(data, step);
});
