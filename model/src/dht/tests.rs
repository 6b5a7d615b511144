//! Partitioner tests: known token values from Cassandra and its drivers, string round trips,
//! ring arithmetic, and one suite run over all four partitioners.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x51b1)
}

fn murmur(v: i64) -> Token {
    Partitioner::Murmur3.token_from_string(&v.to_string()).expect("valid long")
}

fn random(v: u128) -> Token {
    Partitioner::Random.token_from_string(&v.to_string()).expect("valid random token")
}

fn bop(hex: &str) -> Token {
    Partitioner::ByteOrdered.token_from_string(hex).expect("valid hex")
}

fn opp(s: &str) -> Token {
    Partitioner::OrderPreserving.token_for_key(s.as_bytes())
}

// ---- MurmurHash3, Cassandra's variant ----

/// `token(id)` for `int` keys 1..=20 (4-byte big-endian), from cassandra-dtest's
/// replication_test.py, which checks them against a running Cassandra.
const DTEST_INT_TOKENS: [(i32, i64); 20] = [
    (1, -4069959284402364209),
    (2, -3248873570005575792),
    (3, 9010454139840013625),
    (4, -2729420104000364805),
    (5, -7509452495886106294),
    (6, 2705480034054113608),
    (7, 1634052884888577606),
    (8, -3799847372828181882),
    (9, 3728482343045213994),
    (10, -6715243485458697746),
    (11, -4156302194539278891),
    (12, 8582886034424406875),
    (13, -5034495173465742853),
    (14, 4279681877540623768),
    (15, -1191135763843456182),
    (16, -5477287129830487822),
    (17, 5467144456125416399),
    (18, -2695747960476065067),
    (19, -3974532302236993209),
    (20, 1388667306199997068),
];

#[test]
fn murmur3_int_keys_match_cassandra() {
    for (id, expected) in DTEST_INT_TOKENS {
        let key = id.to_be_bytes();
        assert_eq!(hash3_x64_128(&key, 0).0, expected, "id {id}");
        let token = Partitioner::Murmur3.token_for_key(&key);
        assert_eq!(Partitioner::Murmur3.token_to_string(&token), expected.to_string(), "id {id}");
    }
}

/// Vectors from the DataStax Python driver's murmur3 tests (tests/unit/test_metadata.py), which
/// reproduce Cassandra's sign-extended tail: the second and third keys end in bytes >= 0x80.
#[test]
fn murmur3_driver_vectors_including_high_tail_bytes() {
    let repeated: Vec<u8> = [0x00, 0xff, 0x10, 0xfa, 0x99].repeat(10);
    let vectors: [(&[u8], i64); 5] = [
        (b"123", -7468325962851647638),
        (&repeated, 5837342703291459765),
        (&[0xfe; 8], -8927430733708461935),
        (&[0x10; 8], 1446172840243228796),
        (b"9223372036854775807", 7162290910810015547),
    ];
    for (key, expected) in vectors {
        assert_eq!(hash3_x64_128(key, 0).0, expected, "key {key:02x?}");
    }
}

/// Reference Murmur3 (the `murmur3` crate) agrees with Cassandra's on keys whose tail bytes are all
/// below 0x80 and differs when a tail byte is 0x80 or more.
#[test]
fn murmur3_differs_from_reference_only_on_high_tail_bytes() {
    let reference = |key: &[u8]| {
        let h = ::murmur3::murmur3_x64_128(&mut std::io::Cursor::new(key), 0).expect("in-memory read");
        h as u64 as i64
    };
    for key in [&b"hello"[..], b"0123456789abcdef", b"a longer key that spans two full blocks!", &[0xff; 16]] {
        assert_eq!(hash3_x64_128(key, 0).0, reference(key), "key {key:02x?}");
    }
    for key in [&[0xfe; 8][..], &[0x80], b"0123456789abcdef\xff"] {
        assert_ne!(hash3_x64_128(key, 0).0, reference(key), "key {key:02x?}");
    }
}

