//! The gossip messages and their byte codec (Cassandra's `GossipDigestSyn`, `GossipDigestAck`,
//! `GossipDigestAck2` and the `GOSSIP_SHUTDOWN` verb).
//!
//! Messaging carries the encoded bytes as opaque payloads. Integrity (checksums) and framing are
//! messaging's; this codec only has to refuse anything malformed with a [`DecodeError`], without
//! panicking and without allocating more than the input's size.
//!
//! Layout, all integers big-endian:
//!
//! ```text
//! message      = format:u8 (=1)  kind:u8  body
//!   kind 0 SYN      : cluster_name:string  partitioner:string  n:u32  digest{n}
//!   kind 1 ACK      : n:u32  digest{n}  m:u32  (endpoint remote_state){m}
//!   kind 2 ACK2     : m:u32  (endpoint remote_state){m}
//!   kind 3 SHUTDOWN : generation:i32
//! string       = len:u32  utf-8 bytes{len}
//! endpoint     = family:u8 (4 | 6)  address:u8{4 | 16}  port:u16
//! digest       = endpoint  generation:i32  max_version:i32
//! remote_state = generation:i32  heartbeat_version:i32  k:u32  (state:u8  version:i32  value:string){k}
//! ```
//!
//! An application state number we do not know (from a newer node) is skipped, so adding a state
//! does not break gossip with older nodes.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::state::{ApplicationState, HeartBeatState, VersionedValue};
use crate::Endpoint;

/// The codec's format versions; the first byte of every message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum GossipFormat {
    V1 = 1,
}

impl GossipFormat {
    pub const CURRENT: GossipFormat = GossipFormat::V1;
}

impl TryFrom<u8> for GossipFormat {
    type Error = DecodeError;

    fn try_from(n: u8) -> Result<Self, DecodeError> {
        match n {
            1 => Ok(GossipFormat::V1),
            _ => Err(DecodeError::UnknownFormat(n)),
        }
    }
}

/// What we know of one endpoint, in brief: its generation and highest version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GossipDigest {
    pub endpoint: Endpoint,
    pub generation: i32,
    pub max_version: i32,
}

/// An endpoint's heartbeat and the application states newer than what the receiver asked for,
/// as carried in ACK and ACK2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteState {
    pub heartbeat: HeartBeatState,
    pub states: BTreeMap<ApplicationState, VersionedValue>,
}

impl RemoteState {
    /// The highest version among the heartbeat and the states.
    pub fn max_version(&self) -> i32 {
        self.states.values().map(|v| v.version).fold(self.heartbeat.version, i32::max)
    }
}

/// One gossip message. SYN, ACK and ACK2 travel on messaging's verbs of the same names; SHUTDOWN
/// is Cassandra's `GOSSIP_SHUTDOWN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GossipMessage {
    /// "This is what I know": a digest of every endpoint the sender knows.
    Syn { cluster_name: String, partitioner: String, digests: Vec<GossipDigest> },
    /// "Send me these (digests with the version I have); here is what you lack".
    Ack { digests: Vec<GossipDigest>, states: Vec<(Endpoint, RemoteState)> },
    /// "Here is what you asked for".
    Ack2 { states: Vec<(Endpoint, RemoteState)> },
    /// "I am shutting down": the sender (of this generation) is down from now on.
    Shutdown { generation: i32 },
}

/// Why bytes are not a gossip message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("gossip message format {0} is unknown")]
    UnknownFormat(u8),
    #[error("gossip message kind {0} is unknown")]
    UnknownKind(u8),
    #[error("gossip message ends at offset {offset}: {needed} more bytes needed")]
    Truncated { offset: usize, needed: usize },
    #[error(
        "gossip message declares {count} items at offset {offset}, more than its {remaining} remaining bytes hold"
    )]
    CountTooLarge { offset: usize, count: u32, remaining: usize },
    #[error("address family {family} at offset {offset} is neither 4 nor 6")]
    BadAddressFamily { offset: usize, family: u8 },
    #[error("string at offset {offset} is not UTF-8")]
    InvalidUtf8 { offset: usize },
    #[error("{0} bytes follow the end of the gossip message")]
    TrailingBytes(usize),
}

const KIND_SYN: u8 = 0;
const KIND_ACK: u8 = 1;
const KIND_ACK2: u8 = 2;
const KIND_SHUTDOWN: u8 = 3;

/// The smallest encodings, to refuse counts the remaining bytes cannot hold.
const MIN_ENDPOINT_LEN: usize = 1 + 4 + 2;
const MIN_DIGEST_LEN: usize = MIN_ENDPOINT_LEN + 4 + 4;
const MIN_REMOTE_STATE_LEN: usize = 4 + 4 + 4;
const MIN_APP_STATE_LEN: usize = 1 + 4 + 4;

