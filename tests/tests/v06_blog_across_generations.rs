//! The seeds' blog ("WTF is a SuperColumn": keyspace BloggyAppy as conf/storage-conf.xml declares
//! it) written through Cassandra 0.6's API and read through API 20.1.0, and the reverse: Authors
//! and BlogEntries (BytesType), TaggedPosts (TimeUUIDType, one row per tag plus `__notag__`) and
//! Comments (a super column family: TimeUUID super columns of commenter/email/comment/...), then
//! the article's queries.

mod v06_support;

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;
use thrift_idl::v06 as v;
use thrift_idl::v06::TCassandraSyncClient as _;
use uuid::{Timestamp, Uuid};
use v06_support::*;

const KS: &str = "BloggyAppy";
const NOTAG: &str = "__notag__";
const POSTS: u64 = 12;
/// More than 2**32 ticks of 100 ns between posts, so that the TimeUUIDs' byte order differs from
/// their time order and only a real TimeUUIDType comparator sorts them right.
const POST_SPACING_S: u64 = 500;
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

fn time_uuid(unix_seconds: u64) -> Vec<u8> {
    let ticks = GREGORIAN_OFFSET + unix_seconds * 10_000_000;
    Uuid::new_v1(Timestamp::from_gregorian_time(ticks, 0x1234), &[2, 0x42, 0xac, 0x11, 0, 2]).as_bytes().to_vec()
}

struct Post {
    slug: String,
    uuid: Vec<u8>,
    unix_seconds: u64,
    tags: Vec<&'static str>,
    author: &'static str,
}

fn posts() -> Vec<Post> {
    (0..POSTS)
        .map(|i| {
            let mut tags = Vec::new();
            if i % 2 == 0 {
                tags.push("guitar");
            }
            if i % 3 == 0 {
                tags.push("movie");
            }
            if i != 5 {
                tags.push("life");
            }
            let unix_seconds = 1_250_000_000 + i * POST_SPACING_S;
            Post {
                slug: format!("post-{i:02}"),
                uuid: time_uuid(unix_seconds),
                unix_seconds,
                tags,
                author: if i % 4 == 0 { "Some Dude" } else { "Arin Sarkissian" },
            }
        })
        .collect()
}

/// One column (name, value) or one super column (name, its columns) as either API returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Column(Vec<u8>, Vec<u8>),
    Super(Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>),
}

type Rows = BTreeMap<String, BTreeMap<String, Vec<(Vec<u8>, Vec<u8>)>>>;

/// What the blog writes, in each API's own calls.
trait Writer {
    /// Many rows in one batch: key → column family → columns.
    fn put(&mut self, rows: Rows);
    /// One comment: a super column of Comments.
    fn put_comment(&mut self, entry: &str, id: Vec<u8>, fields: Vec<(Vec<u8>, Vec<u8>)>);
    fn remove_comment(&mut self, entry: &str, id: Vec<u8>);
}

/// What the article's queries read, in each API's own calls.
trait Reader {
    fn slice(&mut self, key: &str, cf: &str, start: Vec<u8>, finish: Vec<u8>, reversed: bool, count: i32) -> Vec<Item>;
    fn rows(&mut self, keys: Vec<String>, cf: &str) -> BTreeMap<String, Vec<Item>>;
    fn count(&mut self, key: &str, cf: &str) -> i32;
    fn keys(&mut self, cf: &str) -> Vec<String>;
    fn field(&mut self, key: &str, cf: &str, super_column: Vec<u8>, column: &str) -> Option<Vec<u8>>;
}

struct Old(Client06);
struct New(Client);

