//! Random steps: the writes (and flushes) a case makes and the reads that check it.

use super::*;

/// `None`: the newest timestamp yet; `Some(d)`: one from `d` steps back (older than what
/// those steps wrote since, unique all the same).
pub(crate) type Stale = Option<u32>;

/// A bound of a range: the value and whether it is included.
pub(crate) type Bound = Option<(V, bool)>;

/// Which rows of a partition a WHERE clause names: `ck0 = ..` for each value of `eq` (a
/// prefix of the clustering columns), then a restriction on the next clustering column.
#[derive(Clone, Debug)]
pub(crate) struct Slice {
    pub(crate) eq: Vec<V>,
    pub(crate) last: Last,
}

#[derive(Clone, Debug)]
pub(crate) enum Last {
    /// No restriction.
    Any,
    /// `>`, `>=`, `<`, `<=`, one or two of them (neither: no restriction).
    Range { lower: Bound, upper: Bound },
    /// `IN (..)`, duplicates and all.
    In(Vec<V>),
}

impl Slice {
    pub(crate) fn matches(&self, s: &Schema, ck: &[V]) -> bool {
        let n = self.eq.len();
        ck.starts_with(&self.eq)
            && match &self.last {
                Last::Any => true,
                Last::Range { lower, upper } => in_bounds(s.ck[n].0, &ck[n], lower, upper),
                Last::In(values) => values.contains(&ck[n]),
            }
    }

    pub(crate) fn clauses(&self, s: &Schema) -> Vec<String> {
        let mut out: Vec<String> =
            self.eq.iter().zip(&s.ck).enumerate().map(|(i, (v, (t, _)))| format!("ck{i} = {}", t.literal(v))).collect();
        let n = self.eq.len();
        match &self.last {
            Last::Any => {}
            Last::Range { lower, upper } => out.extend(bound_clauses(&format!("ck{n}"), s.ck[n].0, lower, upper)),
            Last::In(values) => {
                let literals: Vec<String> = values.iter().map(|v| s.ck[n].0.literal(v)).collect();
                out.push(format!("ck{n} IN ({})", literals.join(", ")));
            }
        }
        out
    }
}

/// The rows a statement names: reads may restrict any prefix and the next column by a range
/// or IN (an empty IN too); deletions by IN (non-empty) or a range.
pub(crate) fn slice(s: &Schema, reads: bool) -> BoxedStrategy<Slice> {
    let ck: Vec<Ty> = s.ck.iter().map(|(t, _)| *t).collect();
    (0..=ck.len())
        .prop_flat_map(move |n| {
            let eq: Vec<BoxedStrategy<V>> = ck[..n].iter().map(|t| key_value(*t, false)).collect();
            let last: BoxedStrategy<Last> = match ck.get(n) {
                None => Just(Last::Any).boxed(),
                Some(t) => {
                    let bound = || prop::option::of((key_value(*t, false), any::<bool>()));
                    let range = (bound(), bound()).prop_map(|(lower, upper)| Last::Range { lower, upper });
                    let listed = vec(key_value(*t, false), if reads { 0..=3 } else { 1..=3 }).prop_map(Last::In);
                    let mut arms = vec![(2, Just(Last::Any).boxed()), (1, listed.boxed())];
                    arms.push((if reads { 4 } else { 1 }, range.boxed()));
                    Union::new_weighted(arms).boxed()
                }
            };
            (eq, last).prop_map(|(eq, last)| Slice { eq, last })
        })
        .boxed()
}

#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// Per regular column: not given, null, or a value.
    Insert { pk: Vec<V>, ck: Vec<V>, values: Vec<Option<Option<V>>>, stale: Stale },
    /// Per regular column: not set, set to null, or to a value (at least one set).
    Update { pk: Vec<V>, ck: Vec<V>, values: Vec<Option<Option<V>>>, stale: Stale },
    /// DELETE of whole rows: the partition (no clustering restriction), one row (every
    /// clustering value), a clustering prefix, or IN on the last restricted column.
    Delete { pk: Vec<V>, rows: Slice, stale: Stale },
    /// DELETE of some regular columns of one row.
    DeleteColumns { pk: Vec<V>, ck: Vec<V>, columns: Vec<usize>, stale: Stale },
    /// `UPDATE ... SET s = s + {..}, s = s - {..}` on a `set<int>` column (either may be empty,
    /// not both).
    SetElements { pk: Vec<V>, ck: Vec<V>, column: usize, add: Vec<i32>, remove: Vec<i32>, stale: Stale },
    /// `sibyltool flush`, then `compact` too if asked.
    Flush { compact: bool },
}

