//! Generated statement trees print as CQL that parses back to the same tree.

mod strategies;

use cql::ast::*;
use cql::{parse, Statement};
use proptest::prelude::*;
use proptest::{collection::vec, option};
use strategies::*;

fn create_table() -> impl Strategy<Value = CreateTable> {
    let column = (ident(), cql_type(), any::<bool>(), any::<bool>())
        .prop_map(|(name, ty, is_static, primary_key)| ColumnDefinition { name, ty, is_static, primary_key });
    let element = prop_oneof![
        4 => column.prop_map(TableElement::Column),
        1 => primary_key().prop_map(TableElement::PrimaryKey),
    ];
    (any::<bool>(), qualified(), vec(element, 1..5), table_options())
        .prop_map(|(if_not_exists, name, elements, options)| CreateTable { if_not_exists, name, elements, options })
}

fn alter_table() -> impl Strategy<Value = AlterTable> {
    let added =
        (ident(), cql_type(), any::<bool>()).prop_map(|(name, ty, is_static)| AddedColumn { name, ty, is_static });
    let action = prop_oneof![
        (ident(), cql_type()).prop_map(|(column, ty)| AlterTableAction::AlterType { column, ty }),
        vec(added, 1..3).prop_map(AlterTableAction::Add),
        (vec(ident(), 1..3), option::of("[0-9]{1,12}"))
            .prop_map(|(columns, timestamp)| AlterTableAction::Drop { columns, timestamp }),
        Just(AlterTableAction::DropCompactStorage),
        vec((ident(), ident()), 1..3).prop_map(AlterTableAction::Rename),
        properties(1).prop_map(AlterTableAction::With),
    ];
    (qualified(), action).prop_map(|(name, action)| AlterTable { name, action })
}

fn schema_statement() -> impl Strategy<Value = Statement> {
    let target_kind = prop::sample::select(vec![
        IndexTargetKind::Simple,
        IndexTargetKind::Keys,
        IndexTargetKind::Values,
        IndexTargetKind::Entries,
        IndexTargetKind::Full,
    ]);
    let index = (
        (any::<bool>(), any::<bool>(), option::of(ident()), qualified()),
        (
            vec((ident(), target_kind).prop_map(|(column, kind)| IndexTarget { column, kind }), 0..3),
            option::of("[a-zA-Z.]{1,10}"),
            properties(0),
        ),
    )
        .prop_map(|((custom, if_not_exists, name, table), (targets, class, properties))| CreateIndex {
            custom,
            if_not_exists,
            name,
            table,
            targets,
            class,
            properties,
        })
        .boxed();
    let ut_name =
        (option::of(ident()), plain_ident()).prop_map(|(keyspace, name)| QualifiedName { keyspace, name }).boxed();
    let view =
        (
            (any::<bool>(), qualified(), selection(), qualified()),
            (vec(relation(), 0..3), primary_key(), table_options()),
        )
            .prop_map(|((if_not_exists, name, selection, base_table), (where_clause, primary_key, options))| {
                CreateView { if_not_exists, name, selection, base_table, where_clause, primary_key, options }
            })
            .boxed();
    let drop = (any::<bool>(), qualified()).prop_map(|(if_exists, name)| DropObject { if_exists, name }).boxed();
    prop_oneof![
        ident().prop_map(Statement::Use),
        qualified().prop_map(Statement::Truncate),
        (any::<bool>(), ident(), properties(1)).prop_map(
            |(if_not_exists, name, properties)| Statement::CreateKeyspace(CreateKeyspace {
                if_not_exists,
                name,
                properties
            })
        ),
        (ident(), properties(1))
            .prop_map(|(name, properties)| Statement::AlterKeyspace(AlterKeyspace { name, properties })),
        (any::<bool>(), ident()).prop_map(|(if_exists, name)| Statement::DropKeyspace { if_exists, name }),
        create_table().prop_map(Statement::CreateTable),
        alter_table().prop_map(Statement::AlterTable),
        drop.clone().prop_map(Statement::DropTable),
        index.prop_map(Statement::CreateIndex),
        drop.clone().prop_map(Statement::DropIndex),
        (any::<bool>(), ut_name.clone(), vec((ident(), cql_type()), 1..3)).prop_map(|(if_not_exists, name, fields)| {
            Statement::CreateType(CreateType { if_not_exists, name, fields })
        }),
        (
            ut_name.clone(),
            prop_oneof![
                (ident(), cql_type()).prop_map(|(f, t)| AlterTypeAction::AlterField(f, t)),
                (ident(), cql_type()).prop_map(|(f, t)| AlterTypeAction::Add(f, t)),
                vec((ident(), ident()), 1..3).prop_map(AlterTypeAction::Rename),
            ]
        )
            .prop_map(|(name, action)| Statement::AlterType(AlterType { name, action })),
        (any::<bool>(), ut_name).prop_map(|(if_exists, name)| Statement::DropType(DropObject { if_exists, name })),
        view.prop_map(Statement::CreateView),
        (qualified(), properties(1)).prop_map(|(name, properties)| Statement::AlterView { name, properties }),
        drop.prop_map(Statement::DropView),
        (any::<bool>(), ident(), qualified(), "\\PC{0,10}").prop_map(|(if_not_exists, name, table, class)| {
            Statement::CreateTrigger(CreateTrigger { if_not_exists, name, table, class })
        }),
        (any::<bool>(), ident(), qualified()).prop_map(|(if_exists, name, table)| Statement::DropTrigger {
            if_exists,
            name,
            table
        }),
    ]
}