impl GossipMessage {
    /// The message's bytes in the current format.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![GossipFormat::CURRENT as u8];
        match self {
            GossipMessage::Syn { cluster_name, partitioner, digests } => {
                out.push(KIND_SYN);
                put_string(&mut out, cluster_name);
                put_string(&mut out, partitioner);
                put_digests(&mut out, digests);
            }
            GossipMessage::Ack { digests, states } => {
                out.push(KIND_ACK);
                put_digests(&mut out, digests);
                put_states(&mut out, states);
            }
            GossipMessage::Ack2 { states } => {
                out.push(KIND_ACK2);
                put_states(&mut out, states);
            }
            GossipMessage::Shutdown { generation } => {
                out.push(KIND_SHUTDOWN);
                out.extend_from_slice(&generation.to_be_bytes());
            }
        }
        out
    }

    /// Parses a whole message; any other input is a [`DecodeError`].
    pub fn decode(bytes: &[u8]) -> Result<GossipMessage, DecodeError> {
        let mut r = Reader { buf: bytes, pos: 0 };
        GossipFormat::try_from(r.u8()?)?;
        let message = match r.u8()? {
            KIND_SYN => {
                let cluster_name = r.string()?;
                let partitioner = r.string()?;
                let digests = r.digests()?;
                GossipMessage::Syn { cluster_name, partitioner, digests }
            }
            KIND_ACK => {
                let digests = r.digests()?;
                let states = r.states()?;
                GossipMessage::Ack { digests, states }
            }
            KIND_ACK2 => GossipMessage::Ack2 { states: r.states()? },
            KIND_SHUTDOWN => GossipMessage::Shutdown { generation: r.i32()? },
            kind => return Err(DecodeError::UnknownKind(kind)),
        };
        match r.remaining() {
            0 => Ok(message),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }
}

/// A length or count as the u32 the format carries. Nothing gossip builds comes near 4 GiB; if
/// something did, the saturated length makes the receiver refuse the message as truncated rather
/// than misread it.
fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_endpoint(out: &mut Vec<u8>, ep: &Endpoint) {
    match ep.ip() {
        IpAddr::V4(ip) => {
            out.push(4);
            out.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.push(6);
            out.extend_from_slice(&ip.octets());
        }
    }
    out.extend_from_slice(&ep.port().to_be_bytes());
}

fn put_digests(out: &mut Vec<u8>, digests: &[GossipDigest]) {
    put_len(out, digests.len());
    for d in digests {
        put_endpoint(out, &d.endpoint);
        out.extend_from_slice(&d.generation.to_be_bytes());
        out.extend_from_slice(&d.max_version.to_be_bytes());
    }
}

fn put_states(out: &mut Vec<u8>, states: &[(Endpoint, RemoteState)]) {
    put_len(out, states.len());
    for (ep, state) in states {
        put_endpoint(out, ep);
        out.extend_from_slice(&state.heartbeat.generation.to_be_bytes());
        out.extend_from_slice(&state.heartbeat.version.to_be_bytes());
        put_len(out, state.states.len());
        for (key, value) in &state.states {
            out.push(*key as u8);
            out.extend_from_slice(&value.version.to_be_bytes());
            put_string(out, &value.value);
        }
    }
}