impl Op {
    pub(crate) fn partition(&self) -> Option<&[V]> {
        match self {
            Op::Insert { pk, .. }
            | Op::Update { pk, .. }
            | Op::Delete { pk, .. }
            | Op::DeleteColumns { pk, .. }
            | Op::SetElements { pk, .. } => Some(pk),
            Op::Flush { .. } => None,
        }
    }

    pub(crate) fn stale(&self) -> Stale {
        match self {
            Op::Insert { stale, .. }
            | Op::Update { stale, .. }
            | Op::Delete { stale, .. }
            | Op::DeleteColumns { stale, .. }
            | Op::SetElements { stale, .. } => *stale,
            Op::Flush { .. } => None,
        }
    }

    /// The statement, written at `ts`.
    pub(crate) fn statement(&self, s: &Schema, table: &str, ts: i64) -> String {
        let assignments = |values: &[Option<Option<V>>]| -> Vec<(String, String)> {
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.as_ref().map(|v| {
                        (REGULAR[i].to_string(), v.as_ref().map_or("null".into(), |v| s.regular[i].literal(v)))
                    })
                })
                .collect()
        };
        match self {
            Op::Insert { pk, ck, values, .. } => {
                let mut names: Vec<String> = (0..pk.len()).map(|i| format!("pk{i}")).collect();
                let mut literals: Vec<String> = pk.iter().zip(&s.pk).map(|(v, t)| t.literal(v)).collect();
                names.extend((0..ck.len()).map(|i| format!("ck{i}")));
                literals.extend(ck.iter().zip(&s.ck).map(|(v, (t, _))| t.literal(v)));
                for (name, literal) in assignments(values) {
                    names.push(name);
                    literals.push(literal);
                }
                format!(
                    "INSERT INTO {KS}.{table} ({}) VALUES ({}) USING TIMESTAMP {ts}",
                    names.join(", "),
                    literals.join(", ")
                )
            }
            Op::Update { pk, ck, values, .. } => {
                let sets: Vec<String> = assignments(values).into_iter().map(|(n, l)| format!("{n} = {l}")).collect();
                format!(
                    "UPDATE {KS}.{table} USING TIMESTAMP {ts} SET {} WHERE {}",
                    sets.join(", "),
                    s.where_clause(pk, ck)
                )
            }
            Op::Delete { pk, rows, .. } => {
                let mut clauses = vec![s.where_clause(pk, &[])];
                clauses.extend(rows.clauses(s));
                format!("DELETE FROM {KS}.{table} USING TIMESTAMP {ts} WHERE {}", clauses.join(" AND "))
            }
            Op::DeleteColumns { pk, ck, columns, .. } => {
                let names: Vec<&str> = columns.iter().map(|i| REGULAR[*i]).collect();
                format!(
                    "DELETE {} FROM {KS}.{table} USING TIMESTAMP {ts} WHERE {}",
                    names.join(", "),
                    s.where_clause(pk, ck)
                )
            }
            Op::SetElements { pk, ck, column, add, remove, .. } => {
                let literal = |e: &[i32]| Ty::IntSet.literal(&int_set(e));
                let name = REGULAR[*column];
                let mut sets = Vec::new();
                if !add.is_empty() {
                    sets.push(format!("{name} = {name} + {}", literal(add)));
                }
                if !remove.is_empty() {
                    sets.push(format!("{name} = {name} - {}", literal(remove)));
                }
                format!(
                    "UPDATE {KS}.{table} USING TIMESTAMP {ts} SET {} WHERE {}",
                    sets.join(", "),
                    s.where_clause(pk, ck)
                )
            }
            Op::Flush { .. } => unreachable!("a flush is no statement"),
        }
    }
}

