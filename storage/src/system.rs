//! The node's own durable state: the schema and each column family's truncation point.
//!
//! Kept in one small JSON file, `<data>/system/schema.json`, replaced atomically on every change
//! (write temp → fsync → rename → fsync directory) so a crash leaves either the old or the new
//! state, never a torn one.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{Result, StorageError};
use crate::schema::Schema;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemState {
    pub schema: Schema,
    /// Commit log position (segment id, offset) before which a column family's records were
    /// truncated away and must not be replayed.
    pub truncated_at: BTreeMap<Uuid, (u64, u64)>,
    /// The token this node took on its first start (kept for the cluster layer).
    pub local_token: Option<String>,
}

const FILE: &str = "schema.json";

pub fn state_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("system")
}

/// Loads the saved state, or `None` on a node's first start.
pub fn load(data_dir: &Path) -> Result<Option<SystemState>> {
    let path = state_dir(data_dir).join(FILE);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StorageError::io(path, e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| StorageError::InvalidSchema(format!("cannot parse {}: {e}", path.display())))
}

pub fn save(data_dir: &Path, state: &SystemState) -> Result<()> {
    let dir = state_dir(data_dir);
    fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| StorageError::InvalidSchema(e.to_string()))?;
    rewrite_atomic(&dir.join(FILE), &bytes)
}

/// Replaces `path` with `bytes` so that a crash leaves the old or the new content.
pub fn rewrite_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = fs::File::create(&tmp).map_err(|e| StorageError::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| StorageError::io(&tmp, e))?;
        f.sync_all().map_err(|e| StorageError::io(&tmp, e))?;
    }
    fs::rename(&tmp, path).map_err(|e| StorageError::io(path, e))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

pub fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StorageError::io(dir, e))
}
