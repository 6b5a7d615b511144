//! CQL tables over our column families (the CQL view of a `CfDef`, shared by the `cql` crate
//! and the engine's `system_schema` rows), in Cassandra 3.11's legacy layout, so that one storage
//! serves Thrift and CQL alike:
//!
//! - the partition key is the row key: the value itself for one column, a `CompositeType` of
//!   the values when there are several;
//! - a table made by CQL without `COMPACT STORAGE` ("sparse") names each cell
//!   `CompositeType(clustering values..., column name)`, the row marker being the cell with an
//!   empty column name;
//! - a compact table ("dense") names each cell by its clustering values alone (the value
//!   itself for one clustering column) and keeps its one value column in the cell's value;
//! - a compact table without clustering columns ("static compact", as every column family a
//!   Thrift client made with `column_metadata`) names each cell by its column's name.
//!
//! A column family made over Thrift carries no CQL names; it shows as 3.11 shows it:
//! `key`, `column1`..`columnN` and `value`, or its declared columns.

use crate::marshal::AbstractType;
use crate::schema::{CfDef, CqlLayout};

/// Why a column family cannot be read as a CQL table (InvalidRequestException's reason).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotATable(pub String);

/// The clustering values of a row (or a prefix of them), in order.
pub type Clustering = Vec<Vec<u8>>;

/// What part of the primary key, if any, a column is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// A part of the partition key (row key).
    PartitionKey,
    /// A clustering column (a leading part of the cell name).
    Clustering,
    /// A regular column (a cell of its own in a sparse table, the cell's value in a dense one).
    Regular,
}

/// One column of a table, as CQL names and types it.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Its CQL name.
    pub name: String,
    /// Its type (for a clustering column in descending order, the base type: see `reversed`).
    pub ty: AbstractType,
    /// Where it lives.
    pub kind: ColumnKind,
    /// Its place among the columns of its kind.
    pub position: usize,
    /// A clustering column in descending order (`ReversedType` in the comparator).
    pub reversed: bool,
    /// For a static compact table's column: its cell name, as the comparator encodes it.
    pub cell_name: Vec<u8>,
    /// A static column: one value per partition, shared by its rows.
    pub is_static: bool,
}

/// How cell names are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Composite cell names: clustering values, then the column's name.
    Sparse,
    /// Cell names of clustering values alone; the one value column in the cell's value.
    /// `compound` when the comparator is a `CompositeType` (several clustering columns, or a
    /// composite comparator of a Thrift column family).
    Dense {
        /// The cell name is a `CompositeType`.
        compound: bool,
    },
    /// No clustering; each declared column's cell is named by the column's name.
    StaticCompact,
    /// A super column family, as 3.11 shows one to CQL: clustering `column1` (the super
    /// column's name) and `column2` (the subcolumn's), and `value`; cell names are
    /// [`crate::data::compose_super`]'s.
    Super,
}

/// A table as CQL sees it.
#[derive(Clone, Debug)]
pub struct Table {
    /// The keyspace.
    pub keyspace: String,
    /// The table's name.
    pub name: String,
    /// Partition key columns, in order.
    pub partition_key: Vec<Column>,
    /// Clustering columns, in order.
    pub clustering: Vec<Column>,
    /// Regular columns, in 3.11's order for `SELECT *` (by name).
    pub regular: Vec<Column>,
    /// How cells are named.
    pub layout: Layout,
    /// A counter table.
    pub counter: bool,
    /// Dropped columns and when: their older cells are not the table's any more.
    pub dropped: std::collections::BTreeMap<String, i64>,
    /// For a materialized view: its base table.
    pub view_of: Option<String>,
    /// The non-frozen collection columns the comparator knows (its `ColumnToCollectionType`),
    /// dropped ones included.
    pub collections: Vec<(Vec<u8>, AbstractType)>,
    /// Every cell name a partition can hold when it holds one row of known cells (see
    /// [`Table::row_cell_names`]), built with the table.
    row_cell_names: Option<Vec<Vec<u8>>>,
}

/// What a cell name holds: its row's clustering values, for a sparse or static compact table
/// the column's name, and for an element of a non-frozen collection the element's key.
#[derive(Clone, Debug, PartialEq)]
pub struct CellName {
    /// The clustering values (none for a static cell).
    pub clustering: Clustering,
    /// The column's name, where the name holds one.
    pub column: Option<Vec<u8>>,
    /// A collection element's key.
    pub element: Option<Vec<u8>>,
}

