//! Parsed cassandra-cli statements.

/// A value as typed: plain text (identifier, string literal or number, as written after
/// unescaping) or a conversion function such as `long(42)` or `timeuuid()`.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Text(String),
    Call { name: String, arg: Option<String> },
}

/// `CF['key']['col']['subcol']`: a column family, a row key and up to two column names.
#[derive(Debug, Clone, PartialEq)]
pub struct PathExpr {
    pub cf: String,
    pub key: Term,
    /// Zero, one or two column names (super column first when two).
    pub columns: Vec<Term>,
}

/// The right-hand side of `attribute = value` in create/update statements.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// Identifier or quoted string (unescaped).
    Text(String),
    /// Integer literal as written.
    Int(String),
    /// `digits.digits` literal as written.
    Double(String),
    /// `[{...}, {...}]`.
    Array(Vec<AttrValue>),
    /// `{k: v, ...}`, keys unescaped, in the order written.
    Hash(Vec<(String, AttrValue)>),
    /// A function call inside a hash (e.g. `column_name: long(5)`).
    Call { name: String, arg: Option<String> },
}

impl AttrValue {
    /// The scalar text of this value, if it is one.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            AttrValue::Text(s) | AttrValue::Int(s) | AttrValue::Double(s) => Some(s),
            _ => None,
        }
    }

    /// A short description for error messages.
    pub fn describe(&self) -> &'static str {
        match self {
            AttrValue::Text(_) => "a string",
            AttrValue::Int(_) => "an integer",
            AttrValue::Double(_) => "a number",
            AttrValue::Array(_) => "an array",
            AttrValue::Hash(_) => "a hash",
            AttrValue::Call { .. } => "a function call",
        }
    }
}

/// `name = value` pairs after `with` / `and`, in the order written; names are lower-cased.
pub type Attrs = Vec<(String, AttrValue)>;

/// Comparison operators of `get CF where col OP value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
}

/// One `column OP value` condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub column: Term,
    pub op: CompareOp,
    pub value: Term,
}

/// What `assume CF X as TYPE` overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssumeTarget {
    Keys,
    Comparator,
    SubComparator,
    Validator,
}

/// One cassandra-cli statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Connect {
        host: String,
        port: u16,
        credentials: Option<(String, String)>,
    },
    Use {
        keyspace: String,
        credentials: Option<(String, String)>,
    },
    CreateKeyspace {
        name: String,
        attrs: Attrs,
    },
    UpdateKeyspace {
        name: String,
        attrs: Attrs,
    },
    DropKeyspace {
        name: String,
    },
    CreateColumnFamily {
        name: String,
        attrs: Attrs,
    },
    UpdateColumnFamily {
        name: String,
        attrs: Attrs,
    },
    DropColumnFamily {
        name: String,
    },
    DropIndex {
        cf: String,
        column: String,
    },
    Set {
        path: PathExpr,
        value: Term,
        ttl: Option<i32>,
    },
    Get {
        path: PathExpr,
        as_type: Option<String>,
        limit: Option<u32>,
    },
    GetWhere {
        cf: String,
        conditions: Vec<Condition>,
        limit: Option<u32>,
    },
    Del {
        path: PathExpr,
    },
    Count {
        path: PathExpr,
    },
    /// `incr` (positive `by`) and `decr` (negated `by`).
    Incr {
        path: PathExpr,
        by: i64,
    },
    /// `list CF [[start:end]] [limit N] [columns N [reversed]]`. `limit 0` parses (cassandra-cli
    /// answers it with a message when it runs).
    List {
        cf: String,
        start: Option<String>,
        end: Option<String>,
        limit: Option<u32>,
        columns: Option<u32>,
        reversed: bool,
    },
    Truncate {
        cf: String,
    },
    Assume {
        cf: String,
        target: AssumeTarget,
        type_name: String,
    },
    ConsistencyLevel {
        level: String,
    },
    Describe {
        name: Option<String>,
    },
    DescribeCluster,
    DescribeRing {
        keyspace: Option<String>,
    },
    ShowKeyspaces,
    ShowClusterName,
    ShowApiVersion,
    ShowSchema {
        keyspace: Option<String>,
    },
    /// `trace next query` (cassandra-cli 1.2).
    TraceNextQuery,
    /// `help;` (topic `None`) or `help set;` etc. (topic = the words after `help`, lower-case).
    Help {
        topic: Option<String>,
    },
    Exit,
    /// An empty statement (only comments / whitespace).
    NoOp,
}
