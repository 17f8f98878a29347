// ---- parquet ----

use crate::{blockbloom, ok, path, scratch, text};

mod parquet_files {
    use std::path::Path;
    use std::sync::Arc;

    use parquet::data_type::{
        BoolType, ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, FixedLenByteArrayType,
        FloatType, Int32Type, Int64Type,
    };
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::ColumnPath;

    /// Row group `g` holds the ids `1000 g .. 1000 g + 1000` and values derived from them;
    /// every column has a Bloom filter but `plain`.
    pub fn write(path: &Path, row_groups: i64, filters: bool) {
        let schema = Arc::new(
            parse_message_type(
                "message m { required int64 id; required int32 small; required float f; \
                 required double d; required binary name (UTF8); \
                 required fixed_len_byte_array(4) code; required boolean flag; \
                 required int64 plain; }",
            )
            .unwrap(),
        );
        let mut props = WriterProperties::builder().set_dictionary_enabled(false);
        if filters {
            // (Setting the fpp or ndv switches filters on, so only when they are wanted.)
            for c in ["id", "small", "f", "d", "name", "code", "flag"] {
                props = props
                    .set_column_bloom_filter_enabled(ColumnPath::from(c), true)
                    .set_column_bloom_filter_fpp(ColumnPath::from(c), 0.01)
                    .set_column_bloom_filter_max_ndv(ColumnPath::from(c), 1000);
            }
        }
        let props = Arc::new(props.build());
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props).unwrap();
        for g in 0..row_groups {
            let ids: Vec<i64> = (1000 * g..1000 * g + 1000).collect();
            let small: Vec<i32> = ids.iter().map(|&i| -(i as i32)).collect();
            let f: Vec<f32> = ids.iter().map(|&i| i as f32 + 0.5).collect();
            let d: Vec<f64> = ids.iter().map(|&i| i as f64 / 4.0).collect();
            let names: Vec<ByteArray> = ids
                .iter()
                .map(|i| ByteArray::from(format!("name-{i}").as_str()))
                .collect();
            let codes: Vec<FixedLenByteArray> = ids
                .iter()
                .map(|&i| FixedLenByteArray::from((i as u32).to_be_bytes().to_vec()))
                .collect();
            let flags: Vec<bool> = vec![g % 2 == 0; ids.len()];
            let mut rg = w.next_row_group().unwrap();
            macro_rules! column {
                ($t:ty, $v:expr) => {{
                    let mut col = rg.next_column().unwrap().unwrap();
                    col.typed::<$t>().write_batch($v, None, None).unwrap();
                    col.close().unwrap();
                }};
            }
            column!(Int64Type, &ids);
            column!(Int32Type, &small);
            column!(FloatType, &f);
            column!(DoubleType, &d);
            column!(ByteArrayType, &names);
            column!(FixedLenByteArrayType, &codes);
            column!(BoolType, &flags);
            column!(Int64Type, &ids);
            rg.close().unwrap();
        }
        w.close().unwrap();
    }
}

/// `(row group, value) -> answer` from the command's output.
fn parquet_answers(stdout: &str) -> Vec<(usize, String, String)> {
    stdout
        .lines()
        .map(|l| {
            let mut cols = l.split('\t');
            let g = cols.next().unwrap().parse().unwrap();
            let v = cols.next().unwrap().to_string();
            let a = cols.next().unwrap().to_string();
            assert!(cols.next().is_none(), "{l}");
            (g, v, a)
        })
        .collect()
}