impl Table {
    /// The CQL view of a column family.
    pub fn from_def(def: &CfDef) -> Result<Table, NotATable> {
        let broken =
            |why: String| NotATable(format!("table {}.{} cannot be read from CQL: {why}", def.keyspace, def.name));
        let key_type = AbstractType::parse(&def.key_validation_class).map_err(|e| broken(e.to_string()))?;
        let comparator = def.comparator().map_err(|e| broken(e.to_string()))?;
        let value_type = AbstractType::parse(&def.default_validation_class).map_err(|e| broken(e.to_string()))?;
        let default_layout = CqlLayout::default();
        let layout_names = def.cql.as_ref().unwrap_or(&default_layout);

        let key_types = match (&key_type, layout_names.key_aliases.len()) {
            (AbstractType::Composite(parts), n) if n != 1 => parts.clone(),
            _ => vec![key_type.clone()],
        };
        let partition_key = key_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let name = match layout_names.key_aliases.get(i) {
                    Some(n) => n.clone(),
                    None if i == 0 => def
                        .key_alias
                        .as_ref()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .unwrap_or_else(|| "key".to_string()),
                    None => format!("key{}", i + 1),
                };
                column(name, ty, ColumnKind::PartitionKey, i)
            })
            .collect();

        let made_by_cql = def.cql.is_some();
        let sparse = made_by_cql && !layout_names.dense;
        let components = match &comparator {
            AbstractType::Composite(parts) => parts.clone(),
            other => vec![other.clone()],
        };
        let compound = matches!(comparator, AbstractType::Composite(_));
        // A sparse table with non-frozen collections ends its cell names with the element's
        // key, ordered by its column's collection type.
        let mut components = components;
        let collections = match components.last() {
            Some(AbstractType::ColumnToCollection(_)) if sparse => match components.pop() {
                Some(AbstractType::ColumnToCollection(c)) => c,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let (layout, clustering_types) = if def.is_super() {
            let sub = def.subcomparator().map_err(|e| broken(e.to_string()))?.unwrap_or(AbstractType::Bytes);
            (Layout::Super, vec![comparator.clone(), sub])
        } else if sparse {
            let Some((name_type, clustering)) = components.split_last() else {
                return Err(broken("its comparator has no component".into()));
            };
            if !matches!(name_type, AbstractType::Utf8) {
                return Err(broken(format!("its comparator {} does not end with UTF8Type", comparator.class_name())));
            }
            (Layout::Sparse, clustering.to_vec())
        } else if made_by_cql && layout_names.column_aliases.is_empty()
            || !made_by_cql && !def.column_metadata.is_empty() && !compound
        {
            (Layout::StaticCompact, Vec::new())
        } else {
            (Layout::Dense { compound }, components)
        };
        let clustering = clustering_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let name = layout_names.column_aliases.get(i).cloned().unwrap_or_else(|| format!("column{}", i + 1));
                let (ty, reversed) = match ty {
                    AbstractType::Reversed(base) => (*base, true),
                    other => (other, false),
                };
                Column { reversed, ..column(name, ty, ColumnKind::Clustering, i) }
            })
            .collect();

        let mut regular = Vec::new();
        match layout {
            Layout::Dense { .. } | Layout::Super => {
                let name = layout_names.value_alias.clone().unwrap_or_else(|| "value".to_string());
                regular.push(column(name, value_type.clone(), ColumnKind::Regular, 0));
            }
            Layout::Sparse | Layout::StaticCompact => {
                for c in &def.column_metadata {
                    let ty = AbstractType::parse(&c.validation_class).map_err(|e| broken(e.to_string()))?;
                    let name = match layout {
                        Layout::Sparse => String::from_utf8_lossy(&c.name).into_owned(),
                        _ => comparator.to_display_string(&c.name),
                    };
                    let mut col = column(name, ty, ColumnKind::Regular, 0);
                    col.cell_name = c.name.clone();
                    col.is_static = layout == Layout::Sparse && layout_names.static_columns.contains(&col.name);
                    regular.push(col);
                }
                regular.sort_by(|a: &Column, b: &Column| a.name.cmp(&b.name));
                for (i, c) in regular.iter_mut().enumerate() {
                    c.position = i;
                }
            }
        }
        let mut table = Table {
            keyspace: def.keyspace.clone(),
            name: def.name.clone(),
            partition_key,
            clustering,
            regular,
            layout,
            counter: value_type.is_counter()
                || def
                    .column_metadata
                    .iter()
                    .any(|c| AbstractType::parse(&c.validation_class).is_ok_and(|t| t.is_counter())),
            dropped: layout_names.dropped.clone(),
            view_of: layout_names.view.as_ref().map(|v| v.base.clone()),
            collections,
            row_cell_names: None,
        };
        table.row_cell_names = table.one_row_of_known_cells();
        Ok(table)
    }

    /// The names of every cell a partition of this table can hold, in the comparator's order,
    /// when a partition holds one row of known cells: a sparse table without clustering
    /// columns or non-frozen collections (the row marker, then one cell per column). Cells of
    /// dropped columns are not among them: they are not the table's any more.
    pub fn row_cell_names(&self) -> Option<&[Vec<u8>]> {
        self.row_cell_names.as_deref()
    }

    fn one_row_of_known_cells(&self) -> Option<Vec<Vec<u8>>> {
        if self.layout != Layout::Sparse || !self.clustering.is_empty() || !self.collections.is_empty() {
            return None;
        }
        // CompositeType(UTF8Type) order: the row marker's empty name first, then the columns,
        // which `from_def` keeps sorted by name.
        let marker = self.cell_name(&[], None);
        Some(std::iter::once(marker).chain(self.regular.iter().map(|c| self.cell_name(&[], Some(c)))).collect())
    }

    /// The cell name of one element of a non-frozen collection column: the column's cell
    /// name followed by the element's key.
    pub fn element_cell_name(&self, clustering: &[Vec<u8>], column: &Column, key: &[u8]) -> Vec<u8> {
        let empty: &[u8] = &[];
        if column.is_static {
            let mut name = vec![0xFF, 0xFF];
            let parts = self.clustering.iter().map(|_| empty).chain([column.name.as_bytes(), key]);
            name.extend(compose(parts, 0));
            return name;
        }
        compose(clustering.iter().map(Vec::as_slice).chain([column.name.as_bytes(), key]), 0)
    }

    /// The bounds (inclusive) of every element cell of a collection column in one row.
    pub fn collection_bounds(&self, clustering: &[Vec<u8>], column: &Column) -> (Vec<u8>, Vec<u8>) {
        let empty: &[u8] = &[];
        let bound = |eoc: i8| {
            if column.is_static {
                let mut name = vec![0xFF, 0xFF];
                name.extend(compose(self.clustering.iter().map(|_| empty).chain([column.name.as_bytes()]), eoc));
                name
            } else {
                compose(clustering.iter().map(Vec::as_slice).chain([column.name.as_bytes()]), eoc)
            }
        };
        (bound(-1), bound(1))
    }

    /// Whether the comparator orders the elements of non-frozen collection `column`.
    pub fn keeps_elements_of(&self, column: &str) -> bool {
        self.collections.iter().any(|(name, _)| name == column.as_bytes())
    }

    /// Every column in `SELECT *` order: partition key, clustering, then the others by name.
    pub fn columns(&self) -> impl Iterator<Item = &Column> {
        self.partition_key.iter().chain(&self.clustering).chain(&self.regular)
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns().find(|c| c.name == name)
    }

    /// The row key of the given partition key values (in order).
    pub fn partition_key_bytes(&self, values: &[Vec<u8>]) -> Vec<u8> {
        match values {
            [one] if self.partition_key.len() == 1 => one.clone(),
            many => compose(many.iter().map(Vec::as_slice), 0),
        }
    }

    /// The partition key values of a row key.
    pub fn split_partition_key(&self, key: &[u8]) -> Option<Vec<Vec<u8>>> {
        if self.partition_key.len() == 1 {
            return Some(vec![key.to_vec()]);
        }
        let parts: Vec<Vec<u8>> = split(key)?.into_iter().map(|(v, _)| v.to_vec()).collect();
        (parts.len() == self.partition_key.len()).then_some(parts)
    }

    /// The cell name of column `column` (`None`: the row marker) in the row of clustering
    /// values `clustering` (all of them). A dense table's one value column is named by the
    /// clustering values alone, whatever `column` says.
    pub fn cell_name(&self, clustering: &[Vec<u8>], column: Option<&Column>) -> Vec<u8> {
        match self.layout {
            Layout::Sparse => match column {
                Some(c) if c.is_static => self.static_cell_name(c),
                _ => {
                    let name = column.map(|c| c.name.as_bytes()).unwrap_or_default();
                    compose(clustering.iter().map(Vec::as_slice).chain([name]), 0)
                }
            },
            Layout::Dense { compound: true } => compose(clustering.iter().map(Vec::as_slice), 0),
            Layout::Dense { compound: false } => clustering.first().cloned().unwrap_or_default(),
            Layout::StaticCompact => column.map(|c| c.cell_name.clone()).unwrap_or_default(),
            Layout::Super => match clustering {
                [name, sub, ..] => crate::data::compose_super(name, sub),
                [name] => crate::data::compose_super(name, &[]),
                [] => Vec::new(),
            },
        }
    }

    /// A static column's cell name: the static marker, an empty value for each clustering
    /// column, then the column's name (2.x's static prefix, CASSANDRA-6561).
    pub fn static_cell_name(&self, column: &Column) -> Vec<u8> {
        let empty: &[u8] = &[];
        let mut name = vec![0xFF, 0xFF];
        name.extend(compose(self.clustering.iter().map(|_| empty).chain([column.name.as_bytes()]), 0));
        name
    }

    /// The slice of every static cell of a partition (they sort before every row).
    pub fn static_slice(&self) -> (Vec<u8>, Vec<u8>) {
        let empty: &[u8] = &[];
        let mut end = vec![0xFF, 0xFF];
        end.extend(compose(self.clustering.iter().map(|_| empty), 1));
        (vec![0xFF, 0xFF], end)
    }

    /// Whether the table has static columns.
    pub fn has_statics(&self) -> bool {
        self.regular.iter().any(|c| c.is_static)
    }

    /// The slice bounds (inclusive, as the comparator reads them) of every cell whose
    /// clustering starts with `prefix`; `end_of` says whether the bound is a start (`-1`) or
    /// an end (`1`). An empty prefix is an open bound.
    pub fn prefix_bound(&self, prefix: &[Vec<u8>], end: bool) -> Vec<u8> {
        if prefix.is_empty() {
            return Vec::new();
        }
        let eoc = if end { 1 } else { -1 };
        match self.layout {
            Layout::Sparse | Layout::Dense { compound: true } => compose(prefix.iter().map(Vec::as_slice), eoc),
            Layout::Dense { compound: false } | Layout::StaticCompact => prefix[0].clone(),
            // An empty subcolumn part bounds the whole super column, at either end.
            Layout::Super => self.cell_name(prefix, None),
        }
    }

    /// What a cell name holds.
    pub fn split_cell_name(&self, name: &[u8]) -> Option<CellName> {
        let plain = |clustering, column| CellName { clustering, column, element: None };
        match self.layout {
            Layout::Sparse => {
                let mut parts: Vec<Vec<u8>> = split(name)?.into_iter().map(|(v, _)| v.to_vec()).collect();
                let element = match parts.len() - self.clustering.len().min(parts.len()) {
                    1 => None,
                    2 if !self.collections.is_empty() => parts.pop(),
                    _ => return None,
                };
                let column = parts.pop();
                if name.starts_with(&[0xFF, 0xFF]) {
                    // A static cell: no clustering of its own.
                    parts.clear();
                }
                Some(CellName { clustering: parts, column, element })
            }
            Layout::Dense { compound: true } => {
                let parts: Vec<Vec<u8>> = split(name)?.into_iter().map(|(v, _)| v.to_vec()).collect();
                Some(plain(parts, None))
            }
            Layout::Dense { compound: false } => Some(plain(vec![name.to_vec()], None)),
            Layout::StaticCompact => Some(plain(Vec::new(), Some(name.to_vec()))),
            Layout::Super => {
                let (name, sub) = crate::data::split_super(name);
                Some(plain(vec![name.to_vec(), sub.to_vec()], None))
            }
        }
    }
}

