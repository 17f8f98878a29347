//! The crate's top-level modules (the `mod`s of `src/lib.rs`) must not use each other in a
//! cycle: each layer builds on the ones below it, so any of them can be read, tested and
//! changed without the ones above.
//!
//! Reads `src/` as text (plain std, no parser crate). A module uses another when its code
//! names `crate::other::...` (in `use` trees, grouped or nested, or inline), `crate::Name`
//! where `src/lib.rs` re-exports `Name` from `other`, or a `super::` path that climbs to the
//! crate root. Comments and string/char literals are ignored; test-only code (`#[cfg(test)]`
//! modules) counts, since it is compiled into the crate's own test build.

mod graph;
mod kernel;
mod lex;

use std::collections::BTreeMap;
use std::path::Path;

use graph::{
    Edges, Graph, Site, crate_graph, cycle_report, reexports, shortest_cycles, tangles,
    top_level_modules,
};
use lex::{RootPath, root_paths, strip};

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn top_level_modules_have_no_import_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (graph, unresolved) = crate_graph(&src);
    assert!(
        unresolved.is_empty(),
        "root paths naming neither a top-level module nor a name src/lib.rs re-exports \
         (extend tests/layering/ to resolve them):\n{}",
        unresolved.join("\n")
    );
    // Guards against a parser that silently finds nothing.
    assert!(graph.len() >= 2, "modules found: {:?}", graph.keys());
    assert!(graph.values().any(|to| !to.is_empty()), "no edges found");
    for (m, to) in &graph {
        eprintln!("{m} -> {:?}", to.keys().collect::<Vec<_>>());
    }
    if let Some(report) = cycle_report(&graph) {
        panic!("{report}");
    }
}

/// Inside `src/kernel/`, every import points down the layers (`kernel::LAYERS`: primitives,
/// key shapes, batch hashes, the hash plan, probing, single keys, dispatch), so a layer can be
/// read and changed knowing only the ones below it.
#[test]
fn kernel_layers_import_only_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (imports, unplaced) = kernel::kernel_imports(&src);
    assert!(
        unplaced.is_empty(),
        "kernel paths naming no layer (a submodule of src/kernel/, a name src/kernel/mod.rs \
         defines or re-exports):\n{}",
        unplaced.join("\n")
    );
    // Guards against a parser that silently finds nothing.
    assert!(imports.len() >= 10, "imports found: {imports:?}");
    let (up, unknown) = kernel::upward(&imports);
    assert!(
        unknown.is_empty(),
        "layers missing from kernel::LAYERS: {unknown:?}"
    );
    let mut by_layers: BTreeMap<(String, String), usize> = BTreeMap::new();
    for i in &imports {
        *by_layers.entry((i.from.clone(), i.to.clone())).or_default() += 1;
    }
    for ((from, to), n) in &by_layers {
        eprintln!("{from} -> {to}: {n}");
    }
    let report: Vec<String> = up
        .iter()
        .map(|i| format!("  {} -> {}: {}  {}", i.from, i.to, i.at, i.path))
        .collect();
    assert!(
        report.is_empty(),
        "imports running up the kernel's layers ({}):\n{}",
        kernel::LAYERS.join(" < "),
        report.join("\n")
    );
}

#[test]
fn kernel_layer_reader_on_synthetic_source() {
    let code = lex::strip(
        "use super::shapes::Keys;\nuse crate::kernel::{hash::words, plan};\n\
         #[cfg(test)]\nmod tests {\n    use crate::kernel::Kernel;\n}\nfn f() {}\n",
    );
    let blanked = kernel::without_test_modules(&code);
    assert_eq!(blanked.lines().count(), code.lines().count());
    assert!(
        !blanked.contains("Kernel") && blanked.contains("fn f"),
        "{blanked}"
    );
    let imports = [
        kernel::Import {
            at: "a".into(),
            path: "p".into(),
            from: "hash".into(),
            to: "shapes".into(),
        },
        kernel::Import {
            at: "b".into(),
            path: "q".into(),
            from: "shapes".into(),
            to: "plan".into(),
        },
    ];
    let (up, unknown) = kernel::upward(&imports);
    assert_eq!(up, [&imports[1]]);
    assert!(unknown.is_empty());
}

