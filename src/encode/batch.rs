//! Encoding at scale: batches on a thread pool, streams in bounded memory, files to `.npy`.
//!
//! Streams and files are cut into pieces encoded separately, so a cut must never change the
//! ids. A cut at byte `c` is *safe* when the pre-tokenization of the whole text provably splits
//! at `c` and no special token could span it:
//! - the built-in patterns (gpt2, cl100k, o200k) split between a visible ASCII character and
//!   a space: no alternative of any of them matches (non-space, space) inside one piece, and
//!   the lookaheads (`(?!\S)`, `$`) are only on whitespace pieces, which cannot end just
//!   before `c` here;
//! - they also split before a visible ASCII character other than `/` that follows `"\n"`
//!   preceded by a visible ASCII character. The `"\n"` is a piece of its own, or the end of
//!   a piece (cl100k and o200k glue punctuation to the newlines after it) whether the text
//!   ends there or not. Why the character *before* the newline matters: gpt2's `\s++$` makes
//!   `" \n"` one piece at the end of a text, but `" "`, `"\n"` in the middle of one. Why not
//!   before `/`: o200k's punctuation piece also takes the slashes after its newlines
//!   (`[\r\n/]*`), so `".\n/"` is one piece.
//! - no occurrence of any special token touches bytes `c - 2 .. c + 1`.
//!
//! A custom pattern has no provable cut: a stream is cut only where its text is already cut
//! (the whole input is one piece otherwise), and `encode_file` encodes a file it cannot cut
//! on one thread, in steps, writing the ids of each step as it goes.

use super::{Encoder, SpecialPolicy};
use crate::{Error, TokenId};
use rayon::prelude::*;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A rayon pool of `threads` threads (0 = all cores), built once per size and kept.
/// Not rayon's global pool: `encode_iterable` must run under a tight address-space limit,
/// where spawning a pool's stacks fails, so only the calls that want threads create one.
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, Error> {
    type Pools = Vec<(usize, Arc<rayon::ThreadPool>)>;
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap();
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("bytepair-encode-{i}"))
            .build()
            .map_err(|e| Error::Io {
                path: "<thread pool>".into(),
                reason: format!("cannot start {threads} threads: {e}"),
            })?,
    );
    pools.push((threads, p.clone()));
    Ok(p)
}

/// Encodes each text; the same result as encoding them one by one.
pub fn encode_batch<T: AsRef<[u8]> + Sync>(
    enc: &Encoder,
    texts: &[T],
    policy: &SpecialPolicy,
    threads: usize,
) -> Result<Vec<Vec<TokenId>>, Error> {
    let mut out = vec![Vec::new(); texts.len()];
    encode_batch_each(enc, texts, policy, threads, &mut |(start, block)| {
        for (slot, ids) in out[start..].iter_mut().zip(block) {
            *slot = ids;
        }
        Ok(())
    })?;
    Ok(out)
}

/// Input bytes per block of [`encode_batch_each`]: small enough that the caller gets its
/// first results early, big enough that a block's hand-off costs nothing next to it.
const BATCH_BLOCK: usize = 64 << 10;
/// The smaller blocks at the end of a batch, and how many big blocks' worth per thread.
const TAIL_BLOCK: usize = 8 << 10;
const TAIL_BLOCKS: usize = 2;

/// The ids of one block of texts and the index of its first text.
pub type Block = (usize, Vec<Vec<TokenId>>);

