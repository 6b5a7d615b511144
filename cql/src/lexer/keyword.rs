//! CQL keywords, as Cassandra 3.11's lexer knows them.
//!
//! Keywords are case-insensitive. Most are reserved; the unreserved ones are keywords only where
//! the grammar expects them and may otherwise name a column, a table or a keyspace (Cassandra's
//! `unreserved_keyword`). Cassandra splits them in three groups, and so do we, because each
//! group is accepted in different places: native type names (which also name functions), the
//! "basic" ones (which also name user types and functions) and a handful (`TTL`, `COUNT`, ...)
//! that only name columns.

/// One keyword. `Columnfamily` is also spelt `TABLE` and `Keyspace` also `SCHEMA`, as in
/// Cassandra's lexer, which gives both spellings the same token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Keyword {
    Add,
    Aggregate,
    All,
    Allow,
    Alter,
    And,
    Apply,
    As,
    Asc,
    Ascii,
    Authorize,
    Batch,
    Begin,
    Bigint,
    Blob,
    Boolean,
    By,
    Called,
    Cast,
    Clustering,
    Columnfamily,
    Compact,
    Contains,
    Count,
    Counter,
    Create,
    Custom,
    Date,
    Decimal,
    Default,
    Delete,
    Desc,
    Describe,
    Distinct,
    Double,
    Drop,
    Duration,
    Entries,
    Execute,
    Exists,
    Filtering,
    Finalfunc,
    Float,
    From,
    Frozen,
    Full,
    Function,
    Functions,
    Grant,
    Group,
    If,
    In,
    Index,
    Inet,
    Infinity,
    Initcond,
    Input,
    Insert,
    Int,
    Into,
    Is,
    Json,
    Key,
    Keys,
    Keyspace,
    Keyspaces,
    Language,
    Like,
    Limit,
    List,
    Login,
    Map,
    Materialized,
    Mbean,
    Mbeans,
    Modify,
    Nan,
    Nologin,
    Norecursive,
    Nosuperuser,
    Not,
    Null,
    Of,
    On,
    Options,
    Or,
    Order,
    Partition,
    Password,
    Per,
    Permission,
    Permissions,
    Primary,
    Rename,
    Replace,
    Returns,
    Revoke,
    Role,
    Roles,
    Select,
    Set,
    Sfunc,
    Smallint,
    Static,
    Storage,
    Stype,
    Superuser,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    To,
    Token,
    Trigger,
    Truncate,
    Ttl,
    Tuple,
    Type,
    Unlogged,
    Unset,
    Update,
    Use,
    User,
    Users,
    Using,
    Uuid,
    Values,
    Varchar,
    Varint,
    View,
    Where,
    With,
    Writetime,
}

/// How freely a keyword may be used as a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// Never a name (quote it to use it as one).
    Reserved,
    /// A native type name: also a column, keyspace, table or function name.
    NativeType,
    /// Cassandra's `basic_unreserved_keyword`: also a user type or function name.
    Basic,
    /// `TTL`, `COUNT`, `WRITETIME`, `KEY`, `CAST`, `JSON`, `DISTINCT`: column, keyspace or table
    /// names, not user type names.
    ColumnOnly,
}

use Keyword as K;
use Reservation as R;

