//! The replica's side of the coordinator's verbs: another node asks this one to apply a
//! mutation, read a partition or a range, or truncate a column family, on its own engine.
//!
//! Handlers run on messaging tasks and must not block: a write that cannot block is applied in
//! place and acknowledged once its commit log record is written; everything else runs on the
//! request executor, which replies when done.

use std::sync::Arc;

use model::dht::Token;
use model::mutation::RowMutation;
use storage::engine::Storage;
use storage::StorageError;
use tracing::debug;

use crate::executor::Executor;
use crate::messages::{self, ReadReply};
use crate::Endpoint;
use messaging::{MessagingService, Responder, Verb, VerbHandler};

/// Serves Mutation, Hint, Read, ReadDigest, RangeSlice, RangeDigest and Truncate for other
/// coordinators, and StoreHint for a leaving node handing its hints over.
pub struct Replica {
    storage: Storage,
    executor: Executor,
}

impl Replica {
    /// Registers this node's replica handlers with `messaging`.
    pub fn register(storage: Storage, executor: Executor, messaging: &MessagingService) {
        let replica = Arc::new(Replica { storage, executor });
        for verb in [
            Verb::Mutation,
            Verb::Hint,
            Verb::Read,
            Verb::ReadDigest,
            Verb::RangeSlice,
            Verb::RangeDigest,
            Verb::Truncate,
            Verb::StoreHint,
        ] {
            messaging.register(verb, replica.clone());
        }
        crate::paxos::PaxosHandler::register(replica.storage.clone(), replica.executor.clone(), messaging);
    }

