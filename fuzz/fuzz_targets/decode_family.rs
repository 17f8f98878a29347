//! Arbitrary bytes into the decoders of the format family's other kinds (counting, deletable,
//! scalable, compressed transfer form, Bloomier, classic), with `blockbloom_fuzz::check_family`. The first byte is a
//! control byte: bit 0 recomputes the envelope's checksum over the rest first, so that mutated
//! fields and bodies get past it into each kind's own validation. Seeds:
//! `fuzz/seeds/decode_family/` (the golden files behind a control byte).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if control & 1 == 1 {
        blockbloom_fuzz::fix_checksum(&mut bytes);
    }
    blockbloom_fuzz::check_family(&bytes, usize::from(control >> 1) + 1);
});
