//! Many texts on a thread pool: [`encode_batch`] and [`encode_batch_each`], the same ids as
//! encoding the texts one by one.

use super::{Encoder, SpecialPolicy};
use crate::utf8::Units;
use crate::{Error, TokenId};
use std::mem::MaybeUninit;
use std::ops::Range;
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

/// A text of a batch: bytes, or a str's code units (`utf8::Units`), whose UTF-8 the thread
/// that encodes it writes, so that the calling thread does not write every text's first.
/// On 3 MB of 20-line English documents (o200k, 2 threads, seen before) the caller spent
/// 4% of the batch's samples writing UTF-8 and as much again concatenating ids, while
/// the other thread waited.
pub trait BatchText: Sync {
    /// The text's UTF-8: its own bytes, or written into `buf` (cleared first).
    fn utf8_in<'b>(&'b self, buf: &'b mut Vec<u8>) -> &'b [u8];
    /// About the length of its UTF-8, to size the chunks.
    fn stored_len(&self) -> usize;
}

impl<T: AsRef<[u8]> + Sync> BatchText for T {
    fn utf8_in<'b>(&'b self, _: &'b mut Vec<u8>) -> &'b [u8] {
        self.as_ref()
    }
    fn stored_len(&self) -> usize {
        self.as_ref().len()
    }
}

impl BatchText for Units<'_> {
    fn utf8_in<'b>(&'b self, buf: &'b mut Vec<u8>) -> &'b [u8] {
        Units::utf8_in(self, buf)
    }
    fn stored_len(&self) -> usize {
        Units::stored_len(self)
    }
}

/// Encodes each text into one flat array: the ids of every text one after the other, and
/// the offsets where each text's ids start (one more than the texts: the last is the
/// total). The same ids as encoding the texts one by one.
pub fn encode_batch<T: BatchText>(
    enc: &Encoder,
    texts: &[T],
    policy: &SpecialPolicy,
    threads: usize,
) -> Result<(Vec<TokenId>, Vec<usize>), Error> {
    let threads = thread_count(threads);
    let chunks = chunks(texts, threads);
    // Each chunk's ids in one Vec and where each of its texts ends in it: no Vec per text
    // to allocate here and free on the calling thread.
    let encode_chunk = |n: usize| -> Result<(Vec<TokenId>, Vec<usize>), Error> {
        let (mut ids, mut ends, mut buf) = (Vec::new(), Vec::new(), Vec::new());
        for t in &texts[chunks[n].clone()] {
            enc.encode_into(t.utf8_in(&mut buf), policy, &mut ids)?;
            ends.push(ids.len());
        }
        Ok((ids, ends))
    };
    let mut parts = vec![None; chunks.len()];
    run_chunks(chunks.len(), threads, &encode_chunk, &mut |n, part| {
        parts[n] = Some(part);
        Ok(())
    })?;
    let parts: Vec<_> = parts
        .into_iter()
        .map(|p| p.expect("every chunk encoded"))
        .collect();
    let mut offsets = Vec::with_capacity(texts.len() + 1);
    offsets.push(0);
    for (ids, ends) in &parts {
        let base = *offsets.last().expect("starts at 0");
        offsets.extend(ends.iter().map(|e| base + e));
        debug_assert_eq!(ends.last().copied().unwrap_or(0), ids.len());
    }
    let parts: Vec<&[TokenId]> = parts.iter().map(|(ids, _)| &ids[..]).collect();
    Ok((gather(&parts, threads)?, offsets))
}

