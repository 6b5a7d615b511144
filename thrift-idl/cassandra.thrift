// Sibyl's own IDL for the Cassandra Thrift RPC interface, API version 20.1.0.
//
// Written from the wire-level fact sheet in shared/reference/thrift-api-20.1.0.md, so that
// existing Cassandra Thrift clients (framed transport + binary protocol, port 9160) can talk to
// Sibyl unchanged. Only ids, wire types, requiredness and defaults reach the wire; names are kept
// the same as Cassandra's so generated bindings read the same in every language.
//
// After editing, run thrift-idl/regenerate.sh and commit the regenerated Rust and Python code.

namespace rs cassandra
namespace py cassandra
namespace java org.apache.cassandra.thrift

// API version a client can compare against describe_version(). The major number changes on
// incompatible changes, the minor on additions.
const string VERSION = "20.1.0"


//
// Data: cells and their containers
//

// One cell. Reads always return value and timestamp; ttl is only set when the cell expires.
struct Column {
   1: required binary name,
   2: optional binary value,
   3: optional i64 timestamp,
   4: optional i32 ttl,
}

// A named group of cells inside a super column family.
struct SuperColumn {
   1: required binary name,
   2: required list<Column> columns,
}

// A counter cell: the value is a running total, not a last-write-wins value.
struct CounterColumn {
    1: required binary name,
    2: required i64 value
}

// A named group of counter cells inside a super counter column family.
struct CounterSuperColumn {
    1: required binary name,
    2: required list<CounterColumn> columns
}

// Tagged union of the four cell shapes; exactly one field is set.
struct ColumnOrSuperColumn {
    1: optional Column column,
    2: optional SuperColumn super_column,
    3: optional CounterColumn counter_column,
    4: optional CounterSuperColumn counter_super_column
}


//
// Errors
//

// The requested column (or row) does not exist.
exception NotFoundException {
}

// The request is malformed or refers to something that does not exist; `why` says what.
exception InvalidRequestException {
    1: required string why
}

// Too few replicas are alive to meet the requested consistency level.
exception UnavailableException {
}

// Replicas did not answer in time. The optional fields say how far the write got.
exception TimedOutException {
    // Number of replicas that acknowledged before the timeout.
    1: optional i32 acknowledged_by,
    // True when an atomic batch timed out after the batch log write succeeded.
    2: optional bool acknowledged_by_batchlog,
    // True when a CAS timed out because another Paxos round was in progress.
    3: optional bool paxos_in_progress
}

// Login failed.
exception AuthenticationException {
    1: required string why
}

// The logged-in user may not do this.
exception AuthorizationException {
    1: required string why
}

// Nodes did not agree on the schema in time after a schema change.
exception SchemaDisagreementException {
}


//
// Request parameters
//

// How many replicas must answer. SERIAL and LOCAL_SERIAL are for the Paxos phase of cas().
enum ConsistencyLevel {
    ONE = 1,
    QUORUM = 2,
    LOCAL_QUORUM = 3,
    EACH_QUORUM = 4,
    ALL = 5,
    ANY = 6,
    TWO = 7,
    THREE = 8,
    SERIAL = 9,
    LOCAL_SERIAL = 10,
    LOCAL_ONE = 11,
}

// Where to read or write: a column family, and for super CFs optionally one super column.
// Ids 1 and 2 are unused on purpose.
struct ColumnParent {
    3: required string column_family,
    4: optional binary super_column,
}

// Address of one column (or one super column) inside a column family.
struct ColumnPath {
    3: required string column_family,
    4: optional binary super_column,
    5: optional binary column,
}

// A contiguous run of column names, bounds inclusive; empty bounds mean open ends.
struct SliceRange {
    1: required binary start,
    2: required binary finish,
    3: required bool reversed=0,
    4: required i32 count=100,
}

// Which columns to return: either an explicit list of names or a range.
struct SlicePredicate {
    1: optional list<binary> column_names,
    2: optional SliceRange slice_range,
}

