//! Data statements: set, get, get ... where, del, count, incr/decr, list, truncate.
//!
//! Output follows cassandra-cli 1.x: `=> (column=NAME, value=VALUE, timestamp=TS[, ttl=N])`,
//! `=> (super_column=NAME,` followed by indented sub-columns, `Returned N results.`,
//! `-------------------` / `RowKey: K` blocks and `N Row(s) Returned.` for row lists, and
//! `Elapsed time: X msec(s).`. `list` shows 100 rows of 100 columns unless `limit` and `columns`
//! say otherwise, as cassandra-cli 1.1+ does; larger limits are fetched in pages of 100 rows.

use std::io::Write;
use std::time::Instant;

use model::marshal::AbstractType;
use thrift_idl::{
    CfDef, Column, ColumnDef, ColumnOrSuperColumn, ColumnParent, ColumnPath, CounterColumn, IndexClause,
    IndexExpression, IndexOperator, KeyRange, KeySlice, SlicePredicate, SliceRange, TCassandraSyncClient,
};

use super::ast::{CompareOp, Condition, PathExpr, Term};
use super::session::{timestamp_micros, CliError, Session};
use super::value;

/// Column count asked for when a whole row (or super column) is shown, as cassandra-cli did.
const ROW_SLICE_COUNT: i32 = 1_000_000;
/// Rows fetched per `get_range_slices` page by `list`.
const LIST_PAGE_ROWS: u32 = 100;
/// Rows, and columns per row, `list` shows without `limit` / `columns` (CliClient.executeList).
const LIST_DEFAULT_LIMIT: u32 = 100;

/// Resolved `CF['key']['col']['sub']`: bytes for each part.
struct Target {
    cf: String,
    key: Vec<u8>,
    super_column: Option<Vec<u8>>,
    column: Option<Vec<u8>>,
}

fn is_super(cf: &CfDef) -> bool {
    cf.column_type.as_deref() == Some("Super")
}

fn is_counter_cf(cf: &CfDef) -> bool {
    value::schema_type(cf.default_validation_class.as_deref()).is_ok_and(|t| t.is_counter())
}

fn full_slice(count: i32) -> SlicePredicate {
    SlicePredicate::new(None::<Vec<Vec<u8>>>, SliceRange::new(Vec::new(), Vec::new(), false, count))
}

/// Types used to show one column family's data.
struct Formats {
    key: AbstractType,
    comparator: AbstractType,
    subcomparator: AbstractType,
    default_validator: AbstractType,
    metadata: Vec<ColumnDef>,
    is_super: bool,
}

impl Formats {
    /// The value type of a column: its metadata's validation_class, else the default validator.
    fn validator(&self, name: &[u8]) -> AbstractType {
        self.metadata
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| AbstractType::parse(&d.validation_class).ok())
            .unwrap_or_else(|| self.default_validator.clone())
    }

    fn column_line(&self, c: &Column, sub: bool) -> String {
        let name_type = if sub { &self.subcomparator } else { &self.comparator };
        let value = c.value.as_deref().map(|v| self.validator(&c.name).to_display_string(v)).unwrap_or_default();
        let ttl = c.ttl.map(|t| format!(", ttl={t}")).unwrap_or_default();
        format!(
            "(column={}, value={}, timestamp={}{})",
            name_type.to_display_string(&c.name),
            value,
            c.timestamp.unwrap_or(0),
            ttl
        )
    }

    /// Lines for one ColumnOrSuperColumn. `sub` says plain columns are sub-columns (a slice of
    /// one super column).
    fn cosc_lines(&self, cosc: &ColumnOrSuperColumn, sub: bool) -> String {
        if let Some(sc) = &cosc.super_column {
            let mut s = format!("=> (super_column={},", self.comparator.to_display_string(&sc.name));
            for c in &sc.columns {
                s.push_str("\n     ");
                s.push_str(&self.column_line(c, true));
            }
            s.push(')');
            s
        } else if let Some(c) = &cosc.column {
            format!("=> {}", self.column_line(c, sub))
        } else if let Some(cc) = &cosc.counter_column {
            let name_type = if sub { &self.subcomparator } else { &self.comparator };
            format!("=> (counter={}, value={})", name_type.to_display_string(&cc.name), cc.value)
        } else if let Some(csc) = &cosc.counter_super_column {
            let mut s = format!("=> (super_column={},", self.comparator.to_display_string(&csc.name));
            for c in &csc.columns {
                s.push_str(&format!(
                    "\n     (counter={}, value={})",
                    self.subcomparator.to_display_string(&c.name),
                    c.value
                ));
            }
            s.push(')');
            s
        } else {
            "=> (empty)".to_string()
        }
    }
}