fn column(name: String, ty: AbstractType, kind: ColumnKind, position: usize) -> Column {
    Column { name, ty, kind, position, reversed: false, cell_name: Vec::new(), is_static: false }
}

/// A `CompositeType` value of these components, the last one ending with `eoc`.
pub fn compose<'a>(parts: impl IntoIterator<Item = &'a [u8]>, eoc: i8) -> Vec<u8> {
    let parts: Vec<&[u8]> = parts.into_iter().collect();
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 3).sum());
    for (i, p) in parts.iter().enumerate() {
        out.extend_from_slice(&(p.len() as u16).to_be_bytes());
        out.extend_from_slice(p);
        out.push(if i + 1 == parts.len() { eoc as u8 } else { 0 });
    }
    out
}

/// The components of a `CompositeType` value with their end-of-component bytes; `None` if it
/// is malformed. A static marker is skipped.
pub fn split(v: &[u8]) -> Option<Vec<(&[u8], u8)>> {
    let mut rest = v.strip_prefix(&[0xFF, 0xFF][..]).unwrap_or(v);
    let mut out = Vec::new();
    while !rest.is_empty() {
        let len = u16::from_be_bytes([*rest.first()?, *rest.get(1)?]) as usize;
        let value = rest.get(2..2 + len)?;
        let eoc = *rest.get(2 + len)?;
        out.push((value, eoc));
        rest = &rest[3 + len..];
    }
    Some(out)
}