// Comparison operators for secondary index expressions.
enum IndexOperator {
    EQ = 0,
    GTE = 1,
    GT = 2,
    LTE = 3,
    LT = 4
}

// One condition on an indexed column.
struct IndexExpression {
    1: required binary column_name,
    2: required IndexOperator op,
    3: required binary value,
}

// Old-style index query, superseded by KeyRange.row_filter.
struct IndexClause {
    1: required list<IndexExpression> expressions,
    2: required binary start_key,
    3: required i32 count=100,
}

// A range of rows, given by keys or by tokens (not both), with an optional row filter.
// Field 6 is declared before 5 to keep the generated constructor argument order of the original.
struct KeyRange {
    1: optional binary start_key,
    2: optional binary end_key,
    3: optional string start_token,
    4: optional string end_token,
    6: optional list<IndexExpression> row_filter,
    5: required i32 count=100
}

// A row key with the columns read from it.
struct KeySlice {
    1: required binary key,
    2: required list<ColumnOrSuperColumn> columns,
}

// A row key with a column count.
struct KeyCount {
    1: required binary key,
    2: required i32 count
}

// A tombstone: a whole row, a super column, or the columns chosen by the predicate.
struct Deletion {
    1: optional i64 timestamp,
    2: optional binary super_column,
    3: optional SlicePredicate predicate,
}

// One change in a batch: either a write or a deletion.
struct Mutation {
    1: optional ColumnOrSuperColumn column_or_supercolumn,
    2: optional Deletion deletion,
}

// Location of one replica as reported by describe_ring.
struct EndpointDetails {
    1: string host,
    2: string datacenter,
    3: optional string rack
}

// Answer to cas(): on failure, current_values holds what was found instead.
struct CASResult {
    1: required bool success,
    2: optional list<Column> current_values,
}

// One token range of the ring and the nodes that hold it.
// endpoints are storage (gossip) addresses; rpc_endpoints are the client-facing addresses.
struct TokenRange {
    1: required string start_token,
    2: required string end_token,
    3: required list<string> endpoints,
    4: optional list<string> rpc_endpoints
    5: optional list<EndpointDetails> endpoint_details,
}

// Credentials for login(), e.g. "username" and "password".
struct AuthenticationRequest {
    1: required map<string, string> credentials
}

// Kinds of secondary index.
enum IndexType {
    KEYS = 0,
    CUSTOM = 1,
    COMPOSITES = 2
}

// Metadata of one named column: its value type and optional index.
struct ColumnDef {
    1: required binary name,
    2: required string validation_class,
    3: optional IndexType index_type,
    4: optional string index_name,
    5: optional map<string,string> index_options
}

// A trigger attached to a column family.
struct TriggerDef {
    1: required string name,
    2: required map<string,string> options
}

// Column family definition. Unused ids: 4, 7, 10, 35, 36.
// Fields kept only for old clients (ignored by servers) are declared last.
struct CfDef {
    1: required string keyspace,
    2: required string name,
    3: optional string column_type="Standard",
    5: optional string comparator_type="BytesType",
    6: optional string subcomparator_type,
    8: optional string comment,
    12: optional double read_repair_chance,
    13: optional list<ColumnDef> column_metadata,
    14: optional i32 gc_grace_seconds,
    15: optional string default_validation_class,
    16: optional i32 id,
    17: optional i32 min_compaction_threshold,
    18: optional i32 max_compaction_threshold,
    26: optional string key_validation_class,
    28: optional binary key_alias,
    29: optional string compaction_strategy,
    30: optional map<string,string> compaction_strategy_options,
    32: optional map<string,string> compression_options,
    33: optional double bloom_filter_fp_chance,
    34: optional string caching="keys_only",
    37: optional double dclocal_read_repair_chance = 0.0,
    39: optional i32 memtable_flush_period_in_ms,
    40: optional i32 default_time_to_live,
    42: optional string speculative_retry="NONE",
    43: optional list<TriggerDef> triggers,
    44: optional string cells_per_row_to_cache = "100",
    45: optional i32 min_index_interval,
    46: optional i32 max_index_interval,

