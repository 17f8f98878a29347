//! A table printed either as aligned text (terminal) or as Markdown (report), so the demo and
//! the report show the same columns; `comfy-table` lays both out. Also a table as JSON, for
//! the tools' `--format json`.

use comfy_table::{CellAlignment, ContentArrangement, ContentLineStyle, LineStyle, TableStyle};
use serde_json::{Map, Value, json};

/// Rows of cells under a header; the first column is left-aligned, the rest right-aligned
/// (numbers) unless [`Table::left_aligned`] says otherwise (prose).
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    all_left: bool,
    rows: Vec<Vec<String>>,
}

/// Aligned text: columns two spaces apart, a rule under the header, no borders.
const TEXT: TableStyle = TableStyle::new()
    .header_lines(ContentLineStyle::none().junction(' '))
    .header_separator(LineStyle::none().fill('-').junction('-'))
    .content_lines(ContentLineStyle::none().junction(' '));

/// GitHub-flavoured Markdown (the separator row gets its alignment colons afterwards).
const MARKDOWN: TableStyle = comfy_table::presets::ASCII_MARKDOWN;

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

    /// Appends a row (missing cells are left blank, extra ones dropped).
    pub fn row(&mut self, mut cells: Vec<String>) {
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    fn right(&self, col: usize) -> bool {
        col > 0 && !self.all_left
    }

    /// The table laid out in `style`, one line per row (no wrapping), with `pad(column)`
    /// spaces (left, right) around the cells; cells mapped by `cell`.
    fn layout(
        &self,
        style: TableStyle,
        pad: impl Fn(usize) -> (u16, u16),
        cell: impl Fn(&str) -> String,
    ) -> String {
        let mut t = comfy_table::Table::new();
        t.load_style(style)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.header.iter().map(|h| cell(h)).collect::<Vec<_>>());
        for r in &self.rows {
            t.add_row(r.iter().map(|c| cell(c)).collect::<Vec<_>>());
        }
        for c in 0..self.header.len() {
            let right = self.right(c);
            if let Some(col) = t.column_mut(c) {
                col.set_padding(pad(c));
                col.set_cell_alignment(if right {
                    CellAlignment::Right
                } else {
                    CellAlignment::Left
                });
            }
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Aligned plain text with a rule under the header.
    pub fn text(&self) -> String {
        // The junction and one space of padding: columns two spaces apart.
        self.layout(TEXT, |c| (u16::from(c > 0), 0), str::to_string)
    }

    /// A GitHub-flavoured Markdown table (pipes in cells escaped), numbers right-aligned.
    pub fn markdown(&self) -> String {
        let md = self.layout(MARKDOWN, |_| (1, 1), |c| c.replace('|', "\\|"));
        let mut lines = md.lines();
        let mut out = String::new();
        if let (Some(head), Some(rule)) = (lines.next(), lines.next()) {
            out.push_str(head);
            out.push('\n');
            // `|-----|-----|` -> `|:----|----:|`: the alignment the text layout shows.
            let cols: Vec<&str> = rule.trim_matches('|').split('|').collect();
            out.push('|');
            for (c, dashes) in cols.iter().enumerate() {
                let n = dashes.len().max(2) - 1;
                let bar = "-".repeat(n);
                if self.right(c) {
                    out.push_str(&format!("{bar}:|"));
                } else {
                    out.push_str(&format!(":{bar}|"));
                }
            }
            out.push('\n');
        }
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    /// The table as JSON: `{"columns": [...], "rows": [{column: cell}, ...]}`. A cell that is
    /// a plain number (`12`, `1.25`, `-3e-5`) is a JSON number; every other cell (`1%`,
    /// `77.1 MiB`, `-`) is the string the text shows.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut m = Map::new();
                for (h, c) in self.header.iter().zip(r) {
                    m.insert(h.clone(), cell_value(c));
                }
                Value::Object(m)
            })
            .collect();
        json!({ "columns": self.header, "rows": rows })
    }
}

/// A number as JSON when the whole cell is one finite number, else the text.
fn cell_value(c: &str) -> Value {
    c.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && !c.starts_with('+') && !c.ends_with('.'))
        .and_then(|v| {
            c.parse::<i64>()
                .map(Value::from)
                .ok()
                .or_else(|| serde_json::Number::from_f64(v).map(Value::Number))
        })
        .unwrap_or_else(|| Value::String(c.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["kernel", "ns/key"]);
        t.row(vec!["avx512".into(), "1.25".into()]);
        t.row(vec!["scalar".into(), "10.50".into()]);
        t
    }

    #[test]
    fn text_is_aligned_with_a_rule() {
        let text = sample().text();
        assert_eq!(
            text, "kernel  ns/key\n--------------\navx512    1.25\nscalar   10.50\n",
            "{text}"
        );
        let mut prose = Table::new(["what", "measured"]).left_aligned();
        prose.row(vec!["a".into(), "1".into()]);
        assert_eq!(prose.text(), "what  measured\n--------------\na     1\n");
    }

    #[test]
    fn markdown_keeps_alignment_and_escapes_pipes() {
        let md = sample().markdown();
        assert_eq!(
            md,
            "| kernel | ns/key |\n|:-------|-------:|\n| avx512 |   1.25 |\n| scalar |  10.50 |\n",
            "{md}"
        );
        let mut t = Table::new(["a|b", "c"]).left_aligned();
        t.row(vec!["x|y".into()]);
        let md = t.markdown();
        assert!(md.starts_with("| a\\|b | c |\n|:-----|:--|\n"), "{md}");
        assert!(md.contains("| x\\|y |   |"), "{md}");
    }

    #[test]
    fn json_types_plain_numbers_only() {
        let mut t = Table::new(["n", "rate", "size", "x"]);
        t.row(vec![
            "64000".into(),
            "0.98%".into(),
            "77.1 MiB".into(),
            "1.5".into(),
        ]);
        t.row(vec!["-".into(), "1e-5".into(), "NaN".into(), "-2".into()]);
        let j = t.json();
        assert_eq!(j["columns"], json!(["n", "rate", "size", "x"]));
        assert_eq!(
            j["rows"][0],
            json!({"n": 64000, "rate": "0.98%", "size": "77.1 MiB", "x": 1.5})
        );
        assert_eq!(
            j["rows"][1],
            json!({"n": "-", "rate": 1e-5, "size": "NaN", "x": -2})
        );
    }
}
