//! The blog of "WTF is a SuperColumn" (the seed documents 000, 003, 004): keyspace BloggyAppy with
//! Authors, BlogEntries, TaggedPosts (TimeUUIDType columns, one row per tag plus `__notag__`,
//! values are BlogEntries keys) and Comments (super CF: row = entry key, super columns =
//! TimeUUIDs, subcolumns commenter/email/comment/commentTime), and the article's queries.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;
use uuid::{Timestamp, Uuid};

const KS: &str = "BloggyAppy";
const NOTAG: &str = "__notag__";
const POSTS: u64 = 12;
/// Seconds between two posts: more than 2**32 ticks of 100 ns (429.5 s), so the TimeUUIDs' byte
/// order differs from their time order and only a real TimeUUIDType comparator sorts them right.
const POST_SPACING_S: u64 = 500;
/// 100 ns ticks between the Gregorian epoch (1582-10-15) and the Unix epoch.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

fn bloggy_cf_defs() -> Vec<t::CfDef> {
    vec![
        cf_def(KS, "Authors", "BytesType"),
        cf_def(KS, "BlogEntries", "BytesType"),
        cf_def(KS, "TaggedPosts", "TimeUUIDType"),
        super_cf_def(KS, "Comments", "TimeUUIDType", "BytesType"),
    ]
}

/// A version-1 UUID for `unix_seconds` (+ `extra_ticks` of 100 ns).
fn time_uuid(unix_seconds: u64, extra_ticks: u64) -> Vec<u8> {
    let ticks = GREGORIAN_OFFSET + unix_seconds * 10_000_000 + extra_ticks;
    let u = Uuid::new_v1(Timestamp::from_gregorian_time(ticks, 0x1234), &[0x02, 0x42, 0xac, 0x11, 0x00, 0x02]);
    assert_eq!(u.get_version_num(), 1);
    u.as_bytes().to_vec()
}

struct Post {
    slug: String,
    uuid: Vec<u8>,
    unix_seconds: u64,
    tags: Vec<&'static str>,
    author: &'static str,
}

fn posts(base_unix_seconds: u64) -> Vec<Post> {
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
            let unix_seconds = base_unix_seconds + i * POST_SPACING_S;
            Post {
                slug: format!("post-{i:02}-about-{}", tags.first().copied().unwrap_or("nothing")),
                uuid: time_uuid(unix_seconds, 0),
                unix_seconds,
                tags,
                author: if i % 4 == 0 { "Some Dude" } else { "Arin Sarkissian" },
            }
        })
        .collect()
}

fn cells(c: &t::ColumnOrSuperColumn) -> (Vec<u8>, Vec<u8>) {
    let col = c.column.as_ref().expect("column");
    (col.name.clone(), col.value.clone().unwrap_or_default())
}

/// Values (BlogEntries keys) of a TaggedPosts slice, in the order returned.
fn slugs(r: &[t::ColumnOrSuperColumn]) -> Vec<String> {
    r.iter().map(|c| String::from_utf8_lossy(&cells(c).1).into_owned()).collect()
}

fn slugs_of(posts: &[Post], order: &[usize]) -> Vec<String> {
    order.iter().map(|i| posts[*i].slug.clone()).collect()
}

