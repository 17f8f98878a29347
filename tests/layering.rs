//! The crate's top-level modules (the `mod`s of `src/lib.rs`) must not use each other in a
//! cycle: each layer builds on the ones below it, so any of them can be read, tested and
//! changed without the ones above.
//!
//! Reads `src/` as text (plain std, no parser crate). A module uses another when its code
//! names `crate::other::...` (in `use` trees, grouped or nested, or inline), `crate::Name`
//! where `src/lib.rs` re-exports `Name` from `other`, or a `super::` path that climbs to the
//! crate root. Comments and string/char literals are ignored; test-only code (`#[cfg(test)]`
//! modules) counts, since it is compiled into the crate's own test build.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Lexing
// ---------------------------------------------------------------------------------------------

/// `src` with comments and string, byte-string and char literals blanked (newlines kept and
/// each blanked char replaced by as many spaces as its bytes, so offsets and lines stay).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| match ch {
        '\n' => out.push('\n'),
        _ => out.extend(std::iter::repeat_n(' ', ch.len_utf8())),
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            // Block comments nest.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    blank(&mut out, c[i]);
                    i += 1;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    blank(&mut out, c[i]);
                    i += 1;
                }
                blank(&mut out, c[i]);
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else if !prev_ident && raw_string_hashes(&c, i).is_some() {
            // r"..", r#".."#, br"..": no escapes, ends at a quote and as many hashes.
            let (hashes, open) = raw_string_hashes(&c, i).unwrap();
            while i <= open {
                blank(&mut out, c[i]);
                i += 1;
            }
            while i < c.len() {
                let closes = c[i] == '"' && (1..=hashes).all(|h| c.get(i + h) == Some(&'#'));
                blank(&mut out, c[i]);
                i += 1;
                if closes {
                    for _ in 0..hashes {
                        blank(&mut out, c[i]);
                        i += 1;
                    }
                    break;
                }
            }
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{..}'); a lone quote is a lifetime or label.
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '\'' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// If a raw string starts at `i` (`r`, `br`, then hashes and a quote): its hash count and
/// the index of its opening quote.
fn raw_string_hashes(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j))
}