/// Whether the table is a materialized view.
pub fn is_view(def: &CfDef) -> bool {
    def.cql.as_ref().is_some_and(|l| l.view.is_some())
}

/// The CQL name of a storage type, as 3.11's `CQL3Type` prints it (custom types quoted).
pub fn cql_name(ty: &AbstractType) -> String {
    let n = match ty {
        AbstractType::Ascii => "ascii",
        AbstractType::Long => "bigint",
        AbstractType::Bytes => "blob",
        AbstractType::Boolean => "boolean",
        AbstractType::CounterColumn => "counter",
        AbstractType::SimpleDate => "date",
        AbstractType::Decimal => "decimal",
        AbstractType::Double => "double",
        AbstractType::Float => "float",
        AbstractType::InetAddress => "inet",
        AbstractType::Int32 => "int",
        AbstractType::Short => "smallint",
        AbstractType::Utf8 => "text",
        AbstractType::Time => "time",
        AbstractType::Timestamp | AbstractType::Date => "timestamp",
        AbstractType::TimeUuid => "timeuuid",
        AbstractType::Byte => "tinyint",
        AbstractType::Uuid => "uuid",
        AbstractType::Integer => "varint",
        AbstractType::Duration => "duration",
        AbstractType::User(u) => return frozen_name(u.frozen, maybe_quote(&u.name_str())),
        AbstractType::Reversed(base) => return cql_name(base),
        AbstractType::List { element, frozen } => return frozen_name(*frozen, format!("list<{}>", cql_name(element))),
        AbstractType::Set { element, frozen } => return frozen_name(*frozen, format!("set<{}>", cql_name(element))),
        AbstractType::Map { key, value, frozen } => {
            return frozen_name(*frozen, format!("map<{}, {}>", cql_name(key), cql_name(value)))
        }
        AbstractType::Tuple(types) => {
            let parts: Vec<String> = types.iter().map(cql_name).collect();
            return format!("frozen<tuple<{}>>", parts.join(", "));
        }
        other => return format!("'{}'", other.class_name()),
    };
    n.to_string()
}

