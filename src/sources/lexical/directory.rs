//! The directory a reader opens the index through: Tantivy's own memory-mapped one, except that a
//! lock it cannot create in a read-only data dir is not an error.
//!
//! Why: opening a commit's segments takes `.tantivy-meta.lock` (so the writer's clean-up does not
//! delete a file between reading `meta.json` and opening it), and taking it opens the lock file
//! for writing, which a read-only directory refuses; the SQLite stores beside it are read there
//! without trouble. Where no writer can run (the directory refuses writes), nothing can delete a
//! segment either, so going without the lock is safe.

use std::path::Path;
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

#[derive(Debug, Clone)]
pub(super) struct ReadTolerant(MmapDirectory);

impl ReadTolerant {
    pub(super) fn new(inner: MmapDirectory) -> Self {
        ReadTolerant(inner)
    }
}

fn refused(e: &LockError) -> bool {
    match e {
        LockError::IoError(io) => matches!(
            io.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ),
        LockError::LockBusy => false,
    }
}

impl Directory for ReadTolerant {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }
    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.0.delete(path)
    }
    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }
    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.0.open_write(path)
    }
    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }
    fn atomic_write(&self, path: &Path, data: &[u8]) -> std::io::Result<()> {
        self.0.atomic_write(path, data)
    }
    fn sync_directory(&self) -> std::io::Result<()> {
        self.0.sync_directory()
    }
    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        match self.0.acquire_lock(lock) {
            Err(e) if !lock.is_blocking || !refused(&e) => Err(e),
            Err(_) => Ok(DirectoryLock::from(Box::new(()))),
            ok => ok,
        }
    }
    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(callback)
    }
}
