//! Internode messaging (Cassandra's `net.MessagingService`), on tokio, with our own versioned,
//! checksummed wire format (`codec`, and `docs/internode-protocol.md`).
//!
//! Each node keeps two outbound connections per peer, opened lazily (one for gossip so that
//! heartbeats never wait behind large mutations, one for everything else), each fed by a bounded
//! queue: senders never block or await, a full queue answers QueueFull at once. Connections
//! carry frames one way; a reply travels on the replier's own connection to the requester's
//! listen endpoint, which the requester named in its handshake. Requests are matched to replies
//! by id, and every request resolves: reply, failure, timeout or shutdown.
//!
//! This is the bottom of the cluster's layers: it moves verbs and opaque payloads between
//! endpoints and knows nothing of what they mean. It must not depend on the data model, the
//! storage engine, membership or the coordinator; those register [`VerbHandler`]s and encode
//! their own payloads.
//!
//! Main types: [`MessagingService`], [`VerbHandler`] and [`Responder`], [`Verb`], [`NetConfig`].
#![deny(clippy::unwrap_used)]

/// A node as messaging addresses it: its listen address and storage (internode) port. The same
/// type as `cluster::Endpoint` and `membership::Endpoint`.
pub type Endpoint = std::net::SocketAddr;

mod callbacks;
/// The wire format, reachable for fuzz targets and format tests; not part of the face.
#[doc(hidden)]
pub mod codec;
mod config;
mod error;
mod inbound;
mod outbound;
mod reader;
mod service;
mod stats;
mod verb;

pub use callbacks::ResponseFuture;
pub use config::{NetConfig, Timeouts, MAX_VERB_TIMEOUT};
pub use error::{FrameError, HandshakeError, NetError, RequestError, SendError, UnknownVerb};
pub use service::{MessagingService, Responder, VerbHandler};
pub use stats::{ConnectionStats, InboundStats, NetStats, PeerStats};
pub use verb::{ConnectionKind, Verb};

#[cfg(test)]
mod tests;