impl Writer for Old {
    fn put(&mut self, rows: Rows) {
        // A row of one column family goes through 0.6's deprecated batch_insert, the rest
        // through batch_mutate, so both get used.
        if rows.len() == 1 && rows.values().all(|by_cf| by_cf.len() == 1) {
            let (key, by_cf) = rows.into_iter().next().expect("one row");
            let cfmap = by_cf
                .into_iter()
                .map(|(cf, cols)| {
                    let cols =
                        cols.into_iter().map(|(n, val)| v::ColumnOrSuperColumn::new(column06(n, val, ts()), None));
                    (cf, cols.collect())
                })
                .collect();
            return ok("0.6 batch_insert", self.0.batch_insert(KS.into(), key, cfmap, ONE06));
        }
        let map = rows
            .into_iter()
            .map(|(key, by_cf)| {
                let by_cf = by_cf
                    .into_iter()
                    .map(|(cf, cols)| (cf, cols.into_iter().map(|(n, val)| insert06(column06(n, val, ts()))).collect()))
                    .collect();
                (key, by_cf)
            })
            .collect();
        ok("0.6 batch_mutate", self.0.batch_mutate(KS.into(), map, ONE06))
    }

    fn put_comment(&mut self, entry: &str, id: Vec<u8>, fields: Vec<(Vec<u8>, Vec<u8>)>) {
        let cols = fields.into_iter().map(|(n, val)| column06(n, val, ts())).collect();
        let m = batch06(entry, "Comments", vec![super_insert06(id, cols)]);
        ok("0.6 comment", self.0.batch_mutate(KS.into(), m, ONE06))
    }

    fn remove_comment(&mut self, entry: &str, id: Vec<u8>) {
        ok("0.6 remove", self.0.remove(KS.into(), entry.into(), super_path06("Comments", id, None), ts(), ONE06))
    }
}

impl Writer for New {
    fn put(&mut self, rows: Rows) {
        let map = rows
            .into_iter()
            .map(|(key, by_cf)| {
                let by_cf = by_cf
                    .into_iter()
                    .map(|(cf, cols)| {
                        (cf, cols.into_iter().map(|(n, val)| insert_mutation(column(n, val, ts()))).collect())
                    })
                    .collect();
                (b(&key), by_cf)
            })
            .collect();
        ok("20.1.0 batch_mutate", self.0.batch_mutate(map, ONE))
    }

    fn put_comment(&mut self, entry: &str, id: Vec<u8>, fields: Vec<(Vec<u8>, Vec<u8>)>) {
        let cols = fields.into_iter().map(|(n, val)| column(n, val, ts())).collect();
        ok("20.1.0 comment", self.0.batch_mutate(batch(entry, "Comments", vec![super_insert_mutation(id, cols)]), ONE))
    }

    fn remove_comment(&mut self, entry: &str, id: Vec<u8>) {
        ok("20.1.0 remove", self.0.remove(b(entry), super_path("Comments", id, None), ts(), ONE))
    }
}

fn items06(cols: Vec<v::ColumnOrSuperColumn>) -> Vec<Item> {
    cols.into_iter()
        .map(|c| match (c.column, c.super_column) {
            (Some(c), None) => Item::Column(c.name, c.value),
            (None, Some(sc)) => Item::Super(sc.name, sc.columns.into_iter().map(|c| (c.name, c.value)).collect()),
            other => panic!("a ColumnOrSuperColumn with {other:?}"),
        })
        .collect()
}

fn items20(cols: Vec<t::ColumnOrSuperColumn>) -> Vec<Item> {
    cols.into_iter()
        .map(|c| match (c.column, c.super_column) {
            (Some(c), None) => Item::Column(c.name, c.value.unwrap_or_default()),
            (None, Some(sc)) => {
                Item::Super(sc.name, sc.columns.into_iter().map(|c| (c.name, c.value.unwrap_or_default())).collect())
            }
            other => panic!("a ColumnOrSuperColumn with {other:?}"),
        })
        .collect()
}

