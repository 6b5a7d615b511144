//! The operations that change the ring: `move` (and `loadbalance`), `decommission` and
//! `removenode`.

use std::fmt::Write;

use admin_protocol::{DecommissionResult, MoveResult, RemoveNodeResult};

pub fn remove_node(r: &RemoveNodeResult) -> String {
    let mut s = format!("Removed {}: {} range transfers, {} partitions restored", r.removed, r.transfers, r.partitions);
    if r.lost_ranges > 0 {
        let _ = write!(s, "; {} ranges had no other replica and their data is lost", r.lost_ranges);
    }
    s.push_str(".\n");
    s
}

pub fn moved(m: &MoveResult) -> String {
    format!(
        "Moved from token {} to {}: {} range transfers, {} partitions moved. {}\n",
        m.from_token, m.token, m.transfers, m.partitions, m.effect
    )
}

pub fn decommission(d: &DecommissionResult) -> String {
    let mut s = format!("Decommissioned: {} range transfers, {} partitions sent", d.transfers, d.partitions);
    if d.hints_delivered + d.hints_handed_over > 0 {
        let _ = write!(s, "; {} hints replayed, {} handed over", d.hints_delivered, d.hints_handed_over);
    }
    let _ = writeln!(s, ". {}", d.effect);
    s
}
