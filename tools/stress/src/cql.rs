//! Cassandra's native protocol (version 4), so that the same load generator drives CQL as
//! cassandra-stress does: every connection prepares an INSERT and a SELECT of the stress table
//! once, then sends EXECUTEs, one request in flight per connection, each sent with one write
//! from a reused buffer — the discipline of the Thrift connection in [`crate::wire`].
//!
//! Frames are a 9-byte header (version, flags, stream, opcode, body length) and a body. Replies
//! are parsed only as far as the run needs: the result kind, a prepared statement's id, the
//! row count of a SELECT (read with skip-metadata, as the drivers do for prepared statements),
//! an error's code and text.

use std::time::Duration;

use thrift_idl::ConsistencyLevel;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::client::SchemaAction;
use crate::wire::{clear_read_readiness, connect_nodelay};

/// The table each operation writes and reads (cassandra-stress's name).
pub const TABLE: &str = "standard1";

const VERSION: u8 = 0x04;
const RESPONSE_VERSION: u8 = 0x84;
const HEADER_BYTES: usize = 9;
/// Largest reply body accepted (Cassandra's default frame limit).
const MAX_BODY: usize = 256 << 20;

const OP_ERROR: u8 = 0x00;
const OP_STARTUP: u8 = 0x01;
const OP_READY: u8 = 0x02;
const OP_QUERY: u8 = 0x07;
const OP_RESULT: u8 = 0x08;
const OP_PREPARE: u8 = 0x09;
const OP_EXECUTE: u8 = 0x0A;

const FLAG_VALUES: u8 = 0x01;
const FLAG_SKIP_METADATA: u8 = 0x02;
/// Rows metadata flag: no column specifications follow (skip-metadata was honoured).
const ROWS_NO_METADATA: i32 = 0x0004;
const ROWS_GLOBAL_TABLE_SPEC: i32 = 0x0001;
const ROWS_HAS_MORE_PAGES: i32 = 0x0002;

/// A reply, without its rows' contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlReply {
    /// RESULT Void (a write).
    Void,
    /// RESULT Rows with this many rows.
    Rows(u32),
    SetKeyspace,
    /// RESULT Prepared: the statement id.
    Prepared(Vec<u8>),
    SchemaChange,
    /// An ERROR frame: the server refused the request (the connection stays usable).
    Error {
        code: i32,
        message: String,
    },
}