/// `parts` one after the other, copied on `threads` threads: a fresh array's pages are
/// first touched by the copy, a fault each 4 KB.
fn gather(parts: &[&[TokenId]], threads: usize) -> Result<Vec<TokenId>, Error> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut ids = Vec::with_capacity(total);
    if total == 0 {
        return Ok(ids);
    }
    // Runs of consecutive parts of about equal size, one for each thread, each given its
    // place in the room: writing zeros first was 1.2% of a 2-thread batch's samples.
    type Run<'a> = (&'a mut [MaybeUninit<TokenId>], &'a [&'a [TokenId]]);
    let mut runs: Vec<Run> = Vec::with_capacity(threads);
    let (mut rest, mut first, mut start, mut end) =
        (&mut ids.spare_capacity_mut()[..total], 0, 0, 0);
    for (i, p) in parts.iter().enumerate() {
        end += p.len();
        if end * threads >= total * (runs.len() + 1) || i + 1 == parts.len() {
            let (run, after) = std::mem::take(&mut rest).split_at_mut(end - start);
            runs.push((run, &parts[first..=i]));
            (rest, first, start) = (after, i + 1, end);
        }
    }
    let copy = |(mut dst, parts): Run| {
        for p in parts {
            let (here, after) = std::mem::take(&mut dst).split_at_mut(p.len());
            for (slot, &id) in here.iter_mut().zip(*p) {
                slot.write(id);
            }
            dst = after;
        }
    };
    let mut runs = runs.into_iter();
    let mine = runs.next();
    if threads > 1 && runs.len() > 0 {
        pool(threads - 1)?.in_place_scope(|scope| {
            for run in runs {
                scope.spawn(move |_| copy(run));
            }
            mine.map(copy);
        });
    } else {
        mine.into_iter().chain(runs).for_each(copy);
    }
    // SAFETY: the runs cover the first `total` slots of the room, one after the other, and
    // `copy` wrote every slot of each (its parts' lengths sum to the run's).
    unsafe { ids.set_len(total) };
    Ok(ids)
}

/// Input bytes per chunk of a batch: small enough that the caller gets its first results
/// early, big enough that a chunk's hand-off costs nothing next to it.
const BATCH_CHUNK: usize = 64 << 10;
/// The smaller chunks at the end of a batch, and how many big chunks' worth per thread.
const TAIL_CHUNK: usize = 8 << 10;
const TAIL_CHUNKS: usize = 2;

/// The ids of one chunk of texts and the index of its first text.
pub type ChunkIds = (usize, Vec<Vec<TokenId>>);

/// Encodes each text and hands each chunk of results to `sink` on the calling thread, as
/// chunks finish (in any order), while other threads encode the chunks after it. Whatever the
/// caller does with the results (the Python binding builds lists: a third of the work) then
/// overlaps the encoding instead of following it. Over a loop of `encode` on 2 idle cores
/// (paired runs, 3 MB of 20-line documents): o200k English 2.2-2.6x, gpt2 code 2.3-2.6x,
/// o200k Chinese 1.9-2.0x. `sink` stops the work by returning an error.
pub fn encode_batch_each<T: BatchText>(
    enc: &Encoder,
    texts: &[T],
    policy: &SpecialPolicy,
    threads: usize,
    sink: &mut dyn FnMut(ChunkIds) -> Result<(), Error>,
) -> Result<(), Error> {
    let threads = thread_count(threads);
    let chunks = chunks(texts, threads);
    let encode_chunk = |n: usize| -> Result<Vec<Vec<TokenId>>, Error> {
        let mut buf = Vec::new();
        texts[chunks[n].clone()]
            .iter()
            .map(|t| enc.encode(t.utf8_in(&mut buf), policy))
            .collect()
    };
    run_chunks(chunks.len(), threads, &encode_chunk, &mut |n, ids| {
        sink((chunks[n].start, ids))
    })
}

/// `threads`, or all cores for 0.
fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Chunks of consecutive texts of about BATCH_CHUNK bytes, then TAIL_CHUNK for the last
/// TAIL_CHUNKS chunks' worth per thread: whoever finishes first then waits less for the
/// last chunk of another thread (and its lists). Paired batches of 3 MB, medians of
/// 21-31: 1.00-1.04x over 64 KB chunks to the end (gpt2, cl100k, o200k; English,
/// Chinese, code), median about 1.02x.
fn chunks<T: BatchText>(texts: &[T], threads: usize) -> Vec<Range<usize>> {
    let tail = TAIL_CHUNKS
        .saturating_mul(threads)
        .saturating_mul(BATCH_CHUNK);
    let mut left: usize = texts.iter().map(|t| t.stored_len()).sum();
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        bytes += t.stored_len();
        let size = if left > tail { BATCH_CHUNK } else { TAIL_CHUNK };
        if bytes >= size || i + 1 == texts.len() {
            chunks.push(start..i + 1);
            left -= bytes;
            (start, bytes) = (i + 1, 0);
        }
    }
    chunks
}

