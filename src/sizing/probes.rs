// Which probe counts of a layout become the plan's candidates, and their bounds: the walk
// outward from the predicted count, and every count in turn for tiny filters.

use alloc::vec::Vec;

use super::{Candidate, Goal, ROUNDS_PREMIUM, fast};
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS};
// Named in doc comments only.
#[cfg(doc)]
use super::asymptotic_bits_per_key;

/// The probe count with the fewest blocks for a large filter (the mean model, no margin), by
/// the target rate: where the planner starts its walk over probe counts. Breakpoints found by
/// bisecting [`asymptotic_bits_per_key`]'s choice (the test `probe_table_matches_planner`
/// keeps them true); a filter's own best count may differ near them or when small, which
/// costs the walk a step, never the answer. `None` for units the table lacks.
pub(super) fn predicted_probes(layout: Layout, unit_bits: u32, fpr: f64) -> Option<u32> {
    // (rate at or above which the count holds, count), falling rates.
    let steps: &[(f64, u32)] = match (unit_bits, layout) {
        (1, Layout::Sectors8x64) => &[(1.5047e-4, 8), (1.1453e-8, 16), (0.0, 24)],
        (1, Layout::Sectors4x128) => &[
            (1.7302e-2, 4),
            (4.8087e-4, 8),
            (7.4608e-6, 12),
            (5.8373e-8, 16),
            (0.0, 20),
        ],
        (4, Layout::Sectors8x64) => &[(1.4951e-5, 8), (0.0, 16)],
        (4, Layout::Sectors4x128) => &[(1.2064e-2, 4), (9.2986e-5, 8), (2.1710e-7, 12), (0.0, 16)],
        (8, Layout::Sectors8x64) => &[(1.7227e-6, 8), (0.0, 16)],
        (8, Layout::Sectors4x128) => &[(7.4529e-3, 4), (1.7154e-5, 8), (1.5686e-8, 12), (0.0, 16)],
        _ => return None,
    };
    steps.iter().find(|s| fpr >= s.0).map(|s| s.1)
}

/// The bounds of the probe count above `previous` in one layout, or `None` if it needs more
/// blocks than `previous` (then so do all higher counts).
fn up_bounds(
    keys: u64,
    goal: Goal,
    shape: &fast::Shape,
    guess: f64,
    previous: &mut Candidate,
) -> Option<fast::Bounds> {
    // A count's guess is within about 11% of its root where measured (the closed form
    // scaled by the last root found). Well below the previous count's lower end, the root most
    // likely is too, and a search from the guess settles it in one evaluation as a rule
    // (Newton's step from there is short): on the plateaus of tiny filters, where every count
    // needs the same few blocks, an evaluation at the previous count's blocks and one near
    // the root took two.
    let lo = previous.bounds.lo;
    if guess >= 2.0 && guess * 1.12 < lo as f64 {
        let b = shape.bound_at(keys, goal, guess);
        // Against the previous count's bounds, then its exact count.
        if b.lo > previous.bounds.hi {
            return None;
        }
        if b.hi <= lo {
            return Some(b);
        }
        return against_exact(keys, goal, shape, b, previous, &[]);
    }
    // Else one evaluation at the previous count's lower end usually tells whether this count
    // needs more blocks (a probe a little above the guess first, kept before the search from
    // the guess, cost an evaluation more than it saved).
    let hi = previous.bounds.hi;
    match shape.probe(keys, goal, lo) {
        fast::Probe::Meets(e) => Some(shape.bound_from(keys, goal, lo, e, lo)),
        fast::Probe::Fails if hi == lo => None,
        // Failing at the top of the previous bounds too: more blocks than the previous
        // count, whatever its exact count (one evaluation instead of narrowing it).
        fast::Probe::Fails => match shape.probe(keys, goal, hi) {
            fast::Probe::Fails => None,
            at_hi => within_exact(
                keys,
                goal,
                shape,
                previous,
                &[(lo, fast::Probe::Fails), (hi, at_hi)],
            ),
        },
        at_lo => within_exact(keys, goal, shape, previous, &[(lo, at_lo)]),
    }
}

/// This count's bounds `b` against the previous count's exact blocks: `None` if it needs more.
/// `probes` (block count, probe) of this count already made are not made again.
fn against_exact(
    keys: u64,
    goal: Goal,
    shape: &fast::Shape,
    b: fast::Bounds,
    previous: &mut Candidate,
    probes: &[(u64, fast::Probe)],
) -> Option<fast::Bounds> {
    let p = previous.exact(keys, goal);
    if b.lo > p {
        return None;
    }
    if b.hi <= p {
        return Some(b);
    }
    shape
        .meets_probed(keys, p, goal, probe_at(probes, p))
        .then(|| b.meeting_at(p))
}

/// The probe among `probes` made at `blocks`, if any.
fn probe_at(probes: &[(u64, fast::Probe)], blocks: u64) -> Option<fast::Probe> {
    probes.iter().find(|(t, _)| *t == blocks).map(|&(_, p)| p)
}

