// ---- info and query for every kind ----

use crate::{blockbloom, field, members, ok, path, scratch, text};

#[test]
fn info_and_query_read_every_kind() {
    use blockbloom::{
        BloomFilter, BloomierFilter, ClassicBloomFilter, CounterBits, CountingBloomFilter,
        DeletableBloomFilter, ScalableBloomFilter,
    };
    let dir = scratch("kinds");
    let keys: Vec<String> = members(0..3000).collect();
    let bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();

    let mut counting = CountingBloomFilter::builder()
        .capacity(3000)
        .fpr(0.01)
        .counter_bits(CounterBits::Eight)
        .seed(3)
        .build()
        .unwrap();
    let mut deletable = DeletableBloomFilter::with_capacity(3000, 0.01).unwrap();
    let mut scalable = ScalableBloomFilter::new(500, 0.01).unwrap();
    let mut plain = BloomFilter::with_capacity(3000, 0.001).unwrap();
    let mut classic = ClassicBloomFilter::with_seed(14 * 3000, 2, 5).unwrap();
    for k in &bytes {
        classic.insert_bytes(k);
        counting.insert_bytes(k);
        deletable.insert_bytes(k);
        scalable.insert_bytes(k).unwrap();
        plain.insert_bytes(k);
    }
    let pairs: Vec<(&[u8], u64)> = bytes.iter().map(|k| (*k, k.len() as u64)).collect();
    let bloomier = BloomierFilter::builder(8, 8).build_bytes(&pairs).unwrap();
    let compressed = plain.to_compressed_bytes().unwrap();
    let compressed_classic = classic.to_compressed_bytes().unwrap();

    let files = [
        ("classic.bb", classic.to_bytes(), "classic Bloom filter"),
        (
            "compressed-classic.bb",
            compressed_classic.clone(),
            "compressed filter",
        ),
        ("counting.bb", counting.to_bytes(), "counting filter"),
        (
            "deletable.bb",
            deletable.to_bytes(),
            "deletable Bloom filter",
        ),
        ("scalable.bb", scalable.to_bytes(), "scalable filter"),
        ("compressed.bb", compressed.clone(), "compressed filter"),
        ("bloomier.bb", bloomier.to_bytes(), "Bloomier filter"),
        ("plain.bb", plain.to_bytes(), "plain Bloom filter"),
    ];
    for (name, content, kind) in &files {
        let p = path(&dir, name);
        std::fs::write(&p, content).unwrap();
        let stdout = ok(&blockbloom(&["info", &p], None));
        assert_eq!(field(&stdout, "kind"), *kind, "{stdout}");
        assert_eq!(field(&stdout, "version"), "1");
        // Every member may be present (a Bloomier map: maps to a value).
        let mut args = vec!["query", p.as_str()];
        args.extend(keys[..100].iter().map(String::as_str));
        let answers = ok(&blockbloom(&args, None));
        assert_eq!(
            answers.matches("\tmaybe\n").count(),
            100,
            "{name}: {answers}"
        );
        let others = ok(&blockbloom(
            &["query", "--absent", &p, "x-1", "x-2", "x-3", "x-4", "x-5"],
            None,
        ));
        assert!(others.lines().count() >= 3, "{name}: {others}");
    }

    let info = |name: &str| ok(&blockbloom(&["info", &path(&dir, name)], None));
    let s = info("counting.bb");
    assert_eq!(field(&s, "counter bits"), "8");
    assert_eq!(field(&s, "seed"), "3");
    assert_eq!(field(&s, "k"), counting.probes().to_string());
    assert_eq!(field(&s, "blocks"), counting.num_blocks().to_string());
    assert_eq!(field(&s, "total count"), counting.total_count().to_string());
    assert_eq!(field(&s, "min-increase"), "not used");
    let est: f64 = field(&s, "est. keys").parse().unwrap();
    assert!((est - 3000.0).abs() < 300.0, "{est}");

    let s = info("deletable.bb");
    assert_eq!(field(&s, "regions"), deletable.num_regions().to_string());
    assert_eq!(
        field(&s, "collided"),
        deletable.collided_regions().to_string()
    );
    assert_eq!(
        field(&s, "region bits"),
        deletable.region_bits().to_string()
    );

    let s = info("scalable.bb");
    assert_eq!(field(&s, "keys"), scalable.len().to_string());
    assert_eq!(field(&s, "stages"), scalable.stages().len().to_string());
    assert!(scalable.stages().len() > 1);
    for (i, stage) in scalable.stages().iter().enumerate() {
        let line = field(&s, &format!("stage {i}"));
        assert!(
            line.starts_with(&format!("{} blocks", stage.num_blocks())),
            "{line}"
        );
    }

    let s = info("compressed.bb");
    assert_eq!(field(&s, "bytes"), plain.encoded_len().to_string());
    assert_eq!(field(&s, "file bytes"), compressed.len().to_string());
    assert!(field(&s, "compressed").starts_with(&compressed.len().to_string()));
    assert_eq!(field(&s, "k"), plain.probes().to_string());

    let s = info("classic.bb");
    assert_eq!(field(&s, "m"), "42000 bits");
    assert_eq!(field(&s, "k"), "2");
    assert_eq!(field(&s, "seed"), "5");
    let s = info("compressed-classic.bb");
    assert_eq!(field(&s, "m"), "42000 bits");
    assert!(field(&s, "compressed").starts_with(&compressed_classic.len().to_string()));
    let est: f64 = field(&s, "est. keys").parse().unwrap();
    assert!((est - 3000.0).abs() < 300.0, "{est}");

    let s = info("bloomier.bb");
    assert_eq!(field(&s, "keys"), "3000");
    assert_eq!(field(&s, "value bits"), "8");
    assert_eq!(field(&s, "fingerprint"), "8 bits");
    assert_eq!(field(&s, "slots"), bloomier.slots().to_string());

    // Bad bytes of every family kind: the library's typed error, a non-zero exit.
    let counting_bytes = counting.to_bytes();
    let mut unknown = plain.to_bytes();
    unknown[10] = 99;
    let mut flipped = counting_bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x04;
    let mut trailing = scalable.to_bytes();
    trailing.push(0);
    let mut cut = bloomier.to_bytes();
    cut.truncate(cut.len() - 8);
    let mut bad_zstd = compressed.clone();
    let n = bad_zstd.len();
    bad_zstd[n - 3] ^= 0xff;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("unknown.bb", unknown, "unsupported layout id 99"),
        ("flipped.bb", flipped, "checksum mismatch"),
        ("trailing.bb", trailing, "trailing bytes"),
        ("cut.bb", cut, "truncated"),
        ("bad-zstd.bb", bad_zstd, "checksum mismatch"),
    ];
    for (name, content, says) in cases {
        let p = path(&dir, name);
        std::fs::write(&p, &content).unwrap();
        for out in [
            blockbloom(&["info", &p], None),
            blockbloom(&["query", &p, "key-1"], None),
        ] {
            let (stdout, stderr) = text(&out);
            assert!(!out.status.success(), "{name}: succeeded:\n{stdout}");
            assert!(stderr.contains(says), "{name}: {stderr}");
            assert!(stderr.contains(name), "{name}: {stderr}");
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        }
        // Reading never changes the file.
        assert_eq!(std::fs::read(&p).unwrap(), content);
    }
    // `merge` takes plain filters only: another kind is the library's WrongKind error.
    let out = blockbloom(
        &[
            "merge",
            &path(&dir, "plain.bb"),
            &path(&dir, "counting.bb"),
            "-o",
            &path(&dir, "m.bb"),
        ],
        None,
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("hold a counting filter"), "{stderr}");
}
