//! What a SELECT computes from each row: columns, `writetime`/`ttl`, `token`, the native
//! scalar functions (blob conversions, time conversions, `cast`), and the aggregates `count`,
//! `min`, `max`, `sum`, `avg`, named as 3.11 names them (`system.max(k)`).

use std::cmp::Ordering;

use model::data::{Cell, CellKind};
use model::dht::Partitioner;
use model::marshal::AbstractType;

use super::{invalid, CqlError};
use crate::ast::{NativeType, Selectable, Term};
use crate::schema::{cql_name, native, Column, ColumnKind, Table};

/// Milliseconds between the Gregorian epoch of version 1 UUIDs and the Unix epoch, in 100 ns.
const GREGORIAN_OFFSET: i64 = 0x01B2_1DD2_1381_4000;
const DAY_MS: i64 = 86_400_000;
const DATE_EPOCH: i64 = 1 << 31;

/// One selector, resolved.
#[derive(Clone, Debug)]
pub(super) enum Selected {
    Column(Column),
    WriteTime(Column),
    Ttl(Column),
    /// `token(partition key...)` with the partitioner's token type.
    Token(AbstractType),
    /// A scalar function of one argument.
    Scalar {
        function: Scalar,
        arg: Box<Selected>,
        ty: AbstractType,
    },
    /// Field `index` of a user type value.
    Field {
        arg: Box<Selected>,
        index: usize,
        /// How many fields the type has.
        arity: usize,
        ty: AbstractType,
    },
    /// An aggregate over every row (`arg` `None`: `count(*)`).
    Aggregate {
        function: Aggregate,
        arg: Option<Box<Selected>>,
        ty: AbstractType,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    /// The value's bytes as another type (`blobAsX`, `xAsBlob`).
    Reinterpret,
    /// timeuuid, date or timestamp to timestamp, date or bigint milliseconds.
    ToTimestamp,
    ToDate,
    ToUnixTimestamp,
    /// `cast(x AS type)`.
    Cast,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Aggregate {
    Count,
    Min,
    Max,
    Sum,
    Avg,
}

/// What each row gives a selector.
pub(super) struct RowView<'a> {
    pub key: &'a [u8],
    pub key_parts: &'a [Vec<u8>],
    pub clustering: &'a [Vec<u8>],
    pub cell: &'a dyn Fn(&Column) -> Option<&'a Cell>,
    pub now: i32,
    pub partitioner: Partitioner,
}

impl Selected {
    pub fn ty(&self) -> AbstractType {
        match self {
            Selected::Column(c) => c.ty.clone(),
            Selected::WriteTime(_) => AbstractType::Long,
            Selected::Ttl(_) => AbstractType::Int32,
            Selected::Token(t) => t.clone(),
            Selected::Scalar { ty, .. } | Selected::Aggregate { ty, .. } | Selected::Field { ty, .. } => ty.clone(),
        }
    }

    pub fn is_aggregate(&self) -> bool {
        matches!(self, Selected::Aggregate { .. })
    }

