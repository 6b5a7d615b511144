//! The `sibyl` daemon: configuration, the Thrift front end, startup and shutdown.
