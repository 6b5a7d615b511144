//! The `sibyl` daemon: configuration (`storage-conf.xml`), the Thrift front end, the admin
//! interface, startup and shutdown. The front end turns Thrift requests into the engine's request
//! types and hands them to the coordinator (`cluster`); it knows no file formats, caches or
//! commit log.

pub mod admin;
pub mod auth;
pub mod config;
pub mod cql_access;
pub mod daemon;
pub mod event_loop;
pub mod native;
pub mod node;
pub mod thrift;
