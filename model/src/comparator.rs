//! Ordering of cell names within a partition, for standard and super column families.

use std::cmp::Ordering;

use crate::data::split_super;
use crate::marshal::{AbstractType, MarshalError};
use crate::schema::CfDef;

/// Orders the cells of one column family. In a super column family a cell name is
/// `(super column name, subcolumn name)` (see [`crate::data::compose_super`]), ordered by the
/// comparator, then by the subcomparator.
#[derive(Clone, Debug)]
pub struct CellComparator {
    name: AbstractType,
    /// Present for super column families.
    sub: Option<AbstractType>,
}

impl CellComparator {
    pub fn standard(name: AbstractType) -> CellComparator {
        CellComparator { name, sub: None }
    }

    pub fn super_cf(name: AbstractType, sub: AbstractType) -> CellComparator {
        CellComparator { name, sub: Some(sub) }
    }

    pub fn for_cf(cf: &CfDef) -> Result<CellComparator, MarshalError> {
        let name = cf.comparator()?;
        if cf.is_super() {
            let sub = cf.subcomparator()?.unwrap_or(AbstractType::Bytes);
            Ok(CellComparator::super_cf(name, sub))
        } else {
            Ok(CellComparator::standard(name))
        }
    }

    pub fn is_super(&self) -> bool {
        self.sub.is_some()
    }

    /// The type of (super) column names.
    pub fn name_type(&self) -> &AbstractType {
        &self.name
    }

    /// The type of subcolumn names (super column families only).
    pub fn sub_type(&self) -> Option<&AbstractType> {
        self.sub.as_ref()
    }

    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.sub {
            None => self.name.compare(a, b),
            Some(sub) => {
                let (asc, asub) = split_super(a);
                let (bsc, bsub) = split_super(b);
                self.name.compare(asc, bsc).then_with(|| sub.compare(asub, bsub))
            }
        }
    }

    /// True when `name` sorts before the slice bound `start`. An empty bound is open; in a super
    /// column family a bound with an empty subcolumn part starts at the super column's first
    /// subcolumn.
    pub fn before_start(&self, name: &[u8], start: &[u8]) -> bool {
        self.compare_with_bound(name, start) == Ordering::Less
    }

    /// True when `name` sorts after the slice bound `end` (same bound rules as [`before_start`]).
    ///
    /// [`before_start`]: CellComparator::before_start
    pub fn after_end(&self, name: &[u8], end: &[u8]) -> bool {
        self.compare_with_bound(name, end) == Ordering::Greater
    }

    /// Compares a cell name with a bound, treating the bound's empty parts as "anything": the
    /// result is `Equal` when the name lies within what the bound names.
    pub fn compare_with_bound(&self, name: &[u8], bound: &[u8]) -> Ordering {
        if bound.is_empty() {
            return Ordering::Equal;
        }
        match &self.sub {
            None => self.name.compare(name, bound),
            Some(sub) => {
                let (nsc, nsub) = split_super(name);
                let (bsc, bsub) = split_super(bound);
                match self.name.compare(nsc, bsc) {
                    Ordering::Equal if bsub.is_empty() => Ordering::Equal,
                    Ordering::Equal => sub.compare(nsub, bsub),
                    other => other,
                }
            }
        }
    }

    /// True when `name` lies in the inclusive range `[start, end]` (bounds as in
    /// [`compare_with_bound`](CellComparator::compare_with_bound)).
    pub fn in_range(&self, name: &[u8], start: &[u8], end: &[u8]) -> bool {
        !self.before_start(name, start) && !self.after_end(name, end)
    }

    /// Compares two bounds of the same kind (both starts or both ends), for validating that a
    /// slice's start does not come after its finish. Empty bounds are handled by the caller.
    pub fn compare_bounds(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::compose_super;

    #[test]
    fn super_bounds_cover_whole_super_column() {
        let c = CellComparator::super_cf(AbstractType::Bytes, AbstractType::Bytes);
        let bound = compose_super(b"b", b"");
        assert!(c.in_range(&compose_super(b"b", b"x"), &bound, &bound));
        assert!(!c.in_range(&compose_super(b"a", b"x"), &bound, &bound));
        assert!(!c.in_range(&compose_super(b"c", b""), &bound, &bound));
        let sub_start = compose_super(b"b", b"m");
        assert!(c.before_start(&compose_super(b"b", b"a"), &sub_start));
        assert!(!c.before_start(&compose_super(b"b", b"m"), &sub_start));
    }

    #[test]
    fn empty_bounds_are_open() {
        let c = CellComparator::standard(AbstractType::Bytes);
        assert!(c.in_range(b"anything", b"", b""));
        assert!(c.in_range(b"b", b"a", b""));
        assert!(!c.in_range(b"b", b"c", b""));
    }
}
