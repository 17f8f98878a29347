// Reading Rust source as text: lexing, and the paths in it that lead to the crate root.

// ---------------------------------------------------------------------------------------------
// Lexing
// ---------------------------------------------------------------------------------------------

/// `src` with comments and string, byte-string and char literals blanked (newlines kept and
/// each blanked char replaced by as many spaces as its bytes, so offsets and lines stay).
pub(crate) fn strip(src: &str) -> String {
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
pub(crate) struct Tok<'a> {
    pub(crate) text: &'a str,
    pub(crate) start: usize,
    pub(crate) end: usize,
    line: usize,
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

pub(crate) fn tokens(code: &str) -> Vec<Tok<'_>> {
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
pub(crate) struct RootPath {
    pub(crate) first: String,
    pub(crate) path: String,
    pub(crate) line: usize,
}

/// Every path from the crate root in stripped `code` of a file `depth` modules below the root
/// (`src/x.rs` and `src/x/mod.rs`: 1, `src/x/y.rs`: 2). `crate::` and `$crate::` paths, and
/// `super::` chains that climb to the root (counting inline `mod name { }` bodies).
pub(crate) fn root_paths(code: &str, depth: usize) -> Vec<RootPath> {
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

pub(crate) fn collapse(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("{ ", "{")
        .replace(" }", "}")
        .replace(",}", "}")
}