impl Reader for Old {
    fn slice(&mut self, key: &str, cf: &str, start: Vec<u8>, finish: Vec<u8>, reversed: bool, count: i32) -> Vec<Item> {
        let p = slice06(start, finish, reversed, count);
        items06(ok("0.6 get_slice", self.0.get_slice(KS.into(), key.into(), parent06(cf), p, ONE06)))
    }

    fn rows(&mut self, keys: Vec<String>, cf: &str) -> BTreeMap<String, Vec<Item>> {
        let rows = ok("0.6 multiget_slice", self.0.multiget_slice(KS.into(), keys, parent06(cf), all06(100), ONE06));
        rows.into_iter().map(|(k, cols)| (k, items06(cols))).collect()
    }

    fn count(&mut self, key: &str, cf: &str) -> i32 {
        ok("0.6 get_count", self.0.get_count(KS.into(), key.into(), parent06(cf), ONE06))
    }

    fn keys(&mut self, cf: &str) -> Vec<String> {
        // 0.6's deprecated form of a key range scan.
        let rows = self.0.get_range_slice(KS.into(), parent06(cf), all06(1), String::new(), String::new(), 100, ONE06);
        ok("0.6 get_range_slice", rows).into_iter().map(|r| r.key).collect()
    }

    fn field(&mut self, key: &str, cf: &str, super_column: Vec<u8>, column: &str) -> Option<Vec<u8>> {
        match self.0.get(KS.into(), key.into(), super_path06(cf, super_column, Some(b(column))), ONE06) {
            Ok(c) => c.column.map(|c| c.value),
            Err(thrift::Error::User(e)) if e.downcast_ref::<v::NotFoundException>().is_some() => None,
            Err(e) => panic!("0.6 get: {e:?}"),
        }
    }
}

impl Reader for New {
    fn slice(&mut self, key: &str, cf: &str, start: Vec<u8>, finish: Vec<u8>, reversed: bool, count: i32) -> Vec<Item> {
        let p = slice(start, finish, reversed, count);
        items20(ok("20.1.0 get_slice", self.0.get_slice(b(key), parent(cf), p, ONE)))
    }

    fn rows(&mut self, keys: Vec<String>, cf: &str) -> BTreeMap<String, Vec<Item>> {
        let keys = keys.iter().map(|k| b(k)).collect();
        let rows = ok("20.1.0 multiget_slice", self.0.multiget_slice(keys, parent(cf), all(100), ONE));
        rows.into_iter().map(|(k, cols)| (String::from_utf8_lossy(&k).into_owned(), items20(cols))).collect()
    }

    fn count(&mut self, key: &str, cf: &str) -> i32 {
        ok("20.1.0 get_count", self.0.get_count(b(key), parent(cf), all(1000), ONE))
    }

    fn keys(&mut self, cf: &str) -> Vec<String> {
        let rows =
            ok("20.1.0 get_range_slices", self.0.get_range_slices(parent(cf), all(1), key_range("", "", 100), ONE));
        slice_keys(&rows)
    }

    fn field(&mut self, key: &str, cf: &str, super_column: Vec<u8>, column: &str) -> Option<Vec<u8>> {
        match self.0.get(b(key), super_path(cf, super_column, Some(b(column))), ONE) {
            Ok(c) => c.column.and_then(|c| c.value),
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
            Err(e) => panic!("20.1.0 get: {e:?}"),
        }
    }
}

const COMMENTS: [(&str, &str, &str); 4] = [
    ("Joe Blow", "joeb@example.com", "you're wrong, the godfather is the best movie ever"),
    ("Some Dude", "sd@example.com", "be nice Joe Blow this isnt youtube"),
    ("Johnny Guitar", "guitardude@example.com", "nice axe dawg..."),
    ("Arin Sarkissian", "arin@example.com", "thanks all"),
];