/// A name as CQL writes it: bare when lower-case word characters, else double-quoted.
pub fn maybe_quote(name: &str) -> String {
    let mut chars = name.chars();
    let plain = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn frozen_name(frozen: bool, name: String) -> String {
    if frozen {
        format!("frozen<{name}>")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composites_split_back() {
        let v = compose([&b"ab"[..], b"", b"c"], 1);
        assert_eq!(v, [0, 2, b'a', b'b', 0, 0, 0, 0, 0, 1, b'c', 1]);
        assert_eq!(split(&v), Some(vec![(&b"ab"[..], 0), (&b""[..], 0), (&b"c"[..], 1)]));
        assert_eq!(split(&v[..v.len() - 1]), None);
        assert_eq!(split(&[0xFF, 0xFF, 0, 1, 7, 0]), Some(vec![(&[7u8][..], 0)]));
    }

    #[test]
    fn a_thrift_column_family_is_key_column1_value() {
        let mut def = CfDef::new("ks", "cf");
        def.comparator_type = "UTF8Type".into();
        def.default_validation_class = "Int32Type".into();
        let t = Table::from_def(&def).expect("a table");
        let names: Vec<_> = t.columns().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["key", "column1", "value"]);
        assert_eq!(t.layout, Layout::Dense { compound: false });
        assert_eq!(t.regular[0].ty, AbstractType::Int32);

        def.comparator_type = "CompositeType(LongType,ReversedType(UTF8Type))".into();
        let t = Table::from_def(&def).expect("a table");
        let names: Vec<_> = t.columns().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["key", "column1", "column2", "value"]);
        assert!(t.clustering[1].reversed);
        assert_eq!(t.clustering[1].ty, AbstractType::Utf8);
    }

    #[test]
    fn declared_thrift_columns_are_static_compact() {
        let mut def = CfDef::new("ks", "users");
        def.comparator_type = "UTF8Type".into();
        for (name, class) in [("name", "UTF8Type"), ("age", "LongType")] {
            def.column_metadata.push(crate::schema::ColumnDef {
                name: name.as_bytes().to_vec(),
                validation_class: class.into(),
                index_type: None,
                index_name: None,
                index_options: Default::default(),
            });
        }
        let t = Table::from_def(&def).expect("a table");
        let names: Vec<_> = t.columns().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["key", "age", "name"]);
        assert_eq!(t.layout, Layout::StaticCompact);
        assert_eq!(t.cell_name(&[], t.column("age")), b"age");
    }
}
