//! `help;` and `help <command>;` texts.

/// Printed when the interactive shell starts.
pub const BANNER: &str = "Type 'help;' or '?' for help.\nType 'quit;' or 'exit;' to quit.";

const OVERVIEW: &str = "\
Getting around:
?                       Display this help.
help;                   Display this help.
help <command>;         Display command-specific help.
exit; / quit;           Leave the shell.

Commands:
connect <host>/<port> [<user> '<password>'];   Connect to a node.
use <keyspace> [<user> '<password>'];          Switch to a keyspace.
show cluster name; | show api version; | show keyspaces; | show schema [<keyspace>];
describe [<keyspace> | <cf>]; | describe cluster; | describe ring [<keyspace>];
create keyspace <ks> [with <att> = <value> [and ...]];
update keyspace <ks> [with <att> = <value> [and ...]];
drop keyspace <ks>;
create column family <cf> [with <att> = <value> [and ...]];
update column family <cf> [with <att> = <value> [and ...]];
drop column family <cf>;
drop index on <cf>.<column>;
set <cf>['<key>']['<col>'] = <value> [with ttl = <secs>];
set <cf>['<key>']['<super>']['<col>'] = <value> [with ttl = <secs>];
get <cf>['<key>'] [limit <n>]; | get <cf>['<key>']['<col>'] [as <type>];
get <cf> where <col> = <value> [and <col> > <value> ...] [limit <n>];
del <cf>['<key>']; | del <cf>['<key>']['<col>']; | del <cf>['<key>']['<super>']['<col>'];
count <cf>['<key>']; | count <cf>['<key>']['<super>'];
incr <cf>['<key>']['<col>'] [by <n>]; | decr <cf>['<key>']['<col>'] [by <n>];
list <cf> [[<start>:<end>]] [limit <n>] [columns <n> [reversed]];
truncate <cf>;
assume <cf> keys|comparator|sub_comparator|validator as <type>;
consistencylevel as <level>;
trace next query;                              Trace the next request (see system_traces).";

const TYPES: &str = "\
Values are converted with the column family's types: the comparator (column names), the
sub-comparator (sub-column names), the column's validation_class or default_validation_class
(values) and key_validation_class (row keys); 'assume' overrides them for this session. A value
can also name its type with a function: bytes('hex'), utf8('text'), ascii('text'), long(n),
int(n), integer(n), uuid('...'), lexicaluuid('...'), timeuuid('...'), boolean(true), double(n),
float(n), date('...'). timeuuid() makes a new version 1 UUID, uuid()/lexicaluuid() a random one.";

