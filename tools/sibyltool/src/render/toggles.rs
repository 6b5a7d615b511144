//! The services an operator stops and starts while the node runs: what `statusthrift`,
//! `statusgossip`, `statushandoff` and `truncatehints` print (the stops and starts print
//! nothing, as nodetool's do).

use admin_protocol::{HandoffStatus, ServiceStatus, TruncateHintsResult};

/// `nodetool statusthrift` and `statusgossip`: Cassandra's words.
pub fn service_status(s: &ServiceStatus) -> String {
    if s.running { "running\n" } else { "not running\n" }.into()
}

/// `nodetool statushandoff`: Cassandra's words, and a line when the replay is paused (which
/// nodetool does not show).
pub fn handoff_status(h: &HandoffStatus) -> String {
    let mut s = if h.enabled { "Hinted handoff is running\n" } else { "Hinted handoff is not running\n" }.to_string();
    if h.paused {
        s.push_str("Hint delivery is paused (resumehandoff resumes it)\n");
    }
    s
}

/// `truncatehints`: silent when there was nothing, as nodetool is; otherwise what went.
pub fn truncate_hints(t: &TruncateHintsResult) -> String {
    t.deleted.iter().map(|(target, n)| format!("Deleted {n} hint(s) for {target}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handoff_status_in_cassandras_words() {
        let h = |enabled, paused| handoff_status(&HandoffStatus { enabled, paused, changed: false });
        assert_eq!(h(true, false), "Hinted handoff is running\n");
        assert_eq!(h(false, false), "Hinted handoff is not running\n");
        assert_eq!(h(true, true), "Hinted handoff is running\nHint delivery is paused (resumehandoff resumes it)\n");
        assert_eq!(truncate_hints(&TruncateHintsResult { deleted: vec![] }), "");
        let t = TruncateHintsResult { deleted: vec![("127.0.0.2:7000".into(), 12)] };
        assert_eq!(truncate_hints(&t), "Deleted 12 hint(s) for 127.0.0.2:7000\n");
    }

    #[test]
    fn service_status_in_cassandras_words() {
        assert_eq!(service_status(&ServiceStatus { running: true, changed: false }), "running\n");
        assert_eq!(service_status(&ServiceStatus { running: false, changed: true }), "not running\n");
    }
}
