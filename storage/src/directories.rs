//! Where a column family's files live when the node has several data directories (0.6's
//! `DataFileDirectory` entries, Cassandra's `Directories`): `<data>/<keyspace>/<cf>-<cfid>/` in
//! each, the first data directory's being the primary one (secondary indexes, `Built` markers).
//! Every new SSTable goes whole into the directory with the most free space, so one SSTable's
//! files, and any hard link to them (snapshots, backups), stay on one file system.

use std::path::{Path, PathBuf};

/// Bytes free for this process under a directory: [`free_space`] unless a test replaces it.
pub type FreeSpace = fn(&Path) -> std::io::Result<u64>;

/// Bytes available to an unprivileged writer on the file system holding `dir` (statvfs's
/// `f_bavail * f_frsize`, what `df` shows as available).
pub fn free_space(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string that outlives the call, and `stat` points to
    // writable memory of the size statvfs(3) fills; it is read only after a 0 return.
    let rc = unsafe { libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it initialised the whole structure.
    let stat = unsafe { stat.assume_init() };
    #[allow(clippy::unnecessary_cast, reason = "the field types vary by platform")]
    let (blocks, block_size) = (stat.f_bavail as u64, stat.f_frsize as u64);
    Ok(blocks.saturating_mul(block_size))
}

/// A column family's directory in data directory `data_dir`.
pub(crate) fn cf_dir(data_dir: &Path, keyspace: &str, cf: &str, id: uuid::Uuid) -> PathBuf {
    data_dir.join(keyspace).join(format!("{cf}-{}", id.simple()))
}

/// The directory of `dirs` (never empty) a new SSTable goes to: the one with the most free
/// space, the first of equals (the primary on a tie). A directory whose free space cannot be
/// read counts as full; when none can be read, the primary is used and its writer reports why.
pub(crate) fn for_new_sstable(dirs: &[PathBuf], free: FreeSpace) -> &Path {
    let Some(primary) = dirs.first() else { return Path::new(".") };
    if dirs.len() == 1 {
        return primary;
    }
    let mut best: Option<(&Path, u64)> = None;
    for dir in dirs {
        match free(dir) {
            Ok(bytes) if best.is_none_or(|(_, most)| bytes > most) => best = Some((dir, bytes)),
            Ok(_) => {}
            Err(e) => tracing::warn!(dir = %dir.display(), error = %e, "cannot read a data directory's free space"),
        }
    }
    best.map_or(primary.as_path(), |(dir, _)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_name(dir: &Path) -> std::io::Result<u64> {
        match dir.file_name().and_then(|n| n.to_str()) {
            Some("small") => Ok(10),
            Some("big") => Ok(1000),
            Some("also_big") => Ok(1000),
            _ => Err(std::io::Error::other("unreadable")),
        }
    }

    #[test]
    fn the_directory_with_the_most_free_space_wins() {
        let dirs = [PathBuf::from("small"), PathBuf::from("big"), PathBuf::from("also_big")];
        assert_eq!(for_new_sstable(&dirs, by_name), Path::new("big"), "the first of equals");
        let dirs = [PathBuf::from("gone"), PathBuf::from("small")];
        assert_eq!(for_new_sstable(&dirs, by_name), Path::new("small"), "an unreadable one counts as full");
        let dirs = [PathBuf::from("gone"), PathBuf::from("gone2")];
        assert_eq!(for_new_sstable(&dirs, by_name), Path::new("gone"), "none readable: the primary");
    }

    #[test]
    fn free_space_reads_the_file_system() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(free_space(dir.path()).expect("statvfs") > 0);
        assert!(free_space(&dir.path().join("missing")).is_err());
    }
}