fn function_statement() -> impl Strategy<Value = Statement> {
    let fname =
        (option::of(ident()), plain_ident()).prop_map(|(keyspace, name)| QualifiedName { keyspace, name }).boxed();
    let function = (
        (any::<bool>(), any::<bool>(), fname.clone(), vec((ident(), cql_type()), 0..3)),
        (any::<bool>(), cql_type(), prop::sample::select(vec!["java", "javascript"]), "\\PC{0,20}"),
    )
        .prop_map(
            |((or_replace, if_not_exists, name, arguments), (called_on_null_input, return_type, language, body))| {
                CreateFunction {
                    or_replace,
                    if_not_exists,
                    name,
                    arguments,
                    called_on_null_input,
                    return_type,
                    language: language.into(),
                    body,
                }
            },
        )
        .boxed();
    let aggregate = (
        (any::<bool>(), any::<bool>(), fname.clone(), vec(cql_type(), 0..3)),
        (plain_ident(), cql_type(), option::of(plain_ident()), option::of(term())),
    )
        .prop_map(
            |(
                (or_replace, if_not_exists, name, arguments),
                (state_function, state_type, final_function, initial_condition),
            )| {
                CreateAggregate {
                    or_replace,
                    if_not_exists,
                    name,
                    arguments,
                    state_function,
                    state_type,
                    final_function,
                    initial_condition,
                }
            },
        )
        .boxed();
    let drop = (any::<bool>(), fname, option::of(vec(cql_type(), 0..3)))
        .prop_map(|(if_exists, name, arguments)| DropFunction { if_exists, name, arguments })
        .boxed();
    prop_oneof![
        function.prop_map(Statement::CreateFunction),
        aggregate.prop_map(Statement::CreateAggregate),
        drop.clone().prop_map(Statement::DropFunction),
        drop.prop_map(Statement::DropAggregate),
    ]
}

fn role_name() -> impl Strategy<Value = RoleName> {
    prop_oneof![ident().prop_map(RoleName::Identifier), "\\PC{0,8}".prop_map(RoleName::String)]
}

