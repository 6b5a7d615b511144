//! Proptest strategies for statement trees that CQL's grammar can express unambiguously, so
//! that printing one and parsing it back must give the same tree.
//!
//! What they leave out, and why: names that lex as something else (`P1D` is a duration, `expr(`
//! a token of its own), `json`, `distinct` and `as` as the first selector (Cassandra's grammar
//! reads them as keywords there too), one-element tuples of a string (which read as a type hint
//! when a term follows), field selection on a number (`1.x` lexes as a float), and property
//! maps or options that repeat a key (refused, as in Cassandra).
#![allow(dead_code)]

use std::collections::BTreeSet;

use cql::ast::*;
use cql::{tokenize, TokenKind};
use proptest::prelude::*;
use proptest::{collection::vec, option};

fn lexes_as_one_ident(s: &str) -> bool {
    match tokenize(s) {
        Ok(tokens) => {
            let kinds: Vec<_> = tokens.into_iter().map(|t| t.kind).filter(|k| *k != TokenKind::Trivia).collect();
            kinds == [TokenKind::Ident, TokenKind::Eof]
        }
        Err(_) => false,
    }
}

/// A name: bare, mixed case, quoted, or one of a few unreserved keywords.
pub fn ident() -> impl Strategy<Value = Identifier> {
    prop_oneof![
        4 => "[a-z][a-z0-9_]{0,6}".prop_filter("a plain identifier", |s| lexes_as_one_ident(s) && s != "expr")
            .prop_map(|s| Identifier::unquoted(&s)),
        2 => "[A-Za-z][A-Za-z0-9_]{0,6}".prop_filter("an identifier", |s| lexes_as_one_ident(s) && s != "expr")
            .prop_map(|s| Identifier::unquoted(&s)),
        2 => "[ -~]{1,6}".prop_map(|s| Identifier::quoted(&s)),
        1 => prop::sample::select(vec!["key", "type", "options", "Filtering", "role", "users", "LOGIN"])
            .prop_map(Identifier::unquoted),
    ]
}

/// A name that can also be a user type's or function's own name (no column-only keywords).
pub fn plain_ident() -> impl Strategy<Value = Identifier> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,6}"
            .prop_filter("a plain identifier", |s| lexes_as_one_ident(s) && s != "expr")
            .prop_map(|s| Identifier::unquoted(&s)),
        "[ -~]{1,6}".prop_map(|s| Identifier::quoted(&s)),
    ]
}

pub fn qualified() -> impl Strategy<Value = QualifiedName> {
    (option::of(ident()), ident()).prop_map(|(keyspace, name)| QualifiedName { keyspace, name })
}

fn qualified_plain() -> impl Strategy<Value = QualifiedName> {
    (option::of(ident()), plain_ident()).prop_map(|(keyspace, name)| QualifiedName { keyspace, name })
}

pub fn native() -> impl Strategy<Value = NativeType> {
    prop::sample::select(NativeType::ALL.to_vec())
}

pub fn cql_type() -> impl Strategy<Value = CqlType> {
    let leaf = prop_oneof![
        4 => native().prop_map(CqlType::Native),
        1 => qualified_plain().prop_map(CqlType::UserDefined),
        1 => "[a-zA-Z.]{1,12}".prop_map(CqlType::Custom),
    ];
    leaf.prop_recursive(4, 16, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| CqlType::List(Box::new(t))),
            inner.clone().prop_map(|t| CqlType::Set(Box::new(t))),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| CqlType::Map(Box::new(k), Box::new(v))),
            vec(inner.clone(), 1..3).prop_map(CqlType::Tuple),
            inner
                .prop_filter("frozen<> takes collections, tuples and UDTs", |t| !matches!(
                    t,
                    CqlType::Native(_) | CqlType::Custom(_)
                ))
                .prop_map(|t| CqlType::Frozen(Box::new(t))),
        ]
    })
}

fn duration() -> impl Strategy<Value = String> {
    let unit = prop::sample::select(vec!["y", "mo", "w", "d", "h", "m", "s", "ms", "us", "ns", "µs"]);
    prop_oneof![
        ("-?", vec(("[0-9]{1,3}", unit), 1..4)).prop_map(|(sign, parts)| format!(
            "{sign}{}",
            parts.into_iter().map(|(n, u)| format!("{n}{u}")).collect::<String>()
        )),
        prop::sample::select(vec!["P1Y2M3DT4H5M6S", "P2W", "PT1H", "-P1D", "P0001-02-03T04:05:06", "P3M4D"])
            .prop_map(String::from),
    ]
}