/// Every keyword with its canonical spelling and reservation, in alphabetical order of spelling.
/// `TABLE` and `SCHEMA` are the second spellings of `COLUMNFAMILY` and `KEYSPACE`.
const KEYWORDS: &[(&str, Keyword, Reservation)] = &[
    ("ADD", K::Add, R::Reserved),
    ("AGGREGATE", K::Aggregate, R::Basic),
    ("ALL", K::All, R::Basic),
    ("ALLOW", K::Allow, R::Reserved),
    ("ALTER", K::Alter, R::Reserved),
    ("AND", K::And, R::Reserved),
    ("APPLY", K::Apply, R::Reserved),
    ("AS", K::As, R::Basic),
    ("ASC", K::Asc, R::Reserved),
    ("ASCII", K::Ascii, R::NativeType),
    ("AUTHORIZE", K::Authorize, R::Reserved),
    ("BATCH", K::Batch, R::Reserved),
    ("BEGIN", K::Begin, R::Reserved),
    ("BIGINT", K::Bigint, R::NativeType),
    ("BLOB", K::Blob, R::NativeType),
    ("BOOLEAN", K::Boolean, R::NativeType),
    ("BY", K::By, R::Reserved),
    ("CALLED", K::Called, R::Basic),
    ("CAST", K::Cast, R::ColumnOnly),
    ("CLUSTERING", K::Clustering, R::Basic),
    ("COLUMNFAMILY", K::Columnfamily, R::Reserved),
    ("COMPACT", K::Compact, R::Basic),
    ("CONTAINS", K::Contains, R::Basic),
    ("COUNT", K::Count, R::ColumnOnly),
    ("COUNTER", K::Counter, R::NativeType),
    ("CREATE", K::Create, R::Reserved),
    ("CUSTOM", K::Custom, R::Basic),
    ("DATE", K::Date, R::NativeType),
    ("DECIMAL", K::Decimal, R::NativeType),
    ("DEFAULT", K::Default, R::Reserved),
    ("DELETE", K::Delete, R::Reserved),
    ("DESC", K::Desc, R::Reserved),
    ("DESCRIBE", K::Describe, R::Reserved),
    ("DISTINCT", K::Distinct, R::ColumnOnly),
    ("DOUBLE", K::Double, R::NativeType),
    ("DROP", K::Drop, R::Reserved),
    ("DURATION", K::Duration, R::NativeType),
    ("ENTRIES", K::Entries, R::Reserved),
    ("EXECUTE", K::Execute, R::Reserved),
    ("EXISTS", K::Exists, R::Basic),
    ("FILTERING", K::Filtering, R::Basic),
    ("FINALFUNC", K::Finalfunc, R::Basic),
    ("FLOAT", K::Float, R::NativeType),
    ("FROM", K::From, R::Reserved),
    ("FROZEN", K::Frozen, R::Basic),
    ("FULL", K::Full, R::Reserved),
    ("FUNCTION", K::Function, R::Basic),
    ("FUNCTIONS", K::Functions, R::Basic),
    ("GRANT", K::Grant, R::Reserved),
    ("GROUP", K::Group, R::Basic),
    ("IF", K::If, R::Reserved),
    ("IN", K::In, R::Reserved),
    ("INDEX", K::Index, R::Reserved),
    ("INET", K::Inet, R::NativeType),
    ("INFINITY", K::Infinity, R::Reserved),
    ("INITCOND", K::Initcond, R::Basic),
    ("INPUT", K::Input, R::Basic),
    ("INSERT", K::Insert, R::Reserved),
    ("INT", K::Int, R::NativeType),
    ("INTO", K::Into, R::Reserved),
    ("IS", K::Is, R::Reserved),
    ("JSON", K::Json, R::ColumnOnly),
    ("KEY", K::Key, R::ColumnOnly),
    ("KEYS", K::Keys, R::Basic),
    ("KEYSPACE", K::Keyspace, R::Reserved),
    ("KEYSPACES", K::Keyspaces, R::Basic),
    ("LANGUAGE", K::Language, R::Basic),
    ("LIKE", K::Like, R::Basic),
    ("LIMIT", K::Limit, R::Reserved),
    ("LIST", K::List, R::Basic),
    ("LOGIN", K::Login, R::Basic),
    ("MAP", K::Map, R::Basic),
    ("MATERIALIZED", K::Materialized, R::Reserved),
    ("MBEAN", K::Mbean, R::Reserved),
    ("MBEANS", K::Mbeans, R::Reserved),
    ("MODIFY", K::Modify, R::Reserved),
    ("NAN", K::Nan, R::Reserved),
    ("NOLOGIN", K::Nologin, R::Basic),
    ("NORECURSIVE", K::Norecursive, R::Reserved),
    ("NOSUPERUSER", K::Nosuperuser, R::Basic),
    ("NOT", K::Not, R::Reserved),
    ("NULL", K::Null, R::Reserved),
    ("OF", K::Of, R::Reserved),
    ("ON", K::On, R::Reserved),
    ("OPTIONS", K::Options, R::Basic),
    ("OR", K::Or, R::Reserved),
    ("ORDER", K::Order, R::Reserved),
    ("PARTITION", K::Partition, R::Basic),
    ("PASSWORD", K::Password, R::Basic),
    ("PER", K::Per, R::Basic),
    ("PERMISSION", K::Permission, R::Basic),
    ("PERMISSIONS", K::Permissions, R::Basic),
    ("PRIMARY", K::Primary, R::Reserved),
    ("RENAME", K::Rename, R::Reserved),
    ("REPLACE", K::Replace, R::Reserved),
    ("RETURNS", K::Returns, R::Basic),
    ("REVOKE", K::Revoke, R::Reserved),
    ("ROLE", K::Role, R::Basic),
    ("ROLES", K::Roles, R::Basic),
    ("SCHEMA", K::Keyspace, R::Reserved),
    ("SELECT", K::Select, R::Reserved),
    ("SET", K::Set, R::Reserved),
    ("SFUNC", K::Sfunc, R::Basic),
    ("SMALLINT", K::Smallint, R::NativeType),
    ("STATIC", K::Static, R::Basic),
    ("STORAGE", K::Storage, R::Basic),
    ("STYPE", K::Stype, R::Basic),
    ("SUPERUSER", K::Superuser, R::Basic),
    ("TABLE", K::Columnfamily, R::Reserved),
    ("TEXT", K::Text, R::NativeType),
    ("TIME", K::Time, R::NativeType),
    ("TIMESTAMP", K::Timestamp, R::NativeType),
    ("TIMEUUID", K::Timeuuid, R::NativeType),
    ("TINYINT", K::Tinyint, R::NativeType),
    ("TO", K::To, R::Reserved),
    ("TOKEN", K::Token, R::Reserved),
    ("TRIGGER", K::Trigger, R::Basic),
    ("TRUNCATE", K::Truncate, R::Reserved),
    ("TTL", K::Ttl, R::ColumnOnly),
    ("TUPLE", K::Tuple, R::Basic),
    ("TYPE", K::Type, R::Basic),
    ("UNLOGGED", K::Unlogged, R::Reserved),
    ("UNSET", K::Unset, R::Reserved),
    ("UPDATE", K::Update, R::Reserved),
    ("USE", K::Use, R::Reserved),
    ("USER", K::User, R::Basic),
    ("USERS", K::Users, R::Basic),
    ("USING", K::Using, R::Reserved),
    ("UUID", K::Uuid, R::NativeType),
    ("VALUES", K::Values, R::Basic),
    ("VARCHAR", K::Varchar, R::NativeType),
    ("VARINT", K::Varint, R::NativeType),
    ("VIEW", K::View, R::Reserved),
    ("WHERE", K::Where, R::Reserved),
    ("WITH", K::With, R::Reserved),
    ("WRITETIME", K::Writetime, R::ColumnOnly),
];