    // Obsolete: accepted from old clients and ignored.
    9: optional double row_cache_size,
    11: optional double key_cache_size,
    19: optional i32 row_cache_save_period_in_seconds,
    20: optional i32 key_cache_save_period_in_seconds,
    21: optional i32 memtable_flush_after_mins,
    22: optional i32 memtable_throughput_in_mb,
    23: optional double memtable_operations_in_millions,
    24: optional bool replicate_on_write,
    25: optional double merge_shards_chance,
    27: optional string row_cache_provider,
    31: optional i32 row_cache_keys_to_save,
    38: optional bool populate_io_cache_on_flush,
    41: optional i32 index_interval,
}

// Keyspace definition. replication_factor (4) is obsolete: use strategy_options instead.
struct KsDef {
    1: required string name,
    2: required string strategy_class,
    3: optional map<string,string> strategy_options,
    4: optional i32 replication_factor,
    5: required list<CfDef> cf_defs,
    6: optional bool durable_writes=1,
}

// Compression applied to a query string sent to the execute/prepare methods.
enum Compression {
    GZIP = 1,
    NONE = 2
}

// Which field of CqlResult carries the answer.
enum CqlResultType {
    ROWS = 1,
    VOID = 2,
    INT = 3
}

// One row of a CQL result.
struct CqlRow {
    1: required binary key,
    2: required list<Column> columns
}

// Types needed to decode the names and values of CQL result columns.
struct CqlMetadata {
    1: required map<binary,string> name_types,
    2: required map<binary,string> value_types,
    3: required string default_name_type,
    4: required string default_value_type
}

// Result of a CQL query: rows, a number, or nothing, as `type` says.
struct CqlResult {
    1: required CqlResultType type,
    2: optional list<CqlRow> rows,
    3: optional i32 num,
    4: optional CqlMetadata schema
}

// Handle and bind-variable description of a prepared CQL statement.
struct CqlPreparedResult {
    1: required i32 itemId,
    2: required i32 count,
    3: optional list<string> variable_types,
    4: optional list<string> variable_names
}

// A token sub-range with an estimate of its row count (for Hadoop-style splits).
struct CfSplit {
    1: required string start_token,
    2: required string end_token,
    3: required i64 row_count
}

// Bounds of one column slice; missing or empty bounds mean open ends.
struct ColumnSlice {
    1: optional binary start,
    2: optional binary finish
}

// Several column slices of one row read in one call.
struct MultiSliceRequest {
    1: optional binary key,
    2: optional ColumnParent column_parent,
    3: optional list<ColumnSlice> column_slices,
    4: optional bool reversed=false,
    5: optional i32 count=1000,
    6: optional ConsistencyLevel consistency_level=ConsistencyLevel.ONE
}