fn auth_statement() -> impl Strategy<Value = Statement> {
    let option = prop_oneof![
        "\\PC{0,8}".prop_map(RoleOption::Password),
        any::<bool>().prop_map(RoleOption::Login),
        any::<bool>().prop_map(RoleOption::Superuser),
        vec(("[a-z]{1,4}", "[a-z]{0,4}"), 0..3).prop_map(|entries| {
            let mut seen = std::collections::BTreeSet::new();
            RoleOption::Options(
                entries
                    .into_iter()
                    .filter(|(k, _)| seen.insert(k.clone()))
                    .map(|(k, v)| (Constant::String(k), Constant::String(v)))
                    .collect(),
            )
        }),
    ];
    let options = vec(option, 0..4).prop_map(|opts| {
        let mut out: Vec<RoleOption> = Vec::new();
        for o in opts {
            if !out.iter().any(|p| std::mem::discriminant(p) == std::mem::discriminant(&o)) {
                out.push(o);
            }
        }
        out
    });
    let role = (any::<bool>(), role_name(), options)
        .prop_map(|(if_not_exists, name, options)| RoleStatement { if_not_exists, name, options })
        .boxed();
    let user = (any::<bool>(), "\\PC{0,8}", option::of("\\PC{0,8}"), option::of(any::<bool>()))
        .prop_map(|(if_not_exists, name, password, superuser)| UserStatement {
            if_not_exists,
            name,
            password,
            superuser,
        })
        .boxed();
    let permission = prop::sample::select(vec![
        Permission::Create,
        Permission::Alter,
        Permission::Drop,
        Permission::Select,
        Permission::Modify,
        Permission::Authorize,
        Permission::Describe,
        Permission::Execute,
    ])
    .boxed();
    let permissions = prop_oneof![Just(Permissions::All), permission.prop_map(Permissions::One)].boxed();
    let resource = prop_oneof![
        Just(Resource::AllKeyspaces),
        ident().prop_map(Resource::Keyspace),
        qualified().prop_map(Resource::Table),
        Just(Resource::AllRoles),
        role_name().prop_map(Resource::Role),
        Just(Resource::AllFunctions),
        ident().prop_map(Resource::AllFunctionsInKeyspace),
        ((option::of(ident()), plain_ident()), vec(cql_type(), 0..3)).prop_map(|((keyspace, name), arguments)| {
            Resource::Function { name: QualifiedName { keyspace, name }, arguments }
        }),
        Just(Resource::AllMbeans),
        "\\PC{0,8}".prop_map(Resource::Mbean),
        "\\PC{0,8}".prop_map(Resource::Mbeans),
    ]
    .boxed();
    let change = (permissions.clone(), resource.clone(), role_name())
        .prop_map(|(permissions, resource, role)| PermissionChange { permissions, resource, role })
        .boxed();
    let role_change = (role_name(), role_name()).prop_map(|(role, grantee)| RoleChange { role, grantee }).boxed();
    prop_oneof![
        role.clone().prop_map(Statement::CreateRole),
        role.prop_map(|r| Statement::AlterRole(RoleStatement { if_not_exists: false, ..r })),
        (any::<bool>(), role_name()).prop_map(|(if_exists, name)| Statement::DropRole(DropRole { if_exists, name })),
        (option::of(role_name()), any::<bool>())
            .prop_map(|(of, recursive)| Statement::ListRoles(ListRoles { of, recursive })),
        role_change.clone().prop_map(Statement::GrantRole),
        role_change.prop_map(Statement::RevokeRole),
        user.clone().prop_map(Statement::CreateUser),
        user.prop_map(|u| Statement::AlterUser(UserStatement { if_not_exists: false, ..u })),
        (any::<bool>(), "\\PC{0,8}").prop_map(|(if_exists, name)| Statement::DropUser(DropUser { if_exists, name })),
        Just(Statement::ListUsers),
        change.clone().prop_map(Statement::GrantPermission),
        change.prop_map(Statement::RevokePermission),
        (permissions, option::of(resource), option::of(role_name()), any::<bool>()).prop_map(
            |(permissions, resource, of, recursive)| Statement::ListPermissions(ListPermissions {
                permissions,
                resource,
                of,
                recursive
            })
        ),
    ]
}

fn statement() -> impl Strategy<Value = Statement> {
    prop_oneof![
        3 => select().prop_map(Statement::Select),
        2 => insert().prop_map(Statement::Insert),
        2 => update().prop_map(Statement::Update),
        2 => delete().prop_map(Statement::Delete),
        1 => batch().prop_map(Statement::Batch),
        3 => schema_statement(),
        1 => function_statement(),
        2 => auth_statement(),
    ]
}

fn assert_round_trip(statement: &Statement) -> Result<(), TestCaseError> {
    let text = statement.to_string();
    match parse(&text) {
        Ok(back) => {
            prop_assert_eq!(&back, statement, "printed as {}", text);
            Ok(())
        }
        Err(e) => Err(TestCaseError::fail(format!("{text} does not parse: {e}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn statements_round_trip(s in statement()) {
        assert_round_trip(&s)?;
    }

    #[test]
    fn terms_round_trip(t in term()) {
        let s = Statement::Insert(Insert {
            table: QualifiedName::local(Identifier::new("t")),
            values: InsertValues::Values { columns: vec![Identifier::new("c")], values: vec![t] },
            if_not_exists: false,
            attributes: Attributes::default(),
        });
        assert_round_trip(&s)?;
    }

    #[test]
    fn identifiers_made_by_new_read_back_as_themselves(name in "\\PC{1,8}") {
        let id = Identifier::new(&name);
        let s = Statement::Use(id.clone());
        assert_round_trip(&s)?;
        prop_assert_eq!(id.name(), name.as_str());
    }
}
