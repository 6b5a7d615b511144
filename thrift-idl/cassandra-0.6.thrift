// Sibyl's own IDL for the Cassandra 0.6 Thrift RPC interface, API version 2.2.0 (Cassandra 0.6.4
// to 0.6.13).
//
// Written from the fact sheet in shared/reference/thrift-api-0.6.md so that clients built for
// Cassandra 0.6 can talk to Sibyl. Field ids, wire types, requiredness and defaults are what reach
// the wire; names are 0.6's own so generated bindings read like the clients that use them.
//
// Differences from the 20.1.0 API (cassandra.thrift) that matter on the wire:
// - every data call names its keyspace as argument 1 (there is no set_keyspace);
// - row keys, keyspace, column family names and tokens are `string` (UTF-8), column and super
//   column names and values `binary`; both travel as type 11;
// - Column has no ttl and its value and timestamp are required;
// - ColumnParent and ColumnPath start at field id 3: ids 1 and 2 belonged to the keyspace and key
//   of older versions and are retired.
//
// After editing, run thrift-idl/regenerate.sh and commit the regenerated Rust and Python code.

namespace rs cassandra06
namespace py cassandra06
namespace java org.apache.cassandra.thrift

// What describe_version() answers. 0.6.0 to 0.6.3 answered "2.1.0"; 2.2.0 added
// describe_partitioner().
const string VERSION = "2.2.0"


//
// Data: cells and their containers
//

// One cell: name, value and the client-chosen timestamp that decides which write wins.
struct Column {
   1: required binary name,
   2: required binary value,
   3: required i64 timestamp,
}

// A named group of cells inside a super column family.
struct SuperColumn {
   1: required binary name,
   2: required list<Column> columns,
}

// Either a column or a super column; exactly one field is set.
struct ColumnOrSuperColumn {
    1: optional Column column,
    2: optional SuperColumn super_column,
}


//
// Errors
//

// The requested column (or row) does not exist. Only get raises it under normal conditions.
exception NotFoundException {
}

// The request is malformed or refers to something that does not exist; `why` says what.
exception InvalidRequestException {
    1: required string why
}

// Too few replicas are alive to meet the requested consistency level.
exception UnavailableException {
}

// Replicas did not answer in time.
exception TimedOutException {
}

// login was refused: unknown user or wrong password.
exception AuthenticationException {
    1: required string why
}

// The logged-in user may not use the keyspace it asked for.
exception AuthorizationException {
    1: required string why
}


//
// Consistency
//

// How many replicas must answer before a call returns. Reads refuse ZERO and ANY. A ZERO write
// returns without waiting for any replica; ANY is satisfied by a hint on any node.
enum ConsistencyLevel {
    ZERO = 0,
    ONE = 1,
    QUORUM = 2,
    DCQUORUM = 3,
    DCQUORUMSYNC = 4,
    ALL = 5,
    ANY = 6,
}


//
// Addressing: where in a row a call reads or writes
//

// A column family, or one super column of a super column family: the container of a slice.
struct ColumnParent {
    3: required string column_family,
    4: optional binary super_column,
}

// A column family, optionally narrowed to a super column and/or a column.
struct ColumnPath {
    3: required string column_family,
    4: optional binary super_column,
    5: optional binary column,
}

// A contiguous run of column (or super column) names in comparator order. Empty start or finish
// means unbounded; at most `count` columns come back, from the finish end when `reversed`.
struct SliceRange {
    1: required binary start,
    2: required binary finish,
    3: required bool reversed=0,
    4: required i32 count=100,
}

// Which columns to return: either a list of names or a range, never both.
struct SlicePredicate {
    1: optional list<binary> column_names,
    2: optional SliceRange slice_range,
}

// A range of rows: either keys (start inclusive) or tokens (start exclusive, may wrap), never both.
struct KeyRange {
    1: optional string start_key,
    2: optional string end_key,
    3: optional string start_token,
    4: optional string end_token,
    5: required i32 count=100
}

// One row of a range scan: its key and the columns the predicate selected.
struct KeySlice {
    1: required string key,
    2: required list<ColumnOrSuperColumn> columns,
}


//
// Writes
//

// Removes a super column, a list of (sub)column names, or with neither the whole row of the
// column family, as of `timestamp`. 0.6 refuses a SliceRange predicate here.
struct Deletion {
    1: required i64 timestamp,
    2: optional binary super_column,
    3: optional SlicePredicate predicate,
}

// One change inside batch_mutate: an insert or a deletion, exactly one of the two.
struct Mutation {
    1: optional ColumnOrSuperColumn column_or_supercolumn,
    2: optional Deletion deletion,
}


//
// Cluster description
//

// One range of the ring, (start_token, end_token], and the addresses of its replicas.
struct TokenRange {
    1: required string start_token,
    2: required string end_token,
    3: required list<string> endpoints,
}

// Credentials for login; an authenticator reads the keys it knows ("username", "password").
struct AuthenticationRequest {
    1: required map<string, string> credentials,
}


