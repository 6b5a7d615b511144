//! The leader's side of the CounterMutation verb: another coordinator chose this node to lead
//! a counter write (the coordinator's counter path, `coordinator::counter`). The work (a locked
//! read and write of the local shard, then a write to the other replicas) is the coordinator's
//! own [`Coordinator::lead_counter_write`]; this only decodes, runs it and answers.

use std::sync::{Arc, Weak};

use tracing::debug;

use crate::coordinator::Coordinator;
use crate::messages;
use crate::Endpoint;
use messaging::{MessagingService, Responder, Verb, VerbHandler};

/// Serves CounterMutation. Holds the coordinator weakly: the coordinator owns the messaging
/// service that holds this handler.
pub struct CounterLeader {
    coordinator: Weak<Coordinator>,
}

impl CounterLeader {
    pub fn register(coordinator: Weak<Coordinator>, messaging: &MessagingService) {
        messaging.register(Verb::CounterMutation, Arc::new(CounterLeader { coordinator }));
    }
}

impl VerbHandler for CounterLeader {
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder) {
        if verb != Verb::CounterMutation {
            return reply.fail(format!("{verb} is not a counter verb"));
        }
        let (mutation, cl) = match messages::decode_counter_mutation(&payload) {
            Ok(decoded) => decoded,
            Err(e) => {
                debug!(%from, error = %e, "refusing a malformed counter mutation");
                return reply.fail(e.to_string());
            }
        };
        let Some(coordinator) = self.coordinator.upgrade() else {
            return reply.fail("this node is shutting down".into());
        };
        tokio::spawn(async move {
            match coordinator.lead_counter_write(mutation, cl).await {
                Ok(()) => reply.respond(Vec::new()),
                Err(e) => reply.fail(e.to_string()),
            }
        });
    }
}
