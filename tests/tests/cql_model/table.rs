//! Random tables: their columns, key order and the CQL that names their rows.

use super::*;

/// The names of the regular columns, in `SELECT *`'s order (by name): one sorts before the
/// key columns' names, so that `SELECT *` shows keys first by their kind, not their name.
pub(crate) const REGULAR: [&str; 3] = ["a", "q", "z"];

#[derive(Clone, Debug)]
pub(crate) struct Schema {
    /// Partition key columns `pk0`, `pk1`.
    pub(crate) pk: Vec<Ty>,
    /// Clustering columns `ck0`, `ck1` and whether each is DESC.
    pub(crate) ck: Vec<(Ty, bool)>,
    /// Regular columns, named by [`REGULAR`].
    pub(crate) regular: Vec<Ty>,
    /// The order CREATE TABLE declares the columns in (indexes into `SELECT *`'s order).
    pub(crate) declared: Vec<usize>,
}

impl Schema {
    pub(crate) fn create(&self, table: &str) -> String {
        let names = self.names();
        let types = self.types();
        let columns: Vec<String> = self.declared.iter().map(|i| format!("{} {}", names[*i], types[*i].cql())).collect();
        let pk: Vec<String> = (0..self.pk.len()).map(|i| format!("pk{i}")).collect();
        let mut key = if pk.len() == 1 { pk[0].clone() } else { format!("({})", pk.join(", ")) };
        for i in 0..self.ck.len() {
            key.push_str(&format!(", ck{i}"));
        }
        let mut s = format!("CREATE TABLE {KS}.{table} ({}, PRIMARY KEY ({key}))", columns.join(", "));
        if !self.ck.is_empty() {
            let order: Vec<String> = self
                .ck
                .iter()
                .enumerate()
                .map(|(i, (_, desc))| format!("ck{i} {}", if *desc { "DESC" } else { "ASC" }))
                .collect();
            s.push_str(&format!(" WITH CLUSTERING ORDER BY ({})", order.join(", ")));
        }
        s
    }

    /// `SELECT *`'s columns: partition key, clustering, then the others by name.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = (0..self.pk.len()).map(|i| format!("pk{i}")).collect();
        n.extend((0..self.ck.len()).map(|i| format!("ck{i}")));
        n.extend(REGULAR[..self.regular.len()].iter().map(|n| n.to_string()));
        n
    }

    pub(crate) fn types(&self) -> Vec<Ty> {
        self.pk.iter().copied().chain(self.ck.iter().map(|(t, _)| *t)).chain(self.regular.iter().copied()).collect()
    }

    /// The table's order of rows: each clustering column by its type, reversed if DESC.
    pub(crate) fn compare_clustering(&self, a: &[V], b: &[V]) -> Ordering {
        for (i, (ty, desc)) in self.ck.iter().enumerate() {
            let o = ty.compare(&a[i], &b[i]);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// `pk0 IN (..)` (or `=` for one value) for each partition key column.
    pub(crate) fn partitions_clause(&self, values: &[Vec<V>]) -> String {
        let parts: Vec<String> = values
            .iter()
            .zip(&self.pk)
            .enumerate()
            .map(|(i, (vs, t))| match vs.as_slice() {
                [v] => format!("pk{i} = {}", t.literal(v)),
                vs => format!("pk{i} IN ({})", vs.iter().map(|v| t.literal(v)).collect::<Vec<_>>().join(", ")),
            })
            .collect();
        parts.join(" AND ")
    }

    /// The partitions of [`Schema::partitions_clause`], in the order of the answer: each
    /// column's values sorted by its type, without repeats, and every combination of them.
    pub(crate) fn partitions_of(&self, values: &[Vec<V>]) -> Vec<Vec<V>> {
        let mut out: Vec<Vec<V>> = vec![Vec::new()];
        for (vs, ty) in values.iter().zip(&self.pk) {
            let mut vs = vs.clone();
            vs.sort_by(|a, b| ty.compare(a, b));
            vs.dedup();
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    vs.iter().cloned().map(move |v| {
                        let mut p = prefix.clone();
                        p.push(v);
                        p
                    })
                })
                .collect();
        }
        out
    }

    /// `pk0 = .. AND pk1 = ..`, then `ck0 = ..` for each clustering value given.
    pub(crate) fn where_clause(&self, pk: &[V], ck: &[V]) -> String {
        let mut parts: Vec<String> =
            pk.iter().zip(&self.pk).enumerate().map(|(i, (v, t))| format!("pk{i} = {}", t.literal(v))).collect();
        parts.extend(ck.iter().zip(&self.ck).enumerate().map(|(i, (v, (t, _)))| format!("ck{i} = {}", t.literal(v))));
        parts.join(" AND ")
    }

    /// Every partition key the pools can make.
    pub(crate) fn all_partitions(&self) -> Vec<Vec<V>> {
        let pools: Vec<Vec<V>> = self.pk.iter().map(|t| pool(*t, true)).collect();
        self.partitions_of(&pools)
    }
}

pub(crate) fn schema() -> impl Strategy<Value = Schema> {
    let ty = || prop::sample::select(Ty::ALL.to_vec());
    let regular_ty = || prop::sample::select([&Ty::ALL[..], &[Ty::IntSet, Ty::IntSet]].concat());
    (vec(ty(), 1..=2), vec((ty(), any::<bool>()), 0..=2), vec(regular_ty(), 1..=3)).prop_flat_map(
        |(pk, ck, regular)| {
            let n = pk.len() + ck.len() + regular.len();
            Just((0..n).collect::<Vec<_>>()).prop_shuffle().prop_map(move |declared| Schema {
                pk: pk.clone(),
                ck: ck.clone(),
                regular: regular.clone(),
                declared,
            })
        },
    )
}