/// Runs `encode_chunk` on chunks `0..count` on `threads` threads and hands each result to
/// `sink` on the calling thread, with its chunk's number, as chunks finish. The calling
/// thread is one of the `threads`: it encodes chunks too, and hands over its own and the
/// others' results between them, so the threads never outnumber the cores.
fn run_chunks<C: Send>(
    count: usize,
    threads: usize,
    encode_chunk: &(dyn Fn(usize) -> Result<C, Error> + Sync),
    sink: &mut dyn FnMut(usize, C) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    if count <= 1 || threads == 1 {
        for n in 0..count {
            sink(n, encode_chunk(n)?)?;
        }
        return Ok(());
    }
    // Chunks are claimed from one counter, by the helpers and by this thread.
    let claim = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel();
    pool(threads - 1)?.in_place_scope(|scope| {
        for _ in 1..threads {
            let tx = tx.clone();
            let (claim, stop) = (&claim, &stop);
            scope.spawn(move |_| loop {
                let n = claim.fetch_add(1, Relaxed);
                if n >= count || stop.load(Relaxed) {
                    break;
                }
                let _ = tx.send((n, encode_chunk(n)));
            });
        }
        drop(tx);
        let result = (|| {
            loop {
                // Hand over what the helpers finished, then encode a chunk here.
                for (n, done) in rx.try_iter() {
                    sink(n, done?)?;
                }
                let n = claim.fetch_add(1, Relaxed);
                if n >= count {
                    break;
                }
                sink(n, encode_chunk(n)?)?;
            }
            // The helpers' last chunks: the channel closes when the last helper stops.
            for (n, done) in rx.iter() {
                sink(n, done?)?;
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(true, Relaxed);
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::bytes_encoder;

    #[test]
    fn batch_chunks_handed_over_in_any_order_equal_encoding_one_by_one() {
        let enc = bytes_encoder("gpt2", &["<|x|>"]);
        let policy = SpecialPolicy::all(1);
        let texts: Vec<String> = (0..600)
            .map(|i| format!("doc {i}: héllo wörld <|x|> 中文 ").repeat(1 + i % 80))
            .collect();
        let total: usize = texts.iter().map(|t| t.len()).sum();
        assert!(total > 8 * BATCH_CHUNK, "{total}");
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
            let (ids, offsets) = encode_batch(&enc, &texts, &policy, threads).unwrap();
            assert_eq!(ids, want.concat(), "threads {threads}");
            let lens: Vec<usize> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
            let want_lens: Vec<usize> = want.iter().map(|w| w.len()).collect();
            assert_eq!((offsets[0], lens), (0, want_lens), "threads {threads}");
        }
    }

    /// Texts given as code units (a Python str's storage) are written as UTF-8 by the
    /// threads that encode them: the same ids as their UTF-8 given as bytes, surrogates
    /// replaced as `utf8::Units` does, in batches of every shape (none, one empty text,
    /// more chunks than threads).
    #[test]
    fn texts_as_code_units_encode_as_their_utf8() {
        let enc = bytes_encoder("gpt2", &["<|x|>"]);
        let policy = SpecialPolicy::all(1);
        let strings: Vec<String> = (0..300)
            .map(|i| {
                [
                    "caf\u{e9} <|x|> ",
                    "\u{4e2d}\u{6587} ",
                    "\u{1F600} a",
                    "plain ",
                ][i % 4]
                    .repeat(i)
            })
            .collect();
        let ucs4: Vec<Vec<u32>> = strings
            .iter()
            .map(|s| s.chars().map(|c| c as u32).collect())
            .collect();
        let mut ucs2: Vec<Vec<u16>> = strings.iter().map(|s| s.encode_utf16().collect()).collect();
        ucs2[7].push(0xD800);
        let mut want: Vec<Vec<u8>> = strings.iter().map(|s| s.clone().into_bytes()).collect();
        want[7].extend_from_slice("\u{FFFD}".as_bytes());
        let units: Vec<Units> = (0..strings.len())
            .map(|i| match i % 3 {
                _ if i == 7 => Units::Ucs2(&ucs2[i]),
                0 => Units::Ucs4(&ucs4[i]),
                1 => Units::Ucs2(&ucs2[i]),
                _ => Units::Utf8(want[i].as_slice()),
            })
            .collect();
        for n in [0, 1, 300] {
            for threads in [1, 2, 3] {
                let (ids, offsets) = encode_batch(&enc, &units[..n], &policy, threads).unwrap();
                let (want_ids, want_offsets) =
                    encode_batch(&enc, &want[..n], &policy, threads).unwrap();
                assert_eq!(
                    (ids, offsets),
                    (want_ids, want_offsets),
                    "{n} texts, threads {threads}"
                );
            }
        }
    }

    #[test]
    fn a_batch_stops_at_a_sink_error_or_a_disallowed_special_token() {
        let enc = bytes_encoder("gpt2", &["<|x|>"]);
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
