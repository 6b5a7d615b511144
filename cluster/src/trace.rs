//! Request tracing (Cassandra's `tracing` package): a request a client asked to trace
//! (`trace_next_query`) runs inside [`traced`], and the steps it passes through record
//! themselves with [`trace`]; when it is answered, the front end turns the state into a
//! `system_traces` session row and events ([`TraceState::finish`], then
//! [`crate::coordinator::Coordinator::record_trace`]).
//!
//! The state travels with the request's task (a tokio task-local), as Cassandra's travels with
//! its thread. Steps run on the request executor or on other nodes are not traced: the events
//! are the coordinator's view of the request.
//!
//! Cost when nothing is traced: [`trace`] and [`trace_parameters`] read one atomic counter of
//! the traced requests under way and return.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use storage::{TraceEvent, TraceSession};
use uuid::Uuid;

/// Node part of the version 1 UUIDs of trace sessions and events.
pub const NODE_ID: [u8; 6] = *b"sibyl!";

/// Traced requests under way on this node: while it is 0, [`trace`] does nothing else.
static TRACED_REQUESTS: AtomicUsize = AtomicUsize::new(0);

tokio::task_local! {
    static CURRENT: Arc<TraceState>;
}

/// What is known of one traced request while it runs.
pub struct TraceState {
    session_id: Uuid,
    /// This node, the `source` of every event.
    source: IpAddr,
    started: Instant,
    started_at_millis: i64,
    /// Taken briefly by each event; a request's steps rarely run at once.
    inner: Mutex<Recorded>,
}

#[derive(Default)]
struct Recorded {
    events: Vec<TraceEvent>,
    parameters: BTreeMap<String, String>,
}

impl TraceState {
    pub fn new(session_id: Uuid, source: IpAddr) -> Arc<TraceState> {
        Arc::new(TraceState {
            session_id,
            source,
            started: Instant::now(),
            started_at_millis: model::data::now_micros() / 1000,
            inner: Mutex::new(Recorded::default()),
        })
    }

    pub fn session_id(&self) -> Uuid {
        self.session_id
    }

    fn elapsed_micros(&self) -> i32 {
        i32::try_from(self.started.elapsed().as_micros()).unwrap_or(i32::MAX)
    }

    /// Records one step, stamped now.
    pub fn record(&self, activity: String) {
        let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
        let event = TraceEvent {
            event_id: Uuid::now_v1(&NODE_ID),
            activity,
            source: self.source,
            source_elapsed_micros: self.elapsed_micros(),
            thread,
        };
        self.inner.lock().events.push(event);
    }

    /// Adds to the session's `parameters` (what the request asked for).
    pub fn add_parameters(&self, parameters: impl IntoIterator<Item = (String, String)>) {
        self.inner.lock().parameters.extend(parameters);
    }

    /// The session row and the events recorded so far, for a request named `request` from
    /// `client`, answered now.
    pub fn finish(&self, request: &str, client: Option<IpAddr>) -> (TraceSession, Vec<TraceEvent>) {
        let recorded = std::mem::take(&mut *self.inner.lock());
        let session = TraceSession {
            session_id: self.session_id,
            client,
            coordinator: self.source,
            request: request.to_string(),
            // Cassandra's trace type of every client request.
            command: "QUERY".into(),
            parameters: recorded.parameters,
            started_at: self.started_at_millis,
            duration_micros: self.elapsed_micros(),
        };
        (session, recorded.events)
    }
}

/// Runs `request` with `state` as its trace: every [`trace`] inside it records to `state`.
pub async fn traced<F: Future>(state: Arc<TraceState>, request: F) -> F::Output {
    struct Active;
    impl Drop for Active {
        fn drop(&mut self) {
            TRACED_REQUESTS.fetch_sub(1, Ordering::Relaxed);
        }
    }
    TRACED_REQUESTS.fetch_add(1, Ordering::Relaxed);
    let _active = Active;
    CURRENT.scope(state, request).await
}

/// Records a step of the current request if it is traced; `activity` is only called then.
pub fn trace(activity: impl FnOnce() -> String) {
    if TRACED_REQUESTS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let _ = CURRENT.try_with(|state| state.record(activity()));
}

/// Adds to the current request's trace parameters if it is traced; `parameters` is only called
/// then.
pub fn trace_parameters<I: IntoIterator<Item = (String, String)>>(parameters: impl FnOnce() -> I) {
    if TRACED_REQUESTS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let _ = CURRENT.try_with(|state| state.add_parameters(parameters()));
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[tokio::test]
    async fn only_a_traced_request_records_its_steps() {
        trace(|| panic!("not traced: the activity must not even be built"));
        let state = TraceState::new(Uuid::now_v1(&NODE_ID), IpAddr::V4(Ipv4Addr::LOCALHOST));
        let other = tokio::spawn(async { trace(|| "from another task".into()) });
        traced(state.clone(), async {
            trace(|| "first".into());
            trace_parameters(|| [("key".to_string(), "6b".to_string())]);
            trace(|| "second".into());
        })
        .await;
        other.await.expect("other task");
        trace(|| panic!("the trace ended"));
        let (session, events) = state.finish("get", None);
        assert_eq!(session.request, "get");
        assert_eq!(session.command, "QUERY");
        assert_eq!(session.parameters.get("key").map(String::as_str), Some("6b"));
        let activities: Vec<&str> = events.iter().map(|e| e.activity.as_str()).collect();
        assert_eq!(activities, ["first", "second"]);
        let time = |i: usize| events[i].event_id.get_timestamp().map(|t| t.to_gregorian());
        assert!(time(0).is_some() && time(0) <= time(1));
        assert!(events[0].source_elapsed_micros <= events[1].source_elapsed_micros);
        assert!(session.duration_micros >= events[1].source_elapsed_micros);
    }
}