impl Session {
    fn formats(&self, cf: &str) -> Result<Formats, CliError> {
        let def = self.cf_def(cf)?;
        Ok(Formats {
            key: self.key_type(cf)?,
            comparator: value::schema_type(def.comparator_type.as_deref())?,
            subcomparator: value::schema_type(def.subcomparator_type.as_deref())?,
            default_validator: value::schema_type(def.default_validation_class.as_deref())?,
            metadata: def.column_metadata.clone().unwrap_or_default(),
            is_super: is_super(def),
        })
    }

    /// Converts a path expression into bytes using the schema (and `assume` overrides).
    fn target(&mut self, path: &PathExpr) -> Result<Target, CliError> {
        let cf = self.resolve_cf(&path.cf)?;
        let f = self.formats(&cf)?;
        let key = value::term_to_bytes(&path.key, &f.key)?;
        let (super_column, column) = match path.columns.as_slice() {
            [] => (None, None),
            [c] if f.is_super => (Some(value::term_to_bytes(c, &f.comparator)?), None),
            [c] => (None, Some(value::term_to_bytes(c, &f.comparator)?)),
            [s, c] => (Some(value::term_to_bytes(s, &f.comparator)?), Some(value::term_to_bytes(c, &f.subcomparator)?)),
            _ => return Err(CliError::Usage("Invalid row, super column, or column specification.".into())),
        };
        Ok(Target { cf, key, super_column, column })
    }

    /// Remembers that `column` of `cf` holds values of type `ty` (cassandra-cli does this when a
    /// value is written with a function such as `long(5)`, or read with `get ... as TYPE`).
    fn remember_validator(&mut self, cf: &str, column: &[u8], ty: &AbstractType) -> Result<(), CliError> {
        let def = self.cf_def_mut(cf)?;
        let class = ty.class_name();
        let metadata = def.column_metadata.get_or_insert_with(Vec::new);
        match metadata.iter_mut().find(|d| d.name == column) {
            Some(d) => d.validation_class = class,
            None => metadata.push(ColumnDef::new(
                column.to_vec(),
                class,
                None::<thrift_idl::IndexType>,
                None::<String>,
                None::<std::collections::BTreeMap<String, String>>,
            )),
        }
        Ok(())
    }

    /// `set CF['key']['col'] = value [with ttl = N]` and the super column form.
    pub(crate) fn exec_set(&mut self, path: &PathExpr, val: &Term, ttl: Option<i32>) -> Result<(), CliError> {
        let start = Instant::now();
        let t = self.target(path)?;
        let Some(column) = t.column else {
            if t.super_column.is_some() {
                return Err(CliError::Usage(format!("Column family {} may only contain SuperColumns", t.cf)));
            }
            return Err(CliError::Usage("No column name specified, (type 'help;' or '?' for help on syntax).".into()));
        };
        let f = self.formats(&t.cf)?;
        let bytes = value::term_to_bytes(val, &f.validator(&column))?;
        if let Some(ty) = value::term_function_type(val) {
            self.remember_validator(&t.cf, &column, &ty)?;
        }
        let parent = ColumnParent::new(t.cf.clone(), t.super_column);
        let col = Column::new(column, bytes, timestamp_micros(), ttl);
        let cl = self.consistency;
        self.client()?.insert(t.key, parent, col, cl)?;
        writeln!(self.out, "Value inserted.")?;
        self.elapsed(start)
    }

