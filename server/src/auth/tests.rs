//! The SimpleAuthenticator and AllowAllAuthenticator against their files and logins.

use super::*;

fn creds(user: &str, password: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("username".to_string(), user.to_string()), ("password".to_string(), password.to_string())])
}

fn user(name: &str) -> AuthenticatedUser {
    AuthenticatedUser { username: name.to_string() }
}

/// Writes the two files into a temporary directory.
fn setup(passwd: &str, access: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("passwd.properties"), passwd).expect("write passwd");
    std::fs::write(dir.path().join("access.properties"), access).expect("write access");
    dir
}

const PASSWD: &str = "# users\njsmith=havebadpass\nElvis\\ Presley = graceland4evar\ndilbert:nomoovertime\n";
const ACCESS: &str = "<modify-keyspaces>=jsmith\nKeyspace1=jsmith, Elvis Presley\nBloggyAppy.<ro>=dilbert\nBloggyAppy.<rw>=jsmith\nKeyspace2.Standard1.<rw>=dilbert\n";

fn simple(dir: &tempfile::TempDir, mode: PasswordMode) -> Authenticator {
    let p = dir.path();
    Authenticator::with_files(
        "org.apache.cassandra.auth.SimpleAuthenticator",
        &p.join("passwd.properties"),
        &p.join("access.properties"),
        mode,
    )
    .expect("loads")
}

#[test]
fn allow_all_needs_no_login_and_allows_everything() {
    let a = Authenticator::from_config("org.apache.cassandra.auth.AllowAllAuthenticator", Path::new("/nonexistent"))
        .expect("no files needed");
    assert!(!a.requires_login());
    assert!(a.authorize(None, "Keyspace1", true).is_ok());
    assert_eq!(a.login(&creds("x", "y")).expect("ok").username, "x");
}

#[test]
fn unknown_authenticator_class_is_refused() {
    let err = Authenticator::from_config("com.example.LdapAuthenticator", Path::new(".")).expect_err("unknown");
    assert!(matches!(err, AuthSetupError::UnknownAuthenticator { .. }));
}

#[test]
fn plain_passwords() {
    let dir = setup(PASSWD, ACCESS);
    let a = Authenticator::from_config("SimpleAuthenticator", dir.path()).expect("loads");
    assert!(a.requires_login());
    assert_eq!(a.login(&creds("jsmith", "havebadpass")).expect("ok").username, "jsmith");
    assert_eq!(a.login(&creds("Elvis Presley", "graceland4evar")).expect("ok").username, "Elvis Presley");
    assert!(a.login(&creds("dilbert", "nomoovertime")).is_ok());
    let wrong = a.login(&creds("jsmith", "wrong")).expect_err("wrong password");
    let unknown = a.login(&creds("nobody", "havebadpass")).expect_err("unknown user");
    assert!(matches!(wrong, AuthError::BadCredentials(_)));
    assert!(matches!(unknown, AuthError::BadCredentials(_)));
    let missing = a.login(&BTreeMap::from([("username".to_string(), "jsmith".to_string())])).expect_err("no password");
    assert!(matches!(missing, AuthError::BadCredentials(m) if m.contains("'password'")));
}

#[test]
fn md5_passwords_store_the_hex_digest() {
    // MD5("havebadpass"), computed independently and written out.
    let digest: String = Md5::digest(b"havebadpass").iter().map(|b| format!("{b:02X}")).collect();
    let dir = setup(&format!("jsmith={digest}\n"), "Keyspace1=jsmith\n");
    let a = simple(&dir, PasswordMode::Md5);
    assert!(a.login(&creds("jsmith", "havebadpass")).is_ok());
    // Sending the digest itself must not work.
    assert!(a.login(&creds("jsmith", &digest)).is_err());
    assert!(a.login(&creds("jsmith", "havebadpas")).is_err());
    // The same file read in PLAIN mode wants the digest text as the password.
    let plain = simple(&dir, PasswordMode::Plain);
    assert!(plain.login(&creds("jsmith", &digest)).is_ok());
    assert!(plain.login(&creds("jsmith", "havebadpass")).is_err());
}

