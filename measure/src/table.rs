//! A minimal table printed either as aligned text (terminal) or as Markdown (report), so the
//! demo and the report show the same columns.

/// Rows of cells under a header; the first column is left-aligned, the rest right-aligned
/// (numbers) unless [`Table::left_aligned`] says otherwise (prose).
pub struct Table {
    header: Vec<String>,
    all_left: bool,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            all_left: false,
            rows: Vec::new(),
        }
    }

    /// Left-aligns every column.
    pub fn left_aligned(mut self) -> Table {
        self.all_left = true;
        self
    }

    /// Appends a row (missing cells are left blank).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn cell<'a>(&'a self, row: &'a [String], col: usize) -> &'a str {
        row.get(col).map(String::as_str).unwrap_or("")
    }

    /// Aligned plain text with a rule under the header.
    pub fn text(&self) -> String {
        let cols = self.header.len();
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| self.cell(r, c).chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (c, w) in width.iter().enumerate() {
                let v = self.cell(cells, c);
                if c > 0 {
                    s.push_str("  ");
                }
                if c == 0 || self.all_left {
                    s.push_str(&format!("{v:<w$}"));
                } else {
                    s.push_str(&format!("{v:>w$}"));
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.header);
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// A GitHub-flavoured Markdown table.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let align: Vec<&str> = (0..self.header.len())
            .map(|c| {
                if c == 0 || self.all_left {
                    ":---"
                } else {
                    "---:"
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", align.join(" | ")));
        for r in &self.rows {
            let cells: Vec<String> = (0..self.header.len())
                .map(|c| esc(self.cell(r, c)))
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_both_ways() {
        let mut t = Table::new(["kernel", "ns/key"]);
        t.row(vec!["avx512".into(), "1.25".into()]);
        t.row(vec!["scalar".into(), "10.50".into()]);
        let text = t.text();
        assert!(text.contains("avx512    1.25\nscalar   10.50"), "{text}");
        assert!(
            t.markdown()
                .starts_with("| kernel | ns/key |\n| :--- | ---: |\n")
        );
    }
}