    /// `get CF['key']`, `get CF['key']['col']`, `get CF['key']['super']['col']`, with optional
    /// `as TYPE` and `limit N`.
    pub(crate) fn exec_get(
        &mut self,
        path: &PathExpr,
        as_type: Option<&str>,
        limit: Option<u32>,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let t = self.target(path)?;
        let Some(column) = t.column else {
            // A row, or one super column: slice it.
            let count = limit.map_or(ROW_SLICE_COUNT, |l| l as i32);
            let sub = t.super_column.is_some();
            let parent = ColumnParent::new(t.cf.clone(), t.super_column);
            let cl = self.consistency;
            let columns = self.client()?.get_slice(t.key, parent, full_slice(count), cl)?;
            let f = self.formats(&t.cf)?;
            for cosc in &columns {
                writeln!(self.out, "{}", f.cosc_lines(cosc, sub || f.is_super && cosc.column.is_some()))?;
            }
            writeln!(self.out, "Returned {} results.", columns.len())?;
            return self.elapsed(start);
        };
        let sub = t.super_column.is_some();
        let path = ColumnPath::new(t.cf.clone(), t.super_column, column.clone());
        let cl = self.consistency;
        let result = match self.client()?.get(t.key, path, cl) {
            Ok(cosc) => cosc,
            Err(e) => match CliError::from(e) {
                CliError::NotFound => {
                    writeln!(self.out, "Value was not found")?;
                    return self.elapsed(start);
                }
                other => return Err(other),
            },
        };
        if let Some(ty) = as_type {
            let ty = value::type_by_name(ty)?;
            self.remember_validator(&t.cf, &column, &ty)?;
        }
        let f = self.formats(&t.cf)?;
        writeln!(self.out, "{}", f.cosc_lines(&result, sub))?;
        self.elapsed(start)
    }

    /// `get CF where col = value [and ...] [limit N]`: a secondary index query
    /// (`get_indexed_slices`).
    pub(crate) fn exec_get_where(
        &mut self,
        cf: &str,
        conditions: &[Condition],
        limit: Option<u32>,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let cf = self.resolve_cf(cf)?;
        let f = self.formats(&cf)?;
        let mut expressions = Vec::with_capacity(conditions.len());
        for c in conditions {
            let name = value::term_to_bytes(&c.column, &f.comparator)?;
            let val = value::term_to_bytes(&c.value, &f.validator(&name))?;
            let op = match c.op {
                CompareOp::Eq => IndexOperator::EQ,
                CompareOp::Gt => IndexOperator::GT,
                CompareOp::Gte => IndexOperator::GTE,
                CompareOp::Lt => IndexOperator::LT,
                CompareOp::Lte => IndexOperator::LTE,
            };
            expressions.push(IndexExpression::new(name, op, val));
        }
        let clause = IndexClause::new(expressions, Vec::new(), limit.map_or(100, |l| l as i32));
        let parent = ColumnParent::new(cf.clone(), None::<Vec<u8>>);
        let cl = self.consistency;
        let slices = self.client()?.get_indexed_slices(parent, clause, full_slice(i32::MAX), cl)?;
        self.print_slices(&f, &slices)?;
        writeln!(self.out)?;
        self.print_row_count(slices.len())?;
        self.elapsed(start)
    }

    /// `del CF['key']`, `del CF['key']['col']`, `del CF['key']['super']['col']`.
    pub(crate) fn exec_del(&mut self, path: &PathExpr) -> Result<(), CliError> {
        let start = Instant::now();
        let t = self.target(path)?;
        let what = if path.columns.is_empty() { "row" } else { "column" };
        let counter = is_counter_cf(self.cf_def(&t.cf)?);
        let cpath = ColumnPath::new(t.cf, t.super_column, t.column);
        let cl = self.consistency;
        if counter {
            self.client()?.remove_counter(t.key, cpath, cl)?;
        } else {
            self.client()?.remove(t.key, cpath, timestamp_micros(), cl)?;
        }
        writeln!(self.out, "{what} removed.")?;
        self.elapsed(start)
    }

    /// `count CF['key']` or `count CF['key']['super']`.
    pub(crate) fn exec_count(&mut self, path: &PathExpr) -> Result<(), CliError> {
        let cf = self.resolve_cf(&path.cf)?;
        let f = self.formats(&cf)?;
        let key = value::term_to_bytes(&path.key, &f.key)?;
        let super_column = match path.columns.as_slice() {
            [] => None,
            [s] => Some(value::term_to_bytes(s, &f.comparator)?),
            _ => return Err(CliError::Usage("count takes a row key and at most one super column name.".into())),
        };
        let parent = ColumnParent::new(cf, super_column);
        let cl = self.consistency;
        let n = self.client()?.get_count(key, parent, full_slice(i32::MAX), cl)?;
        writeln!(self.out, "{n} columns")?;
        Ok(())
    }

    /// `incr CF['key']['col'] [by N]` / `decr ...` (Thrift `add`).
    pub(crate) fn exec_incr(&mut self, path: &PathExpr, by: i64) -> Result<(), CliError> {
        let t = self.target(path)?;
        let Some(column) = t.column else {
            return Err(CliError::Usage("Invalid row, super column, or column specification.".into()));
        };
        let parent = ColumnParent::new(t.cf, t.super_column);
        let cl = self.consistency;
        self.client()?.add(t.key, parent, CounterColumn::new(column, by), cl)?;
        writeln!(self.out, "Value {}", if by < 0 { "decremented." } else { "incremented." })?;
        Ok(())
    }

