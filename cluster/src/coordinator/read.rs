//! Point reads: the nearest live replica sends the data, as many more as the level needs send a
//! digest; when the digests disagree, the coordinator asks them all for data, reconciles the
//! answers, writes the result back to the replicas that were behind and only then answers
//! (Cassandra's digest reads and blocking read repair). With the column family's
//! `read_repair_chance`, the other live replicas are checked too, in the background.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use futures::stream::{FuturesUnordered, StreamExt};
use model::data::{now_seconds, split_super, Cell, Row};
use model::dht::DecoratedKey;
use model::filter::{merge_rows, take_live, CountUnit, ReadFilter};
use model::mutation::RowMutation;
use rand::Rng;
use storage::engine::Storage;
use tracing::debug;

use super::plan::{check_alive, only_local_meets, quota, read_replicas, Quota, Tracker};
use super::{Coordinator, CoordinatorError, ReadCommand, Result, INLINE_MAX_COLUMNS, INLINE_MAX_KEYS};
use crate::consistency::ConsistencyLevel;
use crate::messages::{self, ReadReply, ReadRequest};
use crate::trace::trace;
use crate::Endpoint;
use messaging::{MessagingService, RequestError, Verb};

/// A point read with the replicas it goes to.
struct PlannedRead {
    command: ReadCommand,
    /// The command's key with its token, computed once for placement and the local read.
    key: DecoratedKey,
    /// The replicas asked, nearest first: the first sends data, the others digests.
    targets: Vec<Endpoint>,
    /// Live replicas not asked (candidates for background read repair).
    others: Vec<Endpoint>,
    /// The nearest live replica not asked, asked for data if the targets are slow to answer
    /// (speculative retry).
    spare: Option<Endpoint>,
}

/// Which replicas a background read repair checks.
enum RepairScope {
    All,
    LocalDc,
}

type Reply<'a> = Pin<Box<dyn Future<Output = Result<ReadReply>> + Send + 'a>>;

impl Coordinator {
    /// The live cells each command selects, in the commands' order.
    pub async fn read(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<Vec<Cell>>> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        if cl.is_serial() {
            return Box::pin(self.read_serial(commands, cl)).await;
        }
        let planned = self.plan_reads(commands, cl)?;
        let local = self.membership.local();
        if planned.iter().all(|p| p.targets == [local] && p.others.is_empty()) {
            trace(|| format!("Reading {} partition(s) locally: this node is their only replica asked", planned.len()));
            let rows = if is_small(planned.iter().map(|p| &p.command)) {
                read_all(&self.storage, &planned)
            } else {
                self.blocking(move |storage| read_all(storage, &planned)).await
            };
            trace(|| "Local read complete".into());
            return rows;
        }
        join_all(planned.into_iter().map(|p| self.read_one(p))).await.into_iter().collect()
    }