/// A token of stripped code: an identifier (or number), `::`, or one punctuation char.
#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    text: &'a str,
    start: usize,
    end: usize,
    line: usize,
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn tokens(code: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut it = code.char_indices().peekable();
    while let Some((start, ch)) = it.next() {
        if ch == '\n' {
            line += 1;
            continue;
        }
        if ch.is_whitespace() {
            continue;
        }
        let mut end = start + ch.len_utf8();
        if ch.is_alphanumeric() || ch == '_' {
            while let Some(&(i, c)) = it.peek() {
                if !(c.is_alphanumeric() || c == '_') {
                    break;
                }
                end = i + c.len_utf8();
                it.next();
            }
        } else if ch == ':' && it.peek().map(|&(_, c)| c) == Some(':') {
            it.next();
            end += 1;
        }
        out.push(Tok {
            text: &code[start..end],
            start,
            end,
            line,
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Paths to the crate root
// ---------------------------------------------------------------------------------------------

/// A path from the crate root found in code: its first segment (a module or a re-exported
/// name), the path as written, and its line.
#[derive(Clone, Debug, PartialEq)]
struct RootPath {
    first: String,
    path: String,
    line: usize,
}

/// Every path from the crate root in stripped `code` of a file `depth` modules below the root
/// (`src/x.rs` and `src/x/mod.rs`: 1, `src/x/y.rs`: 2). `crate::` and `$crate::` paths, and
/// `super::` chains that climb to the root (counting inline `mod name { }` bodies).
fn root_paths(code: &str, depth: usize) -> Vec<RootPath> {
    let toks = tokens(code);
    let text = |i: usize| toks.get(i).map_or("", |t| t.text);
    let mut out = Vec::new();
    // One entry per open brace: whether it opened an inline module's body.
    let mut braces: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let after_path = i > 0 && text(i - 1) == "::";
        match text(i) {
            "{" => braces.push(i >= 2 && text(i - 2) == "mod" && is_ident(text(i - 1))),
            "}" => {
                braces.pop();
            }
            "crate" if !after_path && text(i + 1) == "::" => {
                out.extend(group_or_path(code, &toks, "crate::", i + 2));
            }
            "super" if !after_path && text(i + 1) == "::" => {
                let mut j = i;
                while text(j) == "super" && text(j + 1) == "::" {
                    j += 2;
                }
                let climbs = (j - i) / 2;
                let inline = braces.iter().filter(|&&m| m).count();
                if climbs >= depth + inline {
                    out.extend(group_or_path(code, &toks, &"super::".repeat(climbs), j));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The paths starting at token `j` (just after `prefix`, `crate::` or a `super::` chain): one
/// path, or each item of a `{..}` group.
fn group_or_path(code: &str, toks: &[Tok], prefix: &str, j: usize) -> Vec<RootPath> {
    let item = |a: usize, b: usize| {
        // Tokens a..=b; `self` in a group names the root itself, not a module.
        (a <= b && is_ident(toks[a].text) && toks[a].text != "self").then(|| RootPath {
            first: toks[a].text.to_string(),
            path: format!("{prefix}{}", collapse(&code[toks[a].start..toks[b].end])),
            line: toks[a].line,
        })
    };
    match toks.get(j).map(|t| t.text) {
        Some("{") => {
            let mut out = Vec::new();
            let (mut depth, mut start) = (0, j + 1);
            for (k, t) in toks.iter().enumerate().skip(j + 1) {
                match t.text {
                    "{" => depth += 1,
                    "}" if depth > 0 => depth -= 1,
                    "}" | "," if depth == 0 => {
                        out.extend(item(start, k - 1));
                        if t.text == "}" {
                            break;
                        }
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            out
        }
        Some(t) if is_ident(t) => {
            let mut end = j;
            while toks.get(end + 1).map(|t| t.text) == Some("::") {
                match toks.get(end + 2).map(|t| t.text) {
                    Some("*") => end += 2,
                    Some(t) if is_ident(t) => end += 2,
                    Some("{") => end = matching_brace(toks, end + 2),
                    _ => break,
                }
            }
            item(j, end).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

fn matching_brace(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    toks.len() - 1
}

fn collapse(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("{ ", "{")
        .replace(" }", "}")
        .replace(",}", "}")
}

// ---------------------------------------------------------------------------------------------
// The crate root: its modules and re-exports
// ---------------------------------------------------------------------------------------------

/// The file-backed modules `mod x;` declared at the top level of stripped `lib`.
fn top_level_modules(lib: &str) -> BTreeSet<String> {
    let toks = tokens(lib);
    let mut depth = 0;
    let mut out = BTreeSet::new();
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => depth += 1,
            "}" => depth -= 1,
            "mod" if depth == 0 && toks.get(i + 2).map(|t| t.text) == Some(";") => {
                out.insert(toks[i + 1].text.to_string());
            }
            _ => {}
        }
    }
    out
}

/// The names the top-level `use` items of stripped `lib` bring into the root, each with the
/// top-level module its path starts with (names from other crates are left out).
fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let toks = tokens(lib);
    let mut depth = 0;
    let mut out = BTreeMap::new();
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => depth += 1,
            "}" => depth -= 1,
            "use" if depth == 0 => {
                let Some(end) = toks[i..].iter().position(|t| t.text == ";") else {
                    continue;
                };
                let tree = collapse(&lib[t.end..toks[i + end].start]);
                let tree = tree
                    .trim()
                    .trim_start_matches("crate::")
                    .trim_start_matches("self::");
                for (name, first) in use_tree_names(tree, None) {
                    if modules.contains(&first) {
                        out.insert(name, first);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The names a `use` tree binds, each with the first segment of its full path.
fn use_tree_names(tree: &str, first: Option<&str>) -> Vec<(String, String)> {
    let tree = tree.trim();
    if let (Some(open), true) = (tree.find('{'), tree.ends_with('}')) {
        let prefix: Vec<&str> = tree[..open].split("::").filter(|s| !s.is_empty()).collect();
        let first = first.or(prefix.first().copied());
        let mut out = Vec::new();
        let (mut depth, mut start) = (0, open + 1);
        let inner_end = tree.len() - 1;
        for (k, ch) in tree[..inner_end]
            .char_indices()
            .skip_while(|&(k, _)| k <= open)
        {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(item_names(&tree[start..k], first, &prefix));
                    start = k + 1;
                }
                _ => {}
            }
        }
        out.extend(item_names(&tree[start..inner_end], first, &prefix));
        return out;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim())),
        None => (tree, None),
    };
    let segments: Vec<&str> = path.split("::").map(str::trim).collect();
    let name = alias.unwrap_or(segments[segments.len() - 1]);
    let first = first.unwrap_or(segments[0]);
    if name.is_empty() || name == "*" {
        return Vec::new(); // a glob binds nothing this test can name
    }
    vec![(name.to_string(), first.to_string())]
}

fn item_names(item: &str, first: Option<&str>, prefix: &[&str]) -> Vec<(String, String)> {
    match item.trim() {
        "" => Vec::new(),
        "self" => match (prefix.last(), first) {
            (Some(last), Some(first)) => vec![(last.to_string(), first.to_string())],
            _ => Vec::new(),
        },
        item => use_tree_names(item, first),
    }
}

// ---------------------------------------------------------------------------------------------
// The module graph
// ---------------------------------------------------------------------------------------------

/// Where an edge comes from: `file:line` and the path as written.
#[derive(Clone, Debug)]
struct Site {
    at: String,
    path: String,
}

/// Module -> module it uses -> every place that uses it.
type Graph = BTreeMap<String, BTreeMap<String, Vec<Site>>>;

/// Every `.rs` file of top-level module `name` with its depth below the root.
fn module_files(src: &Path, name: &str) -> Vec<(PathBuf, usize)> {
    let mut out = Vec::new();
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        out.push((file, 1));
    }
    let mut dirs = vec![src.join(name)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let parts = p.strip_prefix(src).unwrap().components().count();
                let depth = if p.file_name().unwrap() == "mod.rs" {
                    parts - 1
                } else {
                    parts
                };
                out.push((p, depth));
            }
        }
    }
    out.sort();
    out
}

/// The graph of the crate whose sources are in `src`, and the root paths it could not resolve.
fn crate_graph(src: &Path) -> (Graph, Vec<String>) {
    let lib = strip(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let modules = top_level_modules(&lib);
    let names = reexports(&lib, &modules);
    let root = src.parent().unwrap();
    let mut graph = Graph::new();
    let mut unresolved = Vec::new();
    for m in &modules {
        graph.entry(m.clone()).or_default();
        let files = module_files(src, m);
        assert!(!files.is_empty(), "no file for `mod {m};`");
        for (file, depth) in files {
            let code = strip(&std::fs::read_to_string(&file).unwrap());
            let shown = file.strip_prefix(root).unwrap().display().to_string();
            for p in root_paths(&code, depth) {
                let at = format!("{shown}:{}", p.line);
                let (to, path) = if modules.contains(&p.first) {
                    (p.first.clone(), p.path)
                } else if let Some(to) = names.get(&p.first) {
                    (to.clone(), format!("{} (re-exported from {to})", p.path))
                } else {
                    unresolved.push(format!("{at}  {}", p.path));
                    continue;
                };
                if &to != m {
                    let sites = graph.get_mut(m).unwrap().entry(to).or_default();
                    sites.push(Site { at, path });
                }
            }
        }
    }
    (graph, unresolved)
}

// ---------------------------------------------------------------------------------------------
// Cycles
// ---------------------------------------------------------------------------------------------

type Edges = BTreeMap<String, BTreeSet<String>>;

fn edges(graph: &Graph) -> Edges {
    graph
        .iter()
        .map(|(m, to)| (m.clone(), to.keys().cloned().collect()))
        .collect()
}

/// The strongly connected components of more than one module (Tarjan), each sorted.
fn tangles(g: &Edges) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        g: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            let g = self.g;
            for w in g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let lw = self.low[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w.as_str()) {
                    let iw = self.index[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|&x| x == v).unwrap();
                let mut scc: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// For every edge inside one component, the shortest cycle through it (each cycle starting
/// at its smallest module, without repeats, shortest first). Every edge of a component lies
/// on some cycle, so this names them all without listing every elementary cycle.
fn shortest_cycles(g: &Edges, scc: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for from in scc {
        for to in g[from].iter().filter(|t| scc.contains(t)) {
            // Breadth-first from `to` back to `from`, inside the component.
            let mut parent: BTreeMap<&String, &String> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([to]);
            let mut seen = BTreeSet::from([to]);
            while let Some(v) = queue.pop_front() {
                if v == from {
                    break;
                }
                for w in g[v].iter().filter(|w| scc.contains(w)) {
                    if seen.insert(w) {
                        parent.insert(w, v);
                        queue.push_back(w);
                    }
                }
            }
            let mut cycle = vec![from.clone()];
            let mut v = from;
            while v != to {
                v = parent[v];
                cycle.push(v.clone());
            }
            // Now from, (back to) ..., to: reverse the tail into from -> to -> ... order.
            cycle[1..].reverse();
            let smallest = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap();
            cycle.rotate_left(smallest);
            if !out.contains(&cycle) {
                out.push(cycle);
            }
        }
    }
    out.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
    out
}

/// The failure message for `graph`, or `None` if it has no cycle.
fn cycle_report(graph: &Graph) -> Option<String> {
    let g = edges(graph);
    let found = tangles(&g);
    if found.is_empty() {
        return None;
    }
    let mut r = format!(
        "{} group(s) of top-level modules use each other in cycles; a module may only use \
         the layers below it. Cut one edge of every cycle:\n",
        found.len()
    );
    for scc in &found {
        let cycles = shortest_cycles(&g, scc);
        let _ = writeln!(r, "\n== {}", scc.join(", "));
        let _ = writeln!(r, "  the shortest cycle through each edge:");
        for c in &cycles {
            let _ = writeln!(r, "    {} -> {}", c.join(" -> "), c[0]);
        }
        let _ = writeln!(r, "  the edges, where they are made:");
        for from in scc {
            for (to, sites) in &graph[from] {
                if scc.contains(to) {
                    let _ = writeln!(r, "    {from} -> {to}:");
                    for s in sites {
                        let _ = writeln!(r, "      {}  {}", s.at, s.path);
                    }
                }
            }
        }
    }
    Some(r)
}

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
         (extend tests/layering.rs to resolve them):\n{}",
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