    /// The selector's value for one row (aggregates: their argument's).
    pub fn eval(&self, row: &RowView<'_>) -> Option<Vec<u8>> {
        match self {
            Selected::Column(c) => match c.kind {
                ColumnKind::PartitionKey => row.key_parts.get(c.position).cloned(),
                ColumnKind::Clustering => row.clustering.get(c.position).cloned(),
                ColumnKind::Regular => (row.cell)(c).map(|cell| match cell.kind {
                    CellKind::Counter => model::counter::total(&cell.value).to_be_bytes().to_vec(),
                    _ => cell.value.clone(),
                }),
            },
            Selected::WriteTime(c) => (row.cell)(c).map(|cell| cell.timestamp.to_be_bytes().to_vec()),
            Selected::Ttl(c) => (row.cell)(c).and_then(|cell| match cell.kind {
                CellKind::Expiring { expires_at, .. } => {
                    let left = (expires_at - i64::from(row.now)).clamp(0, i64::from(i32::MAX)) as i32;
                    Some(left.to_be_bytes().to_vec())
                }
                _ => None,
            }),
            Selected::Token(ty) => {
                let token = row.partitioner.token_for_key(row.key);
                ty.from_display_string(&row.partitioner.token_to_string(&token)).ok()
            }
            Selected::Scalar { function, arg, ty } => {
                let v = arg.eval(row)?;
                scalar(*function, &arg.ty(), ty, &v)
            }
            Selected::Field { arg, index, arity, .. } => {
                let v = arg.eval(row)?;
                let fields = model::marshal::read_tuple(&v, *arity).ok()?;
                fields.get(*index).copied().flatten().map(<[u8]>::to_vec)
            }
            Selected::Aggregate { arg, .. } => match arg {
                Some(a) => a.eval(row),
                None => Some(Vec::new()),
            },
        }
    }
}

/// A scalar function of a value of type `from`, giving `to`.
fn scalar(function: Scalar, from: &AbstractType, to: &AbstractType, v: &[u8]) -> Option<Vec<u8>> {
    match function {
        Scalar::Reinterpret => Some(v.to_vec()),
        Scalar::ToTimestamp => Some(millis(from, v)?.to_be_bytes().to_vec()),
        Scalar::ToUnixTimestamp => Some(millis(from, v)?.to_be_bytes().to_vec()),
        Scalar::ToDate => {
            let days = millis(from, v)?.div_euclid(DAY_MS) + DATE_EPOCH;
            Some((days as u32).to_be_bytes().to_vec())
        }
        Scalar::Cast => cast(from, to, v),
    }
}

/// Milliseconds since the Unix epoch of a timeuuid, timestamp or date.
fn millis(ty: &AbstractType, v: &[u8]) -> Option<i64> {
    match ty {
        AbstractType::TimeUuid => {
            let u = uuid::Uuid::from_slice(v).ok()?;
            let (ticks, _) = u.get_timestamp()?.to_gregorian();
            Some((ticks as i64 - GREGORIAN_OFFSET) / 10_000)
        }
        AbstractType::Timestamp | AbstractType::Date => Some(i64::from_be_bytes(v.try_into().ok()?)),
        AbstractType::SimpleDate => Some((i64::from(u32::from_be_bytes(v.try_into().ok()?)) - DATE_EPOCH) * DAY_MS),
        _ => None,
    }
}

/// A number of an integer or floating type, as f64 and (for integers) i128.
fn number(ty: &AbstractType, v: &[u8]) -> Option<(f64, Option<i128>)> {
    let int = |n: i128| Some((n as f64, Some(n)));
    match ty {
        AbstractType::Byte => int(i128::from(i8::from_be_bytes(v.try_into().ok()?))),
        AbstractType::Short => int(i128::from(i16::from_be_bytes(v.try_into().ok()?))),
        AbstractType::Int32 => int(i128::from(i32::from_be_bytes(v.try_into().ok()?))),
        AbstractType::Long | AbstractType::CounterColumn => int(i128::from(i64::from_be_bytes(v.try_into().ok()?))),
        AbstractType::Float => Some((f64::from(f32::from_be_bytes(v.try_into().ok()?)), None)),
        AbstractType::Double => Some((f64::from_be_bytes(v.try_into().ok()?), None)),
        _ => None,
    }
}

/// A number as a value of an integer or floating type (integers wrap, as Java's casts do).
fn encode_number(ty: &AbstractType, f: f64, i: Option<i128>) -> Option<Vec<u8>> {
    let whole = i.unwrap_or(f as i128);
    Some(match ty {
        AbstractType::Byte => (whole as i8).to_be_bytes().to_vec(),
        AbstractType::Short => (whole as i16).to_be_bytes().to_vec(),
        AbstractType::Int32 => (whole as i32).to_be_bytes().to_vec(),
        AbstractType::Long | AbstractType::CounterColumn => (whole as i64).to_be_bytes().to_vec(),
        AbstractType::Float => (f as f32).to_be_bytes().to_vec(),
        AbstractType::Double => f.to_be_bytes().to_vec(),
        _ => return None,
    })
}

fn cast(from: &AbstractType, to: &AbstractType, v: &[u8]) -> Option<Vec<u8>> {
    if cql_name(from) == cql_name(to) {
        return Some(v.to_vec());
    }
    match to {
        AbstractType::Utf8 | AbstractType::Ascii => Some(from.to_display_string(v).into_bytes()),
        _ => {
            let (f, i) = number(from, v)?;
            encode_number(to, f, i)
        }
    }
}

/// Whether `cast(x AS to)` is one this build computes.
fn castable(from: &AbstractType, to: &AbstractType) -> bool {
    let numeric = |t: &AbstractType| {
        matches!(
            t,
            AbstractType::Byte
                | AbstractType::Short
                | AbstractType::Int32
                | AbstractType::Long
                | AbstractType::CounterColumn
                | AbstractType::Float
                | AbstractType::Double
        )
    };
    cql_name(from) == cql_name(to)
        || matches!(to, AbstractType::Utf8 | AbstractType::Ascii)
        || (numeric(from) && numeric(to) && !matches!(to, AbstractType::CounterColumn))
}

/// The token type of a partitioner (3.11's `getTokenValidator`).
pub(super) fn token_type(p: Partitioner) -> AbstractType {
    match p {
        Partitioner::Random => AbstractType::Integer,
        Partitioner::Murmur3 => AbstractType::Long,
        Partitioner::ByteOrdered => AbstractType::Bytes,
        Partitioner::OrderPreserving => AbstractType::Utf8,
    }
}

/// Resolves one selector against the table; gives it with its default column name.
pub(super) fn resolve(table: &Table, s: &Selectable, partitioner: Partitioner) -> Result<(Selected, String), CqlError> {
    let column = |name: &str| -> Result<Column, CqlError> {
        table.column(name).cloned().map_or_else(|| invalid(format!("Undefined column name {name}")), Ok)
    };
    match s {
        Selectable::Column(id) => {
            let c = column(id.name())?;
            let n = c.name.clone();
            Ok((Selected::Column(c), n))
        }
        Selectable::WriteTime(id) | Selectable::Ttl(id) => {
            let c = column(id.name())?;
            let writetime = matches!(s, Selectable::WriteTime(_));
            let function = if writetime { "writetime" } else { "ttl" };
            if c.kind != ColumnKind::Regular {
                return invalid(format!("Cannot use selection function {function} on PRIMARY KEY part {}", c.name));
            }
            if c.ty.is_counter() {
                return invalid(format!("Cannot use selection function {function} on counter column {}", c.name));
            }
            if c.ty.is_multi_cell() {
                let function = if writetime { "writeTime" } else { "ttl" };
                return invalid(format!("Cannot use selection function {function} on collections"));
            }
            let n = format!("{function}({})", c.name);
            Ok((if writetime { Selected::WriteTime(c) } else { Selected::Ttl(c) }, n))
        }
        Selectable::CountRows => {
            Ok((Selected::Aggregate { function: Aggregate::Count, arg: None, ty: AbstractType::Long }, "count".into()))
        }
        Selectable::Cast { selector, to } => {
            let (arg, name) = resolve(table, selector, partitioner)?;
            let to_type = native(*to);
            if matches!(to, NativeType::Duration | NativeType::Counter) || !castable(&arg.ty(), &to_type) {
                return invalid(format!("cast from {} to {to} is not supported yet", cql_name(&arg.ty())));
            }
            let shown = format!("cast({name} as {to})");
            Ok((Selected::Scalar { function: Scalar::Cast, arg: Box::new(arg), ty: to_type }, shown))
        }
        Selectable::Function { name, args } => function(table, &name.to_string(), args, partitioner),
        Selectable::Field { selector, field } => {
            let (arg, name) = resolve(table, selector, partitioner)?;
            let ty = arg.ty();
            let AbstractType::User(u) = &ty else {
                return invalid(format!(
                    "Invalid field selection: {name} of type {} is not a user type",
                    cql_name(&ty)
                ));
            };
            let Some(index) = u.field_position(field.name()) else {
                return invalid(format!("{name} of type {} has no field {}", cql_name(&ty), field.name()));
            };
            let (field_type, arity) = (u.fields[index].1.clone(), u.fields.len());
            let shown = format!("{name}.{}", field.name());
            Ok((Selected::Field { arg: Box::new(arg), index, arity, ty: field_type }, shown))
        }
        other => invalid(format!("the selector {other} is not supported yet")),
    }
}

fn function(
    table: &Table,
    written: &str,
    args: &[Selectable],
    partitioner: Partitioner,
) -> Result<(Selected, String), CqlError> {
    let lower = written.to_ascii_lowercase();
    let name = lower.strip_prefix("system.").unwrap_or(&lower).to_string();
    if name == "token" {
        let names: Vec<&str> = args
            .iter()
            .map(|a| match a {
                Selectable::Column(id) => Some(id.name()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let key: Vec<&str> = table.partition_key.iter().map(|c| c.name.as_str()).collect();
        if names != key {
            return invalid(format!(
                "Type error: token() takes the partition key columns in order ({}) as arguments",
                key.join(", ")
            ));
        }
        return Ok((Selected::Token(token_type(partitioner)), format!("system.token({})", key.join(", "))));
    }
    if name == "count" && matches!(args, [Selectable::Term(Term::Constant(_))]) {
        return Ok((
            Selected::Aggregate { function: Aggregate::Count, arg: None, ty: AbstractType::Long },
            "count".into(),
        ));
    }
    let [arg] = args else {
        return invalid(format!(
            "Invalid number of arguments in call to function {written}: 1 required but {} provided",
            args.len()
        ));
    };
    let (arg, arg_name) = resolve(table, arg, partitioner)?;
    let from = arg.ty();
    let shown = format!("system.{name}({arg_name})");
    let wrong = || {
        invalid(format!(
            "Type error: {arg_name} cannot be passed as argument 0 of function system.{name} of type {}",
            cql_name(&from)
        ))
    };
    let (selected, display) = match name.as_str() {
        "count" | "min" | "max" | "sum" | "avg" => {
            if arg.is_aggregate() {
                return invalid("aggregate functions cannot be used as arguments of aggregate functions");
            }
            let function = match name.as_str() {
                "count" => Aggregate::Count,
                "min" => Aggregate::Min,
                "max" => Aggregate::Max,
                "sum" => Aggregate::Sum,
                _ => Aggregate::Avg,
            };
            let ty = match function {
                Aggregate::Count => AbstractType::Long,
                Aggregate::Sum | Aggregate::Avg if number(&from, &[0; 8][..fixed_len(&from)]).is_none() => {
                    return wrong()
                }
                _ => from.clone(),
            };
            (Selected::Aggregate { function, arg: Some(Box::new(arg)), ty }, shown)
        }
        "totimestamp" | "todate" | "tounixtimestamp" | "dateof" | "unixtimestampof" => {
            let accepts = match name.as_str() {
                "dateof" | "unixtimestampof" => matches!(from, AbstractType::TimeUuid),
                "totimestamp" => matches!(from, AbstractType::TimeUuid | AbstractType::SimpleDate),
                "todate" => matches!(from, AbstractType::TimeUuid | AbstractType::Timestamp | AbstractType::Date),
                _ => matches!(
                    from,
                    AbstractType::TimeUuid | AbstractType::Timestamp | AbstractType::Date | AbstractType::SimpleDate
                ),
            };
            if !accepts {
                return wrong();
            }
            let (function, ty) = match name.as_str() {
                "totimestamp" | "dateof" => (Scalar::ToTimestamp, AbstractType::Timestamp),
                "todate" => (Scalar::ToDate, AbstractType::SimpleDate),
                _ => (Scalar::ToUnixTimestamp, AbstractType::Long),
            };
            (Selected::Scalar { function, arg: Box::new(arg), ty }, shown)
        }
        f if f.starts_with("blobas") || f.ends_with("asblob") => {
            let (source, target) =
                if let Some(t) = f.strip_prefix("blobas") { ("blob", t) } else { (&f[..f.len() - 6], "blob") };
            let Some(target_type) = named_type(target) else { return invalid(format!("Unknown function {written}")) };
            if cql_name(&from) != source {
                return wrong();
            }
            (Selected::Scalar { function: Scalar::Reinterpret, arg: Box::new(arg), ty: target_type }, shown)
        }
        _ => return invalid(format!("Unknown function '{written}'")),
    };
    Ok((selected, display))
}

/// The width of a fixed-size numeric type's values (for a probe of [`number`]).
fn fixed_len(ty: &AbstractType) -> usize {
    match ty {
        AbstractType::Byte => 1,
        AbstractType::Short => 2,
        AbstractType::Int32 | AbstractType::Float => 4,
        _ => 8,
    }
}

fn named_type(name: &str) -> Option<AbstractType> {
    NativeType::ALL.into_iter().find(|n| n.to_string() == name).map(native)
}

/// Folds the rows' values of one aggregate.
pub(super) fn aggregate(function: Aggregate, ty: &AbstractType, values: &[Option<Vec<u8>>]) -> Option<Vec<u8>> {
    let present: Vec<&Vec<u8>> = values.iter().flatten().collect();
    match function {
        Aggregate::Count => Some((present.len() as i64).to_be_bytes().to_vec()),
        Aggregate::Min | Aggregate::Max => {
            let pick = present.into_iter().reduce(|a, b| {
                let o = ty.compare(a, b);
                let keep_a = if function == Aggregate::Min { o != Ordering::Greater } else { o != Ordering::Less };
                if keep_a {
                    a
                } else {
                    b
                }
            });
            pick.cloned()
        }
        Aggregate::Sum | Aggregate::Avg => {
            let mut float = 0f64;
            let mut int = 0i128;
            for v in &present {
                let (f, i) = number(ty, v)?;
                float += f;
                int = int.wrapping_add(i.unwrap_or(0));
            }
            let n = present.len().max(1);
            if function == Aggregate::Avg {
                float /= n as f64;
                int /= n as i128;
            }
            encode_number(ty, float, Some(int).filter(|_| !matches!(ty, AbstractType::Float | AbstractType::Double)))
        }
    }
}