    /// The live cells one command selects: [`Coordinator::read`] of one partition. When this node
    /// is its only replica asked and the read is small (every get and get_slice on a single
    /// node), it is read here straight away, without the vectors of commands, plans, targets and
    /// answers that a read of several partitions needs.
    pub async fn read_partition(&self, command: ReadCommand, cl: ConsistencyLevel) -> Result<Vec<Cell>> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        if !cl.is_serial() && filter_is_small(&command.filter) {
            let placement = self.placement(&command.keyspace)?;
            if placement.local_only {
                let token = self.token_of(&command.key)?;
                only_local_meets(cl, &quota(cl, &placement.strategy, self.local_dc(), 0))?;
                trace(|| "Reading 1 partition(s) locally: this node is their only replica asked".into());
                let ReadCommand { keyspace, cf, key, filter } = command;
                let cells = self.storage.read_at(&keyspace, &cf, &DecoratedKey::new(token, key), &filter)?;
                trace(|| "Local read complete".into());
                return Ok(cells);
            }
        }
        let mut rows = self.read(vec![command], cl).await?;
        Ok(rows.pop().unwrap_or_default())
    }

    /// How many columns each command's read returns (super columns, for a read of a super
    /// column family at the top level), as get_count and multiget_count answer.
    pub async fn count(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<usize>> {
        let units: Vec<CountUnit> = commands.iter().map(|c| c.filter.count_unit).collect();
        let rows = self.read(commands, cl).await?;
        Ok(rows.iter().zip(units).map(|(cells, unit)| count_cells(cells, unit)).collect())
    }

    fn plan_reads(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<PlannedRead>> {
        let local_dc = self.local_dc();
        let mut planned = Vec::with_capacity(commands.len());
        for command in commands {
            let placement = self.placement(&command.keyspace)?;
            let (strategy, map) = (&placement.strategy, &placement.map);
            let token = self.token_of(&command.key)?;
            let quota = quota(cl, strategy, local_dc, 0);
            if placement.local_only {
                // The answer check_alive and first_meeting would give, without their work.
                only_local_meets(cl, &quota)?;
                let key = DecoratedKey::new(token, command.key.clone());
                let targets = vec![self.membership.local()];
                planned.push(PlannedRead { command, key, targets, others: Vec::new(), spare: None });
                continue;
            }
            let alive = read_replicas(map, &token, &self.membership, cl);
            let key = DecoratedKey::new(token, command.key.clone());
            check_alive(cl, &quota, &alive, &self.membership)?;
            let targets = first_meeting(&quota, &alive, &self.membership);
            let mut others: Vec<Endpoint> = alive.into_iter().filter(|ep| !targets.contains(ep)).collect();
            let spare = others.first().copied();
            if others.is_empty() {
                // Nothing to repair in the background (always so with one replica): no draw.
                planned.push(PlannedRead { command, key, targets, others, spare });
                continue;
            }
            match self.read_repair_scope(&command) {
                Some(RepairScope::All) => {}
                Some(RepairScope::LocalDc) => {
                    let snitch = self.membership.snitch();
                    others.retain(|ep| snitch.datacenter(*ep) == local_dc);
                }
                None => others.clear(),
            }
            planned.push(PlannedRead { command, key, targets, others, spare });
        }
        Ok(planned)
    }

    /// Whether this read also checks the replicas it does not need, and which: every one with the
    /// column family's read_repair_chance, else those of this data centre with its
    /// dclocal_read_repair_chance (Cassandra draws once for both).
    fn read_repair_scope(&self, command: &ReadCommand) -> Option<RepairScope> {
        let meta = self.storage.cf_metadata(&command.keyspace, &command.cf).ok()?;
        let draw: f64 = rand::thread_rng().gen();
        if draw < meta.def.read_repair_chance {
            Some(RepairScope::All)
        } else if draw < meta.def.dclocal_read_repair_chance {
            Some(RepairScope::LocalDc)
        } else {
            None
        }
    }

    async fn read_one(&self, planned: PlannedRead) -> Result<Vec<Cell>> {
        let PlannedRead { command, targets, mut others, spare, .. } = planned;
        let started = Instant::now();
        let meta = self.cf_metadata(&command.keyspace, &command.cf)?;
        let Some((first, rest)) = targets.split_first() else {
            return Err(CoordinatorError::Unavailable { cl: ConsistencyLevel::One, required: 1, alive: 0 });
        };
        trace(|| format!("Reading data from {first}, digests from {rest:?}"));
        let spare = spare.zip(speculation_delay(&meta.def, self.settings.timeouts.read));
        let (answers, targets) = self.gather_speculating(&command, &targets, spare, started).await?;
        others.retain(|ep| !targets.contains(ep));
        trace(|| format!("Read answered by {} replica(s)", targets.len()));
        let mut answers = answers.into_iter();
        let data = match answers.next() {
            Some(ReadReply::Data(row)) => row,
            _ => return Err(failure("read", *first, "the data replica answered with a digest")),
        };
        let data_digest = messages::digest(&data);
        let agree = answers.all(|a| matches!(a, ReadReply::Digest(d) if d == data_digest));
        let now = now_seconds();
        let resolved = if agree {
            data
        } else {
            debug!(keyspace = %command.keyspace, cf = %command.cf, "digest mismatch: reading data from every replica asked");
            trace(|| "Digest mismatch: reading data from every replica asked, then repairing them".into());
            let replies: Vec<Reply<'_>> = targets.iter().map(|ep| self.ask(*ep, &command, false)).collect();
            let versions = self.gather(replies, started, targets.len()).await?;
            let versions: Vec<Row> = versions
                .into_iter()
                .map(|v| match v {
                    ReadReply::Data(row) => row,
                    ReadReply::Digest(_) => Row::new(),
                })
                .collect();
            let resolved = merge_rows(&meta.cmp, versions.clone());
            self.repair(&command, &resolved, targets.iter().copied().zip(versions), true).await?;
            resolved
        };
        if !others.is_empty() {
            self.repair_in_background(command.clone(), targets, others);
        }
        Ok(take_live(&meta.cmp, resolved, &command.filter, now))
    }

    /// The first replies of `targets` (the first asked for data, the others for digests) that
    /// make as many answers as there are targets, one at least with data; with `spare`
    /// `(replica, delay)`, the spare replica is asked for data too when the targets have not all
    /// answered after the delay, or one of them failed (Cassandra's speculative retry: a replica
    /// that hangs before the failure detector convicts it then costs the delay, not the read).
    /// Returns the answers, data first, and who gave them, in the same order.
    async fn gather_speculating(
        &self,
        command: &ReadCommand,
        targets: &[Endpoint],
        spare: Option<(Endpoint, Duration)>,
        started: Instant,
    ) -> Result<(Vec<ReadReply>, Vec<Endpoint>)> {
        type Answer<'a> = Pin<Box<dyn Future<Output = (Endpoint, Result<ReadReply>)> + Send + 'a>>;
        let ask = |ep: Endpoint, digest: bool| -> Answer<'_> {
            let reply = self.ask(ep, command, digest);
            Box::pin(async move { (ep, reply.await) })
        };
        let need = targets.len();
        let mut pending: FuturesUnordered<Answer<'_>> =
            targets.iter().enumerate().map(|(i, ep)| ask(*ep, i != 0)).collect();
        let timeout = self.settings.timeouts.read.saturating_sub(started.elapsed());
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let (mut spare, delay) = match spare {
            Some((ep, delay)) => (Some(ep), delay),
            None => (None, timeout),
        };
        let speculate = tokio::time::sleep(delay);
        tokio::pin!(speculate);
        let mut got: Vec<(Endpoint, ReadReply)> = Vec::with_capacity(need + 1);
        let mut failed: Option<CoordinatorError> = None;
        loop {
            if got.len() >= need && got.iter().any(|(_, r)| matches!(r, ReadReply::Data(_))) {
                break;
            }
            if pending.is_empty() || failed.is_some() {
                // Nothing more to wait for from those asked: the spare is the last chance.
                match spare.take() {
                    Some(ep) => {
                        trace(|| format!("Asking {ep} for data: a replica asked failed"));
                        pending.push(ask(ep, false));
                        failed = None;
                        continue;
                    }
                    None if pending.is_empty() => {
                        return Err(failed.unwrap_or(CoordinatorError::Timeout {
                            operation: "read",
                            waited: started.elapsed(),
                            received: got.len(),
                            required: need,
                        }));
                    }
                    None => {}
                }
            }
            tokio::select! {
                Some((ep, answer)) = pending.next() => match answer {
                    Ok(reply) => got.push((ep, reply)),
                    Err(e) => failed = Some(e),
                },
                _ = &mut speculate, if spare.is_some() => {
                    if let Some(ep) = spare.take() {
                        trace(|| format!("Asking {ep} for data: the replicas asked are slow to answer"));
                        pending.push(ask(ep, false));
                    }
                }
                _ = &mut deadline => {
                    return Err(CoordinatorError::Timeout {
                        operation: "read",
                        waited: started.elapsed(),
                        received: got.len(),
                        required: need,
                    });
                }
            }
        }
        // The data answer first, as the callers expect.
        if let Some(pos) = got.iter().position(|(_, r)| matches!(r, ReadReply::Data(_))) {
            got.swap(0, pos);
        }
        Ok(got.into_iter().map(|(ep, r)| (r, ep)).unzip())
    }

    /// `ep`'s answer to `command`: its data, or a digest of it.
    fn ask(&self, ep: Endpoint, command: &ReadCommand, digest: bool) -> Reply<'_> {
        if ep == self.membership.local() {
            let storage = self.storage.clone();
            let command = command.clone();
            let run = self.executor.run(move || local_reply(&storage, &command, digest));
            return Box::pin(async move {
                run.await.map_err(|_| CoordinatorError::Storage(storage::StorageError::ShuttingDown))?
            });
        }
        let request = ReadRequest {
            keyspace: command.keyspace.to_string(),
            cf: command.cf.to_string(),
            key: command.key.clone(),
            filter: command.filter.clone(),
            digest,
        };
        let verb = if digest { Verb::ReadDigest } else { Verb::Read };
        match self.net() {
            Ok(net) => {
                let reply = net.send_request(ep, verb, messages::encode_read(&request));
                Box::pin(async move {
                    let bytes = reply.await.map_err(|e| request_error("read", ep, e))?;
                    messages::decode_read_reply(&bytes).map_err(|e| failure("read", ep, &e.to_string()))
                })
            }
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }

    /// Waits for every reply, in order, until the read timeout.
    async fn gather(&self, replies: Vec<Reply<'_>>, started: Instant, required: usize) -> Result<Vec<ReadReply>> {
        let timeout = self.settings.timeouts.read.saturating_sub(started.elapsed());
        match tokio::time::timeout(timeout, join_all(replies)).await {
            Ok(answers) => {
                let mut out = Vec::with_capacity(answers.len());
                for (i, a) in answers.into_iter().enumerate() {
                    match a {
                        Ok(a) => out.push(a),
                        Err(CoordinatorError::Timeout { .. }) => {
                            return Err(CoordinatorError::Timeout {
                                operation: "read",
                                waited: started.elapsed(),
                                received: i,
                                required,
                            })
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(out)
            }
            Err(_) => {
                Err(CoordinatorError::Timeout { operation: "read", waited: started.elapsed(), received: 0, required })
            }
        }
    }

    /// Writes `resolved` back to every replica whose version differs from it; with `wait`, until
    /// they acknowledged (or the write timeout passed).
    async fn repair(
        &self,
        command: &ReadCommand,
        resolved: &Row,
        versions: impl Iterator<Item = (Endpoint, Row)>,
        wait: bool,
    ) -> Result<()> {
        let writer = RepairWriter::of(self);
        let acks = writer.write(command, resolved, versions, "read repair");
        if !wait {
            return Ok(());
        }
        let started = Instant::now();
        let total = acks.len();
        match tokio::time::timeout(self.settings.timeouts.write, join_all(acks)).await {
            Ok(done) if done.iter().all(|ok| *ok) => Ok(()),
            Ok(done) => Err(CoordinatorError::Timeout {
                operation: "read repair",
                waited: started.elapsed(),
                received: done.iter().filter(|ok| **ok).count(),
                required: total,
            }),
            Err(_) => Err(CoordinatorError::Timeout {
                operation: "read repair",
                waited: started.elapsed(),
                received: 0,
                required: total,
            }),
        }
    }

    /// Reads `command` from every live replica after the answer went out, and repairs those
    /// behind (read_repair_chance).
    fn repair_in_background(&self, command: ReadCommand, targets: Vec<Endpoint>, others: Vec<Endpoint>) {
        let Some(net) = self.messaging.clone() else { return };
        let writer = RepairWriter::of(self);
        let storage = self.storage.clone();
        let local = self.membership.local();
        let timeout = self.settings.timeouts.read;
        let everyone: Vec<Endpoint> = targets.into_iter().chain(others).collect();
        tokio::spawn(async move {
            let fetches = everyone.iter().map(|ep| fetch_data(&net, &storage, local, *ep, &command));
            let Ok(versions) = tokio::time::timeout(timeout, join_all(fetches)).await else { return };
            let Ok(meta) = storage.cf_metadata(&command.keyspace, &command.cf) else { return };
            let versions: Vec<(Endpoint, Row)> =
                everyone.iter().copied().zip(versions).filter_map(|(ep, v)| Some((ep, v?))).collect();
            let resolved = merge_rows(&meta.cmp, versions.iter().map(|(_, r)| r.clone()).collect());
            // Nobody waits for the answer; the writes are bounded by the write timeout.
            let acks = writer.write(&command, &resolved, versions.into_iter(), "background read repair");
            let _ = tokio::time::timeout(timeout, join_all(acks)).await;
        });
    }
}

/// How read repair writes the reconciled row to the replicas behind, whether a digest
/// mismatch waits for it or a background check does not: one mutation of the resolved row
/// to each replica whose version's digest differs, applied on the request executor here
/// (never on the event loop) and sent as a Mutation elsewhere.
struct RepairWriter {
    storage: Storage,
    executor: crate::executor::Executor,
    net: Option<Arc<MessagingService>>,
    local: Endpoint,
}

impl RepairWriter {
    fn of(coordinator: &Coordinator) -> RepairWriter {
        RepairWriter {
            storage: coordinator.storage.clone(),
            executor: coordinator.executor.clone(),
            net: coordinator.messaging.clone(),
            local: coordinator.membership.local(),
        }
    }

    /// Starts the writes; each future says whether its replica acknowledged.
    fn write(
        &self,
        command: &ReadCommand,
        resolved: &Row,
        versions: impl Iterator<Item = (Endpoint, Row)>,
        what: &str,
    ) -> Vec<Pin<Box<dyn Future<Output = bool> + Send + '_>>> {
        let want = messages::digest(resolved);
        let stale: Vec<Endpoint> =
            versions.filter(|(_, row)| messages::digest(row) != want).map(|(ep, _)| ep).collect();
        if stale.is_empty() {
            return Vec::new();
        }
        let mut m = RowMutation::new(command.keyspace.to_string(), command.key.clone());
        *m.row_mut(&command.cf) = resolved.clone();
        let mut acks: Vec<Pin<Box<dyn Future<Output = bool> + Send + '_>>> = Vec::new();
        for ep in stale {
            debug!(%ep, keyspace = %command.keyspace, cf = %command.cf, "{what}");
            if ep == self.local {
                let storage = self.storage.clone();
                let m = m.clone();
                let run = self.executor.run(move || storage.apply(m).is_ok());
                acks.push(Box::pin(async move { matches!(run.await, Ok(true)) }));
            } else if let Some(net) = &self.net {
                let reply = net.send_request(ep, Verb::Mutation, messages::encode_mutation(&m));
                acks.push(Box::pin(async move { reply.await.is_ok() }));
            }
        }
        acks
    }
}

/// The data of `command` on `ep`, for a background repair (`None` if it did not answer).
async fn fetch_data(
    net: &Arc<MessagingService>,
    storage: &Storage,
    local: Endpoint,
    ep: Endpoint,
    command: &ReadCommand,
) -> Option<Row> {
    if ep == local {
        return storage.read_slice(&command.keyspace, &command.cf, &command.key, &command.filter).ok();
    }
    let request = ReadRequest {
        keyspace: command.keyspace.to_string(),
        cf: command.cf.to_string(),
        key: command.key.clone(),
        filter: command.filter.clone(),
        digest: false,
    };
    let bytes = net.send_request(ep, Verb::Read, messages::encode_read(&request)).await.ok()?;
    match messages::decode_read_reply(&bytes).ok()? {
        ReadReply::Data(row) => Some(row),
        ReadReply::Digest(_) => None,
    }
}

fn local_reply(storage: &Storage, command: &ReadCommand, digest: bool) -> Result<ReadReply> {
    let row = storage.read_slice(&command.keyspace, &command.cf, &command.key, &command.filter)?;
    Ok(if digest { ReadReply::Digest(messages::digest(&row)) } else { ReadReply::Data(row) })
}

pub(super) fn failure(operation: &'static str, endpoint: Endpoint, reason: &str) -> CoordinatorError {
    CoordinatorError::ReplicaFailure { operation, endpoint, reason: reason.to_string() }
}

/// What a failed request to a replica means for the client.
pub(super) fn request_error(operation: &'static str, endpoint: Endpoint, e: RequestError) -> CoordinatorError {
    match e {
        RequestError::Timeout { waited, .. } => {
            CoordinatorError::Timeout { operation, waited, received: 0, required: 1 }
        }
        RequestError::ShuttingDown => CoordinatorError::Storage(storage::StorageError::ShuttingDown),
        other => failure(operation, endpoint, &other.to_string()),
    }
}

/// The nearest replicas of `alive` that together meet `quota`.
pub(super) fn first_meeting(quota: &Quota, alive: &[Endpoint], membership: &membership::Membership) -> Vec<Endpoint> {
    let mut tracker = Tracker::new(quota, membership);
    let mut chosen: Vec<Endpoint> = Vec::with_capacity(alive.len().min(4));
    for ep in alive {
        if tracker.is_met() {
            break;
        }
        // A handful of replicas: a linear check beats a set.
        if !chosen.contains(ep) && tracker.wants(*ep) {
            chosen.push(*ep);
            tracker.ack(*ep);
        }
    }
    chosen
}

/// A read that is cheap enough to run on the caller's thread.
fn is_small<'a>(mut commands: impl ExactSizeIterator<Item = &'a ReadCommand>) -> bool {
    commands.len() <= INLINE_MAX_KEYS && commands.all(|c| filter_is_small(&c.filter))
}

fn filter_is_small(filter: &ReadFilter) -> bool {
    let names_only = filter.ranges.iter().all(|(low, high)| !low.is_empty() && low == high);
    filter.count <= INLINE_MAX_COLUMNS || (names_only && filter.ranges.len() <= INLINE_MAX_COLUMNS)
}

/// Reads each planned partition here. (Takes the plans as they are: collecting (command, key)
/// pairs out of them reallocated a vector on every request.)
fn read_all(storage: &Storage, reads: &[PlannedRead]) -> Result<Vec<Vec<Cell>>> {
    reads.iter().map(|p| Ok(storage.read_at(&p.command.keyspace, &p.command.cf, &p.key, &p.command.filter)?)).collect()
}

/// Cells, or distinct super columns among them.
pub(super) fn count_cells(cells: &[Cell], unit: CountUnit) -> usize {
    match unit {
        CountUnit::Cells => cells.len(),
        CountUnit::SuperColumns => {
            let mut n = 0;
            let mut last: Option<&[u8]> = None;
            for c in cells {
                let (sc, _) = split_super(&c.name);
                if last != Some(sc) {
                    n += 1;
                    last = Some(sc);
                }
            }
            n
        }
    }
}

/// How long a read waits for the replicas asked before asking one more for data, from the
/// column family's `speculative_retry` (Cassandra 2.0+): `NONE` never, `ALWAYS` at once, `Nms`
/// after N milliseconds; the percentile forms (`99PERCENTILE`, the default) would need each
/// column family's latency histogram, which is not kept: a tenth of the read timeout stands in
/// for them.
fn speculation_delay(def: &model::schema::CfDef, read_timeout: Duration) -> Option<Duration> {
    let fallback = read_timeout / 10;
    let Some(setting) = def.speculative_retry.as_deref().map(str::trim) else {
        return Some(fallback);
    };
    // Checked on every read with a spare replica: no allocation.
    let millis = setting
        .len()
        .checked_sub(2)
        .filter(|&at| setting.is_char_boundary(at) && setting[at..].eq_ignore_ascii_case("ms"))
        .and_then(|at| setting[..at].trim().parse::<f64>().ok());
    if setting.eq_ignore_ascii_case("NONE") {
        None
    } else if setting.eq_ignore_ascii_case("ALWAYS") {
        Some(Duration::ZERO)
    } else if let Some(ms) = millis {
        Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0))
    } else {
        Some(fallback)
    }
}

#[cfg(test)]
mod speculation_tests {
    use super::*;

    #[test]
    fn the_speculative_retry_option_sets_the_delay() {
        let timeout = Duration::from_secs(2);
        let with = |setting: Option<&str>| {
            let mut def = model::schema::CfDef::new("ks", "cf");
            def.speculative_retry = setting.map(str::to_string);
            speculation_delay(&def, timeout)
        };
        assert_eq!(with(None), Some(Duration::from_millis(200)), "the default: a tenth of the timeout");
        assert_eq!(with(Some("99PERCENTILE")), Some(Duration::from_millis(200)));
        assert_eq!(with(Some("NONE")), None);
        assert_eq!(with(Some("none")), None);
        assert_eq!(with(Some("ALWAYS")), Some(Duration::ZERO));
        assert_eq!(with(Some("50ms")), Some(Duration::from_millis(50)));
        assert_eq!(with(Some("2.5ms")), Some(Duration::from_micros(2500)));
    }
}