pub fn constant() -> impl Strategy<Value = Constant> {
    prop_oneof![
        "\\PC{0,8}".prop_map(Constant::String),
        "-?[0-9]{1,20}".prop_map(Constant::Integer),
        "-?[0-9]{1,4}(\\.[0-9]{0,3})?[eE][+-]?[0-9]{1,2}".prop_map(Constant::Float),
        "-?[0-9]{1,4}\\.[0-9]{0,3}".prop_map(Constant::Float),
        prop::sample::select(vec!["NaN", "Infinity", "-NaN", "-Infinity", "nan", "-infinity"])
            .prop_map(|s| Constant::Float(s.into())),
        any::<bool>().prop_map(Constant::Boolean),
        duration().prop_map(Constant::Duration),
        any::<u128>().prop_map(|n| Constant::Uuid(uuid::Uuid::from_u128(n))),
        "[0-9a-fA-F]{0,8}".prop_map(Constant::Hex),
    ]
}

pub fn marker() -> impl Strategy<Value = BindMarker> {
    prop_oneof![Just(BindMarker::Anonymous), ident().prop_map(BindMarker::Named)]
}

fn is_string(t: &Term) -> bool {
    matches!(t, Term::Constant(Constant::String(_)))
}

/// A term that may appear anywhere a term does.
pub fn term() -> impl Strategy<Value = Term> {
    let leaf = prop_oneof![
        4 => constant().prop_map(Term::Constant),
        1 => Just(Term::Null),
        2 => marker().prop_map(Term::BindMarker),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Term::List),
            vec(inner.clone(), 0..3).prop_map(Term::Set),
            vec((inner.clone(), inner.clone()), 1..3).prop_map(Term::Map),
            vec(inner.clone(), 1..3)
                .prop_filter("no one-string tuple", |v| !(v.len() == 1 && v.iter().all(is_string)))
                .prop_map(Term::Tuple),
            vec((ident(), inner.clone()), 1..3).prop_map(Term::UserType),
            (qualified_plain(), vec(inner.clone(), 0..3)).prop_map(|(name, args)| Term::FunctionCall { name, args }),
            (cql_type(), inner).prop_map(|(hint, t)| Term::TypeHint { hint, term: Box::new(t) }),
        ]
    })
}

fn is_value(t: &Term) -> bool {
    !matches!(t, Term::FunctionCall { .. } | Term::TypeHint { .. })
}

fn int_value() -> impl Strategy<Value = Term> {
    prop_oneof![(0i64..1_000_000).prop_map(Term::integer), marker().prop_map(Term::BindMarker)]
}

fn selector_column() -> impl Strategy<Value = Identifier> {
    ident().prop_filter("not a select keyword", |i| {
        !matches!(i.text().to_ascii_lowercase().as_str(), "json" | "distinct" | "as")
    })
}

pub fn selectable() -> impl Strategy<Value = Selectable> {
    let leaf = prop_oneof![
        4 => selector_column().prop_map(Selectable::Column),
        2 => term().prop_filter("a value", is_value).prop_map(Selectable::Term),
        1 => (cql_type(), term().prop_filter("a value", is_value))
            .prop_map(|(hint, t)| Selectable::Term(Term::TypeHint { hint, term: Box::new(t) })),
        1 => Just(Selectable::CountRows),
        1 => ident().prop_map(Selectable::WriteTime),
        1 => ident().prop_map(Selectable::Ttl),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), native()).prop_map(|(s, to)| Selectable::Cast { selector: Box::new(s), to }),
            (qualified_plain(), vec(inner.clone(), 0..3)).prop_map(|(name, args)| Selectable::Function { name, args }),
            (inner.prop_filter("fields of columns and calls", |s| !matches!(s, Selectable::Term(_))), ident())
                .prop_map(|(s, field)| Selectable::Field { selector: Box::new(s), field }),
        ]
    })
}

pub fn selection() -> impl Strategy<Value = Selection> {
    prop_oneof![
        1 => Just(Selection::Wildcard),
        4 => vec((selectable(), option::of(ident())), 1..4)
            .prop_map(|v| Selection::Selectors(v.into_iter().map(|(selectable, alias)| Selector { selectable, alias }).collect())),
    ]
}

