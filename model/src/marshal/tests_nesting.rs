//! The nesting bound ([`MAX_TYPE_NESTING`]): type strings just under it parse, just over it are
//! refused with [`MarshalError::NestedTooDeeply`], and hostile inputs many thousands of levels
//! deep (type strings, and `DynamicCompositeType` values whose components name their types as
//! text) are refused or ordered without overflowing a small stack.

use std::cmp::Ordering;

use super::{AbstractType as T, MarshalError, MAX_TYPE_NESTING};

/// `wrapper(` `depth` times around `leaf`, then the closing parentheses.
fn nested(wrapper: &str, leaf: &str, depth: usize) -> String {
    format!("{}{leaf}{}", wrapper.repeat(depth), ")".repeat(depth))
}

/// Runs `f` on a thread with a stack far smaller than the 2 MiB the server's threads get, so a
/// recursion that grows with the input fails the test by overflowing instead of passing by luck.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the test thread did not overflow its stack or panic")
}

fn is_too_deep<V: std::fmt::Debug>(r: &Result<V, MarshalError>) -> bool {
    matches!(r, Err(MarshalError::NestedTooDeeply { limit, .. }) if *limit == MAX_TYPE_NESTING)
}

/// A DynamicCompositeType component whose type is written as text.
fn dyn_named(name: &str, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&u16::try_from(name.len()).expect("short name").to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&u16::try_from(value.len()).expect("short value").to_be_bytes());
    out.extend_from_slice(value);
    out.push(0);
    out
}

#[test]
fn every_wrapper_parses_just_under_the_limit_and_fails_just_over() {
    for (wrapper, leaf) in [
        ("ReversedType(", "LongType"),
        ("CompositeType(", "LongType"),
        ("CompositeType(UTF8Type,", "LongType"),
        ("DynamicCompositeType(a=>", "DynamicCompositeType(b=>LongType)"),
    ] {
        // The leaf of the last case nests one level of its own.
        let extra = usize::from(leaf.contains('('));
        let at_limit = nested(wrapper, leaf, MAX_TYPE_NESTING - extra);
        let parsed = T::parse(&at_limit);
        assert!(parsed.is_ok(), "{wrapper}: {parsed:?}");
        // What parses also prints and parses back.
        let class_name = parsed.as_ref().map(T::class_name).unwrap_or_default();
        assert_eq!(T::parse(&class_name), parsed, "{wrapper}");

        let over = nested(wrapper, leaf, MAX_TYPE_NESTING + 1 - extra);
        let refused = T::parse(&over);
        assert!(is_too_deep(&refused), "{wrapper}: {refused:?}");
    }
}

#[test]
fn the_error_names_the_problem_and_quotes_only_the_start() {
    let deep = nested("ReversedType(", "BytesType", 2_300);
    let error = T::parse(&deep).expect_err("refused");
    let message = error.to_string();
    assert!(message.contains("nested too deeply"), "{message}");
    assert!(message.contains(&format!("more than {MAX_TYPE_NESTING} levels")), "{message}");
    assert!(message.starts_with("Syntax error parsing type 'ReversedType(ReversedType("), "{message}");
    assert!(message.len() < 300, "the 30 KB type string is not echoed back: {} bytes", message.len());
}

#[test]
fn a_hundred_thousand_levels_are_refused_without_overflowing() {
    for wrapper in ["ReversedType(", "CompositeType(", "DynamicCompositeType(a=>"] {
        let deep = nested(wrapper, "BytesType", 100_000);
        let refused = on_small_stack(move || T::parse(&deep));
        assert!(is_too_deep(&refused), "{wrapper}: {refused:?}");
    }
    // Unbalanced: only opening parentheses.
    let refused = on_small_stack(|| T::parse(&"CompositeType(".repeat(100_000)));
    assert!(is_too_deep(&refused), "{refused:?}");
}

