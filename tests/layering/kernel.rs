// The kernel's inner layers: every import inside `src/kernel/` points down the order below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::graph::{reexports, top_level_modules};
use crate::lex::{root_paths, strip, tokens};

/// The kernel's layers, lowest first: each file of `src/kernel/` belongs to the layer its
/// first path segment names (`hash/words.rs` to `hash`), `mod.rs` to `dispatch`. The SIMD
/// primitives below them all are a top-level module of their own (`src/simd/`), under the
/// hashes that use them, so the crate-wide cycle test keeps them below the kernel.
pub(crate) const LAYERS: [&str; 6] = ["shapes", "hash", "plan", "probe", "one_key", "dispatch"];

/// An import from one layer into another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    pub(crate) at: String,
    pub(crate) path: String,
    pub(crate) from: String,
    pub(crate) to: String,
}

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|&l| l == layer)
}

/// `code` with the bodies of `#[cfg(test)]` modules blanked (newlines kept): a kernel file's
/// tests may run the whole kernel (every tier through dispatch), which is not an import of
/// the code under test.
pub(crate) fn without_test_modules(code: &str) -> String {
    let toks = tokens(code);
    let mut out = code.to_string();
    let mut i = 0;
    while i + 6 < toks.len() {
        let cfg_test = toks[i].text == "#"
            && toks[i + 1].text == "["
            && toks[i + 2].text == "cfg"
            && toks[i + 3].text == "("
            && toks[i + 4].text == "test"
            && toks[i + 5].text == ")"
            && toks[i + 6].text == "]";
        if !cfg_test {
            i += 1;
            continue;
        }
        // The next item: blank it if it is a module with a body.
        let mut j = i + 7;
        while j < toks.len() && matches!(toks[j].text, "pub" | "(" | ")" | "crate" | "super") {
            j += 1;
        }
        if toks.get(j).map(|t| t.text) == Some("mod")
            && toks.get(j + 2).map(|t| t.text) == Some("{")
        {
            let open = j + 2;
            let mut depth = 0;
            let mut close = toks.len() - 1;
            for (k, t) in toks.iter().enumerate().skip(open) {
                match t.text {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            close = k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let (a, b) = (toks[open].start, toks[close].end);
            let blank: String = code[a..b]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' })
                .collect();
            out.replace_range(a..b, &blank);
            i = close;
        }
        i += 1;
    }
    out
}

/// Every `.rs` file under `dir` with its module path below it (`hash/words.rs`: `hash`,
/// `words`; `hash/mod.rs`: `hash`; `mod.rs`: none).
fn files(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(dir).unwrap();
                let mut segs: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let last = segs.pop().unwrap();
                if last != "mod.rs" {
                    segs.push(last.trim_end_matches(".rs").to_string());
                }
                out.push((p, segs));
            }
        }
    }
    out.sort();
    out
}

/// The first segment of every path in a `use` tree's top group (`{a::B, c}`: `a`, `c`), or of
/// the path itself.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim();
    if let Some(inner) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        let mut out = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(first_segments(&inner[start..k]));
                    start = k + 1;
                }
                _ => {}
            }
        }
        out.extend(first_segments(&inner[start..]));
        return out;
    }
    let first = rest.split("::").next().unwrap_or("").trim();
    let first = first.split_whitespace().next().unwrap_or("");
    if first.is_empty() || first == "self" {
        Vec::new()
    } else {
        vec![first.to_string()]
    }
}

/// Every import between two layers of the kernel in `src/kernel/`, with the names that could
/// not be placed in a layer.
pub(crate) fn kernel_imports(src: &Path) -> (Vec<Import>, Vec<String>) {
    let kernel = src.join("kernel");
    let mod_rs = strip(&std::fs::read_to_string(kernel.join("mod.rs")).unwrap());
    let submodules = top_level_modules(&mod_rs);
    // Names `mod.rs` re-exports, by the submodule they come from; names it defines, dispatch.
    let names = reexports(&mod_rs, &submodules);
    let layer_of_name = |name: &str| -> Option<String> {
        if submodules.contains(name) {
            Some(name.to_string())
        } else if let Some(m) = names.get(name) {
            Some(m.clone())
        } else {
            let defined = [
                "struct", "enum", "trait", "fn", "static", "const", "type", "mod",
            ]
            .iter()
            .any(|kw| {
                mod_rs.contains(&format!("{kw} {name}"))
                    || mod_rs.contains(&format!("{kw} {name}<"))
            });
            defined.then(|| "dispatch".to_string())
        }
    };
    let root = src.parent().unwrap();
    let (mut out, mut unplaced) = (Vec::new(), Vec::new());
    for (file, segs) in files(&kernel) {
        let from = segs
            .first()
            .cloned()
            .unwrap_or_else(|| "dispatch".to_string());
        let code = without_test_modules(&strip(&std::fs::read_to_string(&file).unwrap()));
        let shown = file.strip_prefix(root).unwrap().display().to_string();
        // `super::` chains that climb to the kernel's root (or past it, to the crate's).
        let depth = segs.len();
        let mut found: Vec<(usize, String, Vec<String>)> = Vec::new();
        if depth > 0 {
            for p in root_paths(&code, depth) {
                let climbs = p.path.matches("super::").count();
                if p.path.starts_with("super::") && climbs == depth {
                    let rest = p.path.trim_start_matches("super::").to_string();
                    found.push((p.line, p.path.clone(), first_segments(&rest)));
                }
            }
        }
        // `crate::kernel::...` paths (root_paths gives them with their first segment, `kernel`).
        for p in root_paths(&code, depth + 1) {
            if let Some(rest) = p.path.strip_prefix("crate::kernel::") {
                found.push((p.line, p.path.clone(), first_segments(rest)));
            } else if p.path.starts_with("crate::kernel") && p.first == "kernel" {
                // `crate::kernel::{...}` grouped at the top: root_paths splits the groups of
                // `crate::{..}` only.
                let rest = p
                    .path
                    .trim_start_matches("crate::kernel")
                    .trim_start_matches("::");
                found.push((p.line, p.path.clone(), first_segments(rest)));
            }
        }
        for (line, path, targets) in found {
            for t in targets {
                let at = format!("{shown}:{line}");
                match layer_of_name(&t) {
                    Some(to) if to != from => out.push(Import {
                        at,
                        path: path.clone(),
                        from: from.clone(),
                        to,
                    }),
                    Some(_) => {}
                    None => unplaced.push(format!("{at}  {path} ({t})")),
                }
            }
        }
    }
    (out, unplaced)
}

/// The imports that run up the layer order, and the layers named that are not in it.
pub(crate) fn upward(imports: &[Import]) -> (Vec<&Import>, BTreeMap<String, String>) {
    let mut unknown = BTreeMap::new();
    let mut up = Vec::new();
    for i in imports {
        match (rank(&i.from), rank(&i.to)) {
            (Some(a), Some(b)) if b > a => up.push(i),
            (Some(_), Some(_)) => {}
            (None, _) => {
                unknown.insert(i.from.clone(), i.at.clone());
            }
            (_, None) => {
                unknown.insert(i.to.clone(), i.at.clone());
            }
        }
    }
    (up, unknown)
}
