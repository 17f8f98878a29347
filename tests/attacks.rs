//! Crafted keys against a filter with the default, public seed, and the keyed defence
//! (`Builder::keyed`). Anyone who knows the crate can compute where a key lands when the seed
//! is 0, so two attacks work: making a chosen victim key a false positive with a handful of
//! keys aimed at its block, and polluting the filter with keys chosen to set the most new
//! bits. On a keyed filter the same keys land at random and do nothing special.

mod common;

use blockbloom::layout::{Block, block_index, pattern_scalar};
use blockbloom::{BloomFilter, KeyForm, KeyHash};
use common::{SplitMix64, keys_in};

/// The attacker's view of a filter: its shape is public (it is in every file header) and so
/// is the default seed.
struct Shape {
    num_blocks: u64,
    layout: blockbloom::layout::Layout,
    probes: usize,
    hash: KeyHash,
    seed: u64,
}

impl Shape {
    fn of(f: &BloomFilter, seed: u64) -> Shape {
        Shape {
            num_blocks: f.num_blocks(),
            layout: f.layout(),
            probes: f.probes() as usize,
            hash: f.key_hash(),
            seed,
        }
    }

    fn place(&self, key: u64) -> (usize, Block) {
        let h = KeyForm::U64(key).hash_with(self.hash, self.seed);
        (
            block_index(h, self.num_blocks),
            pattern_scalar(self.layout, h as u32, self.probes),
        )
    }
}

fn new_bits(block: &Block, pattern: &Block) -> u32 {
    block
        .0
        .iter()
        .zip(&pattern.0)
        .map(|(b, p)| (p & !b).count_ones())
        .sum()
}

/// Keys that, inserted into an empty filter of `shape`, cover every bit of `victim`'s
/// pattern: each lands in the victim's block and sets at least one bit it still lacks.
fn aim_at(shape: &Shape, victim: u64, candidates: &mut impl Iterator<Item = u64>) -> Vec<u64> {
    let (target, pattern) = shape.place(victim);
    let mut covered = Block::ZERO;
    let mut chosen = Vec::new();
    while new_bits(&covered, &pattern) > 0 {
        let key = candidates.next().expect("candidates run out");
        let (i, p) = shape.place(key);
        if i != target || key == victim {
            continue;
        }
        let mut hits = Block::ZERO;
        for w in 0..8 {
            hits.0[w] = p.0[w] & pattern.0[w];
        }
        if new_bits(&covered, &hits) > 0 {
            for w in 0..8 {
                covered.0[w] |= hits.0[w];
            }
            chosen.push(key);
        }
    }
    chosen
}

fn filter(seed_or_keyed: Option<u64>) -> BloomFilter {
    let b = BloomFilter::builder().capacity(20_000).fpr(0.01);
    match seed_or_keyed {
        Some(seed) => b.seed(seed),
        None => b.keyed(),
    }
    .build()
    .unwrap()
}

#[test]
fn a_chosen_key_becomes_a_false_positive_unless_the_filter_is_keyed() {
    let victims: Vec<u64> = keys_in(11, 0..20);
    let mut candidates = SplitMix64::new(12).map(|k| k | 1 << 63);
    let mut public_hits = 0;
    let mut keyed_hits = 0;
    let mut inserted = 0;
    for &victim in &victims {
        let mut public = filter(Some(0));
        let crafted = aim_at(&Shape::of(&public, 0), victim, &mut candidates);
        inserted += crafted.len();
        assert!(!public.contains(&victim));
        public.insert_batch(&crafted);
        public_hits += public.contains(&victim) as usize;

        let mut keyed = filter(None);
        keyed.insert_batch(&crafted);
        keyed_hits += keyed.contains(&victim) as usize;
    }
    println!(
        "{} victims: {public_hits} made false positives with {inserted} crafted keys in all on \
         seed 0; {keyed_hits} on keyed filters",
        victims.len()
    );
    assert_eq!(public_hits, victims.len(), "the attack works on seed 0");
    assert!(
        inserted <= victims.len() * 8,
        "at most one key per probe bit"
    );
    // A keyed filter holding at most 160 keys of its 20,000 answers a fixed key wrongly
    // with probability far below 1e-6.
    assert_eq!(
        keyed_hits, 0,
        "the crafted keys do nothing special when keyed"
    );
}

/// The false-positive rate measured with 200,000 keys never inserted.
fn measured_fpr(f: &BloomFilter) -> f64 {
    let probes: Vec<u64> = keys_in(13, 0..200_000)
        .into_iter()
        .map(|k| k & !(1 << 63))
        .collect();
    f.count_batch(&probes) as f64 / probes.len() as f64
}

#[test]
fn pollution_fills_a_public_filter_fast_but_not_a_keyed_one() {
    // The attacker inserts as many keys as the filter was sized for, each the best of 64
    // candidates at setting new bits in a filter whose layout and seed it knows.
    let n = 20_000;
    let mut public = filter(Some(0));
    let shape = Shape::of(&public, 0);
    let mut shadow = vec![Block::ZERO; shape.num_blocks as usize];
    let mut candidates = SplitMix64::new(14).map(|k| k | 1 << 63);
    let mut crafted = Vec::with_capacity(n);
    for _ in 0..n {
        let (key, i, p) = (0..64)
            .map(|_| {
                let key = candidates.next().unwrap();
                let (i, p) = shape.place(key);
                (key, i, p)
            })
            .max_by_key(|(_, i, p)| new_bits(&shadow[*i], p))
            .unwrap();
        for w in 0..8 {
            shadow[i].0[w] |= p.0[w];
        }
        crafted.push(key);
    }
    public.insert_batch(&crafted);

    let mut honest = filter(Some(0));
    honest.insert_batch(&keys_in(15, 0..n as u64));
    let mut keyed = filter(None);
    keyed.insert_batch(&crafted);

    let (p_public, p_honest, p_keyed) = (
        measured_fpr(&public),
        measured_fpr(&honest),
        measured_fpr(&keyed),
    );
    println!(
        "after {n} keys: honest keys {p_honest:.4}, crafted keys {p_public:.4} on seed 0, \
         {p_keyed:.4} keyed"
    );
    assert!(
        p_honest < 0.015,
        "the filter meets its target with honest keys"
    );
    assert!(
        p_public > 3.0 * p_honest,
        "pollution works on seed 0: {p_public} vs {p_honest}"
    );
    assert!(
        p_keyed < 1.5 * p_honest.max(0.005),
        "crafted keys are ordinary keys to a keyed filter: {p_keyed} vs {p_honest}"
    );
}

#[test]
fn keyed_filters_persist_and_answer_the_same_after_loading() {
    let mut f = filter(None);
    assert_ne!(
        f.seed(),
        filter(None).seed(),
        "every filter draws its own seed"
    );
    f.insert_batch(&[1u64, 2, 3]);
    // String keys on the default hash (id 3: AESH-64 for these strings, its round keys from
    // the drawn seed), through the batch and the single-key path.
    let strs = ["alpha", "a key of more than sixteen bytes", "2001:db8::1"];
    f.insert_batch(&strs);
    f.insert("beta");
    assert_eq!(f.key_hash(), KeyHash::Mx32);
    let public = filter(Some(0));
    assert_ne!(
        f.hash("alpha"),
        public.hash("alpha"),
        "the seed keys AESH-64"
    );
    let g = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.seed(), f.seed());
    assert_eq!((g.key_hash(), &g), (KeyHash::Mx32, &f));
    assert!(g.contains(&2u64) && g.contains("beta"));
    assert_eq!(g.count_batch(&strs), strs.len());
}