#[test]
fn murmur3_minimum_and_encoding() {
    let p = Partitioner::Murmur3;
    assert_eq!(p.min_token(), Token::minimum());
    assert_eq!(p.token_to_string(&p.min_token()), i64::MIN.to_string());
    assert_eq!(p.token_from_string(&i64::MIN.to_string()), Ok(Token::minimum()));
    assert_eq!(murmur_normalize(i64::MIN), i64::MAX);
    assert_eq!(murmur_normalize(-5), -5);
    // Sign-flipped big-endian: -1 < 0 < 1 as bytes, min below everything.
    assert_eq!(murmur(-1).as_bytes(), [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(murmur(0).as_bytes(), [0x80, 0, 0, 0, 0, 0, 0, 0]);
    assert!(p.min_token() < murmur(i64::MIN + 1));
    assert!(murmur(i64::MIN + 1) < murmur(-1) && murmur(-1) < murmur(0) && murmur(0) < murmur(i64::MAX));
    assert!(p.validate_token(&Token::from_bytes(&[0; 8])).is_err(), "non-canonical minimum");
    assert!(p.validate_token(&Token::from_bytes(&[1; 3])).is_err());
    assert!(matches!(p.token_from_string("12x"), Err(DhtError::InvalidToken { .. })));
    assert!(p.token_from_string("9223372036854775808").is_err());
}

// ---- RandomPartitioner ----

#[test]
fn random_tokens_match_known_values() {
    let p = Partitioner::Random;
    // From the DataStax Python driver's MD5 token tests.
    let known = [
        (&b"123"[..], "42767516990368493138776584305024125808"),
        (b"9223372036854775807", "28528976619278518853815276204542453639"),
        // MD5("key1") = c2add694... is negative as a signed number; the token is its absolute value.
        (b"key1", "81509516161424251288255223397843705139"),
    ];
    for (key, expected) in known {
        let token = p.token_for_key(key);
        assert_eq!(p.token_to_string(&token), expected);
        assert_eq!(token.0.len(), 16);
        assert_eq!(p.token_from_string(expected), Ok(token));
    }
}

#[test]
fn random_minimum_range_and_parsing() {
    let p = Partitioner::Random;
    assert_eq!(p.token_to_string(&p.min_token()), "-1");
    assert_eq!(p.token_from_string("-1"), Ok(Token::minimum()));
    assert_eq!(p.token_from_string("0"), Ok(Token::from_bytes(&[0; 16])));
    assert!(p.min_token() < random(0));
    let max = "170141183460469231731687303715884105728"; // 2^127
    assert_eq!(p.token_to_string(&p.token_from_string(max).expect("2^127 is a valid token")), max);
    assert!(p.token_from_string("170141183460469231731687303715884105729").is_err());
    assert!(p.token_from_string("-2").is_err());
    assert!(p.token_from_string("-+1").is_err());
    assert!(p.token_from_string("abc").is_err());
    // abs(-2^127) = 2^127: the one digest whose absolute value reaches the top of the range.
    assert_eq!(i128::MIN.unsigned_abs(), RANDOM_MAX);
}

#[test]
fn random_midpoint_and_split_values() {
    let p = Partitioner::Random;
    let min = p.min_token();
    // The minimum acts as zero: the full ring's midpoint is 2^126.
    assert_eq!(p.token_to_string(&p.midpoint(&min, &min)), (1u128 << 126).to_string());
    assert_eq!(p.midpoint(&random(0), &random(10)), random(5));
    assert_eq!(p.midpoint(&random(3), &random(4)), random(3));
    // Wrapping: (10, 0] has length 2^127 - 10; halfway is 10 + 2^126 - 5.
    assert_eq!(p.midpoint(&random(10), &random(0)), random((1 << 126) + 5));
    assert_eq!(p.split(&min, &min, 4), vec![min.clone(), random(1 << 125), random(1 << 126), random(3 << 125), min]);
}

// ---- Murmur3 ring arithmetic ----

#[test]
fn murmur3_midpoint_and_split_values() {
    let p = Partitioner::Murmur3;
    let min = p.min_token();
    assert_eq!(p.midpoint(&murmur(0), &murmur(10)), murmur(5));
    assert_eq!(p.midpoint(&murmur(-11), &murmur(0)), murmur(-6));
    // Cassandra's wrap uses a ring of MAX - MIN = 2^64 - 1: (min, min] halves at -1.
    assert_eq!(p.midpoint(&min, &min), murmur(-1));
    // (10, -10]: (L + R + MAX - MIN) / 2 = 2^63 - 1, which is MAX and not folded.
    assert_eq!(p.midpoint(&murmur(10), &murmur(-10)), murmur(i64::MAX));
    // (5, 3]: (2^64 - 1 + 8) / 2 = 2^63 + 3 folds to MIN + 4.
    assert_eq!(p.midpoint(&murmur(5), &murmur(3)), murmur(i64::MIN + 4));
    // Boundaries at MIN + floor((2^64 - 1) * i / 4).
    let ring = i128::from(u64::MAX);
    let expected: Vec<Token> = std::iter::once(min.clone())
        .chain((1..4).map(|i| murmur((i128::from(i64::MIN) + ring * i / 4) as i64)))
        .chain(std::iter::once(min.clone()))
        .collect();
    assert_eq!(p.split(&min, &min, 4), expected);
    assert_eq!(p.split(&murmur(0), &murmur(2), 10), vec![murmur(0), murmur(1), murmur(2)]);
}

// ---- describe_ownership ----

#[test]
fn ownership_matches_cassandra_rounding() {
    let r = Partitioner::Random;
    assert_eq!(r.describe_ownership(&[random(0), random(1 << 126)]), vec![0.5, 0.5]);
    assert_eq!(r.describe_ownership(&[random(5)]), vec![1.0]);
    assert!(r.describe_ownership(&[]).is_empty());
    let third = RANDOM_MAX / 3;
    let owned = r.describe_ownership(&[random(0), random(third), random(2 * third)]);
    // Cassandra returns floats: each share is the f32 nearest the exact fraction.
    let f32_third = f64::from((third as f32) / (RANDOM_MAX as f32));
    assert_eq!(owned[1], f32_third);
    assert_eq!(owned[2], f32_third);
    assert!((owned[0] - 1.0 / 3.0).abs() < 1e-6);

    let m = Partitioner::Murmur3;
    assert_eq!(m.describe_ownership(&[m.min_token(), murmur(0)]), vec![0.5, 0.5]);
    let step = (u64::MAX / 3) as i128;
    let tokens: Vec<Token> = (0..3).map(|i| murmur((i128::from(i64::MIN) + 1 + step * i) as i64)).collect();
    // Murmur3 rounds to 6 decimals before converting to float.
    let rounded = f64::from(0.333333f32);
    assert_eq!(m.describe_ownership(&tokens), vec![rounded, rounded, rounded]);
}

#[test]
fn ownership_of_ordered_partitioners_measures_key_space() {
    let b = Partitioner::ByteOrdered;
    assert_eq!(b.describe_ownership(&[bop("40"), bop("80"), bop("c0")]), vec![0.5, 0.25, 0.25]);
    let o = Partitioner::OrderPreserving;
    let owned = o.describe_ownership(&[o.min_token(), opp("\u{8000}")]);
    assert_eq!(owned, vec![0.5, 0.5]);
}

// ---- ByteOrdered and OrderPreserving ----

#[test]
fn byte_ordered_tokens_are_the_key_in_hex() {
    let p = Partitioner::ByteOrdered;
    let token = p.token_for_key(&[0xab, 0x01, 0xff]);
    assert_eq!(token, Token::from_bytes(&[0xab, 0x01, 0xff]));
    assert_eq!(p.token_to_string(&token), "ab01ff");
    assert_eq!(p.token_from_string("AB01FF"), Ok(token));
    assert_eq!(p.token_from_string("abc"), Ok(Token::from_bytes(&[0x0a, 0xbc])), "odd length gets a leading 0");
    assert_eq!(p.token_from_string(""), Ok(Token::minimum()));
    assert!(matches!(p.token_from_string("zz"), Err(DhtError::InvalidToken { .. })));
    assert_eq!(p.token_to_string(&p.min_token()), "");
}

#[test]
fn byte_ordered_midpoint_appends_half_byte() {
    let p = Partitioner::ByteOrdered;
    assert_eq!(p.midpoint(&bop("61"), &bop("63")), bop("62"));
    assert_eq!(p.midpoint(&bop("61"), &bop("62")), bop("6180"));
    assert_eq!(p.midpoint(&p.min_token(), &p.min_token()), bop("80"));
    // Shorter tokens are padded with zeros: "61" vs "6200" is 0x6100 vs 0x6200.
    assert_eq!(p.midpoint(&bop("61"), &bop("6200")), bop("6180"));
    // Wrapping: (0xf0, 0x10] on a 1-byte ring: 0xf0 + 0x20 / 2 = 0x100 -> 0x00.
    assert_eq!(p.midpoint(&bop("f0"), &bop("10")), bop("00"));
}

#[test]
fn order_preserving_tokens_are_strings() {
    let p = Partitioner::OrderPreserving;
    let token = p.token_for_key("héllo".as_bytes());
    assert_eq!(p.token_to_string(&token), "héllo");
    assert_eq!(p.token_from_string("héllo"), Ok(token));
    assert_eq!(p.token_to_string(&p.min_token()), "");
    assert_eq!(p.token_for_key(b""), p.min_token());
    // Java orders strings by UTF-16 code unit: U+10000 (D800 DC00) sorts before U+FFFF,
    // although its UTF-8 encoding sorts after.
    assert!(opp("\u{10000}") < opp("\u{ffff}"));
    assert!("\u{10000}".as_bytes() > "\u{ffff}".as_bytes());
    assert!(opp("a") < opp("b") && opp("a") < opp("aa") && opp("") < opp("\0"));
    // Cassandra refuses keys that are not UTF-8.
    assert!(matches!(p.try_token_for_key(&[0x61, 0xff]), Err(DhtError::InvalidKey { .. })));
    assert_eq!(p.try_token_for_key(b"ok"), Ok(opp("ok")));
    assert_eq!(p.token_to_string(&p.token_for_key(&[0x61, 0xff])), "a\u{fffd}");
}

#[test]
fn order_preserving_midpoint_works_per_utf16_unit() {
    let p = Partitioner::OrderPreserving;
    assert_eq!(p.midpoint(&opp("a"), &opp("c")), opp("b"));
    assert_eq!(p.midpoint(&opp("a"), &opp("b")), opp("a\u{8000}"));
    assert_eq!(p.midpoint(&p.min_token(), &p.min_token()), opp("\u{8000}"));
    assert_eq!(p.midpoint(&opp("aa"), &opp("ac")), opp("ab"));
}

#[test]
fn ordered_splits_advance_inside_the_range() {
    let p = Partitioner::ByteOrdered;
    let pieces = p.split(&bop("00"), &bop("10"), 4);
    assert_eq!(pieces, vec![bop("00"), bop("04"), bop("08"), bop("0c"), bop("10")]);
    let p = Partitioner::OrderPreserving;
    let pieces = p.split(&opp("a"), &opp("c"), 2);
    assert_eq!(pieces, vec![opp("a"), opp("b"), opp("c")]);
}

// ---- Names ----

#[test]
fn class_names() {
    for p in Partitioner::ALL {
        assert_eq!(Partitioner::from_class_name(p.class_name()), Ok(p));
        assert_eq!(Partitioner::from_class_name(p.short_name()), Ok(p));
        assert_eq!(p.class_name(), format!("org.apache.cassandra.dht.{}", p.short_name()));
        assert_eq!(p.to_string().parse::<Partitioner>(), Ok(p));
    }
    assert_eq!(Partitioner::from_class_name(" RandomPartitioner\n"), Ok(Partitioner::Random));
    assert!(matches!(Partitioner::from_class_name("FooPartitioner"), Err(DhtError::UnknownPartitioner(_))));
    assert!(matches!(
        Partitioner::from_class_name("com.example.RandomPartitioner"),
        Err(DhtError::UnknownPartitioner(_))
    ));
    assert!(matches!(
        Partitioner::from_class_name("CollatingOrderPreservingPartitioner"),
        Err(DhtError::UnsupportedPartitioner(_))
    ));
    assert!(matches!(Partitioner::from_class_name("randompartitioner"), Err(DhtError::UnknownPartitioner(_))));
    assert!(Partitioner::ByteOrdered.preserves_order() && Partitioner::OrderPreserving.preserves_order());
    assert!(!Partitioner::Random.preserves_order() && !Partitioner::Murmur3.preserves_order());
}

// ---- Range and Bounds ----

#[test]
fn range_contains_and_wrapping() {
    let r = Range::new(bop("10"), bop("20"));
    assert!(!r.is_wrapping());
    assert!(!r.contains(&bop("10")), "left is exclusive");
    assert!(r.contains(&bop("11")) && r.contains(&bop("20")));
    assert!(!r.contains(&bop("2000")) && !r.contains(&bop("05")) && !r.contains(&Token::minimum()));

    let w = Range::new(bop("20"), bop("10"));
    assert!(w.is_wrapping());
    assert!(w.contains(&bop("30")) && w.contains(&bop("05")) && w.contains(&bop("10")));
    assert!(w.contains(&Token::minimum()));
    assert!(!w.contains(&bop("20")) && !w.contains(&bop("15")));

    // Equal ends are the whole ring, whatever the token.
    for full in [Range::new(bop("10"), bop("10")), Range::full_ring()] {
        assert!(full.is_full_ring() && full.is_wrapping());
        for t in [Token::minimum(), bop("00"), bop("10"), bop("ffff")] {
            assert!(full.contains(&t), "{full:?} {t:?}");
        }
    }

    // A range ending at the minimum runs to the end of the ring.
    let to_end = Range::new(bop("80"), Token::minimum());
    assert!(to_end.contains(&bop("ff")) && to_end.contains(&Token::minimum()) && !to_end.contains(&bop("10")));
}

#[test]
fn range_unwrap() {
    let min = Token::minimum();
    let r = Range::new(bop("10"), bop("20"));
    assert_eq!(r.unwrap(), vec![r.clone()]);
    assert_eq!(
        Range::new(bop("20"), bop("10")).unwrap(),
        vec![Range::new(bop("20"), min.clone()), Range::new(min.clone(), bop("10"))]
    );
    let to_end = Range::new(bop("20"), min.clone());
    assert_eq!(to_end.unwrap(), vec![to_end.clone()]);
    assert_eq!(Range::full_ring().unwrap(), vec![Range::full_ring()]);
    assert_eq!(
        Range::new(bop("10"), bop("10")).unwrap(),
        vec![Range::new(bop("10"), min.clone()), Range::new(min, bop("10"))]
    );
    // Unwrapping keeps exactly the same tokens.
    let w = Range::new(bop("20"), bop("10"));
    for t in [bop("00"), bop("10"), bop("15"), bop("20"), bop("30"), Token::minimum()] {
        assert_eq!(w.contains(&t), w.unwrap().iter().any(|p| p.contains(&t)), "{t:?}");
    }
}

#[test]
fn range_intersections() {
    let r = |a: &str, b: &str| Range::new(bop(a), bop(b));
    assert_eq!(r("10", "30").intersection_with(&r("20", "40")), vec![r("20", "30")]);
    assert!(r("10", "20").intersection_with(&r("20", "30")).is_empty());
    assert!(!r("10", "20").intersects(&r("30", "40")));
    assert_eq!(r("10", "40").intersection_with(&r("20", "30")), vec![r("20", "30")]);
    // Wrapping (40, 10] against (05, 50]: meets at (05, 10] and (40, 50].
    let mut both = r("40", "10").intersection_with(&r("05", "50"));
    both.sort_by(|a, b| a.left.cmp(&b.left));
    assert_eq!(both, vec![r("05", "10"), r("40", "50")]);
    // Two wrapping ranges.
    let mut ww = r("40", "10").intersection_with(&r("30", "20"));
    ww.sort_by(|a, b| a.left.cmp(&b.left));
    assert_eq!(ww, vec![r("40", "10")]);
    assert_eq!(r("40", "10").intersection_with(&r("50", "30")), vec![r("50", "10")]);
    // (50, 45] is everything but (45, 50], so it cuts (40, 10] in two.
    let mut ww = r("40", "10").intersection_with(&r("50", "45"));
    ww.sort_by(|a, b| a.left.cmp(&b.left));
    assert_eq!(ww, vec![r("40", "45"), r("50", "10")]);
    assert!(r("40", "10").intersects(&r("50", "30")));
    assert!(Range::full_ring().contains_range(&r("40", "10")));
    assert!(r("40", "10").contains_range(&r("50", "60")));
    assert!(!r("10", "40").contains_range(&r("30", "20")));
    assert!(r("10", "20").intersects_bounds(&Bounds::new(bop("20"), bop("20"))));
    assert!(!r("10", "20").intersects_bounds(&Bounds::new(bop("10"), bop("10"))));
    assert!(r("10", "20").intersects_bounds(&Bounds::new(bop("05"), bop("15"))));
}

#[test]
fn bounds_contains() {
    let b = Bounds::new(bop("10"), bop("20"));
    assert!(b.contains(&bop("10")) && b.contains(&bop("15")) && b.contains(&bop("20")));
    assert!(!b.contains(&bop("05")) && !b.contains(&bop("21")));
    let point = Bounds::new(bop("10"), bop("10"));
    assert!(point.contains(&bop("10")) && !point.contains(&bop("11")) && !point.contains(&Token::minimum()));
    let all = Bounds::new(Token::minimum(), Token::minimum());
    assert!(all.contains(&Token::minimum()) && all.contains(&bop("ff")));
    let to_end = Bounds::new(bop("10"), Token::minimum());
    assert!(to_end.contains(&bop("10")) && to_end.contains(&bop("ff")) && !to_end.contains(&bop("05")));
}

// ---- One suite, every partitioner ----

fn random_key(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.gen_range(1..40);
    (0..len).map(|_| rng.gen::<u8>()).collect()
}

fn random_utf8_key(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.gen_range(1..12);
    let s: String = (0..len)
        .map(|_| match rng.gen_range(0..4) {
            0 => rng.gen_range('a'..='z'),
            1 => rng.gen_range('\u{80}'..='\u{7ff}'),
            2 => rng.gen_range('\u{e000}'..='\u{ffff}'),
            _ => rng.gen_range('\u{10000}'..='\u{10ffff}'),
        })
        .collect();
    s.into_bytes()
}

/// Tokens of random keys plus random tokens, for the generic suite.
fn sample_tokens(p: Partitioner, rng: &mut StdRng, count: usize) -> Vec<Token> {
    (0..count)
        .map(|i| match (i % 2, p) {
            (0, Partitioner::OrderPreserving) => p.token_for_key(&random_utf8_key(rng)),
            (0, _) => p.token_for_key(&random_key(rng)),
            _ => p.random_token(rng),
        })
        .collect()
}

#[test]
fn every_partitioner_min_token_sorts_first() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        assert_eq!(p.token_for_key(b""), p.min_token(), "{p}");
        assert!(p.min_token().is_minimum());
        for t in sample_tokens(p, &mut rng, 200) {
            assert!(p.min_token() < t, "{p}: {t:?}");
            assert_eq!(p.validate_token(&t), Ok(()), "{p}: {t:?}");
        }
    }
}