/// The longest keyword spelling; longer words are never keywords.
const LONGEST: usize = 12;

impl Keyword {
    /// The keyword spelt by `word` (any case), if it is one.
    pub fn from_word(word: &str) -> Option<Keyword> {
        if word.len() > LONGEST || !word.is_ascii() {
            return None;
        }
        let mut upper = [0u8; LONGEST];
        let upper = upper.get_mut(..word.len())?;
        upper.copy_from_slice(word.as_bytes());
        upper.make_ascii_uppercase();
        let upper = std::str::from_utf8(upper).ok()?;
        KEYWORDS
            .binary_search_by(|(spelling, _, _)| spelling.cmp(&upper))
            .ok()
            .and_then(|i| KEYWORDS.get(i))
            .map(|k| k.1)
    }

    fn entry(self) -> (&'static str, Reservation) {
        // The first spelling is the canonical one: TABLE and SCHEMA come after COLUMNFAMILY
        // and KEYSPACE in the table, but `Display` prints the names users write today.
        match self {
            K::Columnfamily => ("TABLE", R::Reserved),
            K::Keyspace => ("KEYSPACE", R::Reserved),
            _ => KEYWORDS.iter().find(|k| k.1 == self).map(|k| (k.0, k.2)).unwrap_or(("", R::Reserved)),
        }
    }

    /// The spelling `Display` prints (upper case; `TABLE`, not `COLUMNFAMILY`).
    pub fn as_str(self) -> &'static str {
        self.entry().0
    }

    /// How freely this keyword may be used as a name.
    pub fn reservation(self) -> Reservation {
        self.entry().1
    }

    /// True if the keyword can never be a name.
    pub fn is_reserved(self) -> bool {
        self.reservation() == R::Reserved
    }

    /// The token name Cassandra's parser prints in "expecting ..." messages (`K_FROM`,
    /// `K_COLUMNFAMILY` for TABLE, `K_KEYSPACE` for SCHEMA).
    pub fn token_name(self) -> String {
        match self {
            K::Columnfamily => "K_COLUMNFAMILY".to_string(),
            _ => format!("K_{}", self.as_str()),
        }
    }
}

impl std::fmt::Display for Keyword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every keyword once, for tests and generators.
pub fn all_keywords() -> impl Iterator<Item = Keyword> {
    KEYWORDS
        .iter()
        .map(|k| k.1)
        .filter(|k| !matches!(k, K::Columnfamily | K::Keyspace))
        .chain([K::Columnfamily, K::Keyspace])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_so_binary_search_works() {
        assert!(KEYWORDS.windows(2).all(|w| matches!(w, [a, b] if a.0 < b.0)));
    }

    #[test]
    fn keywords_are_case_insensitive_and_aliases_share_a_token() {
        assert_eq!(Keyword::from_word("sElEcT"), Some(Keyword::Select));
        assert_eq!(Keyword::from_word("table"), Some(Keyword::Columnfamily));
        assert_eq!(Keyword::from_word("schema"), Some(Keyword::Keyspace));
        assert_eq!(Keyword::from_word("selectx"), None);
        assert_eq!(Keyword::from_word("materializedview"), None);
        assert_eq!(Keyword::Columnfamily.token_name(), "K_COLUMNFAMILY");
        assert_eq!(Keyword::Columnfamily.as_str(), "TABLE");
    }

    #[test]
    fn reservations_follow_cassandra_appendix_a() {
        assert!(Keyword::From.is_reserved());
        assert!(Keyword::Default.is_reserved());
        assert!(!Keyword::Key.is_reserved());
        assert_eq!(Keyword::Int.reservation(), Reservation::NativeType);
        assert_eq!(Keyword::Ttl.reservation(), Reservation::ColumnOnly);
        assert_eq!(Keyword::Type.reservation(), Reservation::Basic);
        let unreserved = all_keywords().filter(|k| !k.is_reserved()).count();
        // 21 native types, 7 column-only keywords, 46 basic ones: the 74 of Cassandra 3.11.
        assert_eq!(unreserved, 74);
    }
}
