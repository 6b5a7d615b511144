//! Entry names: their order is the base keys' order, and they decode back.

use super::*;
use crate::dht::Partitioner;

fn key(p: Partitioner, k: &str) -> DecoratedKey {
    p.decorate(k.as_bytes())
}

#[test]
fn entry_names_sort_as_their_keys_and_decode_back() {
    for p in [Partitioner::Murmur3, Partitioner::Random, Partitioner::ByteOrdered] {
        let mut keys: Vec<DecoratedKey> = (0..300).map(|i| key(p, &format!("k{i}"))).collect();
        keys.push(DecoratedKey::new(Token::from_bytes(&[0, 0, 1]), b"a".to_vec()));
        keys.push(DecoratedKey::new(Token::from_bytes(&[0]), b"b\0".to_vec()));
        keys.push(DecoratedKey::new(Token::from_bytes(&[0]), b"b".to_vec()));
        keys.sort();
        let names: Vec<Vec<u8>> = keys.iter().map(entry_name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "{p:?}: entry names out of key order");
        for (k, n) in keys.iter().zip(&names) {
            assert_eq!(decode_entry_name(n).as_ref(), Some(k));
        }
    }
    assert_eq!(decode_entry_name(&[5, 0, 7]), None);
    assert_eq!(decode_entry_name(&[5]), None);
}

#[test]
fn entry_bounds_cover_exactly_the_tokens_between() {
    let p = Partitioner::Murmur3;
    let keys: Vec<DecoratedKey> = {
        let mut k: Vec<_> = (0..200).map(|i| key(p, &format!("r{i}"))).collect();
        k.sort();
        k
    };
    let (Some(lo), Some(hi)) = (keys.get(50), keys.get(150)) else { panic!("200 keys") };
    let start = KeyBound::Key { key: lo.clone(), inclusive: true };
    let end = KeyBound::Key { key: hi.clone(), inclusive: true };
    let (low, high) = entry_bounds(&start, &end);
    let inside: Vec<&DecoratedKey> = keys
        .iter()
        .filter(|k| {
            let n = entry_name(k);
            n >= low && n <= high
        })
        .collect();
    assert_eq!(inside.len(), 101);
    assert_eq!(inside.first(), Some(&lo));
    assert_eq!(inside.last(), Some(&hi));
    assert_eq!(entry_bounds(&KeyBound::Unbounded, &KeyBound::Unbounded), (Vec::new(), Vec::new()));
}