service Cassandra {
  // Authenticates this connection for the given keyspace; data calls may require it first.
  void login(1: required string keyspace, 2: required AuthenticationRequest auth_request)
       throws (1: AuthenticationException authnx, 2: AuthorizationException authzx),

  // The column or super column at column_path; NotFoundException when there is none.
  ColumnOrSuperColumn get(1: required string keyspace,
                          2: required string key,
                          3: required ColumnPath column_path,
                          4: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                      throws (1: InvalidRequestException ire, 2: NotFoundException nfe,
                              3: UnavailableException ue, 4: TimedOutException te),

  // The columns of one row under column_parent selected by predicate; empty when none match.
  list<ColumnOrSuperColumn> get_slice(1: required string keyspace,
                                      2: required string key,
                                      3: required ColumnParent column_parent,
                                      4: required SlicePredicate predicate,
                                      5: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                            throws (1: InvalidRequestException ire, 2: UnavailableException ue,
                                    3: TimedOutException te),

  // Deprecated in 0.6 (use multiget_slice): get for each of keys. A key with nothing at
  // column_path maps to an empty ColumnOrSuperColumn.
  map<string, ColumnOrSuperColumn> multiget(1: required string keyspace,
                                            2: required list<string> keys,
                                            3: required ColumnPath column_path,
                                            4: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                                   throws (1: InvalidRequestException ire, 2: UnavailableException ue,
                                           3: TimedOutException te),

  // get_slice for each of keys.
  map<string, list<ColumnOrSuperColumn>> multiget_slice(1: required string keyspace,
                                                        2: required list<string> keys,
                                                        3: required ColumnParent column_parent,
                                                        4: required SlicePredicate predicate,
                                                        5: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                                         throws (1: InvalidRequestException ire, 2: UnavailableException ue,
                                                 3: TimedOutException te),

  // Number of columns (or super columns) under column_parent in one row.
  i32 get_count(1: required string keyspace,
                2: required string key,
                3: required ColumnParent column_parent,
                4: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
      throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Deprecated in 0.6 (use get_range_slices): a key range given by its bounds and a row count.
  list<KeySlice> get_range_slice(1: required string keyspace,
                                 2: required ColumnParent column_parent,
                                 3: required SlicePredicate predicate,
                                 4: required string start_key="",
                                 5: required string finish_key="",
                                 6: required i32 row_count=100,
                                 7: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                 throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // The columns selected by predicate in each row of range.
  list<KeySlice> get_range_slices(1: required string keyspace,
                                  2: required ColumnParent column_parent,
                                  3: required SlicePredicate predicate,
                                  4: required KeyRange range,
                                  5: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                 throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Writes one column at column_path (which must name a column).
  void insert(1: required string keyspace,
              2: required string key,
              3: required ColumnPath column_path,
              4: required binary value,
              5: required i64 timestamp,
              6: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Deprecated in 0.6 (use batch_mutate): writes columns or super columns of one row, by column
  // family name.
  void batch_insert(1: required string keyspace,
                    2: required string key,
                    3: required map<string, list<ColumnOrSuperColumn>> cfmap,
                    4: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Deletes the row, super column or column named by column_path as of timestamp. Unlike every
  // other call, consistency_level here has default requiredness, as in 0.6.
  void remove(1: required string keyspace,
              2: required string key,
              3: required ColumnPath column_path,
              4: required i64 timestamp,
              5: ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Applies many mutations: row key -> column family name -> mutations for that row and family.
  void batch_mutate(1: required string keyspace,
                    2: required map<string, map<string, list<Mutation>>> mutation_map,
                    3: required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Deprecated: "cluster name", "config file", "token map", "version"; "?" for anything else.
  string get_string_property(1: required string property),

  // Deprecated: "keyspaces" lists the keyspaces; anything else gives an empty list.
  list<string> get_string_list_property(1: required string property),

  // Names of all keyspaces, system included.
  set<string> describe_keyspaces(),

  // The cluster name from the configuration.
  string describe_cluster_name(),

  // API version of this server (the VERSION constant).
  string describe_version(),

  // The ring of a user keyspace: each range with its replicas (a list, since Thrift cannot use
  // structs as map keys).
  list<TokenRange> describe_ring(1: required string keyspace)
                   throws (1: InvalidRequestException ire),

  // Class name of the partitioner. New in 2.2.0.
  string describe_partitioner(),

  // Column family name -> its properties ("Type", "CompareWith", "CompareSubcolumnsWith", "Desc").
  map<string, map<string, string>> describe_keyspace(1: required string keyspace)
                                   throws (1: NotFoundException nfe),

  // Experimental, for Hadoop: tokens splitting (start_token, end_token] into subranges of about
  // keys_per_split keys; consecutive tokens bound one subrange.
  list<string> describe_splits(1: required string start_token,
                               2: required string end_token,
                               3: required i32 keys_per_split),
}
