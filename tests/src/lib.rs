//! Harness for end-to-end tests: start real `sibyl` processes and connect Thrift clients.