/// Fills the blog and runs the article's queries against it.
fn blog_scenario(c: &mut Client) {
    let base = 1_250_000_000; // August 2009, when the article was written
    let posts = posts(base);
    {
        // The test only proves comparator order if byte order differs from time order.
        let mut by_bytes: Vec<&Post> = posts.iter().collect();
        by_bytes.sort_by(|a, b| a.uuid.cmp(&b.uuid));
        assert!(
            by_bytes.iter().map(|p| &p.slug).ne(posts.iter().map(|p| &p.slug)),
            "test data: byte order == time order"
        );
    }

    // Authors
    let mut authors = BTreeMap::new();
    for (name, twitter, email, n) in
        [("Arin Sarkissian", "phatduckk", "arin@example.com", 9), ("Some Dude", "somedude", "sd@example.com", 3)]
    {
        let mut by_cf = BTreeMap::new();
        by_cf.insert(
            "Authors".to_string(),
            vec![
                insert_mutation(column(b("numPosts"), b(&n.to_string()), ts())),
                insert_mutation(column(b("twitter"), b(twitter), ts())),
                insert_mutation(column(b("email"), b(email), ts())),
                insert_mutation(column(b("bio"), b("bla bla bla"), ts())),
            ],
        );
        authors.insert(b(name), by_cf);
    }
    ok("batch_mutate authors", c.batch_mutate(authors, ONE));

    // Entries, inserted out of time order: each entry is one batch over BlogEntries and the
    // TaggedPosts rows of its tags and `__notag__`.
    for i in [7usize, 2, 11, 0, 5, 9, 1, 10, 3, 8, 4, 6] {
        let p = &posts[i];
        let mut m = batch(
            &p.slug,
            "BlogEntries",
            vec![
                insert_mutation(column(b("title"), b(&format!("Entry number {i}")), ts())),
                insert_mutation(column(b("body"), b(&format!("Body of entry {i}, bla bla.")), ts())),
                insert_mutation(column(b("author"), b(p.author), ts())),
                insert_mutation(column(b("tags"), b(&p.tags.join(",")), ts())),
                insert_mutation(column(b("pubDate"), b(&p.unix_seconds.to_string()), ts())),
                insert_mutation(column(b("slug"), b(&p.slug), ts())),
            ],
        );
        for tag in p.tags.iter().copied().chain([NOTAG]) {
            let mut by_cf = BTreeMap::new();
            by_cf.insert("TaggedPosts".to_string(), vec![insert_mutation(column(p.uuid.clone(), b(&p.slug), ts()))]);
            m.insert(b(tag), by_cf);
        }
        ok("batch_mutate entry", c.batch_mutate(m, ONE));
    }

    // "The 10 newest posts": the last 10 columns of the `__notag__` row.
    let tagged = parent("TaggedPosts");
    let newest = ok("10 newest", c.get_slice(b(NOTAG), tagged.clone(), slice(vec![], vec![], true, 10), ONE));
    assert_eq!(slugs(&newest), slugs_of(&posts, &[11, 10, 9, 8, 7, 6, 5, 4, 3, 2]));
    // ... then each entry from BlogEntries, and its author from Authors.
    let keys: Vec<Vec<u8>> = newest.iter().map(|c| cells(c).1).collect();
    let entries = ok("entries", c.multiget_slice(keys.clone(), parent("BlogEntries"), all(100), ONE));
    for (k, p) in keys.iter().zip(posts.iter().rev()) {
        let entry: BTreeMap<String, String> = str_pairs(&entries[k]).into_iter().collect();
        assert_eq!(entry.get("slug"), Some(&p.slug));
        let tags: Vec<&str> = entry.get("tags").expect("tags column").split(',').filter(|t| !t.is_empty()).collect();
        assert_eq!(tags, p.tags, "tags of {}", p.slug);
        let author = entry.get("author").expect("author column");
        let a = ok("author", c.get_slice(b(author), parent("Authors"), all(10), ONE));
        assert_eq!(col_names(&a), ["bio", "email", "numPosts", "twitter"], "author {author} (BytesType order)");
    }
    // The next page: start at the oldest entry of this page (inclusive, so ask for one more).
    let last = newest.last().map(|c| cells(c).0).expect("a last column");
    let page2 = ok("page 2", c.get_slice(b(NOTAG), tagged.clone(), slice(last, vec![], true, 11), ONE));
    assert_eq!(slugs(&page2), slugs_of(&posts, &[2, 1, 0]));

    // "The 10 newest posts tagged life" (11 posts carry it; 5 does not).
    let life = ok("10 newest life", c.get_slice(b("life"), tagged.clone(), slice(vec![], vec![], true, 10), ONE));
    assert_eq!(slugs(&life), slugs_of(&posts, &[11, 10, 9, 8, 7, 6, 4, 3, 2, 1]));
    // Posts of a tag in time order.
    let guitar = ok("guitar in time order", c.get_slice(b("guitar"), tagged.clone(), all(100), ONE));
    assert_eq!(slugs(&guitar), slugs_of(&posts, &[0, 2, 4, 6, 8, 10]));
    let movie =
        ok("movie newest first", c.get_slice(b("movie"), tagged.clone(), slice(vec![], vec![], true, 100), ONE));
    assert_eq!(slugs(&movie), slugs_of(&posts, &[9, 6, 3, 0]));
    // A time window: posts between two instants (bounds are TimeUUIDs for those instants).
    let from = time_uuid(posts[3].unix_seconds, 0);
    let to = time_uuid(posts[6].unix_seconds + 1, 0);
    let window = ok("time window", c.get_slice(b(NOTAG), tagged.clone(), slice(from, to, false, 100), ONE));
    assert_eq!(slugs(&window), slugs_of(&posts, &[3, 4, 5, 6]));
    assert_eq!(ok("count", c.get_count(b(NOTAG), tagged.clone(), all(1000), ONE)), POSTS as i32);
    // Every tag row, through a range scan of TaggedPosts.
    let rows = ok("all tags", c.get_range_slices(tagged, slice(vec![], vec![], true, 1), key_range("", "", 100), ONE));
    let mut tags: Vec<String> = slice_keys(&rows);
    tags.sort();
    assert_eq!(tags, [NOTAG, "guitar", "life", "movie"]);

    // Comments on the newest entry, written newest first; the super CF sorts them by time.
    let entry = &posts[11];
    let comments = [
        ("Joe Blow", "joeb@example.com", "you're wrong, the godfather is the best movie ever"),
        ("Some Dude", "sd@example.com", "be nice Joe Blow this isnt youtube"),
        ("Johnny Guitar", "guitardude@example.com", "nice axe dawg..."),
        ("Arin Sarkissian", "arin@example.com", "thanks all"),
    ];
    for (j, (who, email, text)) in comments.iter().enumerate().rev() {
        let when = entry.unix_seconds + 60 * (j as u64 + 1);
        ok(
            "comment",
            c.batch_mutate(
                batch(
                    &entry.slug,
                    "Comments",
                    vec![super_insert_mutation(
                        time_uuid(when, 0),
                        vec![
                            column(b("commenter"), b(who), ts()),
                            column(b("email"), b(email), ts()),
                            column(b("comment"), b(text), ts()),
                            column(b("commentTime"), b(&when.to_string()), ts()),
                        ],
                    )],
                ),
                ONE,
            ),
        );
    }
    let commenters = |r: &[t::ColumnOrSuperColumn]| -> Vec<String> {
        r.iter()
            .map(|c| {
                let sc = c.super_column.as_ref().expect("a comment is a super column");
                let col = sc.columns.iter().find(|c| c.name == b("commenter")).expect("commenter");
                String::from_utf8_lossy(col.value.as_deref().unwrap_or_default()).into_owned()
            })
            .collect()
    };
    let all_comments = ok("comments", c.get_slice(b(&entry.slug), parent("Comments"), all(100), ONE));
    assert_eq!(commenters(&all_comments), ["Joe Blow", "Some Dude", "Johnny Guitar", "Arin Sarkissian"]);
    let first = all_comments[0].super_column.as_ref().expect("sc");
    assert_eq!(
        first.columns.iter().map(|c| String::from_utf8_lossy(&c.name).into_owned()).collect::<Vec<_>>(),
        ["comment", "commentTime", "commenter", "email"],
        "subcolumns in BytesType order"
    );
    let latest =
        ok("latest comment", c.get_slice(b(&entry.slug), parent("Comments"), slice(vec![], vec![], true, 1), ONE));
    assert_eq!(commenters(&latest), ["Arin Sarkissian"]);
    assert_eq!(ok("comment count", c.get_count(b(&entry.slug), parent("Comments"), all(100), ONE)), 4);
    // One comment's fields, read inside its super column.
    let second = all_comments[1].super_column.as_ref().expect("sc").name.clone();
    let text =
        ok("comment text", c.get(b(&entry.slug), super_path("Comments", second.clone(), Some(b("comment"))), ONE));
    assert_eq!(text.column.and_then(|c| c.value), Some(b(comments[1].2)));
    // Moderation: remove a comment.
    ok("remove comment", c.remove(b(&entry.slug), super_path("Comments", second, None), ts(), ONE));
    let left = ok("comments", c.get_slice(b(&entry.slug), parent("Comments"), all(100), ONE));
    assert_eq!(commenters(&left), ["Joe Blow", "Johnny Guitar", "Arin Sarkissian"]);
    // An entry without comments has an empty row.
    assert!(ok("no comments", c.get_slice(b(&posts[0].slug), parent("Comments"), all(100), ONE)).is_empty());
}

