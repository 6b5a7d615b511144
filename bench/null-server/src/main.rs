//! A server that keeps nothing, the floor in `bench/redis-vs-sibyl.sh`. Over RESP, `GET`
//! answers a value of `--value-size` bytes and every other command `+OK`; over Cassandra's
//! framed Thrift ([`thrift`]), `insert` and `batch_mutate` succeed, `get_slice` answers one
//! column of `--value-size` bytes, and `describe_keyspace` and `set_keyspace` answer what
//! sibyl-stress needs to start. One thread runs a tokio current-thread runtime, as each of
//! Sibyl's event loops does, with one read and one write per request and no work between them.
//! Whatever rate it reaches against Redis, driven by the same load generator, is the most any
//! server built this way can reach on the machine; what a real server adds (decoding its
//! protocol, a commit log, a memtable) comes on top.
//!
//! Usage: null-server --port PORT [--protocol resp|thrift] [--value-size BYTES]; listens on
//! 127.0.0.1 until killed.

mod thrift;

use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest command accepted; a client sending more is disconnected.
const MAX_COMMAND: usize = 1 << 20;

fn main() -> ExitCode {
    const USAGE: &str = "usage: null-server --port PORT [--protocol resp|thrift] [--value-size BYTES]";
    let mut port = None;
    let mut value_size = 100usize;
    let mut thrift = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match (arg.as_str(), value.parse::<usize>()) {
            ("--port", Ok(p)) if p > 0 => port = u16::try_from(p).ok(),
            ("--value-size", Ok(n)) => value_size = n,
            ("--protocol", _) if value == "resp" || value == "thrift" => thrift = value == "thrift",
            _ => {
                eprintln!("{USAGE} (bad or missing value for {arg})");
                return ExitCode::from(2);
            }
        }
    }
    let Some(port) = port else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_io().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("null-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = if thrift {
        match thrift::Replies::new(value_size) {
            Ok(replies) => runtime.block_on(serve(port, replies)),
            Err(e) => Err(std::io::Error::other(format!("cannot encode the replies: {e}"))),
        }
    } else {
        runtime.block_on(serve(port, Resp::new(value_size)))
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("null-server: 127.0.0.1:{port}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How a request is answered: every complete request at the front of `input` gets its reply
/// appended to `output`; the bytes those requests took are returned. An error ends the
/// connection.
trait Protocol: Send + Sync + 'static {
    fn answer(&self, input: &[u8], output: &mut Vec<u8>) -> std::io::Result<usize>;
}

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

/// Accepts connections on 127.0.0.1:`port` and answers each with `protocol` until killed.
async fn serve<P: Protocol>(port: u16, protocol: P) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let protocol = Arc::new(protocol);
    loop {
        let (stream, peer) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let protocol = protocol.clone();
        tokio::spawn(async move {
            if let Err(e) = connection(stream, &*protocol).await {
                eprintln!("null-server: {peer}: {e}");
            }
        });
    }
}

/// One read, the answers, one write: the least a server can do per request.
async fn connection<P: Protocol>(mut stream: TcpStream, protocol: &P) -> std::io::Result<()> {
    let mut input = Vec::with_capacity(64 * 1024);
    let mut output = Vec::with_capacity(4096);
    loop {
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        let used = protocol.answer(&input, &mut output)?;
        input.drain(..used);
        if !output.is_empty() {
            stream.write_all(&output).await?;
            output.clear();
        }
    }
}

/// RESP: `GET` answered with `bulk`, anything else with `+OK`.
struct Resp {
    bulk: Vec<u8>,
}

impl Resp {
    fn new(value_size: usize) -> Resp {
        let mut bulk = format!("${value_size}\r\n").into_bytes();
        bulk.resize(bulk.len() + value_size, b'x');
        bulk.extend_from_slice(b"\r\n");
        Resp { bulk }
    }
}

impl Protocol for Resp {
    fn answer(&self, input: &[u8], output: &mut Vec<u8>) -> std::io::Result<usize> {
        let mut at = 0;
        while let Some((is_get, used)) = command(input.get(at..).unwrap_or_default()) {
            output.extend_from_slice(if is_get { &self.bulk } else { b"+OK\r\n" });
            at += used;
        }
        if at == 0 && input.len() > MAX_COMMAND {
            return Err(invalid(format!("no complete command in {} bytes", input.len())));
        }
        Ok(at)
    }
}

/// The line at the front of `buf` (without its CRLF) and the bytes it takes with the CRLF.
fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    Some((buf.get(..end)?, end + 2))
}

fn number(text: &[u8]) -> Option<usize> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A complete command at the front of `buf` (an array of bulk strings): whether it is `GET`, and
/// its length. `None` while it is incomplete, or when it is not such an array (the connection
/// then stalls until the client gives up, which is all a load generator's floor needs).
fn command(buf: &[u8]) -> Option<(bool, usize)> {
    let (head, mut at) = line(buf.strip_prefix(b"*")?)?;
    at += 1;
    let count = number(head)?;
    let mut is_get = false;
    for i in 0..count {
        let rest = buf.get(at..)?;
        let (len, used) = line(rest.strip_prefix(b"$")?)?;
        let len = number(len)?;
        let start = at + 1 + used;
        let arg = buf.get(start..start + len)?;
        if buf.get(start + len..start + len + 2)? != b"\r\n" {
            return None;
        }
        if i == 0 {
            is_get = arg.eq_ignore_ascii_case(b"GET");
        }
        at = start + len + 2;
    }
    Some((is_get, at))
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn commands_are_told_apart_and_measured() {
        let set = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n";
        assert_eq!(command(set), Some((false, set.len())));
        let get = b"*2\r\n$3\r\nget\r\n$1\r\nk\r\n";
        assert_eq!(command(get), Some((true, get.len())));
        let mut two = get.to_vec();
        two.extend_from_slice(set);
        assert_eq!(command(&two), Some((true, get.len())));
        for cut in 0..set.len() {
            assert_eq!(command(&set[..cut]), None, "cut at {cut}");
        }
    }
}