/// [`encode_batch`] that hands each block of results to `sink` on the calling thread, as
/// blocks finish (in any order), while other threads encode the blocks after it. Whatever the
/// caller does with the results (the Python binding builds lists: a third of the work) then
/// overlaps the encoding instead of following it. The calling thread is one of the
/// `threads`: it encodes blocks too, and hands over its own and the others' results between
/// them, so the threads never outnumber the cores. Batch over a loop of `encode` on 2 idle
/// cores (paired runs, 3 MB of 20-line documents): o200k English 2.2-2.6x, gpt2 code
/// 2.3-2.6x, o200k Chinese 1.9-2.0x, against 2.0x, 1.8x and 1.9-2.2x when every list was
/// built after the encoding. Tried first, on a loaded machine only: a pool of `threads`
/// beside a caller that only builds lists (3 threads on 2 cores), and a caller that takes
/// results in order; neither beat building the lists afterwards. `sink` stops the work by
/// returning an error.
pub fn encode_batch_each<T: AsRef<[u8]> + Sync>(
    enc: &Encoder,
    texts: &[T],
    policy: &SpecialPolicy,
    threads: usize,
    sink: &mut dyn FnMut(Block) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    // Blocks of consecutive texts of about BATCH_BLOCK bytes, then TAIL_BLOCK for the last
    // TAIL_BLOCKS blocks' worth per thread: whoever finishes first then waits less for the
    // last block of another thread (and its lists). Paired batches of 3 MB, medians of
    // 21-31: 1.00-1.04x over 64 KB blocks to the end (gpt2, cl100k, o200k; English,
    // Chinese, code), median about 1.02x.
    let tail = TAIL_BLOCKS
        .saturating_mul(threads)
        .saturating_mul(BATCH_BLOCK);
    let mut left: usize = texts.iter().map(|t| t.as_ref().len()).sum();
    let mut blocks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        bytes += t.as_ref().len();
        let size = if left > tail { BATCH_BLOCK } else { TAIL_BLOCK };
        if bytes >= size || i + 1 == texts.len() {
            blocks.push(start..i + 1);
            left -= bytes;
            (start, bytes) = (i + 1, 0);
        }
    }
    let encode_block = |n: usize| -> Result<Vec<Vec<TokenId>>, Error> {
        texts[blocks[n].clone()]
            .iter()
            .map(|t| enc.encode(t.as_ref(), policy))
            .collect()
    };
    if blocks.len() <= 1 || threads == 1 {
        for (n, b) in blocks.iter().enumerate() {
            sink((b.start, encode_block(n)?))?;
        }
        return Ok(());
    }
    // Blocks are claimed from one counter, by the helpers and by this thread.
    let claim = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel();
    pool(threads - 1)?.in_place_scope(|scope| {
        for _ in 1..threads {
            let tx = tx.clone();
            let (claim, stop, encode_block, count) = (&claim, &stop, &encode_block, blocks.len());
            scope.spawn(move |_| loop {
                let n = claim.fetch_add(1, Relaxed);
                if n >= count || stop.load(Relaxed) {
                    break;
                }
                let _ = tx.send((n, encode_block(n)));
            });
        }
        drop(tx);
        let result = (|| {
            loop {
                // Hand over what the helpers finished, then encode a block here.
                for (n, ids) in rx.try_iter() {
                    sink((blocks[n].start, ids?))?;
                }
                let n = claim.fetch_add(1, Relaxed);
                if n >= blocks.len() {
                    break;
                }
                sink((blocks[n].start, encode_block(n)?))?;
            }
            // The helpers' last blocks: the channel closes when the last helper stops.
            for (n, ids) in rx.iter() {
                sink((blocks[n].start, ids?))?;
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(true, Relaxed);
        }
        result
    })
}

/// Whether cutting `text` at `c` provably leaves the ids unchanged (see the module docs).
/// Needs `2 <= c < text.len()` and, to see every special token that could touch the cut,
/// `max_special_len` bytes of `text` after `c`.
pub fn is_safe_cut(enc: &Encoder, text: &[u8], c: usize) -> bool {
    if !enc.builtin_pattern() || c < 2 || c >= text.len() {
        return false;
    }
    let (a, b, x) = (text[c - 2], text[c - 1], text[c]);
    let text_ok = (b.is_ascii_graphic() && x == b' ')
        || (a.is_ascii_graphic() && b == b'\n' && x.is_ascii_graphic() && x != b'/');
    if !text_ok {
        return false;
    }
    let Some(ac) = enc.special_occurrences() else {
        return true;
    };
    let m = enc.max_special_len();
    let lo = c.saturating_sub(2 + m);
    let hi = (c + 1 + m).min(text.len());
    !ac.find_overlapping_iter(&text[lo..hi])
        .any(|o| lo + o.start() < c + 1 && lo + o.end() > c - 2)
}

/// A streaming encoder: feed text, get the ids that can no longer change. Holds only the text
/// after the last safe cut; never starts a thread.
#[derive(Debug, Default)]
pub struct Stream {
    buf: Vec<u8>,
    /// Positions below this were already searched for a cut without success.
    searched: usize,
}

impl Stream {
    /// Appends `chunk`; returns the ids of the text before the last safe cut.
    pub fn feed(
        &mut self,
        enc: &Encoder,
        chunk: &[u8],
        policy: &SpecialPolicy,
    ) -> Result<Vec<TokenId>, Error> {
        self.buf.extend_from_slice(chunk);
        // A cut needs max_special_len bytes after it, to see special tokens through it.
        let limit = self.buf.len().saturating_sub(enc.max_special_len() + 1);
        let mut cut = None;
        let mut c = limit;
        while c > self.searched.max(1) {
            if is_safe_cut(enc, &self.buf, c) {
                cut = Some(c);
                break;
            }
            c -= 1;
        }
        let Some(cut) = cut else {
            self.searched = self.searched.max(limit);
            return Ok(Vec::new());
        };
        let ids = enc.encode(&self.buf[..cut], policy)?;
        self.buf.drain(..cut);
        self.searched = limit - cut;
        Ok(ids)
    }

    /// Encodes what is left.
    pub fn finish(&mut self, enc: &Encoder, policy: &SpecialPolicy) -> Result<Vec<TokenId>, Error> {
        let ids = enc.encode(&self.buf, policy)?;
        self.buf.clear();
        self.searched = 0;
        Ok(ids)
    }
}

/// Input bytes per chunk of `encode_file`: big enough to amortize the thread hand-off, small
/// enough that a wave of chunks and their ids stays far below the 300 MB budget.
const FILE_CHUNK: usize = 1 << 20;
/// Chunks encoded per wave, per thread.
const CHUNKS_PER_THREAD: usize = 4;
/// A chunk longer than this (no safe cut near FILE_CHUNK) is encoded on its own, in steps,
/// instead of whole in a wave: its ids could fill memory, and Ctrl-C would wait for it.
const LONG_CHUNK: usize = 4 * FILE_CHUNK;
/// The page size `madvise` rounds to.
const PAGE: usize = 4096;

/// Encodes a file into a NumPy `.npy` array of ids (uint16 when the vocab fits, else uint32),
/// written atomically. `progress(done_bytes, total_bytes)` is called after every wave and may
/// stop the work by returning an error. Returns the number of tokens.
pub fn encode_file(
    enc: &Encoder,
    path: &Path,
    out_path: &Path,
    policy: &SpecialPolicy,
    threads: usize,
    progress: &mut dyn FnMut(u64, u64) -> Result<(), Error>,
) -> Result<u64, Error> {
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

    let dir = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out_path
        .file_name()
        .map_or("out.npy".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let f = std::fs::File::create(&tmp).map_err(|e| io(&tmp, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        w.write_all(&npy_header(wide, 0)).map_err(|e| io(&tmp, e))?;
        let pool = pool(threads)?;
        let per_wave = pool.current_num_threads() * CHUNKS_PER_THREAD;
        let mut count = 0u64;
        let mut pos = 0usize;
        let mut bytes = Vec::new();
        let mut write = |ids: &[TokenId]| -> Result<(), Error> {
            count += ids.len() as u64;
            bytes.clear();
            if wide {
                bytes.extend(ids.iter().flat_map(|i| i.to_le_bytes()));
            } else {
                bytes.extend(ids.iter().flat_map(|&i| (i as u16).to_le_bytes()));
            }
            w.write_all(&bytes).map_err(|e| io(&tmp, e))
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
        while pos < text.len() {
            // A wave of chunks for the pool, ended early by a chunk too long to hold.
            let mut chunks = Vec::with_capacity(per_wave);
            let mut long = None;
            while chunks.len() < per_wave && pos < text.len() {
                let end = next_cut(enc, text, pos + FILE_CHUNK);
                if end - pos > LONG_CHUNK {
                    long = Some(pos..end);
                    pos = end;
                    break;
                }
                chunks.push(&text[pos..end]);
                pos = end;
            }
            let ids: Vec<Result<Vec<TokenId>, Error>> =
                pool.install(|| chunks.par_iter().map(|c| enc.encode(c, policy)).collect());
            for ids in ids {
                write(&ids?)?;
            }
            // A long chunk (no safe cut, as with a custom pattern) on this thread, in steps:
            // its ids are written and Ctrl-C is seen every FILE_CHUNK bytes.
            if let Some(range) = long {
                let start = range.start;
                let chunk = &text[range];
                let utf8 = check_in_steps(enc, chunk, policy, FILE_CHUNK, &mut |done| {
                    release(start + done);
                    progress(start as u64, text.len() as u64)
                })?;
                enc.encode_in_steps(chunk, utf8, policy, FILE_CHUNK, &mut |ids, done| {
                    write(ids)?;
                    ids.clear();
                    release(start + done);
                    progress((start + done) as u64, text.len() as u64)
                })?;
            }
            release(pos);
            progress(pos as u64, text.len() as u64)?;
        }
        let mut f = w.into_inner().map_err(|e| io(&tmp, e.into_error()))?;
        f.seek(SeekFrom::Start(0)).map_err(|e| io(&tmp, e))?;
        f.write_all(&npy_header(wide, count))
            .map_err(|e| io(&tmp, e))?;
        f.sync_all().map_err(|e| io(&tmp, e))?;
        Ok(count)
    })();
    match result {
        Ok(count) => {
            std::fs::rename(&tmp, out_path).map_err(|e| io(out_path, e))?;
            Ok(count)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The first safe cut at or after `from`, or the end of the text.
fn next_cut(enc: &Encoder, text: &[u8], from: usize) -> usize {
    if !enc.builtin_pattern() {
        return text.len();
    }
    let last = text.len().saturating_sub(enc.max_special_len() + 1);
    (from..last)
        .find(|&c| is_safe_cut(enc, text, c))
        .unwrap_or(text.len())
}

/// Checks `text` for disallowed special tokens and returns it as a `str` if it is UTF-8,
/// `step` bytes at a time, calling `on_step(done)` after each step (which may stop the work).
/// In steps because one pass over a memory-mapped file maps all of it, unless the caller
/// drops the pages behind.
fn check_in_steps<'a>(
    enc: &Encoder,
    text: &'a [u8],
    policy: &SpecialPolicy,
    step: usize,
    on_step: &mut dyn FnMut(usize) -> Result<(), Error>,
) -> Result<Option<&'a str>, Error> {
    let mut utf8 = true;
    let mut pos = 0;
    while pos < text.len() {
        // At least 4 bytes, one whole character, so that every step moves on.
        let end = (pos + step.max(4)).min(text.len());
        // A special token that crosses `pos` starts less than its length before it.
        let from = pos.saturating_sub(enc.max_special_len().saturating_sub(1));
        enc.check_disallowed(&text[from..end], policy)?;
        let checked = if utf8 {
            match std::str::from_utf8(&text[pos..end]) {
                Ok(_) => end,
                // A character cut by the step's end: check it with the next step.
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
        on_step(pos)?;
    }
    // SAFETY: when `utf8` is still true, every byte was checked above, in steps that end on
    // character boundaries.
    Ok(utf8.then(|| unsafe { std::str::from_utf8_unchecked(text) }))
}

/// A NumPy format 1.0 header for a 1-d little-endian uint16/uint32 array of `n` items, always
/// 128 bytes so that it can be rewritten in place once `n` is known.
pub fn npy_header(wide: bool, n: u64) -> Vec<u8> {
    const LEN: usize = 128;
    let descr = if wide { "<u4" } else { "<u2" };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&((LEN - 10) as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(LEN - 1, b' ');
    h.push(b'\n');
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;

    fn encoder(pattern: &str, specials: &[&str]) -> Encoder {
        let vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        let specials = specials
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_bytes().to_vec(), 1000 + i as TokenId))
            .collect();
        Encoder::new(vocab, Some(&[]), specials, pattern).unwrap()
    }

    #[test]
    fn safe_cuts_follow_the_rule() {
        let enc = encoder("gpt2", &["<|x|>"]);
        let t = b"ab cd\nef \ng<|x|> h";
        assert!(is_safe_cut(&enc, t, 2)); // "b| "
        assert!(is_safe_cut(&enc, t, 6)); // "d\n|e"
        assert!(!is_safe_cut(&enc, t, 10)); // " \n|g": gpt2 would differ
        assert!(!is_safe_cut(&enc, t, 16)); // ">| h": touches the special token
        assert!(!is_safe_cut(&encoder(r"\S+|\s+", &[]), t, 2)); // custom pattern
    }

    #[test]
    fn safe_cuts_are_where_the_splitters_cut() {
        // Splitting at a safe cut must give the pieces of the whole text, for every
        // built-in pattern, on text dense in the characters the rules look at.
        let parts: [&[u8]; 12] = [
            b"a",
            b"Z",
            b".",
            b"/",
            b" ",
            b"\n",
            b"\r",
            b"'s",
            b"1",
            b"\t",
            b"\xc3\xa9",
            b"(",
        ];
        let mut rng = Lcg(7);
        let mut text = Vec::new();
        for _ in 0..20_000 {
            text.extend_from_slice(parts[rng.below(parts.len())]);
        }
        for pattern in ["gpt2", "cl100k", "o200k", "llama3", "qwen2", "qwen3.5"] {
            let enc = encoder(pattern, &[]);
            let splitter = crate::split::Splitter::new(pattern).unwrap();
            let whole = splitter.split(&text);
            let mut cuts = 0;
            for c in 0..text.len() {
                if is_safe_cut(&enc, &text, c) {
                    cuts += 1;
                    let mut two = splitter.split(&text[..c]);
                    two.extend(splitter.split(&text[c..]));
                    assert_eq!(
                        two,
                        whole,
                        "{pattern}: cut at {c} in {:?}",
                        String::from_utf8_lossy(&text[c.saturating_sub(4)..c + 2])
                    );
                }
            }
            assert!(cuts > 1000, "{pattern}: only {cuts} safe cuts");
        }
    }

    #[test]
    fn npy_header_is_aligned_and_parsable() {
        let h = npy_header(true, 12345);
        assert_eq!(h.len(), 128);
        assert!(h.ends_with(b"\n"));
        assert!(String::from_utf8_lossy(&h).contains("'shape': (12345,)"));
    }

    #[test]
    fn stream_equals_whole() {
        let enc = encoder("gpt2", &["<|x|>"]);
        let text = b"hello world\nthe end <|x|> of it  \n\nnext line\nlast".repeat(5);
        let policy = SpecialPolicy::all(1);
        let want = enc.encode(&text, &policy).unwrap();
        for step in [1, 3, 7, 64] {
            let mut s = Stream::default();
            let mut got = Vec::new();
            for c in text.chunks(step) {
                got.extend(s.feed(&enc, c, &policy).unwrap());
            }
            got.extend(s.finish(&enc, &policy).unwrap());
            assert_eq!(got, want, "step {step}");
        }
    }

    fn in_steps(enc: &Encoder, text: &[u8], utf8: bool, step: usize) -> (Vec<TokenId>, Vec<usize>) {
        let policy = SpecialPolicy::all(enc.special_tokens().len());
        let s = if utf8 {
            std::str::from_utf8(text).ok()
        } else {
            None
        };
        let (mut ids, mut marks) = (Vec::new(), Vec::new());
        enc.encode_in_steps(text, s, &policy, step, &mut |got, done| {
            ids.append(got);
            marks.push(done);
            Ok(())
        })
        .unwrap();
        (ids, marks)
    }

    #[test]
    fn encoding_in_steps_equals_encoding_whole() {
        let text = "héllo wörld  \n\n中文。\n<|x|>tail <|x|><|x|> end\t!".repeat(7);
        let mut bad = text.clone().into_bytes();
        bad.splice(9..9, *b"\xff\xe4\xb8");
        for pattern in ["gpt2", "o200k", r"\S+|\s+", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"] {
            let enc = encoder(pattern, &["<|x|>"]);
            let policy = SpecialPolicy::all(1);
            for (text, utf8) in [
                (text.as_bytes(), true),
                (text.as_bytes(), false),
                (&bad, false),
            ] {
                let want = enc.encode(text, &policy).unwrap();
                for step in [1, 5, 64, 1 << 20] {
                    let (ids, marks) = in_steps(&enc, text, utf8, step);
                    assert_eq!(ids, want, "{pattern} step {step}");
                    // The marks grow, each step covers at least `step` bytes, the last is the end.
                    assert!(marks.windows(2).all(|w| w[1] >= w[0]), "{marks:?}");
                    assert_eq!(marks.last(), Some(&text.len()));
                    assert!(
                        marks.len() <= text.len() / step + 2,
                        "{pattern} step {step}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_sink_error_stops_encoding_in_steps_at_once() {
        for pattern in ["gpt2", r"\S+|\s+"] {
            let enc = encoder(pattern, &[]);
            let text = "word ".repeat(10_000);
            let mut calls = 0;
            let r = enc.encode_in_steps(
                text.as_bytes(),
                None,
                &SpecialPolicy::all(0),
                100,
                &mut |_, done| {
                    calls += 1;
                    assert!(done < 200, "kept going after the error: {done}");
                    Err(Error::Interrupted)
                },
            );
            assert!(matches!(r, Err(Error::Interrupted)), "{pattern}");
            assert_eq!(calls, 1, "{pattern}");
        }
    }

    #[test]
    fn utf8_is_checked_in_steps_across_cut_characters() {
        let enc = encoder("gpt2", &[]);
        let policy = SpecialPolicy::none(0);
        let text = "aé中𝄞".repeat(50);
        for step in 1..12 {
            let mut steps = Vec::new();
            let got = check_in_steps(&enc, text.as_bytes(), &policy, step, &mut |d| {
                steps.push(d);
                Ok(())
            });
            assert_eq!(got.unwrap(), Some(text.as_str()), "step {step}");
            assert_eq!(steps.last(), Some(&text.len()));
            // Every step ends on a character boundary.
            assert!(steps.iter().all(|&d| text.is_char_boundary(d)));
        }
        let mut cut = text.as_bytes().to_vec();
        cut.pop(); // the end of a 4-byte character
        let mut bad = text.as_bytes().to_vec();
        bad[100] = 0xff;
        for step in [1, 3, 7, 1 << 20] {
            for t in [&cut, &bad] {
                let got = check_in_steps(&enc, t, &policy, step, &mut |_| Ok(()));
                assert_eq!(got.unwrap(), None);
            }
        }
    }

    #[test]
    fn disallowed_special_tokens_are_found_across_steps() {
        let enc = encoder(r"\S+|\s+", &["<|endoftext|>", "<x>"]);
        let disallow_all = SpecialPolicy {
            allowed: vec![false; 2],
            disallowed: vec![true; 2],
        };
        let text = format!("{}<|endoftext|>{}", "a".repeat(50), "b".repeat(50));
        for step in 1..20 {
            let got = check_in_steps(&enc, text.as_bytes(), &disallow_all, step, &mut |_| Ok(()));
            assert!(
                matches!(&got, Err(Error::DisallowedSpecial { token }) if token == "<|endoftext|>"),
                "step {step}: {got:?}"
            );
        }
        let allowed = SpecialPolicy::all(2);
        let got = check_in_steps(&enc, text.as_bytes(), &allowed, 3, &mut |_| Ok(()));
        assert_eq!(got.unwrap(), Some(text.as_str()));
    }

    #[test]
    fn batch_blocks_handed_over_in_any_order_equal_encoding_one_by_one() {
        let enc = encoder("gpt2", &["<|x|>"]);
        let policy = SpecialPolicy::all(1);
        let texts: Vec<String> = (0..600)
            .map(|i| format!("doc {i}: héllo wörld <|x|> 中文 ").repeat(1 + i % 80))
            .collect();
        let total: usize = texts.iter().map(|t| t.len()).sum();
        assert!(total > 8 * BATCH_BLOCK, "{total}");
        let want: Vec<Vec<TokenId>> = texts
            .iter()
            .map(|t| enc.encode(t.as_bytes(), &policy).unwrap())
            .collect();
        for threads in [0, 1, 2, 3] {
            let mut got: Vec<Option<Vec<TokenId>>> = vec![None; texts.len()];
            encode_batch_each(&enc, &texts, &policy, threads, &mut |(start, ids)| {
                for (i, ids) in ids.into_iter().enumerate() {
                    assert!(
                        got[start + i].replace(ids).is_none(),
                        "text {} twice",
                        start + i
                    );
                }
                Ok(())
            })
            .unwrap();
            let got: Vec<Vec<TokenId>> = got.into_iter().map(|g| g.expect("every text")).collect();
            assert_eq!(got, want, "threads {threads}");
            assert_eq!(encode_batch(&enc, &texts, &policy, threads).unwrap(), want);
        }
    }

    #[test]
    fn a_batch_stops_at_a_sink_error_or_a_disallowed_special_token() {
        let enc = encoder("gpt2", &["<|x|>"]);
        let mut texts: Vec<String> = (0..400)
            .map(|i| format!("text number {i} ").repeat(50))
            .collect();
        for threads in [1, 2] {
            let mut calls = 0;
            let r = encode_batch_each(&enc, &texts, &SpecialPolicy::all(1), threads, &mut |_| {
                calls += 1;
                Err(Error::Interrupted)
            });
            assert!(matches!(r, Err(Error::Interrupted)));
            assert_eq!(calls, 1, "threads {threads}");
        }
        texts[300].push_str("<|x|>");
        let disallow = SpecialPolicy {
            allowed: vec![false],
            disallowed: vec![true],
        };
        for threads in [1, 2] {
            let r = encode_batch_each(&enc, &texts, &disallow, threads, &mut |_| Ok(()));
            assert!(
                matches!(r, Err(Error::DisallowedSpecial { .. })),
                "threads {threads}"
            );
        }
    }
}