#[test]
fn bloggy_appy_created_through_thrift() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, KS, bloggy_cf_defs());
    ok("set_keyspace", c.set_keyspace(KS.into()));
    blog_scenario(&mut c);
}

/// The same blog on three nodes, every row on all three (RF 3): written and read through the
/// second node, then read back through the others at QUORUM.
#[test]
fn bloggy_appy_on_three_nodes_with_rf_3() {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Blog Cluster".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, std::time::Duration::from_secs(60));
    let mut c = nodes[1].client();
    ok("system_add_keyspace", c.system_add_keyspace(ks_def(KS, 3, bloggy_cf_defs())));
    ok("set_keyspace", c.set_keyspace(KS.into()));
    blog_scenario(&mut c);
    let quorum = t::ConsistencyLevel::QUORUM;
    for node in [&nodes[0], &nodes[2]] {
        let mut other = node.client_in(KS);
        let tagged = ok("TaggedPosts", other.get_slice(b("life"), parent("TaggedPosts"), all(100), quorum));
        let direct = ok("TaggedPosts", c.get_slice(b("life"), parent("TaggedPosts"), all(100), ONE));
        assert_eq!(tagged, direct, "the same tag row through {}", node.address());
        assert!(!tagged.is_empty());
    }
}

/// The keyspace as the article declares it in storage-conf.xml (0.6 XML), loaded at startup.
#[test]
fn bloggy_appy_declared_in_storage_conf() {
    let xml = keyspace_xml(
        KS,
        &[
            r#"<ColumnFamily CompareWith="BytesType" Name="Authors"/>"#,
            r#"<ColumnFamily CompareWith="BytesType" Name="BlogEntries"/>"#,
            r#"<ColumnFamily CompareWith="TimeUUIDType" Name="TaggedPosts"/>"#,
            r#"<ColumnFamily CompareWith="TimeUUIDType" Name="Comments" CompareSubcolumnsWith="BytesType" ColumnType="Super"/>"#,
        ],
    );
    let node = Node::start(Config::random().keyspaces(xml));
    let mut c = node.client();
    check_declared_schema(&mut c);
    ok("set_keyspace", c.set_keyspace(KS.into()));
    blog_scenario(&mut c);
}

