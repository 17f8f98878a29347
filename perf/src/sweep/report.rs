// The sweep's markdown report, its notes and its JSON.

use std::fmt::Write as _;

use blockbloom_measure::format::group;
use blockbloom_measure::system::Context;
use blockbloom_measure::table::Table;

use crate::ceiling::DISTANCES;

use super::tables::{breakdown_table, fraction_table, ns, ns_table, size_label, targets_table};
use super::{BATCH, CEIL_READ, CEIL_READ_THP, Group, HASH_ONLY, Sweep, prehashed};

/// Lower-case words of the CPU model joined by '-'.
pub fn slug(cpu: &str) -> String {
    let mut out = String::new();
    for c in cpu.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "unknown-cpu".to_string()
    } else {
        out
    }
}

/// The markdown report.
pub fn markdown(ctx: &Context, s: &Sweep, svgs: &[String], quick: bool, load: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# blockbloom sweep: ns/key from 32 KiB to {}\n", {
        size_label(*s.sizes.last().unwrap_or(&0))
    });
    for (k, v) in ctx.facts() {
        let _ = writeln!(out, "- **{k}**: {v}");
    }
    if quick {
        let _ = writeln!(out, "- **--quick**: sizes up to 32 MiB only");
    }
    if !load.is_empty() {
        let _ = writeln!(
            out,
            "- **load average** (1/5/15 min, other processes included): {load}"
        );
    }
    let _ = writeln!(
        out,
        "\n## Method\n\n\
         * Every blockbloom filter is built with `capacity(bytes * 8 / 10)` and `size_in_bytes(bytes)` \
         (about 10 bits per key: the 1% budget, at exactly the sweep size), one filter per kernel tier \
         (`Isa::supported()`; scalar is the reference). Batch calls of {BATCH} u64 keys, hashing included.\n\
         * Insert: `min(capacity, 8M)` keys of a SplitMix64 stream; the first repetition inserts into the \
         empty filter, the later ones re-insert (the same bits are set again, the same memory traffic). \
         The kernels are branch-free, so speed does not depend on fill; a 1 GiB filter is therefore not \
         filled to its 858M-key capacity. Small filters repeat the insert so a sample has >= 1M keys.\n\
         * Contains: a fixed 4M-key query slice (about half members, half non-members), `count_batch`.\n\
         * Medians of 5 repetitions up to 32 MiB, of 3 above.\n\
         * Peers at the same sizes: fastbloom 0.17 (`with_num_bits(bytes * 8)`, foldhash, hashes for the \
         same capacity; single-key API) and sbbf-rs-safe 0.3.2 (`Filter::new(8, bytes)` = exactly `bytes`; \
         XXH3-64 of each key in the loop; single-key API).\n\
         * Memory ceiling: a 2 MiB-aligned buffer of the same size, every page faulted in first; per key, a \
         SplitMix64 output picks a random 64-byte line (multiply-shift), the line some keys ahead is \
         prefetched (`_mm_prefetch`, `_MM_HINT_T0`, like the filter's batch kernels), and one u64 of the line \
         is read (contains ceiling) or or-ed in place (read-modify-write ceiling). Measured with \
         `madvise(MADV_NOHUGEPAGE)` (4 KiB pages, as the filters get here) and with `madvise(MADV_HUGEPAGE)` \
         (2 MiB transparent huge pages); each ceiling is the fastest of the prefetch distances {:?} keys. \
         It is the best a one-line-per-key structure can do.\n\
         * Fractions are `ceiling ns / subject ns` against the 4 KiB-page read ceiling, for contains and \
         for insert alike (the issue's targets: >= 70% contains, >= 50% insert at >= 256 MiB).\n",
        DISTANCES
    );
    let _ = writeln!(out, "## Batch contains, ns/key\n");
    out.push_str(&ns_table(s, true, &[Group::Kernel, Group::Peer, Group::Ceiling]).markdown());
    let _ = writeln!(out, "\n## Batch insert, ns/key\n");
    out.push_str(&ns_table(s, false, &[Group::Kernel, Group::Peer, Group::Ceiling]).markdown());
    let _ = writeln!(out, "\n## Memory ceiling, ns per random 64-byte line\n");
    let mut c = ns_table(s, true, &[Group::Ceiling]);
    for se in s.series.iter().filter(|se| se.group == Group::Ceiling) {
        if se.insert.iter().any(|x| !x.is_nan()) {
            c.row(
                std::iter::once(se.name.clone())
                    .chain(se.insert.iter().map(|&x| ns(x)))
                    .collect(),
            );
        }
    }
    c.row(
        std::iter::once("THP buffer backed by huge pages".to_string())
            .chain(s.thp_backed.iter().cloned())
            .collect(),
    );
    c.row(
        std::iter::once(format!("{} filter backed by huge pages", s.best))
            .chain(s.filter_thp.iter().cloned())
            .collect(),
    );
    out.push_str(&c.markdown());
    let _ = writeln!(out, "\n## Throughput as a fraction of the read ceiling\n");
    out.push_str(&fraction_table(s).markdown());
    let _ = writeln!(out, "\n## Targets (DRAM-sized filters, best tier)\n");
    out.push_str(&targets_table(s).markdown());
    let _ = writeln!(
        out,
        "\n## Where the time goes ({}): hashing vs memory\n",
        s.best
    );
    out.push_str(&breakdown_table(s).markdown());
    out.push_str(&notes(s));
    let _ = writeln!(out, "\n## Filters\n");
    let mut f = Table::new(["size", "layout", "keys inserted", "repetitions"]);
    for (i, &b) in s.sizes.iter().enumerate() {
        f.row(vec![
            size_label(b),
            s.layouts[i].clone(),
            group(s.inserted[i] as u64),
            s.reps[i].to_string(),
        ]);
    }
    out.push_str(&f.markdown());
    if !s.problems.is_empty() {
        let _ = writeln!(out, "\n**Wrong answers:** {}", s.problems.join("; "));
    }
    if !svgs.is_empty() {
        let _ = writeln!(out, "\n## Plots\n");
        for p in svgs {
            let _ = writeln!(out, "![{p}]({p})\n");
        }
    }
    out
}

