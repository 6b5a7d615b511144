//! Inbound connections: the accept loop and one task per connection, which reads the handshake,
//! answers it, then decodes frames and hands them to the dispatcher. Bad bytes close only their
//! own connection, and are logged with the peer and the reason.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tracing::{debug, error, warn};

use crate::codec::{
    decode_frame, decode_handshake, encode_handshake_reply, HandshakeReply, HandshakeStatus, ProtocolVersion,
};
use crate::error::ConnectionError;
use crate::outbound::HANDSHAKE_TIMEOUT;
use crate::reader::ItemReader;
use crate::service::Shared;

/// Pause after a failed accept (out of file descriptors, say) so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Accepts connections until shutdown; the listener closes when it returns.
pub(crate) async fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let mut shutdown = shared.shutdown_signal();
    loop {
        if *shutdown.borrow_and_update() {
            break;
        }
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = shutdown.changed() => break,
        };
        match accepted {
            Ok((stream, tcp_peer)) => {
                shared.inbound.accepted.fetch_add(1, Ordering::Relaxed);
                let task_shared = Arc::clone(&shared);
                shared.spawn_task(connection_loop(task_shared, stream, tcp_peer));
            }
            Err(e) => {
                warn!(local = %shared.local, error = %e, "accept failed");
                tokio::select! {
                    _ = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => {}
                    _ = shutdown.changed() => break,
                }
            }
        }
    }
    debug!(local = %shared.local, "internode listener closed");
}

/// Serves one accepted connection until it ends or the service shuts down.
async fn connection_loop(shared: Arc<Shared>, stream: TcpStream, tcp_peer: SocketAddr) {
    shared.inbound.open.fetch_add(1, Ordering::Relaxed);
    let mut shutdown = shared.shutdown_signal();
    let mut from = None;
    let ended = tokio::select! {
        r = serve_connection(&shared, stream, tcp_peer, &mut from) => r,
        _ = shutdown.wait_for(|stopping| *stopping) => Ok(()),
    };
    shared.inbound.open.fetch_sub(1, Ordering::Relaxed);
    // The sender's listen endpoint once its handshake is read; the TCP source until then.
    let from = from.map(|f| f.to_string()).unwrap_or_else(|| "unknown".into());
    match ended {
        Ok(()) => debug!(peer = %tcp_peer, from, "internode connection closed"),
        Err(ConnectionError::Io(e)) => debug!(peer = %tcp_peer, from, error = %e, "internode connection lost"),
        Err(e @ ConnectionError::Closed(_)) => {
            debug!(peer = %tcp_peer, from, error = %e, "internode connection closed")
        }
        Err(e @ (ConnectionError::ClusterNameMismatch { .. } | ConnectionError::UnsupportedVersion { .. })) => {
            // Log before counting: whoever sees the count can then find the line.
            error!(peer = %tcp_peer, from, error = %e, "refused internode connection");
            shared.inbound.refused.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            warn!(peer = %tcp_peer, from, error = %e, "closing internode connection: malformed input");
            shared.inbound.malformed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn serve_connection(
    shared: &Arc<Shared>,
    stream: TcpStream,
    tcp_peer: SocketAddr,
    from: &mut Option<SocketAddr>,
) -> Result<(), ConnectionError> {
    stream.set_nodelay(true)?;
    // IMPORTANT: the write half must live as long as the connection: dropping it sends FIN,
    // which the sender's writer takes for the end of the connection.
    let (read, mut write) = stream.into_split();
    let mut reader = ItemReader::new(read);
    let hello = tokio::time::timeout(HANDSHAKE_TIMEOUT, reader.next("handshake", decode_handshake))
        .await
        .map_err(|_| ConnectionError::TimedOut { what: "handshake", waited: HANDSHAKE_TIMEOUT })??
        .ok_or(ConnectionError::Closed("handshake"))?;
    *from = Some(hello.from);

    let ours = &shared.config.cluster_name;
    let (status, refusal) = match ProtocolVersion::try_from(hello.version) {
        Err(theirs) => (
            HandshakeStatus::UnsupportedVersion,
            Some(ConnectionError::UnsupportedVersion { theirs, ours: ProtocolVersion::CURRENT as u8 }),
        ),
        Ok(_) if hello.cluster_name != *ours => (
            HandshakeStatus::ClusterNameMismatch,
            Some(ConnectionError::ClusterNameMismatch { ours: ours.clone(), theirs: hello.cluster_name.clone() }),
        ),
        Ok(_) => (HandshakeStatus::Accepted, None),
    };
    let version = ProtocolVersion::try_from(hello.version).unwrap_or(ProtocolVersion::CURRENT);
    let mut reply = Vec::new();
    encode_handshake_reply(&mut reply, &HandshakeReply { version: version as u8, status, cluster_name: ours.clone() })?;
    write.write_all(&reply).await?;
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    debug!(peer = %tcp_peer, from = %hello.from, connection = hello.kind.name(), "internode connection accepted");

    let max = shared.config.max_message_bytes;
    while let Some(frame) = reader.next("frame", |buf| decode_frame(buf, version, max)).await? {
        shared.dispatch(hello.from, frame);
    }
    drop(write);
    Ok(())
}
