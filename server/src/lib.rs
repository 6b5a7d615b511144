//! The `sibyl` daemon: configuration (`storage-conf.xml`), the Thrift front end, startup and
//! shutdown. It turns Thrift requests into storage engine calls; it knows no file formats.

pub mod admin;
pub mod auth;
pub mod config;
pub mod daemon;
pub mod node;
pub mod thrift;

// The Thrift wire tests build their request frames with sibyl-stress's hand-written encoder,
// which they still name `crate::stress::wire`; this alias keeps that path (test builds only,
// so the daemon does not link the load generator).
#[cfg(test)]
use sibyl_stress as stress;