#[test]
fn parquet_answers_per_row_group_for_every_physical_type() {
    let dir = scratch("parquet");
    let file = dir.join("t.parquet");
    parquet_files::write(&file, 2, true);
    let file = file.to_str().unwrap();
    let answers = |column: &str, values: &[&str]| {
        let mut args = vec!["parquet", file, "--column", column];
        args.extend(values);
        parquet_answers(&ok(&blockbloom(&args, None)))
    };
    // A value of row group g is "maybe" there; the non-members of 2,000 values (1% filters)
    // are mostly "no".
    let members: [(&str, [&str; 2]); 6] = [
        ("id", ["5", "1500"]),
        ("small", ["-5", "-1500"]),
        ("f", ["5.5", "1500.5"]),
        ("d", ["1.25", "375"]),
        ("name", ["name-5", "name-1500"]),
        ("flag", ["true", "false"]),
    ];
    for (column, [in0, in1]) in members {
        let a = answers(column, &[in0, in1]);
        assert_eq!(a.len(), 4, "{column}: {a:?}");
        assert_eq!(a[0], (0, in0.to_string(), "maybe".to_string()), "{column}");
        assert_eq!(a[3], (1, in1.to_string(), "maybe".to_string()), "{column}");
    }
    let out = blockbloom(
        &[
            "parquet", file, "--column", "code", "--hex", "00000005", "000005dc",
        ],
        None,
    );
    let a = parquet_answers(&ok(&out));
    assert_eq!(a[0].2, "maybe");
    assert_eq!(a[3].2, "maybe");

    let others: Vec<String> = (5000..7000).map(|i| i.to_string()).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    let a = answers("id", &others);
    assert_eq!(a.len(), 4000);
    let maybe = a.iter().filter(|x| x.2 == "maybe").count();
    assert!(maybe <= 120, "{maybe} false positives in 4,000 lookups");
    // Negative numbers are values, not options.
    let a = answers("small", &["-1", "-2000000"]);
    assert_eq!(a[0].2, "maybe");

    // A column without filters is reported as such, row group by row group.
    let out = blockbloom(&["parquet", file, "--column", "plain", "5"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("column `plain` (INT64) has no Bloom filter in any of its 2 row groups"),
        "{stderr}"
    );
}

#[test]
fn parquet_bad_input_fails_clearly() {
    let dir = scratch("parquet-bad");
    let file = dir.join("t.parquet");
    parquet_files::write(&file, 1, true);
    let file = file.to_str().unwrap();
    let no_filters = dir.join("none.parquet");
    parquet_files::write(&no_filters, 3, false);
    let not_parquet = path(&dir, "keys.txt");
    std::fs::write(
        &not_parquet,
        "just some text, long enough to have a footer\n",
    )
    .unwrap();
    let none = no_filters.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["parquet", file, "--column", "nope", "1"],
            "the Parquet file has no column `nope`",
        ),
        (&["parquet", &not_parquet, "--column", "id", "1"], "Parquet"),
        (
            &[
                "parquet",
                &path(&dir, "missing.parquet"),
                "--column",
                "id",
                "1",
            ],
            "missing.parquet",
        ),
        (
            &["parquet", file, "--column", "id", "12x"],
            "is not a whole number",
        ),
        (
            &["parquet", file, "--column", "small", "99999999999"],
            "is not a whole number in -2147483648..=4294967295",
        ),
        (&["parquet", file, "--column", "d", "pi"], "is not a number"),
        (
            &["parquet", file, "--column", "code", "abc"],
            "has 3 bytes; column type FIXED_LEN_BYTE_ARRAY(4) holds exactly 4",
        ),
        (
            &["parquet", file, "--column", "flag", "maybe"],
            "is not true or false",
        ),
        (
            &["parquet", none, "--column", "id", "1"],
            "has no Bloom filter in any of its 3 row groups",
        ),
    ];
    for (args, says) in cases {
        let out = blockbloom(args, None);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    // No value: a usage error.
    let out = blockbloom(&["parquet", file, "--column", "id"], None);
    assert!(!out.status.success());
}

/// `info`, `query` and `merge` on a Parquet file name the command that reads its filters.
#[test]
fn filter_commands_on_a_parquet_file_point_to_the_parquet_command() {
    let dir = scratch("parquet-info");
    let file = dir.join("t.parquet");
    parquet_files::write(&file, 1, true);
    let file = file.to_str().unwrap();
    for args in [vec!["info", file], vec!["query", file, "x"]] {
        let out = blockbloom(&args, None);
        let (_, stderr) = crate::text(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains("a Parquet file")
                && stderr.contains(&format!("blockbloom parquet {file}")),
            "{args:?}: {stderr}"
        );
    }
}
