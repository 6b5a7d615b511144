//! Roles, users and permissions in every form of CQL 3.4.4, with the samples of CQL.textile.

mod common;

use common::parsed;
use cql::ast::{Constant, Permission, Permissions, Resource, RoleName, RoleOption};
use cql::Statement;

#[test]
fn textile_samples() {
    for text in [
        "CREATE ROLE new_role;",
        "CREATE ROLE alice WITH PASSWORD = 'password_a' AND LOGIN = true;",
        "CREATE ROLE bob WITH PASSWORD = 'password_b' AND LOGIN = true AND SUPERUSER = true;",
        "CREATE ROLE carlos WITH OPTIONS = { 'custom_option1' : 'option1_value', 'custom_option2' : 99 };",
        "CREATE ROLE other_role;",
        "CREATE ROLE IF NOT EXISTS other_role;",
        "ALTER ROLE bob WITH PASSWORD = 'PASSWORD_B' AND SUPERUSER = false;",
        "DROP ROLE alice;",
        "DROP ROLE IF EXISTS bob;",
        "GRANT report_writer TO alice;",
        "GRANT role_a TO role_b;",
        "REVOKE report_writer FROM alice;",
        "LIST ROLES;",
        "LIST ROLES OF alice;",
        "LIST ROLES OF bob NORECURSIVE",
        "CREATE USER alice WITH PASSWORD 'password_a' SUPERUSER;",
        "CREATE USER bob WITH PASSWORD 'password_b' NOSUPERUSER;",
        "CREATE USER IF NOT EXISTS alice WITH PASSWORD 'password_a' SUPERUSER;",
        "CREATE USER alice WITH PASSWORD 'password_a';",
        "ALTER USER alice WITH PASSWORD 'PASSWORD_A';",
        "ALTER USER bob SUPERUSER;",
        "DROP USER alice;",
        "DROP USER IF EXISTS bob;",
        "LIST USERS;",
        "GRANT SELECT ON ALL KEYSPACES TO data_reader;",
        "GRANT MODIFY ON KEYSPACE keyspace1 TO data_writer;",
        "GRANT DROP ON keyspace1.table1 TO schema_owner;",
        "GRANT EXECUTE ON FUNCTION keyspace1.user_function( int ) TO report_writer;",
        "GRANT DESCRIBE ON ALL ROLES TO role_admin;",
        "REVOKE SELECT ON ALL KEYSPACES FROM data_reader;",
        "REVOKE MODIFY ON KEYSPACE keyspace1 FROM data_writer;",
        "REVOKE DROP ON keyspace1.table1 FROM schema_owner;",
        "REVOKE EXECUTE ON FUNCTION keyspace1.user_function( int ) FROM report_writer;",
        "REVOKE DESCRIBE ON ALL ROLES FROM role_admin;",
        "LIST ALL PERMISSIONS OF alice;",
        "LIST ALL PERMISSIONS ON keyspace1.table1 OF bob;",
        "LIST SELECT PERMISSION OF carlos;",
    ] {
        parsed(text);
    }
    // CQL.textile shows `LIST SELECT PERMISSIONS OF carlos`, but Cassandra 3.11's grammar only
    // takes the singular after a single permission (`permission K_PERMISSION?`), so it refuses it.
    assert_eq!(
        common::error("LIST SELECT PERMISSIONS OF carlos"),
        "line 1:12 mismatched input 'PERMISSIONS' expecting EOF (LIST SELECT [PERMISSIONS]...)"
    );
}

#[test]
fn role_options_and_names() {
    let Statement::CreateRole(r) =
        parsed("CREATE ROLE IF NOT EXISTS 'Mixed Case' WITH LOGIN = false AND OPTIONS = {'a': 1} AND SUPERUSER = true")
    else {
        panic!("not a role")
    };
    assert!(r.if_not_exists);
    assert_eq!(r.name, RoleName::String("Mixed Case".into()));
    assert_eq!(r.options[0], RoleOption::Login(false));
    assert_eq!(r.options[1], RoleOption::Options(vec![(Constant::String("a".into()), Constant::Integer("1".into()))]));
    let Statement::AlterRole(r) = parsed("ALTER ROLE \"Quoted\"") else { panic!("not a role") };
    assert_eq!(r.name.name(), "Quoted");
    let Statement::CreateUser(u) = parsed("CREATE USER Alice") else { panic!("not a user") };
    assert_eq!(u.name, "Alice", "user names keep their case");
}

#[test]
fn permissions_and_resources() {
    let grant = |text: &str| match parsed(text) {
        Statement::GrantPermission(g) => g,
        other => panic!("{other:?}"),
    };
    let g = grant("GRANT ALL ON ALL FUNCTIONS IN KEYSPACE ks TO r");
    assert_eq!(g.permissions, Permissions::All);
    assert!(matches!(g.resource, Resource::AllFunctionsInKeyspace(ref ks) if ks.name() == "ks"));
    assert_eq!(grant("GRANT ALL PERMISSIONS ON ALL FUNCTIONS TO r").resource, Resource::AllFunctions);
    assert_eq!(
        grant("GRANT AUTHORIZE PERMISSION ON ALL MBEANS TO r").permissions,
        Permissions::One(Permission::Authorize)
    );
    assert_eq!(
        grant("GRANT SELECT ON MBEAN 'org.apache:type=X' TO r").resource,
        Resource::Mbean("org.apache:type=X".into())
    );
    assert_eq!(grant("GRANT SELECT ON MBEANS 'org.apache:*' TO r").resource, Resource::Mbeans("org.apache:*".into()));
    assert!(matches!(grant("GRANT ALTER ON ROLE bob TO r").resource, Resource::Role(_)));
    assert!(matches!(grant("GRANT SELECT ON TABLE ks.t TO r").resource, Resource::Table(_)));
    assert!(matches!(grant("GRANT SELECT ON role TO r").resource, Resource::Table(ref t) if t.name.name() == "role"));
    assert!(
        matches!(grant("GRANT CREATE ON FUNCTION f() TO r").resource, Resource::Function { ref arguments, .. } if arguments.is_empty())
    );
    // `all` is an unreserved keyword, so this grants the role named all.
    assert!(matches!(parsed("GRANT all TO bob"), Statement::GrantRole(g) if g.role.name() == "all"));
    let Statement::ListPermissions(l) = parsed("LIST MODIFY ON KEYSPACE ks OF bob NORECURSIVE") else {
        panic!("not a list")
    };
    assert!(!l.recursive && l.of.is_some() && l.resource.is_some());
    assert!(matches!(parsed("LIST ALL"), Statement::ListPermissions(l) if l.recursive && l.resource.is_none()));
}