/// If the repository's sample configuration declares BloggyAppy, that declaration works too.
#[test]
fn bloggy_appy_of_the_sample_conf() {
    let conf = repo_root().join("conf").join("storage-conf.xml");
    let Ok(text) = std::fs::read_to_string(&conf) else {
        eprintln!("{} does not exist: nothing to check", conf.display());
        return;
    };
    let Some(start) = text.find(&format!("<Keyspace Name=\"{KS}\"")) else {
        eprintln!("{} does not declare {KS}: nothing to check", conf.display());
        return;
    };
    let end = text[start..].find("</Keyspace>").map(|e| start + e + "</Keyspace>".len()).expect("closing </Keyspace>");
    let node = Node::start(Config::random().keyspaces(&text[start..end]));
    let mut c = node.client();
    check_declared_schema(&mut c);
    ok("set_keyspace", c.set_keyspace(KS.into()));
    blog_scenario(&mut c);
}

fn check_declared_schema(c: &mut Client) {
    let d = ok("describe_keyspace", c.describe_keyspace(KS.into()));
    let by_name: BTreeMap<&str, &t::CfDef> = d.cf_defs.iter().map(|d| (d.name.as_str(), d)).collect();
    let m = "org.apache.cassandra.db.marshal.";
    for (cf, comparator) in [("Authors", "BytesType"), ("BlogEntries", "BytesType"), ("TaggedPosts", "TimeUUIDType")] {
        let def = by_name.get(cf).unwrap_or_else(|| panic!("{cf} missing from {:?}", by_name.keys()));
        assert_eq!(def.comparator_type.as_deref(), Some(format!("{m}{comparator}").as_str()), "{cf}");
        assert_eq!(def.column_type.as_deref(), Some("Standard"), "{cf}");
    }
    let comments = by_name.get("Comments").expect("Comments");
    assert_eq!(comments.column_type.as_deref(), Some("Super"));
    assert_eq!(comments.comparator_type.as_deref(), Some(format!("{m}TimeUUIDType").as_str()));
    assert_eq!(comments.subcomparator_type.as_deref(), Some(format!("{m}BytesType").as_str()));
}