#[test]
fn dynamic_component_type_text_is_bounded_too() {
    let dynamic = T::parse("DynamicCompositeType(a=>LongType)").expect("parses");
    // The type text of a component sits one level inside the column's type.
    let fits = dyn_named(&nested("ReversedType(", "BytesType", MAX_TYPE_NESTING - 1), b"x");
    assert_eq!(dynamic.validate(&fits), Ok(()));
    let too_deep = dyn_named(&nested("ReversedType(", "BytesType", MAX_TYPE_NESTING), b"x");
    let error = dynamic.validate(&too_deep).expect_err("refused");
    assert!(error.to_string().contains("nested too deeply"), "{error}");

    // The audit's column name: ReversedType( 2,300 deep, about 30 KB.
    let hostile = dyn_named(&nested("ReversedType(", "BytesType", 2_300), b"x");
    let (validated, compared, shown) = on_small_stack(move || {
        (dynamic.validate(&hostile), dynamic.compare(&hostile, &hostile), dynamic.to_display_string(&hostile))
    });
    let error = validated.expect_err("refused");
    assert!(error.to_string().contains("nested too deeply"), "{error}");
    assert_eq!(compared, Ordering::Equal);
    assert!(shown.starts_with("0x"), "an invalid value shows as hex");
}

#[test]
fn dynamic_values_nesting_dynamic_values_are_bounded() {
    // Each level is a component typed `DynamicCompositeType` by name whose value is the next
    // level: 25 bytes a level, so a 64 KB column name could nest about 2,600 levels.
    let levels = 2_000;
    let mut value = dyn_named("BytesType", b"leaf");
    for _ in 0..levels {
        value = dyn_named("DynamicCompositeType", &value);
    }
    let mut other = value.clone();
    // The leaf's last byte differs: after it come its end-of-component byte and each level's.
    let leaf_end = other.len() - levels - 2;
    other[leaf_end] ^= 1;
    let dynamic = T::DynamicComposite(vec![]);
    let (validated, compared, shown, parsed) = on_small_stack(move || {
        let text = format!("{}BytesType@6c656166", "DynamicCompositeType@".repeat(levels));
        (
            dynamic.validate(&value),
            dynamic.compare(&value, &other),
            dynamic.to_display_string(&value),
            dynamic.from_display_string(&text),
        )
    });
    let error = validated.expect_err("refused");
    assert!(error.to_string().contains("nested too deeply"), "{error}");
    assert_ne!(compared, Ordering::Equal, "past the bound, values still order (by their bytes)");
    assert!(shown.starts_with("0x"));
    assert!(parsed.is_err(), "{parsed:?}");

    // A few levels are fine.
    let mut shallow = dyn_named("LongType", &7i64.to_be_bytes());
    for _ in 0..3 {
        shallow = dyn_named("DynamicCompositeType", &shallow);
    }
    assert_eq!(T::DynamicComposite(vec![]).validate(&shallow), Ok(()));
}

#[test]
fn composite_values_follow_their_type_to_the_limit() {
    // A value of CompositeType nested to the limit validates, compares and displays.
    let t = T::parse(&nested("CompositeType(", "LongType", MAX_TYPE_NESTING)).expect("parses");
    let mut value = 5i64.to_be_bytes().to_vec();
    let mut bigger = 6i64.to_be_bytes().to_vec();
    for _ in 0..MAX_TYPE_NESTING {
        for v in [&mut value, &mut bigger] {
            let mut wrapped = u16::try_from(v.len()).expect("short").to_be_bytes().to_vec();
            wrapped.extend_from_slice(v);
            wrapped.push(0);
            *v = wrapped;
        }
    }
    let (validated, compared, shown) =
        on_small_stack(move || (t.validate(&value), t.compare(&value, &bigger), t.to_display_string(&value)));
    assert_eq!(validated, Ok(()));
    assert_eq!(compared, Ordering::Less);
    assert!(shown.ends_with('5'), "{shown}");
}
