//! Counting files: memory-mapped, never read whole, their pages dropped as they are counted.
//!
//! Pages are dropped (`MADV_DONTNEED`) as soon as their chunk is counted, so the resident
//! set stays near `threads * chunk_size` of file data even for corpora larger than RAM. The
//! kernel maps whole large folios (up to 2 MB) around a fault, beyond the bytes read, so
//! drops reach that far back too: 100 MB of 4 KB documents leave 3 MB of the file resident.

use super::{with_progress, Counter, Span};
use crate::count::PretokenCounts;
use crate::{Error, Progress};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Files are mapped and counted in groups of about this many bytes (or 256 files), so
/// many small files still share the threads while few files are mapped at once.
const GROUP_BYTES: u64 = 256 << 20;
const GROUP_FILES: usize = 256;
/// The largest page-cache folio a fault may map at once (a PMD: 2 MB on x86-64).
const MAX_FOLIO: usize = 2 << 20;

impl Counter {
    /// Counts each file as its own document, memory-mapped and never read whole.
    pub fn count_files<P: AsRef<Path>>(
        &self,
        paths: &[P],
        into: &mut PretokenCounts,
        progress: &mut Progress<'_>,
    ) -> Result<(), Error> {
        self.count_file_ranges(paths, None, into, progress)
    }

    /// [`Counter::count_files`] on byte ranges: `ranges[i]` of file `i` (clamped to its
    /// length) is its own document. A held-out tail or a part of a big file is counted in
    /// place, without a copy.
    pub fn count_file_ranges<P: AsRef<Path>>(
        &self,
        paths: &[P],
        ranges: Option<&[Range<u64>]>,
        into: &mut PretokenCounts,
        progress: &mut Progress<'_>,
    ) -> Result<(), Error> {
        let paths: Vec<&Path> = paths.iter().map(|p| p.as_ref()).collect();
        let mut total = 0u64;
        let mut sizes = Vec::with_capacity(paths.len());
        let mut starts = Vec::with_capacity(paths.len());
        for (i, &p) in paths.iter().enumerate() {
            let len = std::fs::metadata(p).map_err(|e| io_error(p, e))?.len();
            let r = ranges.and_then(|r| r.get(i)).cloned().unwrap_or(0..len);
            let (start, end) = (r.start.min(len), r.end.min(len));
            starts.push(start as usize);
            sizes.push(end.saturating_sub(start));
            total += end.saturating_sub(start);
        }
        let state = self.new_state(total);
        let mut first = 0;
        let mut group_error = None;
        with_progress(total, &state, progress, || {
            while first < paths.len() {
                let mut last = first;
                let mut bytes = 0;
                while last < paths.len()
                    && (last == first
                        || (bytes + sizes[last] <= GROUP_BYTES && last - first < GROUP_FILES))
                {
                    bytes += sizes[last];
                    last += 1;
                }
                let maps_of_group: Result<Vec<_>, Error> =
                    paths[first..last].iter().map(|p| map_file(p)).collect();
                let mmaps = match maps_of_group {
                    Ok(m) => m,
                    Err(e) => {
                        group_error = Some(e);
                        return;
                    }
                };
                let base = &starts[first..last];
                let sources: Vec<&[u8]> = mmaps
                    .iter()
                    .zip(base.iter().zip(&sizes[first..last]))
                    .map(|(m, (&at, &n))| m.as_deref().map_or(&[][..], |m| &m[at..at + n as usize]))
                    .collect();
                let (spans, chunks) = self.plan(&sources, &|src, start, end| {
                    if let Some(m) = &mmaps[src] {
                        drop_pages(m, base[src] + start, base[src] + end);
                    }
                });
                // A fault maps the whole large folio around it, which can reach back into
                // a span already counted and dropped: drop that far back too (a page
                // another thread still reads just faults back in).
                let drop_span = |s: &Span| {
                    if let Some(m) = &mmaps[s.src] {
                        let at = base[s.src];
                        drop_pages(m, (at + s.start).saturating_sub(MAX_FOLIO), at + s.end);
                    }
                };
                self.run_chunks(&sources, &spans, &chunks, &state, &drop_span);
                if state.cancel.load(Ordering::Relaxed) {
                    return;
                }
                first = last;
            }
        })?;
        if let Some(e) = group_error {
            return Err(e);
        }
        self.finish(state, into);
        Ok(())
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Maps a file read-only; `None` for an empty file (a zero-length map is an error on
/// some systems).
fn map_file(path: &Path) -> Result<Option<memmap2::Mmap>, Error> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let len = file.metadata().map_err(|e| io_error(path, e))?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the map is read-only; like every mmap reader we assume the file is not
    // truncated or rewritten while we count it.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_error(path, e))?;
    // Read ahead far: each chunk is read front to back once.
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(Some(map))
}

/// Drops the pages that hold `[start, end)` from this process's resident set. They stay
/// in the page cache and fault back in from the file if touched again.
///
/// The range is rounded *out* to whole pages: documents are often shorter than a page,
/// and rounding in drops nothing then (100 MB of 4 KB documents would keep 60 MB of the
/// file resident). A neighbouring span that still reads an edge page just faults it back.
fn drop_pages(map: &memmap2::Mmap, start: usize, end: usize) {
    const PAGE: usize = 4096;
    let lo = start / PAGE * PAGE;
    let hi = end.min(map.len());
    if hi > lo {
        // SAFETY: the mapping is a read-only file mapping: after MADV_DONTNEED a read
        // faults the same bytes back from the file, so no slice ever sees other data.
        let _ =
            unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::tests::{serial, SAMPLE};

    #[test]
    fn files_count_like_texts() {
        let dir = std::env::temp_dir().join(format!("bytepair-count-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.txt");
        let b = dir.join("b.txt");
        let e = dir.join("empty.txt");
        std::fs::write(&a, SAMPLE.repeat(300)).unwrap();
        std::fs::write(&b, b"second file\n").unwrap();
        std::fs::write(&e, b"").unwrap();
        let c = Counter::new("gpt2", &["<|endoftext|>"], Some(2), Some(100)).unwrap();
        let mut from_files = PretokenCounts::new();
        c.count_files(&[&a, &b, &e], &mut from_files, &mut |_, _| true)
            .unwrap();
        let mut want = serial(&c, &SAMPLE.repeat(300));
        want.merge(serial(&c, b"second file\n"));
        assert_eq!(from_files, want);
        let missing = dir.join("missing.txt");
        let err = c
            .count_files(&[&missing], &mut PretokenCounts::new(), &mut |_, _| true)
            .unwrap_err();
        assert!(err.to_string().contains("missing.txt"), "{err}");
        // Byte ranges count like the same bytes as texts; ranges past the end are clamped.
        let text = SAMPLE.repeat(300);
        for (r, (lo, hi)) in [
            (0..1000, (0, 1000)),
            (777..5000, (777, 5000)),
            (10..u64::MAX, (10, text.len())),
        ] {
            let mut got = PretokenCounts::new();
            c.count_file_ranges(
                &[&a, &b],
                Some(&[r.clone(), 3..7]),
                &mut got,
                &mut |_, _| true,
            )
            .unwrap();
            let mut want = serial(&c, &text[lo..hi]);
            want.merge(serial(&c, b"ond "));
            assert_eq!(got, want, "{r:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