#[test]
fn md5_known_vector() {
    let d: String = Md5::digest(b"abc").iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(d, "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(decode_hex("900150983CD24FB0D6963F7D28E17F72").expect("hex"), Md5::digest(b"abc").to_vec());
}

#[test]
fn md5_mode_refuses_a_non_digest_at_load() {
    let dir = setup("jsmith=havebadpass\n", "");
    let p = dir.path();
    let err = SimpleAuth::load(&p.join("passwd.properties"), &p.join("access.properties"), PasswordMode::Md5)
        .expect_err("bad");
    assert!(matches!(err, AuthSetupError::BadFile { line: 1, .. }), "{err}");
}

#[test]
fn access_per_keyspace() {
    let dir = setup(PASSWD, ACCESS);
    let a = simple(&dir, PasswordMode::Plain);
    let (js, elvis, dil) = (user("jsmith"), user("Elvis Presley"), user("dilbert"));
    // 0.6 form: full access.
    assert!(a.authorize(Some(&js), "Keyspace1", true).is_ok());
    assert!(a.authorize(Some(&elvis), "Keyspace1", false).is_ok());
    assert!(matches!(a.authorize(Some(&dil), "Keyspace1", false), Err(AuthError::NotAuthorized(_))));
    // 0.7 forms.
    assert!(a.authorize(Some(&dil), "BloggyAppy", false).is_ok());
    assert!(matches!(a.authorize(Some(&dil), "BloggyAppy", true), Err(AuthError::NotAuthorized(_))));
    assert!(a.authorize(Some(&js), "BloggyAppy", true).is_ok());
    assert!(a.authorize(Some(&js), "NoSuchKeyspace", false).is_err());
    // Column family grants.
    assert!(a.authorize(Some(&dil), "Keyspace2", true).is_err());
    assert!(a.authorize_column_family(Some(&dil), "Keyspace2", "Standard1", true).is_ok());
    assert!(a.authorize_column_family(Some(&dil), "Keyspace2", "Standard2", false).is_err());
    assert!(a.authorize_column_family(Some(&js), "Keyspace1", "Anything", true).is_ok());
    // Keyspace list changes.
    assert!(a.authorize_keyspace_list_change(Some(&js)).is_ok());
    assert!(a.authorize_keyspace_list_change(Some(&dil)).is_err());
    // Not logged in.
    assert_eq!(a.authorize(None, "Keyspace1", false), Err(AuthError::NotLoggedIn));
}

/// Cassandra's own sample access.properties (examples/simple_authentication): jsmith has
/// `Keyspace1.<ro>` and `Keyspace1.Standard1.<rw>`, and must be able to write Standard1.
const CASSANDRA_SAMPLE_ACCESS: &str = "<modify-keyspaces>=jsmith\n\
    Keyspace1.<ro>=jsmith,Elvis Presley\n\
    Keyspace1.<rw>=dilbert\n\
    Keyspace1.Standard1.<rw>=jsmith,Elvis Presley,dilbert\n";

fn refused_message(r: Result<(), AuthError>) -> String {
    match r {
        Err(AuthError::NotAuthorized(m)) => m,
        other => panic!("expected NotAuthorized, got {other:?}"),
    }
}

#[test]
fn column_family_grant_adds_to_a_keyspace_grant() {
    let dir = setup(PASSWD, CASSANDRA_SAMPLE_ACCESS);
    let a = simple(&dir, PasswordMode::Plain);
    let (js, dil) = (user("jsmith"), user("dilbert"));
    // <ro> on the keyspace reads every column family of it...
    assert!(a.authorize_column_family(Some(&js), "Keyspace1", "Standard2", false).is_ok());
    // ...and <rw> on Standard1 writes that one only.
    assert!(a.authorize_column_family(Some(&js), "Keyspace1", "Standard1", true).is_ok());
    let why = refused_message(a.authorize_column_family(Some(&js), "Keyspace1", "Standard2", true));
    assert_eq!(why, "User jsmith could not be authorized to write to column family Keyspace1.Standard2");
    // <rw> on the keyspace writes every column family of it.
    assert!(a.authorize_column_family(Some(&dil), "Keyspace1", "Standard2", true).is_ok());
    // Changing the keyspace's column families takes a keyspace grant.
    assert!(a.authorize(Some(&dil), "Keyspace1", true).is_ok());
    let why = refused_message(a.authorize(Some(&js), "Keyspace1", true));
    assert!(why.contains("jsmith") && why.contains("keyspace Keyspace1"), "{why}");
    // Grants on Keyspace1 say nothing of other keyspaces, nor of a same-named column family.
    assert!(a.authorize_column_family(Some(&dil), "Keyspace2", "Standard1", false).is_err());
}

#[test]
fn column_family_grant_alone_needs_no_keyspace_grant() {
    let dir = setup(PASSWD, "MusicApp.song_data.<rw>=dilbert\nMusicApp.playlists.<ro>=jsmith\n");
    let a = simple(&dir, PasswordMode::Plain);
    let (js, dil, elvis) = (user("jsmith"), user("dilbert"), user("Elvis Presley"));
    assert!(a.authorize_column_family(Some(&dil), "MusicApp", "song_data", true).is_ok());
    assert!(a.authorize_column_family(Some(&dil), "MusicApp", "song_data", false).is_ok());
    let why = refused_message(a.authorize_column_family(Some(&dil), "MusicApp", "playlists", false));
    assert_eq!(why, "User dilbert could not be authorized to use column family MusicApp.playlists");
    // <ro> on a column family reads it and does not write it.
    assert!(a.authorize_column_family(Some(&js), "MusicApp", "playlists", false).is_ok());
    assert!(a.authorize_column_family(Some(&js), "MusicApp", "playlists", true).is_err());
    // No keyspace grant: no schema changes.
    assert!(a.authorize(Some(&dil), "MusicApp", false).is_err());
    // Some grant in the keyspace lets a user name it (0.6's login); none does not.
    assert!(a.authorize_keyspace_use(Some(&dil), "MusicApp").is_ok());
    assert!(a.authorize_keyspace_use(Some(&js), "MusicApp").is_ok());
    let why = refused_message(a.authorize_keyspace_use(Some(&elvis), "MusicApp"));
    assert_eq!(why, "User Elvis Presley could not be authorized to use keyspace MusicApp");
    assert!(a.authorize_keyspace_use(Some(&dil), "Other").is_err());
    assert_eq!(a.authorize_keyspace_use(None, "MusicApp"), Err(AuthError::NotLoggedIn));
}

#[test]
fn a_batch_needs_every_column_family_it_names() {
    let dir = setup(PASSWD, CASSANDRA_SAMPLE_ACCESS);
    let a = simple(&dir, PasswordMode::Plain);
    let js = user("jsmith");
    assert!(a.authorize_column_families(Some(&js), "Keyspace1", ["Standard1", "Standard1"], true).is_ok());
    let why = refused_message(a.authorize_column_families(Some(&js), "Keyspace1", ["Standard1", "Standard2"], true));
    assert!(why.contains("jsmith") && why.ends_with("Keyspace1.Standard2"), "{why}");
    assert!(a.authorize_column_families(Some(&js), "Keyspace1", ["Standard1", "Standard2"], false).is_ok());
    // No column family: the login alone.
    assert!(a.authorize_column_families(Some(&js), "Keyspace1", [], true).is_ok());
    assert_eq!(a.authorize_column_families(None, "Keyspace1", [], false), Err(AuthError::NotLoggedIn));
    assert_eq!(a.authorize_column_family(None, "Keyspace1", "Standard1", false), Err(AuthError::NotLoggedIn));
}

#[test]
fn the_06_form_covers_every_column_family() {
    let dir = setup(PASSWD, "Keyspace1=jsmith, dilbert\n");
    let a = simple(&dir, PasswordMode::Plain);
    for name in ["jsmith", "dilbert"] {
        let u = user(name);
        assert!(a.authorize(Some(&u), "Keyspace1", true).is_ok());
        assert!(a.authorize_column_family(Some(&u), "Keyspace1", "Standard1", true).is_ok());
        assert!(a.authorize_column_families(Some(&u), "Keyspace1", ["Standard1", "Super1"], true).is_ok());
        assert!(a.authorize_keyspace_use(Some(&u), "Keyspace1").is_ok());
    }
    assert!(a.authorize_column_family(Some(&user("Elvis Presley")), "Keyspace1", "Standard1", false).is_err());
}

#[test]
fn system_auth_shows_keyspace_and_column_family_grants() {
    let dir = setup(PASSWD, CASSANDRA_SAMPLE_ACCESS);
    let users = simple(&dir, PasswordMode::Plain).system_auth_users();
    let js = users.iter().find(|u| u.name == "jsmith").expect("jsmith");
    assert!(js.superuser);
    let grants: Vec<(&str, &[String])> = js.grants.iter().map(|(r, p)| (r.as_str(), p.as_slice())).collect();
    let (select, modify) = (["SELECT".to_string()], ["MODIFY".to_string(), "SELECT".to_string()]);
    assert_eq!(grants, [("data/Keyspace1", &select[..]), ("data/Keyspace1/Standard1", &modify[..])]);
    assert!(Authenticator::AllowAll.system_auth_users().is_empty());
}

#[test]
fn allow_all_checks_nothing() {
    let a = Authenticator::AllowAll;
    assert!(a.authorize_column_families(None, "Keyspace1", ["Standard1", "Standard2"], true).is_ok());
    assert!(a.authorize_keyspace_use(None, "Anything").is_ok());
}

#[test]
fn unknown_permission_is_refused() {
    let dir = setup(PASSWD, "Keyspace1.<admin>=jsmith\n");
    let p = dir.path();
    let err = SimpleAuth::load(&p.join("passwd.properties"), &p.join("access.properties"), PasswordMode::Plain)
        .expect_err("bad");
    assert!(matches!(err, AuthSetupError::BadFile { line: 1, .. }));
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Authenticator::from_config("SimpleAuthenticator", dir.path()).expect_err("no files");
    assert!(matches!(err, AuthSetupError::Io { .. }));
}

#[test]
fn edits_take_effect_at_the_next_login() {
    let dir = setup(PASSWD, ACCESS);
    let a = simple(&dir, PasswordMode::Plain);
    assert!(a.login(&creds("newbie", "pw")).is_err());
    std::fs::write(dir.path().join("passwd.properties"), "newbie=pw\n").expect("rewrite");
    // Make sure the modification time differs even on coarse-grained file systems.
    let later = SystemTime::now() + std::time::Duration::from_secs(5);
    let f = std::fs::File::options().write(true).open(dir.path().join("passwd.properties")).expect("open");
    f.set_modified(later).expect("set mtime");
    assert!(a.login(&creds("newbie", "pw")).is_ok());
    assert!(a.login(&creds("jsmith", "havebadpass")).is_err());
}

#[test]
fn properties_syntax() {
    let text = "# comment\n! also comment\n\n  key1 = value one  \nkey\\ 2:v2\nkey3 v3\nlong = a,\\\n    b\nuni=\\u0041\\t\nempty=\nkey1=again\n";
    let p = parse_properties(text).expect("parses");
    let get = |k: &str| p.iter().find(|(key, _, _)| key == k).map(|(_, v, l)| (v.as_str(), *l));
    assert_eq!(get("key1"), Some(("again", 4)));
    assert_eq!(get("key 2"), Some(("v2", 5)));
    assert_eq!(get("key3"), Some(("v3", 6)));
    assert_eq!(get("long"), Some(("a,b", 7)));
    assert_eq!(get("uni"), Some(("A\t", 9)));
    assert_eq!(get("empty"), Some(("", 10)));
    assert!(parse_properties("x=\\u00zz\n").is_err());
}

#[test]
fn debug_output_hides_passwords() {
    let dir = setup(PASSWD, ACCESS);
    let shown = format!("{:?}", simple(&dir, PasswordMode::Plain));
    assert!(shown.contains("users: 3"), "{shown}");
    assert!(!shown.contains("havebadpass"), "{shown}");
}

#[test]
fn constant_time_eq_works() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"abc", b"ab"));
}