/// [`up_bounds`] past the predicted count, where a higher count usually needs more blocks:
/// asked at the top of the previous count's bounds first, which then settles it in one
/// evaluation.
pub(super) fn above(
    keys: u64,
    goal: Goal,
    shape: &fast::Shape,
    previous: &mut Candidate,
) -> Option<fast::Bounds> {
    let (lo, hi) = (previous.bounds.lo, previous.bounds.hi);
    match shape.probe(keys, goal, hi) {
        fast::Probe::Fails => None,
        // At most the previous count's blocks: search down from there. Its root usually
        // lies well below the previous count's lower end (a probe there first, where the
        // bounds are not exact, cost large filters an evaluation as a rule).
        fast::Probe::Meets(e) => {
            let b = shape.bound_from(keys, goal, hi, e, hi);
            if b.hi <= lo {
                return Some(b);
            }
            match shape.probe(keys, goal, lo) {
                fast::Probe::Meets(_) => Some(b.meeting_at(lo)),
                at_lo => against_exact(keys, goal, shape, b, previous, &[(lo, at_lo)]),
            }
        }
        at_hi => within_exact(keys, goal, shape, previous, &[(hi, at_hi)]),
    }
}

/// Where evaluations could not settle it: the previous count narrowed to its exact blocks,
/// and this count's bounds if it meets the goal there (`None`: it needs more). A probe of
/// this count already made at the exact count is not made again (the walk probes the ends of
/// the previous count's bounds, and the exact count is usually one of them).
fn within_exact(
    keys: u64,
    goal: Goal,
    shape: &fast::Shape,
    previous: &mut Candidate,
    probes: &[(u64, fast::Probe)],
) -> Option<fast::Bounds> {
    let p = previous.exact(keys, goal);
    let probe = probe_at(probes, p);
    shape
        .meets_probed(keys, p, goal, probe)
        .then(|| shape.bound_probed(keys, goal, p, probe))
}

/// A closed-form guess scaled by the last root found over its own guess (the closed form's
/// error changes slowly from shape to shape).
pub(super) fn scaled(formula: f64, anchor: Option<(f64, f64)>) -> f64 {
    formula * anchor.map_or(1.0, |(root, f)| root / f)
}

/// Every probe count in `shapes` (ascending) as a candidate, from the first that fits in
/// [`MAX_BLOCKS`] up to the first that needs more blocks than the one below it.
pub(super) fn ascend(
    keys: u64,
    goal: Goal,
    layout: Layout,
    shapes: impl Iterator<Item = (u32, (fast::Prepared, f64))>,
    anchor: &mut Option<(f64, f64)>,
    cands: &mut Vec<Candidate>,
) {
    let shapes: Vec<(u32, (fast::Prepared, f64))> = shapes.collect();
    // Which shapes hold the keys in one block (asked only where the reference asks).
    let one_block: Vec<bool> = shapes
        .iter()
        .map(|(_, (s, _))| keys <= ONE_BLOCK_FIRST && s.meets(keys, 1, goal))
        .collect();
    let mut previous: Option<usize> = None;
    for (i, (k, (shape, formula))) in shapes.into_iter().enumerate() {
        // A tiny filter that a candidate with fewer rounds holds in two blocks: no count from
        // here on that fails in one block can matter (it needs two blocks or more, so it is
        // neither smaller nor preferred), so the layout is done unless one holds in one.
        let rounds = k / layout.sectors();
        let beaten = cands
            .iter()
            .any(|c| c.bounds.lo == 2 && c.bounds.hi == 2 && c.rounds() < rounds);
        if beaten && !one_block[i..].contains(&true) {
            break;
        }
        let guess = scaled(formula, *anchor);
        let bounds = match previous {
            // One block is asked first here, as the reference does: a single block has no
            // spread to keep a margin for, so it can meet the goal where two blocks fail.
            _ if one_block[i] => fast::Bounds::exact(1, 0.0),
            None => match far_above(keys, goal, &shape, guess, cands) {
                Some(b) => b,
                None => {
                    let mut b = shape.bound(keys, goal, guess);
                    if b.hi > MAX_BLOCKS && shape.refine(keys, goal, &mut b) > MAX_BLOCKS {
                        // Too many blocks; its root still scales the next guess.
                        *anchor = Some((b.root_blocks(), formula));
                        continue;
                    }
                    b
                }
            },
            Some(p) => match up_bounds(keys, goal, &shape, guess, &mut cands[p]) {
                Some(b) => b,
                None => break,
            },
        };
        *anchor = Some((bounds.root_blocks(), formula));
        previous = Some(cands.len());
        cands.push(Candidate {
            shape,
            layout,
            probes: k,
            bounds,
        });
    }
}

/// Bounds for the first probe count of a layout whose guess lies past the allowance of every
/// candidate so far, from one evaluation there (`None`: search as usual). Failing there, the
/// count needs more blocks than any chosen plan could have, so it is never chosen, and a
/// lower bound is all the walk's comparisons need of it (narrowed by a search if one does
/// need more). Where few probes meet a low rate (4x128 with 4 probes needs 1,005 blocks for
/// 100 keys at 1e-9, the best shape 23), the search to its root took three evaluations.
fn far_above(
    keys: u64,
    goal: Goal,
    shape: &fast::Shape,
    guess: f64,
    cands: &[Candidate],
) -> Option<fast::Bounds> {
    let least = cands.iter().map(|c| c.bounds.hi).min()?;
    let t = guess as u64;
    if t as f64 <= least as f64 * (1.0 + ROUNDS_PREMIUM) || t > MAX_BLOCKS {
        return None;
    }
    match shape.probe(keys, goal, t) {
        fast::Probe::Fails => Some(fast::Bounds::failing_at(t)),
        fast::Probe::Meets(e) => Some(shape.bound_from(keys, goal, t, e, t)),
        fast::Probe::Doubt(_) => None,
    }
}

/// Up to this many keys the reference's search starts at one block (it starts at 4 bits per
/// key), which then decides: the model's goal is not monotone between one and two blocks.
pub(super) const ONE_BLOCK_FIRST: u64 = BLOCK_BITS as u64 / 4;