fn write_blog(w: &mut dyn Writer, posts: &[Post]) {
    // One author per call: one row of one column family (0.6's batch_insert).
    for (name, twitter, n) in [("Arin Sarkissian", "phatduckk", 9), ("Some Dude", "somedude", 3)] {
        let cols = vec![(b("numPosts"), b(&n.to_string())), (b("twitter"), b(twitter)), (b("bio"), b("bla bla bla"))];
        w.put(Rows::from([(name.to_string(), BTreeMap::from([("Authors".to_string(), cols)]))]));
    }
    // Entries out of time order; each is one batch over BlogEntries and its tag rows.
    for i in [7usize, 2, 11, 0, 5, 9, 1, 10, 3, 8, 4, 6] {
        let p = &posts[i];
        let mut rows = Rows::new();
        let entry = vec![
            (b("title"), b(&format!("Entry number {i}"))),
            (b("author"), b(p.author)),
            (b("tags"), b(&p.tags.join(","))),
            (b("slug"), b(&p.slug)),
        ];
        rows.insert(p.slug.clone(), BTreeMap::from([("BlogEntries".to_string(), entry)]));
        for tag in p.tags.iter().copied().chain([NOTAG]) {
            let tagged = vec![(p.uuid.clone(), b(&p.slug))];
            rows.insert(tag.to_string(), BTreeMap::from([("TaggedPosts".to_string(), tagged)]));
        }
        w.put(rows);
    }
    // Comments on the newest entry, written newest first.
    let entry = &posts[11];
    for (j, (who, email, text)) in COMMENTS.iter().enumerate().rev() {
        let when = entry.unix_seconds + 60 * (j as u64 + 1);
        let fields = vec![(b("commenter"), b(who)), (b("email"), b(email)), (b("comment"), b(text))];
        w.put_comment(&entry.slug, time_uuid(when), fields);
    }
}

fn slugs(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Item::Column(_, value) => String::from_utf8_lossy(value).into_owned(),
            other => panic!("a TaggedPosts column, not {other:?}"),
        })
        .collect()
}

fn slugs_of(posts: &[Post], order: &[usize]) -> Vec<String> {
    order.iter().map(|i| posts[*i].slug.clone()).collect()
}

fn commenters(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Item::Super(_, cols) => {
                let who = cols.iter().find(|(n, _)| n == b"commenter").expect("a commenter");
                String::from_utf8_lossy(&who.1).into_owned()
            }
            other => panic!("a comment is a super column, not {other:?}"),
        })
        .collect()
}