#[test]
fn every_partitioner_string_round_trip() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut tokens = sample_tokens(p, &mut rng, 200);
        tokens.push(p.min_token());
        for t in tokens {
            let s = p.token_to_string(&t);
            assert_eq!(p.token_from_string(&s), Ok(t.clone()), "{p}: {s}");
        }
    }
}

#[test]
fn every_partitioner_byte_order_matches_token_value_order() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut tokens = sample_tokens(p, &mut rng, 300);
        tokens.push(p.min_token());
        tokens.sort();
        for pair in tokens.windows(2) {
            let (a, b) = (p.token_to_string(&pair[0]), p.token_to_string(&pair[1]));
            let ordered = match p {
                Partitioner::Random => a.parse::<i128>().ok() <= b.parse::<i128>().ok() || b.len() > a.len(),
                Partitioner::Murmur3 => a.parse::<i64>().ok() <= b.parse::<i64>().ok(),
                Partitioner::ByteOrdered => hex::decode(&a).ok() <= hex::decode(&b).ok(),
                // Java's String.compareTo: by UTF-16 code unit.
                Partitioner::OrderPreserving => a.encode_utf16().le(b.encode_utf16()),
            };
            assert!(ordered, "{p}: {a} then {b}");
        }
    }
}

#[test]
fn every_partitioner_decorated_keys_order_by_token_then_key() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut keys: Vec<DecoratedKey> = (0..100).map(|_| p.decorate(&random_utf8_key(&mut rng))).collect();
        keys.sort();
        for pair in keys.windows(2) {
            assert!(pair[0].token < pair[1].token || (pair[0].token == pair[1].token && pair[0].key <= pair[1].key));
            assert_eq!(pair[0].token, p.token_for_key(&pair[0].key));
        }
    }
}

