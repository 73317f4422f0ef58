//! Files to `.npy`: a memory-mapped file cut at safe cuts (see `cut`) into chunks encoded
//! on a thread pool, a few at a time, written in order as they finish. A file with no safe
//! cut (a custom pattern) is encoded on one thread in chunks
//! ([`Encoder::encode_in_chunks`]), writing the ids of each chunk as it goes.

use super::batch::pool;
use super::cut::next_cut;
use super::npy::npy_header;
use super::pretoken::EncodeTiles;
use super::write_behind::WriteBehind;
use super::{Encoder, IdSink, SpecialPolicy};
use crate::special::Segment;
use crate::{Error, Progress, TokenId};
use std::io::{Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::Path;

/// Input bytes per chunk of `encode_file`: big enough to amortize the thread hand-off, small
/// enough that the chunks in flight and their ids stay far below the 300 MB budget.
const FILE_CHUNK: usize = 1 << 20;
/// Chunks in flight (being encoded, or encoded and waiting for their turn to be written) per
/// thread. A thread takes the next chunk as soon as it is done with one, so none waits for
/// the others' chunks, nor for the writer.
const IN_FLIGHT_PER_THREAD: usize = 2;
/// A chunk longer than this (no safe cut near FILE_CHUNK) is encoded on its own, in chunks,
/// instead of whole on a thread of the pool: its ids could fill memory, and Ctrl-C would
/// wait for it.
const LONG_CHUNK: usize = 4 * FILE_CHUNK;
/// The page size `madvise` rounds to.
const PAGE: usize = 4096;

/// The buffers of one chunk in flight, reused from chunk to chunk: the heap holds those of
/// the chunks in flight, whatever the size of the file.
#[derive(Default)]
struct ChunkBuffers {
    ids: Vec<TokenId>,
    /// The ids as the array's bytes, made by the thread that encoded them.
    bytes: Vec<u8>,
}

/// What a worker sends back: the chunk's number, how its encoding went, its buffers.
type Finished = (usize, std::thread::Result<Result<(), Error>>, ChunkBuffers);

/// Encodes a file into a NumPy `.npy` array of ids (uint16 when the vocab fits, else uint32)
/// written into `out` from its start and synced to disk; errors writing it name `out_name`.
/// `out` is meant to be a temporary file that the caller renames over its destination once
/// this returns, and removes if it fails: the Python side's `bytepair.formats.atomic` names
/// the temporary file, which a process killed mid-write leaves for the next write to remove.
/// `progress(done_bytes, total_bytes)` ([`crate::Progress`]) is called after every chunk
/// written; `false` stops the work with [`Error::Interrupted`]. Returns the number of tokens.
pub fn encode_file(
    enc: &Encoder,
    path: &Path,
    mut out: std::fs::File,
    out_name: &Path,
    policy: &SpecialPolicy,
    threads: usize,
    progress: &mut Progress,
) -> Result<u64, Error> {
    let mut progress = |done: u64, total: u64| {
        if progress(done, total) {
            Ok(())
        } else {
            Err(Error::Interrupted)
        }
    };
    let io = |p: &Path, e: std::io::Error| Error::Io {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let len = file.metadata().map_err(|e| io(path, e))?.len() as usize;
    // SAFETY: the file is only read; a file truncated under us is the caller's race, as
    // with any reader.
    let map = if len == 0 {
        None
    } else {
        Some(unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io(path, e))?)
    };
    let text: &[u8] = map.as_deref().unwrap_or(&[]);
    if let Some(m) = &map {
        let _ = m.advise(memmap2::Advice::Sequential);
    }
    let wide = enc.vocab_size() > 1 << 16;

    out.set_len(0).map_err(|e| io(out_name, e))?;
    out.seek(SeekFrom::Start(0)).map_err(|e| io(out_name, e))?;
    let mut w = WriteBehind::new(out).map_err(|e| io(out_name, e))?;
    w.write_all(&npy_header(wide, 0))
        .map_err(|e| io(out_name, e))?;
    let pool = pool(threads)?;
    let window = pool.current_num_threads() * IN_FLIGHT_PER_THREAD;
    let mut count = 0u64;
    // Writes the bytes of `ids` ids.
    let mut write = |ids: usize, bytes: &[u8]| -> Result<(), Error> {
        count += ids as u64;
        w.write_all(bytes).map_err(|e| io(out_name, e))
    };
    // Drop the pages before `done`, so resident memory stays flat on huge files.
    let release = |done: usize| {
        if let Some(m) = &map {
            let done = done / PAGE * PAGE;
            if done > 0 {
                // SAFETY: a read-only file mapping: dropped pages are re-read from the
                // file if touched again.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, done)
                };
            }
        }
    };
    // Maps a chunk's pages before a worker reads them, on the submitting thread, when that
    // has a core the workers leave free: otherwise a worker takes a page fault every 64 KB
    // (200 MB of English on one thread: 1.03-1.04x; with every core encoding, 0.99x).
    let spare_core =
        std::thread::available_parallelism().is_ok_and(|n| n.get() > pool.current_num_threads());
    let populate = |from: usize, to: usize| {
        if let (Some(m), true) = (&map, spare_core) {
            let from = from / PAGE * PAGE;
            let _ = m.advise_range(memmap2::Advice::PopulateRead, from, to - from);
        }
    };
    let (tx, rx) = std::sync::mpsc::channel::<Finished>();
    let mut free: Vec<ChunkBuffers> = (0..window).map(|_| ChunkBuffers::default()).collect();
    // The chunks in flight, from the next to write: their ends, and their buffers once
    // encoded.
    let mut flight: std::collections::VecDeque<(usize, Option<Finished>)> = Default::default();
    let (mut pos, mut submitted, mut written) = (0usize, 0usize, 0usize);
    let mut failed: Option<Error> = None;
    let mut long: Option<std::ops::Range<usize>> = None;
    pool.in_place_scope(|scope| -> Result<(), Error> {
        loop {
            // Keep every buffer at work, up to a chunk too long to hold (done here, on
            // this thread, once the chunks before it are written).
            while failed.is_none() && long.is_none() && pos < text.len() && !free.is_empty() {
                let end = next_cut(enc, text, pos + FILE_CHUNK);
                if end - pos > LONG_CHUNK {
                    long = Some(pos..end);
                    break;
                }
                populate(pos, end);
                let (chunk, mut buffers) = (&text[pos..end], free.pop().expect("not empty"));
                let (tx, at) = (tx.clone(), submitted);
                scope.spawn(move |_| {
                    let went = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        encode_chunk(enc, chunk, policy, wide, &mut buffers)
                    }));
                    // The receiver waits for every chunk it sent out.
                    let _ = tx.send((at, went, buffers));
                });
                flight.push_back((end, None));
                (pos, submitted) = (end, submitted + 1);
            }
            if written == submitted {
                let Some(range) = long.take().filter(|_| failed.is_none()) else {
                    return Ok(());
                };
                // A long chunk (no safe cut, as with a custom pattern) on this thread, in
                // chunks: its ids are written and Ctrl-C is seen every FILE_CHUNK bytes.
                let start = range.start;
                let chunk = &text[range.clone()];
                let utf8 = check_in_chunks(enc, chunk, policy, FILE_CHUNK, &mut |done| {
                    release(start + done);
                    progress(start as u64, text.len() as u64)
                })?;
                let mut bytes = Vec::new();
                enc.encode_in_chunks(chunk, utf8, policy, FILE_CHUNK, &mut |ids, done| {
                    write(ids.len(), array_bytes(ids, wide, &mut bytes))?;
                    ids.clear();
                    release(start + done);
                    progress((start + done) as u64, text.len() as u64)
                })?;
                pos = range.end;
                release(pos);
                progress(pos as u64, text.len() as u64)?;
                continue;
            }
            let done = rx.recv().expect("each chunk sent out is sent back");
            let at = done.0 - written;
            flight[at].1 = Some(done);
            // Write the chunks that are next in order; after a failure, only take their
            // buffers back, so that every chunk in flight is waited for.
            while let Some((_, Some(_))) = flight.front() {
                let (end, finished) = flight.pop_front().expect("a front");
                let (_, went, buffers) = finished.expect("finished");
                written += 1;
                if failed.is_none() {
                    let went = match went {
                        Ok(went) => went,
                        Err(panic) => std::panic::resume_unwind(panic),
                    };
                    let wrote = went
                        .and_then(|()| write(buffers.ids.len(), buffers.array(wide)))
                        .and_then(|()| {
                            release(end);
                            progress(end as u64, text.len() as u64)
                        });
                    failed = wrote.err();
                }
                free.push(buffers);
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let mut f = w.finish().map_err(|e| io(out_name, e))?;
    f.seek(SeekFrom::Start(0)).map_err(|e| io(out_name, e))?;
    f.write_all(&npy_header(wide, count))
        .map_err(|e| io(out_name, e))?;
    f.sync_all().map_err(|e| io(out_name, e))?;
    Ok(count)
}

/// Encodes one chunk into `buffers`: its ids, and those as the array's bytes (uint32 if
/// `wide`, else uint16, little-endian).
fn encode_chunk(
    enc: &Encoder,
    chunk: &[u8],
    policy: &SpecialPolicy,
    wide: bool,
    buffers: &mut ChunkBuffers,
) -> Result<(), Error> {
    buffers.ids.clear();
    enc.encode_into(chunk, policy, &mut buffers.ids)?;
    array_bytes(&buffers.ids, wide, &mut buffers.bytes);
    Ok(())
}

impl ChunkBuffers {
    /// The array's bytes of the chunk's ids (see [`array_bytes`]).
    fn array(&self, wide: bool) -> &[u8] {
        match as_le_bytes(&self.ids, wide) {
            Some(bytes) => bytes,
            None => &self.bytes,
        }
    }
}

/// `ids` as the array's bytes: the ids' own memory where that is the array's (uint32 on a
/// little-endian machine: a copy of 4 bytes an id less, 1.5% of encoding a file's time),
/// else written into `bytes`.
fn array_bytes<'a>(ids: &'a [TokenId], wide: bool, bytes: &'a mut Vec<u8>) -> &'a [u8] {
    if let Some(own) = as_le_bytes(ids, wide) {
        return own;
    }
    bytes.clear();
    if wide {
        bytes.extend(ids.iter().flat_map(|i| i.to_le_bytes()));
    } else {
        bytes.extend(ids.iter().flat_map(|&i| (i as u16).to_le_bytes()));
    }
    bytes
}

/// The memory of `ids` as uint32 little-endian bytes, if that is what the array holds.
fn as_le_bytes(ids: &[TokenId], wide: bool) -> Option<&[u8]> {
    // SAFETY: any bytes of initialized `u32`s are valid `u8`s; the slice covers exactly the
    // ids' memory and borrows it.
    (wide && cfg!(target_endian = "little"))
        .then(|| unsafe { std::slice::from_raw_parts(ids.as_ptr().cast::<u8>(), 4 * ids.len()) })
}

/// Checks `text` for disallowed special tokens and returns it as a `str` if it is UTF-8,
/// `size` bytes at a time, calling `on_chunk(done)` after each chunk (which may stop the work).
/// In chunks because one pass over a memory-mapped file maps all of it, unless the caller
/// drops the pages behind.
fn check_in_chunks<'a>(
    enc: &Encoder,
    text: &'a [u8],
    policy: &SpecialPolicy,
    size: usize,
    on_chunk: &mut dyn FnMut(usize) -> Result<(), Error>,
) -> Result<Option<&'a str>, Error> {
    let mut utf8 = true;
    let mut pos = 0;
    while pos < text.len() {
        // At least 4 bytes, one whole character, so that every chunk moves on.
        let end = (pos + size.max(4)).min(text.len());
        // A special token that crosses `pos` starts less than its length before it.
        let from = pos.saturating_sub(enc.max_special_len().saturating_sub(1));
        enc.check_disallowed(&text[from..end], policy)?;
        let checked = if utf8 {
            match std::str::from_utf8(&text[pos..end]) {
                Ok(_) => end,
                // A character cut by the chunk's end: check it with the next chunk.
                Err(e) if e.error_len().is_none() && end < text.len() => pos + e.valid_up_to(),
                Err(_) => {
                    utf8 = false;
                    end
                }
            }
        } else {
            end
        };
        pos = checked;
        on_chunk(pos)?;
    }
    // SAFETY: when `utf8` is still true, every byte was checked above, in chunks that end on
    // character boundaries.
    Ok(utf8.then(|| unsafe { std::str::from_utf8_unchecked(text) }))
}