/// Why bytes received are not the reply expected, or the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    #[error("reply frame of version 0x{0:02x}, expected 0x84")]
    Version(u8),
    #[error("reply on stream {got}, expected {expected}")]
    Stream { got: i16, expected: i16 },
    #[error("unexpected opcode 0x{0:02x}")]
    Opcode(u8),
    #[error("reply body of {0} bytes is over the limit")]
    TooLarge(usize),
    #[error("reply body ends early ({0})")]
    Truncated(&'static str),
    #[error("unknown result kind {0}")]
    ResultKind(i32),
    #[error("the server refused: {0}")]
    Refused(String),
    #[error("server closed the connection")]
    Closed,
    #[error("no reply within {0:?}")]
    TimedOut(Duration),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The native protocol's code of a consistency level.
pub fn consistency_code(cl: ConsistencyLevel) -> u16 {
    match cl {
        ConsistencyLevel::ANY => 0x0000,
        ConsistencyLevel::ONE => 0x0001,
        ConsistencyLevel::TWO => 0x0002,
        ConsistencyLevel::THREE => 0x0003,
        ConsistencyLevel::QUORUM => 0x0004,
        ConsistencyLevel::ALL => 0x0005,
        ConsistencyLevel::LOCAL_QUORUM => 0x0006,
        ConsistencyLevel::EACH_QUORUM => 0x0007,
        ConsistencyLevel::LOCAL_ONE => 0x000A,
        _ => 0x0001,
    }
}

/// The stress table's columns: `key` and `"C0"` … `"C{n-1}"`, all blobs.
fn value_columns(columns: u32) -> Vec<String> {
    (0..columns).map(|i| format!("\"C{i}\"")).collect()
}

/// `INSERT INTO ks.standard1 (key, "C0", ...) VALUES (?, ?, ...)`.
pub fn insert_statement(keyspace: &str, columns: u32) -> String {
    let names = value_columns(columns);
    let marks = vec!["?"; names.len() + 1].join(", ");
    format!("INSERT INTO \"{keyspace}\".{TABLE} (key, {}) VALUES ({marks})", names.join(", "))
}

/// `SELECT "C0", ... FROM ks.standard1 WHERE key = ?`.
pub fn select_statement(keyspace: &str, columns: u32) -> String {
    format!("SELECT {} FROM \"{keyspace}\".{TABLE} WHERE key = ?", value_columns(columns).join(", "))
}

fn put_short(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_int(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a frame header whose length is filled in by [`finish_frame`].
fn start_frame(out: &mut Vec<u8>, stream: i16, opcode: u8) {
    out.clear();
    out.extend_from_slice(&[VERSION, 0]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    put_int(out, 0);
}

fn finish_frame(out: &mut [u8]) {
    let len = (out.len() - HEADER_BYTES) as i32;
    out[5..9].copy_from_slice(&len.to_be_bytes());
}

/// A STARTUP frame asking for CQL 3.
pub fn encode_startup(out: &mut Vec<u8>) {
    start_frame(out, 0, OP_STARTUP);
    put_short(out, 1);
    for s in ["CQL_VERSION", "3.0.0"] {
        put_short(out, s.len() as u16);
        out.extend_from_slice(s.as_bytes());
    }
    finish_frame(out);
}

/// A QUERY of `text` without values.
pub fn encode_query(out: &mut Vec<u8>, text: &str, consistency: u16) {
    start_frame(out, 0, OP_QUERY);
    put_int(out, text.len() as i32);
    out.extend_from_slice(text.as_bytes());
    put_short(out, consistency);
    out.push(0);
    finish_frame(out);
}

/// A PREPARE of `text`.
pub fn encode_prepare(out: &mut Vec<u8>, text: &str) {
    start_frame(out, 0, OP_PREPARE);
    put_int(out, text.len() as i32);
    out.extend_from_slice(text.as_bytes());
    finish_frame(out);
}

/// An EXECUTE of the prepared statement `id` with `values` bound in order.
pub fn encode_execute(out: &mut Vec<u8>, id: &[u8], values: &[&[u8]], consistency: u16, skip_metadata: bool) {
    start_frame(out, 0, OP_EXECUTE);
    put_short(out, id.len() as u16);
    out.extend_from_slice(id);
    put_short(out, consistency);
    out.push(FLAG_VALUES | if skip_metadata { FLAG_SKIP_METADATA } else { 0 });
    put_short(out, values.len() as u16);
    for v in values {
        put_int(out, v.len() as i32);
        out.extend_from_slice(v);
    }
    finish_frame(out);
}

/// Reads big-endian fields from a reply body.
struct Body<'a> {
    bytes: &'a [u8],
}

impl<'a> Body<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], CqlError> {
        if self.bytes.len() < n {
            return Err(CqlError::Truncated(what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn short(&mut self, what: &'static str) -> Result<u16, CqlError> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn int(&mut self, what: &'static str) -> Result<i32, CqlError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self, what: &'static str) -> Result<&'a [u8], CqlError> {
        let n = self.short(what)? as usize;
        self.take(n, what)
    }

    /// `[bytes]`: an int length (negative for null) and the bytes.
    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8], CqlError> {
        let n = self.int(what)?;
        self.take(usize::try_from(n).unwrap_or(0), what)
    }

    /// Skips one `[option]` of a column type, nested types included.
    fn skip_type(&mut self, depth: u32) -> Result<(), CqlError> {
        let depth = depth.checked_sub(1).ok_or(CqlError::Truncated("type nesting"))?;
        match self.short("type id")? {
            0x0000 => {
                self.string("custom type")?;
            }
            0x0020 | 0x0022 => self.skip_type(depth)?,
            0x0021 => {
                self.skip_type(depth)?;
                self.skip_type(depth)?;
            }
            0x0030 => {
                self.string("udt keyspace")?;
                self.string("udt name")?;
                for _ in 0..self.short("udt fields")? {
                    self.string("udt field")?;
                    self.skip_type(depth)?;
                }
            }
            0x0031 => {
                for _ in 0..self.short("tuple arity")? {
                    self.skip_type(depth)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The row count of a Rows result, past its metadata.
    fn rows_count(&mut self) -> Result<u32, CqlError> {
        let flags = self.int("rows flags")?;
        let columns = self.int("column count")?;
        if flags & ROWS_HAS_MORE_PAGES != 0 {
            self.bytes("paging state")?;
        }
        if flags & ROWS_NO_METADATA == 0 {
            let global = flags & ROWS_GLOBAL_TABLE_SPEC != 0;
            if global {
                self.string("keyspace")?;
                self.string("table")?;
            }
            for _ in 0..columns.max(0) {
                if !global {
                    self.string("keyspace")?;
                    self.string("table")?;
                }
                self.string("column name")?;
                self.skip_type(16)?;
            }
        }
        let rows = self.int("row count")?;
        Ok(u32::try_from(rows).unwrap_or(0))
    }
}

/// Parses a whole reply frame (`header` and `body`).
pub fn parse_reply(header: &[u8; HEADER_BYTES], body: &[u8]) -> Result<CqlReply, CqlError> {
    if header[0] != RESPONSE_VERSION {
        return Err(CqlError::Version(header[0]));
    }
    let stream = i16::from_be_bytes([header[2], header[3]]);
    if stream != 0 {
        return Err(CqlError::Stream { got: stream, expected: 0 });
    }
    let mut b = Body { bytes: body };
    match header[4] {
        OP_ERROR => {
            let code = b.int("error code")?;
            let message = String::from_utf8_lossy(b.string("error message")?).into_owned();
            Ok(CqlReply::Error { code, message })
        }
        OP_READY => Ok(CqlReply::Void),
        OP_RESULT => match b.int("result kind")? {
            1 => Ok(CqlReply::Void),
            2 => Ok(CqlReply::Rows(b.rows_count()?)),
            3 => Ok(CqlReply::SetKeyspace),
            4 => Ok(CqlReply::Prepared(b.string("prepared id")?.to_vec())),
            5 => Ok(CqlReply::SchemaChange),
            other => Err(CqlError::ResultKind(other)),
        },
        other => Err(CqlError::Opcode(other)),
    }
}

/// One native-protocol connection with one request in flight, and the stress statements
/// prepared on it.
pub struct CqlConn {
    stream: TcpStream,
    timeout: Duration,
    out: Vec<u8>,
    inbuf: Vec<u8>,
    insert_id: Vec<u8>,
    select_id: Vec<u8>,
}

impl CqlConn {
    /// Connects, sends STARTUP and prepares the stress INSERT and SELECT for `columns`.
    pub async fn connect(
        host: &str,
        port: u16,
        timeout: Duration,
        keyspace: &str,
        columns: u32,
    ) -> Result<CqlConn, CqlError> {
        let mut c = CqlConn::started(host, port, timeout).await?;
        c.insert_id = c.prepare(&insert_statement(keyspace, columns)).await?;
        c.select_id = c.prepare(&select_statement(keyspace, columns)).await?;
        Ok(c)
    }

    /// Connects and sends STARTUP; nothing prepared yet.
    async fn started(host: &str, port: u16, timeout: Duration) -> Result<CqlConn, CqlError> {
        let stream = connect_nodelay(host, port, timeout).await?;
        let mut c = CqlConn {
            stream,
            timeout,
            out: Vec::with_capacity(4096),
            inbuf: Vec::with_capacity(64 * 1024),
            insert_id: Vec::new(),
            select_id: Vec::new(),
        };
        encode_startup(&mut c.out);
        match c.exchange().await? {
            CqlReply::Void => Ok(c),
            other => Err(refused("STARTUP", other)),
        }
    }

    /// Runs one unprepared statement.
    pub async fn query(&mut self, text: &str, consistency: ConsistencyLevel) -> Result<CqlReply, CqlError> {
        encode_query(&mut self.out, text, consistency_code(consistency));
        self.exchange().await
    }

    async fn prepare(&mut self, text: &str) -> Result<Vec<u8>, CqlError> {
        encode_prepare(&mut self.out, text);
        match self.exchange().await? {
            CqlReply::Prepared(id) => Ok(id),
            other => Err(refused(&format!("PREPARE {text}"), other)),
        }
    }

    /// Executes the prepared INSERT with the key and one value per column.
    pub async fn insert(
        &mut self,
        key: &[u8],
        values: &[Vec<u8>],
        consistency: ConsistencyLevel,
    ) -> Result<CqlReply, CqlError> {
        let mut bound: Vec<&[u8]> = Vec::with_capacity(values.len() + 1);
        bound.push(key);
        bound.extend(values.iter().map(Vec::as_slice));
        encode_execute(&mut self.out, &self.insert_id, &bound, consistency_code(consistency), false);
        self.exchange().await
    }

    /// Executes the prepared SELECT of one key, skipping the result metadata.
    pub async fn read(&mut self, key: &[u8], consistency: ConsistencyLevel) -> Result<CqlReply, CqlError> {
        encode_execute(&mut self.out, &self.select_id, &[key], consistency_code(consistency), true);
        self.exchange().await
    }

    /// Sends the frame in `out` and reads its reply, within the timeout.
    async fn exchange(&mut self) -> Result<CqlReply, CqlError> {
        let timeout = self.timeout;
        let r = match tokio::time::timeout(timeout, self.send_and_receive()).await {
            Ok(r) => r,
            Err(_) => Err(CqlError::TimedOut(timeout)),
        };
        clear_read_readiness(&self.stream);
        r
    }

    async fn send_and_receive(&mut self) -> Result<CqlReply, CqlError> {
        self.stream.write_all(&self.out).await?;
        self.inbuf.clear();
        while self.inbuf.len() < HEADER_BYTES {
            self.fill().await?;
        }
        let mut header = [0u8; HEADER_BYTES];
        header.copy_from_slice(&self.inbuf[..HEADER_BYTES]);
        let len = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) as usize;
        if len > MAX_BODY {
            return Err(CqlError::TooLarge(len));
        }
        while self.inbuf.len() < HEADER_BYTES + len {
            self.fill().await?;
        }
        parse_reply(&header, &self.inbuf[HEADER_BYTES..HEADER_BYTES + len])
    }

    async fn fill(&mut self) -> Result<(), CqlError> {
        if self.inbuf.capacity() == self.inbuf.len() {
            self.inbuf.reserve(self.inbuf.len().max(4096));
        }
        if self.stream.read_buf(&mut self.inbuf).await? == 0 {
            return Err(CqlError::Closed);
        }
        Ok(())
    }
}

fn refused(what: &str, reply: CqlReply) -> CqlError {
    match reply {
        CqlReply::Error { code, message } => CqlError::Refused(format!("{what}: error 0x{code:04x}: {message}")),
        other => CqlError::Refused(format!("{what}: unexpected reply {other:?}")),
    }
}

/// Creates the stress keyspace and table when missing (`IF NOT EXISTS`), and says which.
pub async fn ensure_schema(
    host: &str,
    port: u16,
    timeout: Duration,
    keyspace: &str,
    replication_factor: u32,
    columns: u32,
) -> Result<SchemaAction, CqlError> {
    let mut c = CqlConn::started(host, port, timeout).await?;
    let create_keyspace = format!(
        "CREATE KEYSPACE IF NOT EXISTS \"{keyspace}\" WITH replication = \
         {{'class': 'SimpleStrategy', 'replication_factor': {replication_factor}}}"
    );
    let columns: Vec<String> = value_columns(columns).into_iter().map(|c| format!("{c} blob")).collect();
    let create_table =
        format!("CREATE TABLE IF NOT EXISTS \"{keyspace}\".{TABLE} (key blob PRIMARY KEY, {})", columns.join(", "));
    let keyspace_made = match c.query(&create_keyspace, ConsistencyLevel::ONE).await? {
        CqlReply::SchemaChange => true,
        CqlReply::Void => false,
        other => return Err(refused(&create_keyspace, other)),
    };
    let table_made = match c.query(&create_table, ConsistencyLevel::ONE).await? {
        CqlReply::SchemaChange => true,
        CqlReply::Void => false,
        other => return Err(refused(&create_table, other)),
    };
    Ok(match (keyspace_made, table_made) {
        (true, _) => SchemaAction::CreatedKeyspace,
        (false, true) => SchemaAction::AddedColumnFamilies(vec![TABLE.to_string()]),
        (false, false) => SchemaAction::Existed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(opcode: u8, len: usize) -> [u8; HEADER_BYTES] {
        let mut h = [RESPONSE_VERSION, 0, 0, 0, opcode, 0, 0, 0, 0];
        h[5..9].copy_from_slice(&(len as u32).to_be_bytes());
        h
    }

    #[test]
    fn execute_frames_carry_id_consistency_flags_and_values() {
        let mut out = Vec::new();
        encode_execute(&mut out, &[0xAB, 0xCD], &[b"k1", b""], 0x0004, true);
        let body: Vec<u8> =
            [&[0, 2, 0xAB, 0xCD, 0, 4, 0x03, 0, 2][..], &[0, 0, 0, 2, b'k', b'1'], &[0, 0, 0, 0]].concat();
        assert_eq!(out[..5], [0x04, 0, 0, 0, OP_EXECUTE]);
        assert_eq!(u32::from_be_bytes([out[5], out[6], out[7], out[8]]) as usize, body.len());
        assert_eq!(&out[HEADER_BYTES..], &body[..]);
    }

    #[test]
    fn statements_name_every_column() {
        assert_eq!(insert_statement("ks", 2), "INSERT INTO \"ks\".standard1 (key, \"C0\", \"C1\") VALUES (?, ?, ?)");
        assert_eq!(select_statement("ks", 2), "SELECT \"C0\", \"C1\" FROM \"ks\".standard1 WHERE key = ?");
    }

    #[test]
    fn rows_are_counted_with_or_without_metadata() {
        // Skip-metadata honoured: flags NO_METADATA, 2 columns, 1 row.
        let body = [&2i32.to_be_bytes()[..], &4i32.to_be_bytes(), &2i32.to_be_bytes(), &1i32.to_be_bytes()].concat();
        assert_eq!(parse_reply(&header(OP_RESULT, body.len()), &body).unwrap(), CqlReply::Rows(1));
        // Full metadata with a global table spec and a map<text, blob> column, no rows.
        let mut body = [&2i32.to_be_bytes()[..], &1i32.to_be_bytes(), &1i32.to_be_bytes()].concat();
        for s in ["ks", "t", "m"] {
            body.extend_from_slice(&(s.len() as u16).to_be_bytes());
            body.extend_from_slice(s.as_bytes());
        }
        body.extend_from_slice(&[0x00, 0x21, 0x00, 0x0D, 0x00, 0x03]);
        body.extend_from_slice(&0i32.to_be_bytes());
        assert_eq!(parse_reply(&header(OP_RESULT, body.len()), &body).unwrap(), CqlReply::Rows(0));
        // Cut short: an error, not a panic.
        for cut in 0..body.len() {
            assert!(parse_reply(&header(OP_RESULT, cut), &body[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn errors_and_prepared_ids_parse() {
        let body = [&0x2200i32.to_be_bytes()[..], &[0, 3], b"bad"].concat();
        assert_eq!(
            parse_reply(&header(OP_ERROR, body.len()), &body).unwrap(),
            CqlReply::Error { code: 0x2200, message: "bad".into() }
        );
        let body = [&4i32.to_be_bytes()[..], &[0, 2, 9, 8]].concat();
        assert_eq!(parse_reply(&header(OP_RESULT, body.len()), &body).unwrap(), CqlReply::Prepared(vec![9, 8]));
        let mut wrong = header(OP_RESULT, 0);
        wrong[0] = 0x83;
        assert!(matches!(parse_reply(&wrong, &[]), Err(CqlError::Version(0x83))));
    }
}
