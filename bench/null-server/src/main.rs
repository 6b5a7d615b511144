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

use sibyl_stress::resp::{parse_reply, RespReply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
        while let Some((is_get, used)) = command(input.get(at..).unwrap_or_default())? {
            output.extend_from_slice(if is_get { &self.bulk } else { b"+OK\r\n" });
            at += used;
        }
        Ok(at)
    }
}

/// A complete command at the front of `buf` (an array of bulk strings, framed as sibyl-stress
/// reads RESP): whether it is `GET`, and its length; `None` while it is incomplete.
fn command(buf: &[u8]) -> std::io::Result<Option<(bool, usize)>> {
    let Some((whole, used)) = parse_reply(buf).map_err(|e| invalid(e.to_string()))? else {
        return Ok(None);
    };
    if !matches!(whole, RespReply::Array(n) if n > 0) {
        return Err(invalid(format!("not a command: {whole:?}")));
    }
    // The array is whole, so its first element, after the array's own line, is too.
    let elements = buf.iter().position(|&b| b == b'\n').and_then(|nl| buf.get(nl + 1..used)).unwrap_or_default();
    let is_get = match parse_reply(elements) {
        Ok(Some((RespReply::Bulk(len), end))) => elements
            .get(end.saturating_sub(len + 2)..end.saturating_sub(2))
            .is_some_and(|name| name.eq_ignore_ascii_case(b"GET")),
        _ => false,
    };
    Ok(Some((is_get, used)))
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn commands_are_told_apart_and_measured() {
        let set = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n";
        assert_eq!(command(set).unwrap(), Some((false, set.len())));
        let get = b"*2\r\n$3\r\nget\r\n$1\r\nk\r\n";
        assert_eq!(command(get).unwrap(), Some((true, get.len())));
        let mut two = get.to_vec();
        two.extend_from_slice(set);
        assert_eq!(command(&two).unwrap(), Some((true, get.len())));
        for cut in 0..set.len() {
            assert_eq!(command(&set[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert!(command(b"+OK\r\n").is_err(), "a reply is not a command");
    }
}
