use proptest::prelude::*;

use super::*;

const MAX: usize = 1 << 20;

fn frame_bytes(verb: u8, kind: MessageKind, id: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    assert_eq!(encode_frame(&mut out, ProtocolVersion::V1, verb, kind, id, payload), Ok(()));
    out
}

fn complete<T>(d: Decoded<T>) -> (T, usize) {
    match d {
        Decoded::Complete { value, used } => (value, used),
        Decoded::Incomplete { need } => panic!("incomplete, needs {need} bytes"),
    }
}

#[test]
fn frame_layout_is_as_drawn() {
    let bytes = frame_bytes(8, MessageKind::Request, 0x0102_0304_0506_0708, b"abc");
    assert_eq!(bytes.len(), FRAME_OVERHEAD_BYTES + 3);
    assert_eq!(&bytes[..4], b"SBYM");
    assert_eq!(bytes[4], 1, "version");
    assert_eq!(bytes[5], 8, "verb");
    assert_eq!(bytes[6], 0x01, "flags");
    assert_eq!(&bytes[7..15], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(&bytes[15..19], &[0, 0, 0, 3]);
    assert_eq!(&bytes[19..22], b"abc");
    assert_eq!(&bytes[22..], &crc32fast::hash(&bytes[..22]).to_be_bytes());
}

#[test]
fn frame_errors_name_the_fault() {
    let good = frame_bytes(1, MessageKind::OneWay, 7, b"payload");

    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    assert!(matches!(decode_frame(&bad_magic, ProtocolVersion::V1, MAX), Err(FrameError::BadMagic { .. })));

    let mut bad_version = good.clone();
    bad_version[4] = 9;
    assert_eq!(
        decode_frame(&bad_version, ProtocolVersion::V1, MAX),
        Err(FrameError::WrongVersion { got: 9, expected: 1 })
    );

    let mut bad_flags = good.clone();
    bad_flags[6] = 0x05; // REQUEST | FAILURE
    assert_eq!(decode_frame(&bad_flags, ProtocolVersion::V1, MAX), Err(FrameError::BadFlags(0x05)));

    let mut bad_payload = good.clone();
    bad_payload[20] ^= 0x40;
    assert!(matches!(decode_frame(&bad_payload, ProtocolVersion::V1, MAX), Err(FrameError::ChecksumMismatch { .. })));

    // The length is refused from the header alone, before the payload is there.
    let huge = frame_bytes(1, MessageKind::OneWay, 7, &[0u8; 100]);
    assert_eq!(
        decode_frame(&huge[..FRAME_HEADER_BYTES], ProtocolVersion::V1, 99),
        Err(FrameError::TooLarge { len: 100, max: 99 })
    );
}

#[test]
fn a_prefix_asks_for_the_rest() {
    let bytes = frame_bytes(2, MessageKind::Response, 1, &[7u8; 50]);
    for cut in 0..bytes.len() {
        match decode_frame(&bytes[..cut], ProtocolVersion::V1, MAX) {
            Ok(Decoded::Incomplete { need }) => assert!(need > cut && need <= bytes.len(), "cut {cut} need {need}"),
            other => panic!("cut {cut}: {other:?}"),
        }
    }
    // Past the header, the whole frame's size is known.
    assert_eq!(
        decode_frame(&bytes[..FRAME_HEADER_BYTES + 1], ProtocolVersion::V1, MAX),
        Ok(Decoded::Incomplete { need: FRAME_HEADER_BYTES + 50 })
    );
}

#[test]
fn handshake_layout_and_refusals() {
    let hs = Handshake {
        version: 1,
        kind: ConnectionKind::Gossip,
        cluster_name: "Test".into(),
        from: "127.0.0.2:7000".parse().unwrap_or_else(|e| panic!("{e}")),
    };
    let mut bytes = Vec::new();
    assert_eq!(encode_handshake(&mut bytes, &hs), Ok(()));
    assert_eq!(&bytes[..4], b"SBYH");
    assert_eq!(&bytes[4..8], &[1, 1, 0, 4]);
    assert_eq!(&bytes[8..12], b"Test");
    assert_eq!(&bytes[12..19], &[4, 127, 0, 0, 2, 0x1b, 0x58]);
    assert_eq!(complete(decode_handshake(&bytes).unwrap_or_else(|e| panic!("{e}"))), (hs, bytes.len()));

    let mut bad = bytes.clone();
    bad[9] = b'X';
    assert!(matches!(decode_handshake(&bad), Err(HandshakeError::ChecksumMismatch { .. })));
    let mut family = bytes.clone();
    family[12] = 5;
    assert_eq!(decode_handshake(&family), Err(HandshakeError::BadAddressFamily(5)));
    let mut long = bytes.clone();
    long[6..8].copy_from_slice(&2000u16.to_be_bytes());
    assert_eq!(decode_handshake(&long), Err(HandshakeError::NameTooLong { len: 2000, max: MAX_CLUSTER_NAME_BYTES }));
    // A message frame where a handshake belongs is refused by its magic.
    assert!(matches!(
        decode_handshake(&frame_bytes(1, MessageKind::OneWay, 1, b"")),
        Err(HandshakeError::BadMagic { got: FRAME_MAGIC })
    ));
}

fn endpoint() -> impl Strategy<Value = Endpoint> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| Endpoint::new(IpAddr::from(ip), port)),
        (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| Endpoint::new(IpAddr::from(ip), port)),
    ]
}