#[test]
fn every_partitioner_midpoint_lies_in_the_range() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut tokens = sample_tokens(p, &mut rng, 60);
        tokens.push(p.min_token());
        for l in &tokens {
            for r in &tokens {
                let mid = p.midpoint(l, r);
                let range = Range::new(l.clone(), r.clone());
                assert!(range.contains(&mid) || mid == *l, "{p}: mid {mid:?} of {range:?}");
                assert_eq!(p.validate_token(&mid), Ok(()), "{p}: {mid:?}");
                // Ordered partitioners never round down onto an end.
                if p.preserves_order() && l != r {
                    assert!(mid != *l && mid != *r, "{p}: {mid:?}");
                }
            }
        }
    }
}

#[test]
fn every_partitioner_split_advances_around_the_range() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut tokens = sample_tokens(p, &mut rng, 20);
        tokens.push(p.min_token());
        for l in &tokens {
            for r in &tokens {
                for n in [1, 2, 5, 16] {
                    let pieces = p.split(l, r, n);
                    assert_eq!(pieces.first(), Some(l));
                    assert_eq!(pieces.last(), Some(r));
                    assert!(pieces.len() <= n + 1);
                    let range = Range::new(l.clone(), r.clone());
                    let inner = &pieces[1..pieces.len() - 1];
                    for (k, t) in inner.iter().enumerate() {
                        assert!(range.contains(t) && t != r && t != l, "{p}: {t:?} in {range:?}");
                        assert_eq!(p.validate_token(t), Ok(()));
                        if let Some(next) = inner.get(k + 1) {
                            // Each boundary is closer to `left`, going round the ring, than the next.
                            assert!(Range::new(l.clone(), next.clone()).contains(t), "{p}: {t:?} before {next:?}");
                        }
                    }
                    // Big ranges get all the pieces asked for.
                    if l != r && (p == Partitioner::Random || p == Partitioner::Murmur3) {
                        assert_eq!(pieces.len(), n + 1, "{p}: {range:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_partitioner_ownership_covers_the_ring() {
    let mut rng = rng();
    for p in Partitioner::ALL {
        let mut tokens = sample_tokens(p, &mut rng, 10);
        tokens.sort();
        tokens.dedup();
        let owned = p.describe_ownership(&tokens);
        assert_eq!(owned.len(), tokens.len());
        assert!(owned.iter().all(|&f| (0.0..=1.0).contains(&f)), "{p}: {owned:?}");
        let sum: f64 = owned.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{p}: sum {sum}");
    }
}

#[test]
fn random_tokens_stay_in_range() {
    let mut rng = rng();
    for _ in 0..1000 {
        assert_ne!(Partitioner::Murmur3.random_token(&mut rng), Token::minimum());
        let t = Partitioner::Random.random_token(&mut rng);
        assert!(random_decode(&t).is_some_and(|v| v <= RANDOM_MAX));
    }
    let s = Partitioner::OrderPreserving.token_to_string(&Partitioner::OrderPreserving.random_token(&mut rng));
    assert_eq!(s.len(), 16);
    assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
}