fn comparison() -> impl Strategy<Value = Operator> {
    prop::sample::select(vec![Operator::Eq, Operator::Lt, Operator::Lte, Operator::Gt, Operator::Gte, Operator::Neq])
}

fn in_values() -> impl Strategy<Value = InValues> {
    prop_oneof![vec(term(), 0..3).prop_map(InValues::List), marker().prop_map(InValues::Marker)]
}

fn tuple_value() -> impl Strategy<Value = Term> {
    prop_oneof![
        vec(term(), 2..4).prop_map(Term::Tuple),
        term().prop_filter("not a string", |t| !is_string(t)).prop_map(|t| Term::Tuple(vec![t])),
    ]
}

pub fn relation() -> impl Strategy<Value = Relation> {
    let op = prop::sample::select(vec![
        Operator::Eq,
        Operator::Lt,
        Operator::Lte,
        Operator::Gt,
        Operator::Gte,
        Operator::Neq,
        Operator::Contains,
        Operator::ContainsKey,
        Operator::Like,
    ]);
    prop_oneof![
        4 => (ident(), op, term()).prop_map(|(column, op, value)| Relation::Column { column, op, value }),
        1 => (ident(), term(), comparison(), term()).prop_map(|(column, key, op, value)| Relation::MapElement { column, key, op, value }),
        1 => (ident(), in_values()).prop_map(|(column, values)| Relation::In { column, values }),
        1 => ident().prop_map(Relation::IsNotNull),
        1 => (vec(ident(), 1..3), comparison(), term()).prop_map(|(columns, op, value)| Relation::Token { columns, op, value }),
        1 => (vec(ident(), 1..3), comparison(), prop_oneof![tuple_value(), marker().prop_map(Term::BindMarker)])
            .prop_map(|(columns, op, value)| Relation::MultiColumn { columns, op, value }),
        1 => (vec(ident(), 1..3), prop_oneof![
                vec(tuple_value(), 0..3).prop_map(InValues::List),
                vec(marker().prop_map(Term::BindMarker), 1..3).prop_map(InValues::List),
                marker().prop_map(InValues::Marker),
            ])
            .prop_map(|(columns, values)| Relation::MultiColumnIn { columns, values }),
        1 => (ident(), term()).prop_map(|(name, expression)| Relation::CustomIndex { index: QualifiedName::local(name), expression }),
    ]
}

pub fn select() -> impl Strategy<Value = Select> {
    (
        (any::<bool>(), any::<bool>(), selection(), qualified(), vec(relation(), 0..3)),
        (
            vec(ident(), 0..2),
            vec((ident(), any::<bool>()), 0..2),
            option::of(int_value()),
            option::of(int_value()),
            any::<bool>(),
        ),
    )
        .prop_map(
            |((json, distinct, selection, table, where_clause), (group_by, order, ppl, limit, allow_filtering))| {
                Select {
                    json,
                    distinct,
                    selection,
                    table,
                    where_clause,
                    group_by,
                    order_by: order.into_iter().map(|(column, descending)| Ordering { column, descending }).collect(),
                    per_partition_limit: ppl,
                    limit,
                    allow_filtering,
                }
            },
        )
}

pub fn attributes() -> impl Strategy<Value = Attributes> {
    (option::of(int_value()), option::of(int_value()), any::<bool>()).prop_map(|(timestamp, ttl, first)| Attributes {
        ttl_first: first && timestamp.is_some() && ttl.is_some(),
        timestamp,
        ttl,
    })
}

pub fn insert() -> impl Strategy<Value = Insert> {
    let values = prop_oneof![
        (1usize..4)
            .prop_flat_map(|n| (vec(ident(), n), vec(term(), n)))
            .prop_map(|(columns, values)| InsertValues::Values { columns, values }),
        (prop_oneof!["\\PC{0,8}".prop_map(|s| Term::string(&s)), marker().prop_map(Term::BindMarker)], any::<bool>())
            .prop_map(|(value, default_unset)| InsertValues::Json { value, default_unset }),
    ];
    (qualified(), values, any::<bool>(), attributes()).prop_map(|(table, values, if_not_exists, attributes)| Insert {
        table,
        values,
        if_not_exists,
        attributes,
    })
}