fn read_blog(r: &mut dyn Reader, w: &mut dyn Writer, posts: &[Post]) {
    // The 10 newest posts: the last 10 columns of `__notag__`.
    let newest = r.slice(NOTAG, "TaggedPosts", vec![], vec![], true, 10);
    assert_eq!(slugs(&newest), slugs_of(posts, &[11, 10, 9, 8, 7, 6, 5, 4, 3, 2]));
    // ... each entry, and its author.
    let entries = r.rows(slugs(&newest), "BlogEntries");
    for (i, p) in posts.iter().enumerate().rev().take(10) {
        let entry = entries.get(&p.slug).unwrap_or_else(|| panic!("entry {}", p.slug));
        let fields: BTreeMap<Vec<u8>, Vec<u8>> = entry
            .iter()
            .map(|item| match item {
                Item::Column(n, val) => (n.clone(), val.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(fields.get(&b("title")), Some(&b(&format!("Entry number {i}"))));
        assert_eq!(fields.get(&b("tags")), Some(&b(&p.tags.join(","))));
        let author = r.slice(p.author, "Authors", vec![], vec![], false, 10);
        let names: Vec<Vec<u8>> = author
            .iter()
            .map(|i| match i {
                Item::Column(n, _) => n.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, [b("bio"), b("numPosts"), b("twitter")], "author {} in BytesType order", p.author);
    }
    // The next page starts at the oldest entry of this page.
    let Some(Item::Column(last, _)) = newest.last() else { panic!("a last column") };
    let page2 = r.slice(NOTAG, "TaggedPosts", last.clone(), vec![], true, 11);
    assert_eq!(slugs(&page2), slugs_of(posts, &[2, 1, 0]));
    // By tag, in either order, and a time window.
    let life = r.slice("life", "TaggedPosts", vec![], vec![], true, 10);
    assert_eq!(slugs(&life), slugs_of(posts, &[11, 10, 9, 8, 7, 6, 4, 3, 2, 1]));
    assert_eq!(
        slugs(&r.slice("guitar", "TaggedPosts", vec![], vec![], false, 100)),
        slugs_of(posts, &[0, 2, 4, 6, 8, 10])
    );
    assert_eq!(slugs(&r.slice("movie", "TaggedPosts", vec![], vec![], true, 100)), slugs_of(posts, &[9, 6, 3, 0]));
    let (from, to) = (time_uuid(posts[3].unix_seconds), time_uuid(posts[6].unix_seconds + 1));
    assert_eq!(slugs(&r.slice(NOTAG, "TaggedPosts", from, to, false, 100)), slugs_of(posts, &[3, 4, 5, 6]));
    assert_eq!(r.count(NOTAG, "TaggedPosts"), POSTS as i32);
    let mut tags = r.keys("TaggedPosts");
    tags.sort();
    assert_eq!(tags, [NOTAG, "guitar", "life", "movie"]);

    // Comments, sorted by time whatever the order they were written in.
    let entry = &posts[11].slug;
    let all = r.slice(entry, "Comments", vec![], vec![], false, 100);
    assert_eq!(commenters(&all), ["Joe Blow", "Some Dude", "Johnny Guitar", "Arin Sarkissian"]);
    let Some(Item::Super(_, first)) = all.first() else { panic!("a first comment") };
    let fields: Vec<Vec<u8>> = first.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(fields, [b("comment"), b("commenter"), b("email")], "subcolumns in BytesType order");
    assert_eq!(commenters(&r.slice(entry, "Comments", vec![], vec![], true, 1)), ["Arin Sarkissian"]);
    assert_eq!(r.count(entry, "Comments"), 4);
    let Some(Item::Super(second, _)) = all.get(1) else { panic!("a second comment") };
    assert_eq!(r.field(entry, "Comments", second.clone(), "comment"), Some(b(COMMENTS[1].2)));
    // Moderation through the writer's API, seen through the reader's.
    w.remove_comment(entry, second.clone());
    assert_eq!(r.field(entry, "Comments", second.clone(), "comment"), None);
    let left = r.slice(entry, "Comments", vec![], vec![], false, 100);
    assert_eq!(commenters(&left), ["Joe Blow", "Johnny Guitar", "Arin Sarkissian"]);
    assert!(r.slice(&posts[0].slug, "Comments", vec![], vec![], false, 100).is_empty());
}

/// BloggyAppy exactly as conf/storage-conf.xml declares it.
fn node() -> Node {
    let conf = std::fs::read_to_string(repo_root().join("conf").join("storage-conf.xml")).expect("the sample conf");
    let start = conf.find(&format!("<Keyspace Name=\"{KS}\"")).expect("the sample conf declares BloggyAppy");
    let end = conf[start..].find("</Keyspace>").map(|e| start + e + "</Keyspace>".len()).expect("its end");
    Node::start(Config::random().keyspaces(&conf[start..end]))
}

#[test]
fn blog_written_through_0_6_reads_through_20_1_0() {
    let node = node();
    let posts = posts();
    let mut old = Old(client06(&node, false));
    write_blog(&mut old, &posts);
    let mut new = New(node.client_in(KS));
    read_blog(&mut new, &mut old, &posts);
}

#[test]
fn blog_written_through_20_1_0_reads_through_0_6() {
    let node = node();
    let posts = posts();
    let mut new = New(node.client_in(KS));
    write_blog(&mut new, &posts);
    let mut old = Old(client06(&node, true));
    read_blog(&mut old, &mut new, &posts);
}