    fn apply(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let mutation = match messages::decode_mutation(&payload) {
            Ok(m) => m,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let token = self.storage.partitioner().token_for_key(&mutation.key);
        let answer = |reply: Responder, result: storage::Result<()>| match result {
            Ok(()) => reply.respond(Vec::new()),
            Err(e) => reply.fail(e.to_string()),
        };
        match LocalWrite::start(&self.storage, &self.executor, mutation, token) {
            Ok(LocalWrite::Done) => answer(reply, Ok(())),
            Ok(pending) => {
                tokio::spawn(async move { answer(reply, pending.finish().await) });
            }
            Err(e) => answer(reply, Err(e)),
        }
    }

    fn read(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let request = match messages::decode_read(&payload) {
            Ok(r) => r,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let storage = self.storage.clone();
        self.run(reply, move |reply| {
            match storage.read_slice(&request.keyspace, &request.cf, &request.key, &request.filter) {
                Ok(row) => {
                    let answer =
                        if request.digest { ReadReply::Digest(messages::digest(&row)) } else { ReadReply::Data(row) };
                    reply.respond(messages::encode_read_reply(&answer));
                }
                Err(e) => reply.fail(e.to_string()),
            }
        });
    }

    fn range(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let request = match messages::decode_range(&payload) {
            Ok(r) => r,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let storage = self.storage.clone();
        self.run(reply, move |reply| match read_range(&storage, &request) {
            Ok(rows) => reply.respond(messages::encode_rows(&rows)),
            Err(e) => reply.fail(e.to_string()),
        });
    }

    fn range_digest(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let request = match messages::decode_range_digest(&payload) {
            Ok(r) => r,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let storage = self.storage.clone();
        self.run(reply, move |reply| match digest_ranges(&storage, &request) {
            Ok(digests) => reply.respond(messages::encode_range_digest_reply(&digests)),
            Err(e) => reply.fail(e.to_string()),
        });
    }

    fn truncate(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let (keyspace, cf) = match messages::decode_truncate(&payload) {
            Ok(t) => t,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let storage = self.storage.clone();
        self.run(reply, move |reply| match storage.truncate(&keyspace, &cf) {
            Ok(()) => reply.respond(Vec::new()),
            Err(e) => reply.fail(e.to_string()),
        });
    }

    /// Keeps a hint another node handed over; this node's delivery loop replays it.
    fn store_hint(&self, from: Endpoint, payload: Vec<u8>, reply: Responder) {
        let (target, mutation) = match messages::decode_store_hint(&payload) {
            Ok(h) => h,
            Err(e) => return fail(reply, from, e.to_string()),
        };
        let storage = self.storage.clone();
        self.run(reply, move |reply| match storage.store_hint(&crate::hints::target_key(target), &mutation) {
            Ok(()) => reply.respond(Vec::new()),
            Err(e) => reply.fail(e.to_string()),
        });
    }

    /// Runs `job` on the executor; if the executor is gone (shutdown), the request fails.
    fn run(&self, reply: Responder, job: impl FnOnce(Responder) + Send + 'static) {
        // The responder travels with the job; if the pool refuses it, the requester times out.
        if self.executor.submit(Box::new(move || job(reply))).is_err() {
            debug!("replica request not run: the executor is stopping");
        }
    }
}

/// The digest of each pair of bounds of `request` on this node's engine.
pub(crate) fn digest_ranges(
    storage: &Storage,
    request: &messages::RangeDigestRequest,
) -> storage::Result<Vec<([u8; 16], u64)>> {
    request.bounds.iter().map(|(start, end)| storage.digest_range(&request.keyspace, &request.cf, start, end)).collect()
}

fn fail(reply: Responder, from: Endpoint, reason: String) {
    debug!(%from, %reason, "refusing a malformed replica request");
    reply.fail(reason);
}

impl VerbHandler for Replica {
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder) {
        match verb {
            Verb::Mutation | Verb::Hint => self.apply(from, payload, reply),
            Verb::Read | Verb::ReadDigest => self.read(from, payload, reply),
            Verb::RangeSlice => self.range(from, payload, reply),
            Verb::RangeDigest => self.range_digest(from, payload, reply),
            Verb::Truncate => self.truncate(from, payload, reply),
            Verb::StoreHint => self.store_hint(from, payload, reply),
            other => reply.fail(format!("{other} is not a replica verb")),
        }
    }
}

/// A range read as a replica answers it, for another node or this one: the range's rows, or
/// those an index or a scan finds for the row filter.
pub(crate) fn read_range(
    storage: &Storage,
    request: &messages::RangeRequest,
) -> storage::Result<Vec<(model::dht::DecoratedKey, model::data::Row)>> {
    let rows = request.max_rows as usize;
    let (ks, cf, start, end, filter) = (&request.keyspace, &request.cf, &request.start, &request.end, &request.filter);
    if request.row_filter.is_empty() {
        storage.scan_slices(ks, cf, start, end, filter, rows)
    } else {
        storage.search(ks, cf, start, end, &request.row_filter, filter, rows)
    }
}

/// A write to this node's engine under way, started without blocking the caller's thread: the
/// one way the coordinator's local writes and the replica's Mutation handler apply a mutation.
/// While [`Storage::writes_may_block`] (a batch-mode commit log waits for its fsync, or flushes
/// are behind and a writer may have to flush) it runs on the request executor; otherwise it is
/// applied in place and is durable once its commit log record is written, which the first
/// writer to wait does for every record queued meanwhile (see `Storage::apply_deferred_at`).
pub(crate) enum LocalWrite {
    /// Applied and durable already.
    Done,
    /// Applied; durable once its commit log record is written.
    Deferred(storage::engine::Durable),
    /// Applying on the request executor.
    OnExecutor(tokio::sync::oneshot::Receiver<storage::Result<()>>),
}

impl LocalWrite {
    /// Starts the write; an engine that refuses it in place answers at once. (Inlined: it is on
    /// every write's path, where the executor's branch is the rare one.)
    #[inline]
    pub(crate) fn start(
        storage: &Storage,
        executor: &Executor,
        mutation: RowMutation,
        token: Token,
    ) -> storage::Result<LocalWrite> {
        if storage.writes_may_block() {
            return LocalWrite::start_on_executor(storage, executor, mutation, token);
        }
        let durable = storage.apply_deferred_at(mutation, token)?;
        Ok(if durable.is_deferred() { LocalWrite::Deferred(durable) } else { LocalWrite::Done })
    }

    #[cold]
    #[inline(never)]
    fn start_on_executor(
        storage: &Storage,
        executor: &Executor,
        mutation: RowMutation,
        token: Token,
    ) -> storage::Result<LocalWrite> {
        let (done, result) = tokio::sync::oneshot::channel();
        let storage = storage.clone();
        let job = Box::new(move || {
            let _ = done.send(storage.apply_at(mutation, token));
        });
        match executor.submit(job) {
            Ok(()) => Ok(LocalWrite::OnExecutor(result)),
            Err(_) => Err(StorageError::ShuttingDown),
        }
    }

    /// Whether waiting for it costs anything.
    #[inline]
    pub(crate) fn is_pending(&self) -> bool {
        !matches!(self, LocalWrite::Done)
    }

    /// Its outcome, once durable. (An executor that stopped before running it answers
    /// ShuttingDown.)
    pub(crate) async fn finish(self) -> storage::Result<()> {
        match self {
            LocalWrite::Done => Ok(()),
            LocalWrite::Deferred(durable) => durable.await,
            LocalWrite::OnExecutor(result) => result.await.unwrap_or(Err(StorageError::ShuttingDown)),
        }
    }
}
