"""Seed 001's statements, and what cqlsh prints for their SELECTs, shared by the cqlsh tests
(test_cqlsh.py for cqlsh 6, test_cqlsh_5.py for Cassandra 3.x's own cqlsh 5.0.4)."""

# Seed 001's statements as the document writes them. Its three variants of table `t` go to
# keyspaces of their own (one keyspace cannot hold three tables `t`); the third is written
# with a comma missing, which a server must refuse as Cassandra does, the rest going on.
SEED_001 = """
CREATE KEYSPACE part1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE part2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE part3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE magazines WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE part1;
CREATE TABLE t (
   id int,
   k int,
   v text,
   PRIMARY KEY (id)
);
USE part2;
CREATE TABLE t (
   id int,
   c text,
   k int,
   v text,
   PRIMARY KEY (id,c)
);
USE part3;
CREATE TABLE t (
   id1 int,
   id2 int,
   c1 text,
   c2 text
   k int,
   v text,
   PRIMARY KEY ((id1,id2),c1,c2)
);
USE magazines;
CREATE TABLE magazine_name (id int PRIMARY KEY, name text, publicationFrequency text);
CREATE TABLE magazine_publisher (publisher text,id int,name text, publicationFrequency text,
PRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC);
INSERT INTO magazine_name (id, name, publicationFrequency) VALUES (1, 'Tech Weekly', 'Weekly');
INSERT INTO magazine_name (id, name, publicationFrequency) VALUES (2, 'Data Monthly', 'Monthly');
INSERT INTO magazine_publisher (publisher, id, name, publicationFrequency) VALUES ('Acme', 1, 'Tech Weekly', 'Weekly');
INSERT INTO magazine_publisher (publisher, id, name, publicationFrequency) VALUES ('Acme', 2, 'Data Monthly', 'Monthly');
INSERT INTO magazine_publisher (publisher, id, name, publicationFrequency) VALUES ('Other', 3, 'Graph Quarterly', 'Quarterly');
INSERT INTO part2.t (id, c, k, v) VALUES (1, 'b', 2, 'second');
INSERT INTO part2.t (id, c, k, v) VALUES (1, 'a', 1, 'first');
SELECT id, name, publicationFrequency FROM magazine_name WHERE id = 2;
SELECT * FROM magazine_publisher WHERE publisher = 'Acme';
SELECT * FROM part2.t WHERE id = 1;
SELECT count(*) FROM part3.t;
"""

# What cqlsh prints for the SELECTs, as it formats 3.11's answers.
SEED_001_SELECTS = """
 id | name         | publicationfrequency
----+--------------+----------------------
  2 | Data Monthly |              Monthly

(1 rows)

 publisher | id | name         | publicationfrequency
-----------+----+--------------+----------------------
      Acme |  2 | Data Monthly |              Monthly
      Acme |  1 |  Tech Weekly |               Weekly

(2 rows)

 id | c | k | v
----+---+---+--------
  1 | a | 1 |  first
  1 | b | 2 | second

(2 rows)
"""
