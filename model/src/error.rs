//! What was wrong with bytes of the data model's encodings read back from a file or a peer.

/// What was wrong with bytes read back from disk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorruptData {
    #[error("truncated: wanted {wanted} bytes at offset {at}")]
    Truncated { at: usize, wanted: usize },
    #[error("bad {what}: {value}")]
    BadValue { what: &'static str, value: u64 },
    #[error("checksum mismatch at offset {offset}: expected {expected:#010x}, got {got:#010x}")]
    ChecksumMismatch { offset: u64, expected: u32, got: u32 },
    #[error("bad magic bytes")]
    BadMagic,
    #[error("unknown format version {0}")]
    InvalidFormatVersion(u8),
}