fn edges_of(list: &[(&str, &str)]) -> Edges {
    let mut g = Edges::new();
    for &(a, b) in list {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    g
}

#[test]
fn cycle_finder_on_a_synthetic_graph() {
    // a -> b -> c -> a and a -> c (two cycles), d <-> e, f -> a and c -> d only lead in/out.
    let g = edges_of(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("a", "c"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
        ("f", "a"),
        ("g", "h"),
    ]);
    let found = tangles(&g);
    assert_eq!(found, [vec!["a", "b", "c"], vec!["d", "e"]]);
    assert_eq!(
        shortest_cycles(&g, &found[0]),
        [vec!["a", "c"], vec!["a", "b", "c"]]
    );
    assert_eq!(shortest_cycles(&g, &found[1]), [vec!["d", "e"]]);
    // The shortest cycle through b -> c -> d -> b is found from each of its edges once, and
    // the long way round through e only for the edge that needs it.
    let ring = edges_of(&[("b", "c"), ("c", "d"), ("d", "b"), ("d", "e"), ("e", "b")]);
    let ring_scc = &tangles(&ring)[0];
    assert_eq!(
        shortest_cycles(&ring, ring_scc),
        [vec!["b", "c", "d"], vec!["b", "c", "d", "e"]]
    );
    // A DAG, including a diamond, has none.
    let dag = edges_of(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]);
    assert!(tangles(&dag).is_empty());
    // The report names the cycle and the sites of its edges.
    let site = |at: &str| Site {
        at: at.into(),
        path: "crate::x".into(),
    };
    let mut graph = Graph::new();
    graph
        .entry("x".into())
        .or_default()
        .insert("y".into(), vec![site("src/x.rs:3")]);
    graph
        .entry("y".into())
        .or_default()
        .insert("x".into(), vec![site("src/y.rs:9")]);
    graph
        .entry("z".into())
        .or_default()
        .insert("x".into(), vec![site("src/z.rs:1")]);
    let report = cycle_report(&graph).unwrap();
    assert!(report.contains("x -> y -> x"), "{report}");
    assert!(
        report.contains("src/x.rs:3") && report.contains("src/y.rs:9"),
        "{report}"
    );
    assert!(!report.contains("src/z.rs"), "{report}");
    graph.get_mut("y").unwrap().clear();
    assert!(cycle_report(&graph).is_none());
}

#[test]
fn path_finder_on_synthetic_source() {
    let src = r##"
//! Docs name crate::docs_only and `use crate::b;`.
use crate::{a::B, c,
    d::{E, f::{G, H}},
    Isa as Tier, self,
};
use crate::sizing::{self, Plan};
/* crate::block_comment /* nested crate::inner */ still crate::comment */
fn f<'a>(x: &'a str) -> char {
    let _s = "crate::in_string \" crate::escaped";
    let _r = r#"crate::in_raw "quoted" crate::raw"#;
    let _l = 'x'; let _e = '\''; let _q = '"';
    crate::hash::u64_with_flip(1, 2);
    $crate::arch::insert::<u8>(3);
    self::local::thing();
    super::parent_in_module();
    'outer: loop { break 'outer; }
    'c'
}
mod tests {
    use super::*;
    use super::super::from_root;
    fn g() { crate::counting::CounterBits::ALL; }
}
pub(in crate::vis) fn h() {}
"##;
    let code = strip(src);
    assert_eq!(code.len(), src.len());
    assert_eq!(code.lines().count(), src.lines().count());
    let found: Vec<(String, usize)> = root_paths(&code, 1)
        .into_iter()
        .map(|p| (p.path, p.line))
        .collect();
    let want = [
        ("crate::a::B", 3),
        ("crate::c", 3),
        ("crate::d::{E, f::{G, H}}", 4),
        ("crate::Isa as Tier", 5),
        ("crate::sizing::{self, Plan}", 7),
        ("crate::hash::u64_with_flip", 13),
        ("crate::arch::insert", 14),
        ("super::parent_in_module", 16),
        ("super::super::from_root", 22),
        ("crate::counting::CounterBits::ALL", 23),
        ("crate::vis", 25),
    ];
    let want: Vec<(String, usize)> = want.iter().map(|&(p, l)| (p.into(), l)).collect();
    assert_eq!(found, want);
    // One level deeper (`src/x/y.rs`), both `super::` paths stay inside the module.
    let deeper: Vec<RootPath> = root_paths(&code, 2);
    assert_eq!(deeper.len(), want.len() - 2);
    assert!(deeper.iter().all(|p| !p.path.starts_with("super::")));
}

#[test]
fn root_reexports_and_modules_on_synthetic_lib() {
    let lib = strip(
        "mod a;\npub mod b;\npub(crate) mod c;\n#[cfg(test)]\nmod t { mod inner; }\n\
         pub use a::{A, sub::{Deep, Other as Renamed}, self};\npub use b::B;\n\
         pub use crate::c::C as See;\nuse std::fmt::Debug;\npub use c::*;\n",
    );
    let modules = top_level_modules(&lib);
    assert_eq!(modules, ["a", "b", "c"].map(String::from).into());
    let names = reexports(&lib, &modules);
    let want: BTreeMap<String, String> = [
        ("A", "a"),
        ("Deep", "a"),
        ("Renamed", "a"),
        ("a", "a"),
        ("B", "b"),
        ("See", "c"),
    ]
    .iter()
    .map(|&(n, m)| (n.to_string(), m.to_string()))
    .collect();
    assert_eq!(names, want);
}