/// What the numbers say at the largest size, in sentences.
pub fn notes(s: &Sweep) -> String {
    let mut out = String::new();
    let Some(i) = s.sizes.len().checked_sub(1) else {
        return out;
    };
    let at = |name: &str, contains: bool| {
        s.get(name)
            .map(|se| {
                if contains {
                    se.contains[i]
                } else {
                    se.insert[i]
                }
            })
            .unwrap_or(f64::NAN)
    };
    let size = size_label(s.sizes[i]);
    let (read, thp) = (at(CEIL_READ, true), at(CEIL_READ_THP, true));
    let (best, pre, hash) = (
        at(&s.best, true),
        at(&prehashed(&s.best), true),
        at(HASH_ONLY, true),
    );
    let _ = writeln!(
        out,
        "\nAt {size}: {} batch contains costs {} ns/key, {} ns/key pre-hashed \
         (`count_hash_batch`), and hashing alone costs {} ns/key; the 4 KiB-page ceiling is {} ns \
         per random line. Huge pages cut the ceiling to {} ns ({:.1}x): at DRAM sizes the cost is \
         the memory access and its page walk (TLB miss), not the hash or the SIMD probe. The \
         filters' own memory is not huge-page backed here (the table above), so backing large \
         filters with 2 MiB pages (e.g. `madvise(MADV_HUGEPAGE)` on the block array) is where \
         the remaining factor lies. This machine is a shared 2-vCPU VM: repeat runs differ by \
         10-20% at the DRAM sizes, so fractions above 100% are noise around \"at the ceiling\".",
        s.best,
        ns(best),
        ns(pre),
        ns(hash),
        ns(read),
        ns(thp),
        read / thp
    );
    out
}
/// Everything measured, as JSON: ns/key per series and size (`null` where not measured).
pub fn json(s: &Sweep) -> serde_json::Value {
    use blockbloom_measure::json::number;
    let nums = |v: &[f64]| v.iter().map(|&x| number(x)).collect::<Vec<_>>();
    let series: Vec<serde_json::Value> = s
        .series
        .iter()
        .map(|x| {
            serde_json::json!({
                "name": x.name,
                "group": format!("{:?}", x.group).to_lowercase(),
                "contains_ns_per_key": nums(&x.contains),
                "insert_ns_per_key": nums(&x.insert),
            })
        })
        .collect();
    serde_json::json!({
        "sizes_bytes": s.sizes,
        "layouts": s.layouts,
        "keys_inserted": s.inserted,
        "reps": s.reps,
        "best_tier": s.best,
        "series": series,
        "fractions_of_ceiling": fraction_table(s).json(),
        "targets": targets_table(s).json(),
        "breakdown": breakdown_table(s).json(),
        "problems": s.problems,
    })
}