/// A cursor over the input; every read is bounds-checked.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|end| *end <= self.buf.len());
        match end.and_then(|end| self.buf.get(self.pos..end)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(DecodeError::Truncated { offset: self.pos, needed: n - self.remaining() }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(u8::from_be_bytes(self.array()?))
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// A count of items each at least `min_len` bytes long, refused if the rest of the input
    /// cannot hold them: a declared count never drives an allocation.
    fn count(&mut self, min_len: usize) -> Result<usize, DecodeError> {
        let offset = self.pos;
        let count = self.u32()?;
        let remaining = self.remaining();
        match usize::try_from(count) {
            Ok(n) if n.saturating_mul(min_len) <= remaining => Ok(n),
            _ => Err(DecodeError::CountTooLarge { offset, count, remaining }),
        }
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.count(1)?;
        let offset = self.pos;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes).map(str::to_owned).map_err(|_| DecodeError::InvalidUtf8 { offset })
    }

    fn endpoint(&mut self) -> Result<Endpoint, DecodeError> {
        let offset = self.pos;
        let ip = match self.u8()? {
            4 => IpAddr::V4(Ipv4Addr::from(self.array::<4>()?)),
            6 => IpAddr::V6(Ipv6Addr::from(self.array::<16>()?)),
            family => return Err(DecodeError::BadAddressFamily { offset, family }),
        };
        Ok(Endpoint::new(ip, self.u16()?))
    }

    fn digests(&mut self) -> Result<Vec<GossipDigest>, DecodeError> {
        let n = self.count(MIN_DIGEST_LEN)?;
        let mut digests = Vec::with_capacity(n);
        for _ in 0..n {
            let endpoint = self.endpoint()?;
            let generation = self.i32()?;
            let max_version = self.i32()?;
            digests.push(GossipDigest { endpoint, generation, max_version });
        }
        Ok(digests)
    }

    fn states(&mut self) -> Result<Vec<(Endpoint, RemoteState)>, DecodeError> {
        let n = self.count(MIN_ENDPOINT_LEN + MIN_REMOTE_STATE_LEN)?;
        let mut states = Vec::with_capacity(n);
        for _ in 0..n {
            let ep = self.endpoint()?;
            let heartbeat = HeartBeatState { generation: self.i32()?, version: self.i32()? };
            let k = self.count(MIN_APP_STATE_LEN)?;
            let mut app_states = BTreeMap::new();
            for _ in 0..k {
                let key = self.u8()?;
                let version = self.i32()?;
                let value = self.string()?;
                // A state from a newer node is skipped, not refused (see the module comment).
                if let Ok(key) = ApplicationState::try_from(key) {
                    app_states.insert(key, VersionedValue { value, version });
                }
            }
            states.push((ep, RemoteState { heartbeat, states: app_states }));
        }
        Ok(states)
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v4(last: u8, port: u16) -> Endpoint {
        Endpoint::from(([127, 0, 0, last], port))
    }

    fn sample_state() -> RemoteState {
        let mut states = BTreeMap::new();
        states.insert(ApplicationState::Status, VersionedValue { value: "NORMAL".into(), version: 3 });
        states.insert(ApplicationState::RpcAddress, VersionedValue { value: "127.0.0.2:9160".into(), version: 4 });
        states.insert(ApplicationState::Dc, VersionedValue { value: "dc1 ünïcode".into(), version: 5 });
        states.insert(ApplicationState::Tokens, VersionedValue { value: String::new(), version: 6 });
        RemoteState { heartbeat: HeartBeatState { generation: 1_700_000_000, version: 17 }, states }
    }

    fn samples() -> Vec<GossipMessage> {
        let v6: Endpoint = "[fe80::1:2]:7000".parse().unwrap();
        let digests = vec![
            GossipDigest { endpoint: v4(1, 7000), generation: 5, max_version: 10 },
            GossipDigest { endpoint: v6, generation: -1, max_version: i32::MAX },
        ];
        vec![
            GossipMessage::Syn {
                cluster_name: "Test Cluster".into(),
                partitioner: "RandomPartitioner".into(),
                digests: digests.clone(),
            },
            GossipMessage::Syn { cluster_name: String::new(), partitioner: String::new(), digests: vec![] },
            GossipMessage::Ack {
                digests: digests.clone(),
                states: vec![(v4(2, 7001), sample_state()), (v6, sample_state())],
            },
            GossipMessage::Ack { digests: vec![], states: vec![] },
            GossipMessage::Ack2 { states: vec![(v4(3, 7002), sample_state())] },
            GossipMessage::Ack2 { states: vec![] },
            GossipMessage::Shutdown { generation: 1_700_000_001 },
        ]
    }

    #[test]
    fn every_message_kind_round_trips() {
        for m in samples() {
            let bytes = m.encode();
            assert_eq!(bytes.first(), Some(&1), "format byte");
            assert_eq!(GossipMessage::decode(&bytes), Ok(m));
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        for m in samples() {
            let bytes = m.encode();
            for len in 0..bytes.len() {
                let r = GossipMessage::decode(&bytes[..len]);
                assert!(
                    matches!(r, Err(DecodeError::Truncated { .. }) | Err(DecodeError::CountTooLarge { .. })),
                    "{len}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        assert_eq!(GossipMessage::decode(&[2, 0]), Err(DecodeError::UnknownFormat(2)));
        assert_eq!(GossipMessage::decode(&[1, 9]), Err(DecodeError::UnknownKind(9)));
        let mut bytes = GossipMessage::Shutdown { generation: 1 }.encode();
        bytes.push(0);
        assert_eq!(GossipMessage::decode(&bytes), Err(DecodeError::TrailingBytes(1)));
        // ACK2 with one state whose endpoint has family 5.
        let bytes = [1, KIND_ACK2, 0, 0, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(GossipMessage::decode(&bytes), Err(DecodeError::BadAddressFamily { offset: 6, family: 5 }));
    }

    #[test]
    fn a_huge_declared_count_is_refused_before_allocating() {
        // A SYN with empty names declaring four billion digests in a few bytes.
        let bytes = [1, KIND_SYN, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 4, 127];
        assert_eq!(
            GossipMessage::decode(&bytes),
            Err(DecodeError::CountTooLarge { offset: 10, count: u32::MAX, remaining: 2 })
        );
        // A string declaring more bytes than remain.
        let bytes = [1, KIND_SYN, 0, 0, 1, 0, b'a'];
        assert!(matches!(GossipMessage::decode(&bytes), Err(DecodeError::CountTooLarge { .. })));
    }

    #[test]
    fn invalid_utf8_is_refused() {
        let bytes = [1, KIND_SYN, 0, 0, 0, 2, 0xc3, 0x28];
        assert_eq!(GossipMessage::decode(&bytes), Err(DecodeError::InvalidUtf8 { offset: 6 }));
    }

    #[test]
    fn unknown_application_states_are_skipped() {
        let message = GossipMessage::Ack2 { states: vec![(v4(1, 1), sample_state())] };
        let mut bytes = message.encode();
        // The first application state is STATUS (key 0) right after the fixed-size prefix:
        // format, kind, count, endpoint (7), heartbeat (8), state count (4).
        let key_at = 2 + 4 + 7 + 8 + 4;
        assert_eq!(bytes.get(key_at), Some(&(ApplicationState::Status as u8)));
        bytes[key_at] = 200;
        let Ok(GossipMessage::Ack2 { states }) = GossipMessage::decode(&bytes) else {
            panic!("an unknown state must not make the message invalid");
        };
        let (_, state) = &states[0];
        assert!(!state.states.contains_key(&ApplicationState::Status));
        assert_eq!(state.states.len(), sample_state().states.len() - 1);
    }

    fn arb_endpoint() -> impl Strategy<Value = Endpoint> {
        prop_oneof![
            (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| Endpoint::from((ip, port))),
            (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| Endpoint::from((Ipv6Addr::from(ip), port))),
        ]
    }

    fn arb_digest() -> impl Strategy<Value = GossipDigest> {
        (arb_endpoint(), any::<i32>(), any::<i32>()).prop_map(|(endpoint, generation, max_version)| GossipDigest {
            endpoint,
            generation,
            max_version,
        })
    }

    fn arb_state() -> impl Strategy<Value = (Endpoint, RemoteState)> {
        let app = (proptest::sample::select(ApplicationState::ALL.to_vec()), any::<i32>(), ".{0,20}");
        (arb_endpoint(), any::<i32>(), any::<i32>(), proptest::collection::vec(app, 0..5)).prop_map(
            |(ep, generation, version, apps)| {
                let states =
                    apps.into_iter().map(|(k, version, value)| (k, VersionedValue { value, version })).collect();
                (ep, RemoteState { heartbeat: HeartBeatState { generation, version }, states })
            },
        )
    }

    fn arb_message() -> impl Strategy<Value = GossipMessage> {
        prop_oneof![
            (".{0,16}", ".{0,16}", proptest::collection::vec(arb_digest(), 0..6)).prop_map(
                |(cluster_name, partitioner, digests)| GossipMessage::Syn { cluster_name, partitioner, digests }
            ),
            (proptest::collection::vec(arb_digest(), 0..6), proptest::collection::vec(arb_state(), 0..4))
                .prop_map(|(digests, states)| GossipMessage::Ack { digests, states }),
            proptest::collection::vec(arb_state(), 0..4).prop_map(|states| GossipMessage::Ack2 { states }),
            any::<i32>().prop_map(|generation| GossipMessage::Shutdown { generation }),
        ]
    }

    proptest! {
        #[test]
        fn arbitrary_messages_round_trip(m in arb_message()) {
            prop_assert_eq!(GossipMessage::decode(&m.encode()), Ok(m));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            // Either an error, or a message that survives another round trip (not necessarily to
            // the same bytes: unknown application states are dropped).
            if let Ok(m) = GossipMessage::decode(&bytes) {
                let again = GossipMessage::decode(&m.encode());
                prop_assert_eq!(again, Ok(m));
            }
        }

        #[test]
        fn corrupted_messages_never_panic(m in arb_message(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
            let mut bytes = m.encode();
            for (at, value) in flips {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            let _ = GossipMessage::decode(&bytes);
        }
    }
}