    /// `list CF [[start:end]] [limit N] [columns N [reversed]]`: the first N rows (default 100,
    /// fetched in pages), each with its first (or, reversed, last) N columns (default 100). The
    /// messages are CliClient.executeList's: the defaults are announced, `limit 0` is refused
    /// without failing.
    pub(crate) fn exec_list(
        &mut self,
        cf: &str,
        (start_key, end_key): (Option<&str>, Option<&str>),
        limit: Option<u32>,
        columns: Option<u32>,
        reversed: bool,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let cf = self.resolve_cf(cf)?;
        if limit == Some(0) {
            writeln!(self.out, "Invalid limit 0")?;
            return Ok(());
        }
        let limit = match limit {
            Some(n) => n,
            None => {
                writeln!(self.out, "Using default limit of {LIST_DEFAULT_LIMIT}")?;
                LIST_DEFAULT_LIMIT
            }
        };
        let columns = match columns {
            Some(n) => n,
            None => {
                writeln!(self.out, "Using default column limit of {LIST_DEFAULT_LIMIT}")?;
                LIST_DEFAULT_LIMIT
            }
        };
        let predicate = SlicePredicate::new(
            None::<Vec<Vec<u8>>>,
            SliceRange::new(Vec::new(), Vec::new(), reversed, columns as i32),
        );
        let f = self.formats(&cf)?;
        let end = match end_key {
            Some(k) => f.key.from_display_string(k).map_err(value::ValueError::from)?,
            None => Vec::new(),
        };
        let mut next = match start_key {
            Some(k) => f.key.from_display_string(k).map_err(value::ValueError::from)?,
            None => Vec::new(),
        };
        let mut shown = 0usize;
        let mut last: Option<Vec<u8>> = None;
        loop {
            let want = (limit as usize - shown).min(LIST_PAGE_ROWS as usize) as u32;
            if want == 0 {
                break;
            }
            // A page after the first starts at the last key shown, which comes back again.
            let ask = if last.is_some() { want + 1 } else { want };
            let range = KeyRange::new(
                next.clone(),
                end.clone(),
                None::<String>,
                None::<String>,
                ask as i32,
                None::<Vec<IndexExpression>>,
            );
            let parent = ColumnParent::new(cf.clone(), None::<Vec<u8>>);
            let cl = self.consistency;
            let page = self.client()?.get_range_slices(parent, predicate.clone(), range, cl)?;
            let fetched = page.len();
            let fresh: Vec<KeySlice> = page.into_iter().filter(|ks| last.as_ref() != Some(&ks.key)).collect();
            let fresh: Vec<KeySlice> = fresh.into_iter().take(want as usize).collect();
            if fresh.is_empty() {
                break;
            }
            self.print_slices(&f, &fresh)?;
            shown += fresh.len();
            let last_key = fresh.last().map(|ks| ks.key.clone()).unwrap_or_default();
            if fetched < ask as usize || (!end.is_empty() && last_key == end) {
                break;
            }
            next = last_key.clone();
            last = Some(last_key);
        }
        writeln!(self.out)?;
        self.print_row_count(shown)?;
        self.elapsed(start)
    }

    /// `truncate CF`.
    pub(crate) fn exec_truncate(&mut self, cf: &str) -> Result<(), CliError> {
        let cf = self.resolve_cf(cf)?;
        self.client()?.truncate(cf.clone())?;
        writeln!(self.out, "{cf} truncated.")?;
        Ok(())
    }

    fn print_slices(&mut self, f: &Formats, slices: &[KeySlice]) -> Result<(), CliError> {
        for ks in slices {
            writeln!(self.out, "-------------------")?;
            writeln!(self.out, "RowKey: {}", f.key.to_display_string(&ks.key))?;
            for cosc in &ks.columns {
                writeln!(self.out, "{}", f.cosc_lines(cosc, false))?;
            }
        }
        Ok(())
    }

    fn print_row_count(&mut self, n: usize) -> Result<(), CliError> {
        writeln!(self.out, "{n} Row{} Returned.", if n > 1 { "s" } else { "" })?;
        Ok(())
    }
}