pub(crate) fn op(s: &Schema) -> BoxedStrategy<Op> {
    let pk: Vec<BoxedStrategy<V>> = s.pk.iter().map(|t| key_value(*t, true)).collect();
    let ck: Vec<BoxedStrategy<V>> = s.ck.iter().map(|(t, _)| key_value(*t, false)).collect();
    let values: Vec<BoxedStrategy<Option<Option<V>>>> = s
        .regular
        .iter()
        .map(|t| prop::option::weighted(0.7, prop::option::weighted(0.85, regular_value(*t))).boxed())
        .collect();
    let stale = || prop::option::weighted(0.15, 1u32..8);
    let n = s.regular.len();
    let sets: Vec<usize> = (0..n).filter(|i| s.regular[*i] == Ty::IntSet).collect();
    // Weights out of 29 (33 with sets): a flush about every tenth step.
    let mut arms: Vec<(u32, BoxedStrategy<Op>)> = vec![];
    if !sets.is_empty() {
        arms.push((
            4,
            (pk.clone(), ck.clone(), prop::sample::select(sets), vec(-3i32..4, 0..3), vec(-3i32..4, 0..3), stale())
                .prop_filter("adds or removes something", |(_, _, _, add, remove, _)| {
                    !(add.is_empty() && remove.is_empty())
                })
                .prop_map(|(pk, ck, column, add, remove, stale)| Op::SetElements { pk, ck, column, add, remove, stale })
                .boxed(),
        ));
    }
    arms.extend(vec![
        (
            10,
            (pk.clone(), ck.clone(), values.clone(), stale())
                .prop_map(|(pk, ck, values, stale)| Op::Insert { pk, ck, values, stale })
                .boxed(),
        ),
        (
            6,
            (pk.clone(), ck.clone(), values, stale())
                .prop_filter("an UPDATE sets a column", |(_, _, values, _)| values.iter().any(Option::is_some))
                .prop_map(|(pk, ck, values, stale)| Op::Update { pk, ck, values, stale })
                .boxed(),
        ),
        (
            6,
            (pk.clone(), slice(s, false), stale()).prop_map(|(pk, rows, stale)| Op::Delete { pk, rows, stale }).boxed(),
        ),
        (
            4,
            (pk, ck, prop::sample::subsequence((0..n).collect::<Vec<_>>(), 1..=n), stale())
                .prop_map(|(pk, ck, columns, stale)| Op::DeleteColumns { pk, ck, columns, stale })
                .boxed(),
        ),
        (3, any::<bool>().prop_map(|compact| Op::Flush { compact }).boxed()),
    ]);
    Union::new_weighted(arms).boxed()
}

/// A read of the step's partition (and maybe others, by IN): the rows of a slice, in the
/// table's order or (ORDER BY, of one partition) in either, at most `limit` of them, all
/// columns or some (in any order); and their count.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    /// The partition, for a step that touches none (a flush).
    pub(crate) pk: Vec<V>,
    /// More values for each partition key column: `pk0 IN (the partition's, these..)`.
    pub(crate) others: Vec<Vec<V>>,
    pub(crate) slice: Slice,
    /// Reversed or not, and whether ORDER BY names every clustering column or the first.
    pub(crate) order: Option<(bool, bool)>,
    /// Also the LIMIT of a scan of the whole table.
    pub(crate) limit: Option<u32>,
    /// Indexes into `SELECT *`'s columns.
    pub(crate) columns: Option<Vec<usize>>,
}

pub(crate) fn probe(s: &Schema) -> BoxedStrategy<Probe> {
    let pk: Vec<BoxedStrategy<V>> = s.pk.iter().map(|t| key_value(*t, true)).collect();
    let order =
        if s.ck.is_empty() { Just(None).boxed() } else { prop::option::of((any::<bool>(), any::<bool>())).boxed() };
    let n = s.names().len();
    let columns =
        prop::option::weighted(0.3, prop::sample::subsequence((0..n).collect::<Vec<_>>(), 1..=n).prop_shuffle());
    let others: Vec<BoxedStrategy<Vec<V>>> =
        s.pk.iter().map(|t| prop_oneof![3 => Just(Vec::new()), 1 => vec(key_value(*t, true), 1..=2)].boxed()).collect();
    (pk, others, slice(s, true), order, prop::option::of(1u32..=4), columns)
        .prop_map(|(pk, others, slice, order, limit, columns)| Probe { pk, others, slice, order, limit, columns })
        .boxed()
}

pub(crate) fn case() -> impl Strategy<Value = (Schema, Vec<(Op, Probe)>)> {
    // The table does not shrink: a simpler one would draw all-new steps, no simpler than
    // these; the steps shrink (fewer, then simpler).
    schema().no_shrink().prop_flat_map(|s| {
        let steps = vec((op(&s), probe(&s)), 1..=MAX_STEPS);
        (Just(s), steps)
    })
}
