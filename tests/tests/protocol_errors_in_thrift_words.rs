//! Issue 11, point 7: a call whose arguments lack a required field is answered as Cassandra's Java
//! processor answers it: a TApplicationException of type PROTOCOL_ERROR (7) whose message names
//! the field and the struct in Thrift's words, never a Rust debug string; and the connection
//! stays usable.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use e2e::*;
use thrift::protocol::{TBinaryInputProtocol, TInputProtocol, TMessageType};

/// A strict binary-protocol call whose argument struct holds `fields` (already encoded) then STOP.
fn call(name: &str, seq: i32, fields: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&0x8001_0001u32.to_be_bytes());
    m.extend_from_slice(&(name.len() as i32).to_be_bytes());
    m.extend_from_slice(name.as_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(fields);
    m.push(0);
    let mut framed = (m.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(&m);
    framed
}

/// A binary (type 11) field.
fn binary_field(id: i16, value: &[u8]) -> Vec<u8> {
    let mut f = vec![11];
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&(value.len() as i32).to_be_bytes());
    f.extend_from_slice(value);
    f
}

/// An i32 (type 8) field.
fn i32_field(id: i16, value: i32) -> Vec<u8> {
    let mut f = vec![8];
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&value.to_be_bytes());
    f
}

/// Sends one framed call and reads its framed reply.
fn round_trip(s: &mut TcpStream, message: &[u8]) -> Vec<u8> {
    s.write_all(message).expect("write the call");
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("set_read_timeout");
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("read the reply's frame length");
    let n = u32::from_be_bytes(len) as usize;
    assert!(n < 1 << 20, "implausible reply frame length {n}");
    let mut body = vec![0u8; n];
    s.read_exact(&mut body).expect("read the reply");
    body
}

/// The TApplicationException a reply carries, after checking the reply's header.
fn application_error(reply: Vec<u8>, method: &str, seq: i32) -> thrift::ApplicationError {
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
    let header = p.read_message_begin().expect("reply header");
    assert_eq!(header.message_type, TMessageType::Exception, "{header:?}");
    assert_eq!((header.name.as_str(), header.sequence_number), (method, seq));
    thrift::Error::read_application_error_from_in_protocol(&mut p).expect("a TApplicationException body")
}

#[test]
fn missing_required_arguments_are_protocol_errors_naming_the_field() {
    let node = Node::start(Config::random());
    let mut s = node.raw_socket();

    // describe_keyspace without its keyspace.
    let err = application_error(round_trip(&mut s, &call("describe_keyspace", 1, &[])), "describe_keyspace", 1);
    assert_eq!(err.kind, thrift::ApplicationErrorKind::ProtocolError, "{err:?}");
    assert_eq!(err.kind as i32, 7, "PROTOCOL_ERROR is type 7 on the wire");
    assert!(
        err.message.starts_with("Required field 'keyspace' was not present! Struct: describe_keyspace_args"),
        "{:?}",
        err.message
    );
    assert!(
        !err.message.contains("ProtocolError") && !err.message.contains('{'),
        "no Rust debug text: {:?}",
        err.message
    );

    // get with a key and a consistency level but no column_path.
    let fields = [binary_field(1, b"k"), i32_field(3, 1)].concat();
    let err = application_error(round_trip(&mut s, &call("get", 2, &fields)), "get", 2);
    assert_eq!(err.kind, thrift::ApplicationErrorKind::ProtocolError, "{err:?}");
    assert!(
        err.message.starts_with("Required field 'column_path' was not present! Struct: get_args"),
        "{:?}",
        err.message
    );

    // The same connection goes on: a well-formed call is answered normally.
    let reply = round_trip(&mut s, &call("describe_version", 3, &[]));
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
    let header = p.read_message_begin().expect("reply header");
    assert_eq!((header.message_type, header.sequence_number), (TMessageType::Reply, 3));
    // Reply struct: field 0, a string.
    let _ = p.read_struct_begin().expect("result struct");
    let field = p.read_field_begin().expect("result field");
    assert_eq!(field.id, Some(0));
    assert_eq!(p.read_string().expect("the version"), "20.1.0");

    // And a generated client on another connection still works too.
    let mut c = node.client();
    assert_eq!(ok("describe_version", c.describe_version()), "20.1.0");
}
