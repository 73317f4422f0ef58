//! A file written front to back whose data a thread of its own syncs to disk behind the
//! writer, so that the final `sync_all` of an atomic write waits for the last few megabytes
//! only: it took 0.18 s for the 117 MB of ids of 200 MB of text, a tenth of `encode_file` on
//! two threads.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// Bytes written between two requests to sync.
const SYNC_EVERY: usize = 16 << 20;

/// Dropped without [`WriteBehind::finish`] (on an error), the syncing thread ends after the
/// sync it is in.
pub(super) struct WriteBehind {
    out: BufWriter<File>,
    unsynced: usize,
    /// Wakes the syncing thread; dropped, it ends.
    wake: Sender<()>,
    syncer: JoinHandle<io::Result<()>>,
}

impl WriteBehind {
    pub(super) fn new(file: File) -> io::Result<Self> {
        let synced = file.try_clone()?;
        let (wake, woken) = channel::<()>();
        let syncer = std::thread::Builder::new()
            .name("bytepair-sync".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    // Requests that came while it synced are covered by the next sync.
                    while woken.try_recv().is_ok() {}
                    synced.sync_data()?;
                }
                Ok(())
            })?;
        Ok(WriteBehind {
            out: BufWriter::with_capacity(1 << 20, file),
            unsynced: 0,
            wake,
            syncer,
        })
    }

    pub(super) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.unsynced += bytes.len();
        if self.unsynced >= SYNC_EVERY {
            self.out.flush()?;
            self.unsynced = 0;
            // A syncer that stopped on an error reports it in `finish`.
            let _ = self.wake.send(());
        }
        Ok(())
    }

    /// Flushes, waits for the syncing thread and returns the file (the caller syncs what
    /// is left), or the first error of either.
    pub(super) fn finish(self) -> io::Result<File> {
        let WriteBehind {
            out, wake, syncer, ..
        } = self;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        drop(wake);
        match syncer.join() {
            Ok(synced) => synced?,
            Err(panic) => std::panic::resume_unwind(panic),
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn writes_every_byte_in_order_across_syncs() {
        let dir = std::env::temp_dir().join(format!("bytepair-wb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        let mut w = WriteBehind::new(File::create(&path).unwrap()).unwrap();
        let mut want = Vec::new();
        // 40 MB in uneven pieces: two syncs on the way, and a tail after the last.
        for i in 0..40u32 {
            let piece: Vec<u8> = (0..(1 << 20) + i as usize * 7)
                .map(|j| (j as u32 ^ i) as u8)
                .collect();
            w.write_all(&piece).unwrap();
            want.extend_from_slice(&piece);
        }
        let f = w.finish().unwrap();
        f.sync_all().unwrap();
        drop(f);
        let mut got = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut got).unwrap();
        assert!(
            got == want,
            "{} bytes read, {} written",
            got.len(),
            want.len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
