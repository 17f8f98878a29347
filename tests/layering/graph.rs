// The crate root's modules and re-exports, the module graph and its cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::lex::{collapse, root_paths, strip, tokens};

// ---------------------------------------------------------------------------------------------
// The crate root: its modules and re-exports
// ---------------------------------------------------------------------------------------------

/// The file-backed modules `mod x;` declared at the top level of stripped `lib`.
pub(crate) fn top_level_modules(lib: &str) -> BTreeSet<String> {
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
pub(crate) fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
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
pub(crate) struct Site {
    pub(crate) at: String,
    pub(crate) path: String,
}

/// Module -> module it uses -> every place that uses it.
pub(crate) type Graph = BTreeMap<String, BTreeMap<String, Vec<Site>>>;

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
pub(crate) fn crate_graph(src: &Path) -> (Graph, Vec<String>) {
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

pub(crate) type Edges = BTreeMap<String, BTreeSet<String>>;

fn edges(graph: &Graph) -> Edges {
    graph
        .iter()
        .map(|(m, to)| (m.clone(), to.keys().cloned().collect()))
        .collect()
}

/// The strongly connected components of more than one module (Tarjan), each sorted.
pub(crate) fn tangles(g: &Edges) -> Vec<Vec<String>> {
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
pub(crate) fn shortest_cycles(g: &Edges, scc: &[String]) -> Vec<Vec<String>> {
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
pub(crate) fn cycle_report(graph: &Graph) -> Option<String> {
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