/// The help for `topic` (the words after `help`, lower-case), or the overview.
pub fn help_text(topic: Option<&str>) -> String {
    let Some(topic) = topic else {
        return OVERVIEW.to_string();
    };
    let text = match topic {
        "help" => "help; / help <command>;\n\nShows the list of commands, or help about one command.",
        "connect" => {
            "connect <hostname>/<port> [<username> '<password>'];\n\nConnects to a node's Thrift port \
             (binary protocol, framed transport unless sibyl-cli was started with --unframed), e.g. \
             connect localhost/9160;"
        }
        "use" => {
            "use <keyspace> [<username> '<password>'];\n\nMakes <keyspace> the current keyspace, logging in \
             first when a user and password are given."
        }
        "describe" | "describe keyspace" => {
            "describe [<keyspace> | <column_family>];\n\nShows the definition of the current keyspace, of \
             another keyspace, or of one column family of the current keyspace."
        }
        "describe cluster" => "describe cluster;\n\nShows the cluster name, snitch, partitioner and schema versions.",
        "describe ring" => "describe ring [<keyspace>];\n\nShows the token ranges and their replicas.",
        "exit" | "quit" => "exit; / quit;\n\nLeaves the shell.",
        "show cluster name" | "show" => "show cluster name; | show api version; | show keyspaces; | show schema;",
        "show api version" => "show api version;\n\nShows the server's Thrift API version.",
        "show keyspaces" => "show keyspaces;\n\nDescribes every keyspace.",
        "show schema" => "show schema [<keyspace>];\n\nPrints the statements that recreate a keyspace.",
        "create keyspace" => {
            "create keyspace <keyspace> [with <att> = <value> [and <att> = <value> ...]];\n\n\
             Attributes:\n  placement_strategy: replica placement class, e.g. \
             'org.apache.cassandra.locator.SimpleStrategy' (the default, with replication_factor 1)\n  \
             strategy_options: e.g. {replication_factor:1} or, for NetworkTopologyStrategy, {DC1:3}\n  \
             replication_factor: old form of strategy_options = {replication_factor:N}\n  \
             durable_writes: true or false"
        }
        "update keyspace" => {
            "update keyspace <keyspace> with <att> = <value> [and ...];\n\nSame attributes as create keyspace."
        }
        "create column family" | "update column family" => {
            "create column family <cf> [with <att> = <value> [and <att> = <value> ...]];\n\
             update column family <cf> with <att> = <value> [and ...];\n\n\
             Attributes: column_type (Standard|Super), comparator, subcomparator, default_validation_class,\n\
             key_validation_class, comment, gc_grace, read_repair_chance, dclocal_read_repair_chance,\n\
             min_compaction_threshold, max_compaction_threshold, compaction_strategy,\n\
             compaction_strategy_options, compression_options, bloom_filter_fp_chance, caching,\n\
             default_time_to_live, speculative_retry, memtable_flush_period_in_ms, index_interval,\n\
             populate_io_cache_on_flush, replicate_on_write, key_alias, rows_cached, keys_cached,\n\
             row_cache_save_period, key_cache_save_period, row_cache_keys_to_save, row_cache_provider,\n\
             memtable_operations, memtable_throughput, memtable_flush_after, merge_shards_chance,\n\
             column_metadata = [{column_name: <name>, validation_class: <type>, index_type: KEYS,\n\
             index_name: <name>}, ...]"
        }
        "drop keyspace" => "drop keyspace <keyspace>;\n\nDeletes a keyspace and all its data.",
        "drop column family" => "drop column family <cf>;\n\nDeletes a column family and all its data.",
        "drop index" => "drop index on <cf>.<column>;\n\nRemoves the secondary index of a column.",
        "get" => {
            "get <cf>['<key>'] [limit <n>];\nget <cf>['<key>']['<col>'] [as <type>];\n\
             get <cf>['<key>']['<super>'] [limit <n>];\nget <cf>['<key>']['<super>']['<col>'] [as <type>];\n\
             get <cf> where <col> <op> <value> [and ...] [limit <n>];   (op: = > >= < <=; needs a KEYS index)"
        }
        "set" => {
            "set <cf>['<key>']['<col>'] = <value> [with ttl = <seconds>];\n\
             set <cf>['<key>']['<super>']['<col>'] = <value> [with ttl = <seconds>];"
        }
        "incr" | "decr" => {
            "incr <cf>['<key>']['<col>'] [by <n>];\ndecr <cf>['<key>']['<col>'] [by <n>];\n\nCounter updates."
        }
        "del" => "del <cf>['<key>'];\ndel <cf>['<key>']['<col>'];\ndel <cf>['<key>']['<super>']['<col>'];",
        "count" => {
            "count <cf>['<key>'];\ncount <cf>['<key>']['<super>'];\n\nCounts the columns of a row or super column."
        }
        "list" => {
            "list <cf> [[<start key>:<end key>]] [limit <n>] [columns <n> [reversed]];\n\nShows rows in token \
             order, each with its first <n> columns (its last ones, reversed); without limit or columns, \
             100 of each."
        }
        "truncate" => "truncate <cf>;\n\nDeletes all the data of a column family.",
        "assume" => {
            "assume <cf> keys|comparator|sub_comparator|validator as <type>;\n\nHow this session reads and \
             shows keys, column names, sub-column names or values of <cf>."
        }
        "consistencylevel" => {
            "consistencylevel as <level>;\n\nONE, TWO, THREE, QUORUM, LOCAL_QUORUM, EACH_QUORUM, ALL, ANY, LOCAL_ONE."
        }
        "trace" | "trace next query" => {
            "trace next query;\n\nAsks the node to trace this session's next request; the trace is kept in \
             system_traces under the session ID shown."
        }
        "types" | "functions" => TYPES,
        other => return format!("No help for '{other}'. Type 'help;' for the list of commands."),
    };
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_resolve() {
        assert!(help_text(None).contains("create column family"));
        assert!(help_text(Some("set")).contains("with ttl"));
        assert!(help_text(Some("create column family")).contains("column_metadata"));
        assert!(help_text(Some("nonsense")).starts_with("No help for"));
    }
}