service Cassandra {
  // Authenticate this connection.
  void login(1: required AuthenticationRequest auth_request)
       throws (1:AuthenticationException authnx, 2:AuthorizationException authzx),

  // Choose the keyspace that later calls on this connection use.
  void set_keyspace(1: required string keyspace) throws (1:InvalidRequestException ire),

  // Read one column or super column; NotFoundException when absent.
  ColumnOrSuperColumn get(1:required binary key,
                          2:required ColumnPath column_path,
                          3:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                      throws (1:InvalidRequestException ire, 2:NotFoundException nfe,
                              3:UnavailableException ue, 4:TimedOutException te),

  // Read the columns of one row chosen by a predicate.
  list<ColumnOrSuperColumn> get_slice(1:required binary key,
                                      2:required ColumnParent column_parent,
                                      3:required SlicePredicate predicate,
                                      4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                            throws (1:InvalidRequestException ire, 2:UnavailableException ue,
                                    3:TimedOutException te),

  // Count the columns of one row chosen by a predicate.
  i32 get_count(1:required binary key,
                2:required ColumnParent column_parent,
                3:required SlicePredicate predicate,
                4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
      throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // get_slice for several rows at once.
  map<binary,list<ColumnOrSuperColumn>> multiget_slice(1:required list<binary> keys,
                                                       2:required ColumnParent column_parent,
                                                       3:required SlicePredicate predicate,
                                                       4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                                        throws (1:InvalidRequestException ire, 2:UnavailableException ue,
                                                3:TimedOutException te),

  // get_count for several rows at once.
  map<binary, i32> multiget_count(1:required list<binary> keys,
                                  2:required ColumnParent column_parent,
                                  3:required SlicePredicate predicate,
                                  4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
      throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Read a slice of columns from each row of a key or token range.
  list<KeySlice> get_range_slices(1:required ColumnParent column_parent,
                                  2:required SlicePredicate predicate,
                                  3:required KeyRange range,
                                  4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                 throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Page through whole rows of a range, starting the first row at start_column.
  list<KeySlice> get_paged_slice(1:required string column_family,
                                 2:required KeyRange range,
                                 3:required binary start_column,
                                 4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                 throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Old secondary-index query; prefer get_range_slices with KeyRange.row_filter.
  list<KeySlice> get_indexed_slices(1:required ColumnParent column_parent,
                                    2:required IndexClause index_clause,
                                    3:required SlicePredicate column_predicate,
                                    4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
                 throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Write one column.
  void insert(1:required binary key,
              2:required ColumnParent column_parent,
              3:required Column column,
              4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Add to a counter column.
  void add(1:required binary key,
           2:required ColumnParent column_parent,
           3:required CounterColumn column,
           4:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Compare-and-set on one row via Paxos: apply updates only if the row currently matches expected.
  CASResult cas(1:required binary key,
                2:required string column_family,
                3:list<Column> expected,
                4:list<Column> updates,
                5:required ConsistencyLevel serial_consistency_level=ConsistencyLevel.SERIAL,
                6:required ConsistencyLevel commit_consistency_level=ConsistencyLevel.QUORUM)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Delete a row, super column or column with the given tombstone timestamp.
  // The only consistency level argument that is not marked required.
  void remove(1:required binary key,
              2:required ColumnPath column_path,
              3:required i64 timestamp,
              4:ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Delete a counter column (counters cannot be safely re-created afterwards).
  void remove_counter(1:required binary key,
                      2:required ColumnPath path,
                      3:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Apply many mutations: row key -> column family name -> mutations.
  void batch_mutate(1:required map<binary, map<string, list<Mutation>>> mutation_map,
                    2:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // batch_mutate that goes through the batch log, so it is applied fully or not at all.
  void atomic_batch_mutate(1:required map<binary, map<string, list<Mutation>>> mutation_map,
                           2:required ConsistencyLevel consistency_level=ConsistencyLevel.ONE)
       throws (1:InvalidRequestException ire, 2:UnavailableException ue, 3:TimedOutException te),

  // Remove all data of a column family on every node (all nodes must be up).
  void truncate(1:required string cfname)
       throws (1: InvalidRequestException ire, 2: UnavailableException ue, 3: TimedOutException te),

  // Read several column slices of one row.
  list<ColumnOrSuperColumn> get_multi_slice(1:required MultiSliceRequest request)
                            throws (1:InvalidRequestException ire, 2:UnavailableException ue,
                                    3:TimedOutException te),

  //
  // Cluster and schema information
  //

  // Schema version -> hosts that have it; unreachable hosts are listed under "UNREACHABLE".
  map<string, list<string>> describe_schema_versions()
       throws (1: InvalidRequestException ire),

  // Definitions of all keyspaces.
  list<KsDef> describe_keyspaces()
    throws (1:InvalidRequestException ire),

  // Cluster name from the server configuration.
  string describe_cluster_name(),

  // API version of this server (the VERSION constant).
  string describe_version(),

  // Token ranges of the ring with their replicas for the given keyspace.
  list<TokenRange> describe_ring(1:required string keyspace)
                   throws (1:InvalidRequestException ire),

  // Like describe_ring, restricted to the local data center.
  list<TokenRange> describe_local_ring(1:required string keyspace)
                   throws (1:InvalidRequestException ire),

  // Token -> endpoint for every node.
  map<string, string> describe_token_map()
                    throws (1:InvalidRequestException ire),

  // Class name of the partitioner.
  string describe_partitioner(),

  // Class name of the snitch.
  string describe_snitch(),

  // Definition of one keyspace.
  KsDef describe_keyspace(1:required string keyspace)
    throws (1:NotFoundException nfe, 2:InvalidRequestException ire),

  // Split a token range into pieces of about keys_per_split rows; returns the boundary tokens.
  list<string> describe_splits(1:required string cfName,
                               2:required string start_token,
                               3:required string end_token,
                               4:required i32 keys_per_split)
    throws (1:InvalidRequestException ire),

  // Ask the server to trace the next query on this connection; returns the trace session id.
  binary trace_next_query(),

  // describe_splits that also returns the estimated row count of each split.
  list<CfSplit> describe_splits_ex(1:required string cfName,
                                   2:required string start_token,
                                   3:required string end_token,
                                   4:required i32 keys_per_split)
    throws (1:InvalidRequestException ire),

  //
  // Schema changes; each returns the new schema version.
  //

  string system_add_column_family(1:required CfDef cf_def)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  string system_drop_column_family(1:required string column_family)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  string system_add_keyspace(1:required KsDef ks_def)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  string system_drop_keyspace(1:required string keyspace)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  // Change keyspace attributes; column family definitions in ks_def are ignored.
  string system_update_keyspace(1:required KsDef ks_def)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  string system_update_column_family(1:required CfDef cf_def)
    throws (1:InvalidRequestException ire, 2:SchemaDisagreementException sde),

  //
  // CQL over Thrift
  //

  // CQL2; obsolete (Cassandra answers InvalidRequestException since 2.2).
  CqlResult execute_cql_query(1:required binary query, 2:required Compression compression)
    throws (1:InvalidRequestException ire,
            2:UnavailableException ue,
            3:TimedOutException te,
            4:SchemaDisagreementException sde)

  // Run a CQL3 statement.
  CqlResult execute_cql3_query(1:required binary query,
                               2:required Compression compression,
                               3:required ConsistencyLevel consistency)
    throws (1:InvalidRequestException ire,
            2:UnavailableException ue,
            3:TimedOutException te,
            4:SchemaDisagreementException sde)

  // CQL2; obsolete (Cassandra answers InvalidRequestException since 2.2).
  CqlPreparedResult prepare_cql_query(1:required binary query, 2:required Compression compression)
    throws (1:InvalidRequestException ire)

  // Prepare a CQL3 statement for later execute_prepared_cql3_query calls.
  CqlPreparedResult prepare_cql3_query(1:required binary query, 2:required Compression compression)
    throws (1:InvalidRequestException ire)

  // CQL2; obsolete (Cassandra answers InvalidRequestException since 2.2).
  CqlResult execute_prepared_cql_query(1:required i32 itemId, 2:required list<binary> values)
    throws (1:InvalidRequestException ire,
            2:UnavailableException ue,
            3:TimedOutException te,
            4:SchemaDisagreementException sde)

  // Run a prepared CQL3 statement with its bound values.
  CqlResult execute_prepared_cql3_query(1:required i32 itemId,
                                        2:required list<binary> values,
                                        3:required ConsistencyLevel consistency)
    throws (1:InvalidRequestException ire,
            2:UnavailableException ue,
            3:TimedOutException te,
            4:SchemaDisagreementException sde)

  // Obsolete: accepted and ignored.
  void set_cql_version(1: required string version) throws (1:InvalidRequestException ire)
}