fn kind() -> impl Strategy<Value = MessageKind> {
    prop_oneof![
        Just(MessageKind::OneWay),
        Just(MessageKind::Request),
        Just(MessageKind::Response),
        Just(MessageKind::Failure)
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_decoders(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_frame(&bytes, ProtocolVersion::V1, 64);
        let _ = decode_handshake(&bytes);
        let _ = decode_handshake_reply(&bytes);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_magic_never_panic(
        magic in prop_oneof![Just(FRAME_MAGIC), Just(HANDSHAKE_MAGIC), Just(HANDSHAKE_REPLY_MAGIC)],
        rest in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut bytes = magic.to_be_bytes().to_vec();
        bytes.extend_from_slice(&rest);
        if let Ok(Decoded::Complete { used, .. }) = decode_frame(&bytes, ProtocolVersion::V1, 64) {
            prop_assert!(used <= bytes.len());
        }
        if let Ok(Decoded::Complete { used, .. }) = decode_handshake(&bytes) {
            prop_assert!(used <= bytes.len());
        }
        if let Ok(Decoded::Complete { used, .. }) = decode_handshake_reply(&bytes) {
            prop_assert!(used <= bytes.len());
        }
    }

    #[test]
    fn frames_round_trip(
        verb in any::<u8>(),
        kind in kind(),
        id in any::<u64>(),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        trailing in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let mut bytes = frame_bytes(verb, kind, id, &payload);
        let len = bytes.len();
        bytes.extend_from_slice(&trailing);
        let decoded = decode_frame(&bytes, ProtocolVersion::V1, 300);
        prop_assert_eq!(decoded, Ok(Decoded::Complete { value: Frame { verb, kind, id, payload }, used: len }));
    }

    #[test]
    fn a_flipped_bit_never_decodes(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        bit in any::<proptest::sample::Index>(),
    ) {
        let mut bytes = frame_bytes(3, MessageKind::Request, 42, &payload);
        let i = bit.index(bytes.len() * 8);
        bytes[i / 8] ^= 1 << (i % 8);
        let decoded = decode_frame(&bytes, ProtocolVersion::V1, 1 << 16);
        prop_assert!(!matches!(decoded, Ok(Decoded::Complete { .. })), "bit {} gave {:?}", i, decoded);
    }

    #[test]
    fn handshakes_round_trip(
        version in any::<u8>(),
        gossip in any::<bool>(),
        cluster_name in "\\PC{0,40}",
        from in endpoint(),
    ) {
        let kind = if gossip { ConnectionKind::Gossip } else { ConnectionKind::Small };
        let hs = Handshake { version, kind, cluster_name, from };
        let mut bytes = Vec::new();
        prop_assert_eq!(encode_handshake(&mut bytes, &hs), Ok(()));
        let len = bytes.len();
        prop_assert_eq!(decode_handshake(&bytes), Ok(Decoded::Complete { value: hs, used: len }));
    }

    #[test]
    fn handshake_replies_round_trip(
        version in any::<u8>(),
        status in prop_oneof![
            Just(HandshakeStatus::Accepted),
            Just(HandshakeStatus::ClusterNameMismatch),
            Just(HandshakeStatus::UnsupportedVersion)
        ],
        cluster_name in "\\PC{0,40}",
    ) {
        let reply = HandshakeReply { version, status, cluster_name };
        let mut bytes = Vec::new();
        prop_assert_eq!(encode_handshake_reply(&mut bytes, &reply), Ok(()));
        let len = bytes.len();
        prop_assert_eq!(decode_handshake_reply(&bytes), Ok(Decoded::Complete { value: reply, used: len }));
    }
}
