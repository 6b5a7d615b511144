//! The `sibyl` daemon: configuration (`storage-conf.xml`), the Thrift front end, startup and
//! shutdown. It turns Thrift requests into storage engine calls; it knows no file formats.

pub mod admin;
pub mod auth;
pub mod config;
pub mod daemon;
pub mod node;
pub mod stress;
pub mod thrift;
pub mod tool;