fn assignment() -> impl Strategy<Value = Assignment> {
    prop_oneof![
        (ident(), term()).prop_map(|(column, value)| Assignment::Set { column, value }),
        (ident(), term()).prop_map(|(column, value)| Assignment::Add { column, value }),
        (ident(), term()).prop_map(|(column, value)| Assignment::Subtract { column, value }),
        (ident(), term()).prop_map(|(column, value)| Assignment::Prepend { column, value }),
        (ident(), term(), term()).prop_map(|(column, key, value)| Assignment::SetElement { column, key, value }),
        (ident(), ident(), term()).prop_map(|(column, field, value)| Assignment::SetField { column, field, value }),
    ]
}

fn conditions() -> impl Strategy<Value = Option<Conditions>> {
    let target = prop_oneof![
        Just(ConditionTarget::Column),
        term().prop_map(ConditionTarget::Element),
        ident().prop_map(ConditionTarget::Field),
    ];
    let predicate = prop_oneof![
        (comparison(), term()).prop_map(|(op, t)| Predicate::Compare(op, t)),
        in_values().prop_map(Predicate::In),
    ];
    let condition =
        (ident(), target, predicate).prop_map(|(column, target, predicate)| Condition { column, target, predicate });
    option::of(prop_oneof![Just(Conditions::Exists), vec(condition, 1..3).prop_map(Conditions::Columns)])
}

pub fn update() -> impl Strategy<Value = Update> {
    (qualified(), attributes(), vec(assignment(), 1..3), vec(relation(), 1..3), conditions()).prop_map(
        |(table, attributes, assignments, where_clause, conditions)| Update {
            table,
            attributes,
            assignments,
            where_clause,
            conditions,
        },
    )
}

pub fn delete() -> impl Strategy<Value = Delete> {
    let deletion = prop_oneof![
        ident().prop_map(Deletion::Column),
        (ident(), term()).prop_map(|(c, k)| Deletion::Element(c, k)),
        (ident(), ident()).prop_map(|(c, f)| Deletion::Field(c, f)),
    ];
    (vec(deletion, 0..3), qualified(), option::of(int_value()), vec(relation(), 1..3), conditions()).prop_map(
        |(deletions, table, timestamp, where_clause, conditions)| Delete {
            deletions,
            table,
            timestamp,
            where_clause,
            conditions,
        },
    )
}

pub fn batch() -> impl Strategy<Value = Batch> {
    let kind = prop::sample::select(vec![BatchKind::Logged, BatchKind::Unlogged, BatchKind::Counter]);
    let statement = prop_oneof![
        insert().prop_map(BatchStatement::Insert),
        update().prop_map(BatchStatement::Update),
        delete().prop_map(BatchStatement::Delete),
    ];
    (kind, attributes(), vec(statement, 0..3)).prop_map(|(kind, attributes, statements)| Batch {
        kind,
        attributes,
        statements,
    })
}

/// Properties with distinct names, and maps with distinct keys (as Cassandra requires).
pub fn properties(min: usize) -> impl Strategy<Value = Vec<Property>> {
    let value = prop_oneof![
        constant().prop_map(PropertyValue::Constant),
        prop::sample::select(vec!["ALL", "keys", "Static"]).prop_map(|k| PropertyValue::Keyword(k.into())),
        vec((constant(), constant()), 0..3).prop_map(|entries| {
            let mut seen = BTreeSet::new();
            PropertyValue::Map(entries.into_iter().filter(|(k, _)| seen.insert(k.raw_text())).collect())
        }),
    ];
    vec((ident(), value), min..4).prop_map(|props| {
        let mut seen = BTreeSet::new();
        props
            .into_iter()
            .filter(|(n, _)| seen.insert(n.name().to_string()))
            .map(|(name, value)| Property { name, value })
            .collect()
    })
}

pub fn primary_key() -> impl Strategy<Value = PrimaryKey> {
    (vec(ident(), 1..3), vec(ident(), 0..3))
        .prop_map(|(partition_key, clustering)| PrimaryKey { partition_key, clustering })
}

pub fn table_options() -> impl Strategy<Value = Vec<TableOption>> {
    (properties(0), any::<bool>(), vec((ident(), any::<bool>()), 0..3)).prop_map(|(props, compact, order)| {
        let mut out: Vec<TableOption> = props.into_iter().map(TableOption::Property).collect();
        if compact {
            out.push(TableOption::CompactStorage);
        }
        if !order.is_empty() {
            out.insert(0, TableOption::ClusteringOrder(order));
        }
        out
    })
}