impl Encoder {
    /// Encodes one long text in chunks, for files that cannot be cut: each time the ids cover
    /// `size` more bytes (at the end of a pre-token; with a built-in splitter, at the end of
    /// its chunk of up to 64 pre-tokens), `sink(ids, done)` gets the ids so far (to take them
    /// away) and how many bytes of `text` they cover; it stops the work by returning an
    /// error. Memory stays bounded by `size` whatever the length of `text`.
    /// `text_utf8`, when given, is `text` known to be UTF-8, so a custom regex does not
    /// validate it again. Unlike [`Encoder::encode`], this does not look for disallowed
    /// special tokens: call [`Encoder::check_disallowed`] first (in chunks of its own, if
    /// the text is a memory-mapped file, as `encode_file` does).
    pub fn encode_in_chunks(
        &self,
        text: &[u8],
        text_utf8: Option<&str>,
        policy: &SpecialPolicy,
        size: usize,
        sink: &mut IdSink,
    ) -> Result<(), Error> {
        let base = text.as_ptr() as usize;
        let mut out = Vec::new();
        let mut next = size;
        let mut stop = None;
        let mut cache = self.cache.get_or_default().borrow_mut();
        // Hands the ids over once past the next chunk, `done` bytes of `text` encoded.
        let mut hand_over = |done: usize, out: &mut Vec<TokenId>| {
            if done >= next {
                next = done + size;
                if let Err(e) = sink(out, done) {
                    return ControlFlow::Break(e);
                }
            }
            ControlFlow::Continue(())
        };
        self.for_each_segment(text, policy, |seg| {
            if stop.is_some() {
                return;
            }
            let flow = match seg {
                Segment::Special(i) => {
                    out.push(self.specials[i].1);
                    ControlFlow::Continue(())
                }
                Segment::Plain(plain) => {
                    let from = plain.as_ptr() as usize - base;
                    let tiled = EncodeTiles {
                        encoder: self,
                        text: plain,
                        cache: &mut cache,
                        out: &mut out,
                        after_chunk: |end, out: &mut Vec<TokenId>| hand_over(from + end, out),
                    };
                    match self.splitter.with_piece_end(tiled) {
                        Some(flow) => flow,
                        None => {
                            let pretoken = |p: &[u8]| {
                                self.encode_pretoken(p, &mut cache, &mut out);
                                hand_over(p.as_ptr() as usize - base + p.len(), &mut out)
                            };
                            match text_utf8.and_then(|s| s.get(from..from + plain.len())) {
                                Some(s) => self.splitter.try_for_each_str(s, pretoken),
                                None => self.splitter.try_for_each(plain, pretoken),
                            }
                        }
                    }
                }
            };
            if let ControlFlow::Break(e) = flow {
                stop = Some(e);
            }
        });
        match stop {
            Some(e) => Err(e),
            None => sink(&mut out, text.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::bytes_encoder;

    fn in_chunks(
        enc: &Encoder,
        text: &[u8],
        utf8: bool,
        size: usize,
    ) -> (Vec<TokenId>, Vec<usize>) {
        let policy = SpecialPolicy::all(enc.special_tokens().len());
        let s = if utf8 {
            std::str::from_utf8(text).ok()
        } else {
            None
        };
        let (mut ids, mut marks) = (Vec::new(), Vec::new());
        enc.encode_in_chunks(text, s, &policy, size, &mut |got, done| {
            ids.append(got);
            marks.push(done);
            Ok(())
        })
        .unwrap();
        (ids, marks)
    }

    #[test]
    fn encoding_in_chunks_equals_encoding_whole() {
        let text = "héllo wörld  \n\n中文。\n<|x|>tail <|x|><|x|> end\t!".repeat(7);
        let mut bad = text.clone().into_bytes();
        bad.splice(9..9, *b"\xff\xe4\xb8");
        for pattern in ["gpt2", "o200k", r"\S+|\s+", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"] {
            let enc = bytes_encoder(pattern, &["<|x|>"]);
            let policy = SpecialPolicy::all(1);
            for (text, utf8) in [
                (text.as_bytes(), true),
                (text.as_bytes(), false),
                (&bad, false),
            ] {
                let want = enc.encode(text, &policy).unwrap();
                for size in [1, 5, 64, 1 << 20] {
                    let (ids, marks) = in_chunks(&enc, text, utf8, size);
                    assert_eq!(ids, want, "{pattern} chunk size {size}");
                    // The marks grow, each chunk covers at least `size` bytes, the last is the end.
                    assert!(marks.windows(2).all(|w| w[1] >= w[0]), "{marks:?}");
                    assert_eq!(marks.last(), Some(&text.len()));
                    assert!(
                        marks.len() <= text.len() / size + 2,
                        "{pattern} chunk size {size}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_sink_error_stops_encoding_in_chunks_at_once() {
        for pattern in ["gpt2", r"\S+|\s+"] {
            let enc = bytes_encoder(pattern, &[]);
            let text = "word ".repeat(10_000);
            let mut calls = 0;
            let r = enc.encode_in_chunks(
                text.as_bytes(),
                None,
                &SpecialPolicy::all(0),
                100,
                &mut |_, done| {
                    calls += 1;
                    // The first hand-over comes at the end of the chunk of pre-tokens
                    // ("word", " word": 5 bytes at most) that passes 100 bytes.
                    let chunk = 5 * crate::encode::pretoken::CHUNK;
                    assert!(done < 100 + chunk, "kept going after the error: {done}");
                    Err(Error::Interrupted)
                },
            );
            assert!(matches!(r, Err(Error::Interrupted)), "{pattern}");
            assert_eq!(calls, 1, "{pattern}");
        }
    }

    #[test]
    fn utf8_is_checked_in_chunks_across_cut_characters() {
        let enc = bytes_encoder("gpt2", &[]);
        let policy = SpecialPolicy::none(0);
        let text = "aé中𝄞".repeat(50);
        for size in 1..12 {
            let mut ends = Vec::new();
            let got = check_in_chunks(&enc, text.as_bytes(), &policy, size, &mut |d| {
                ends.push(d);
                Ok(())
            });
            assert_eq!(got.unwrap(), Some(text.as_str()), "chunk size {size}");
            assert_eq!(ends.last(), Some(&text.len()));
            // Every chunk ends on a character boundary.
            assert!(ends.iter().all(|&d| text.is_char_boundary(d)));
        }
        let mut cut = text.as_bytes().to_vec();
        cut.pop(); // the end of a 4-byte character
        let mut bad = text.as_bytes().to_vec();
        bad[100] = 0xff;
        for size in [1, 3, 7, 1 << 20] {
            for t in [&cut, &bad] {
                let got = check_in_chunks(&enc, t, &policy, size, &mut |_| Ok(()));
                assert_eq!(got.unwrap(), None);
            }
        }
    }

    #[test]
    fn disallowed_special_tokens_are_found_across_chunks() {
        let enc = bytes_encoder(r"\S+|\s+", &["<|endoftext|>", "<x>"]);
        let disallow_all = SpecialPolicy {
            allowed: vec![false; 2],
            disallowed: vec![true; 2],
        };
        let text = format!("{}<|endoftext|>{}", "a".repeat(50), "b".repeat(50));
        for size in 1..20 {
            let got = check_in_chunks(&enc, text.as_bytes(), &disallow_all, size, &mut |_| Ok(()));
            assert!(
                matches!(&got, Err(Error::DisallowedSpecial { token }) if token == "<|endoftext|>"),
                "chunk size {size}: {got:?}"
            );
        }
        let allowed = SpecialPolicy::all(2);
        let got = check_in_chunks(&enc, text.as_bytes(), &allowed, 3, &mut |_| Ok(()));
        assert_eq!(got.unwrap(), Some(text.as_str()));
    }
}
