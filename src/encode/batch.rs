//! Many texts on a thread pool: [`encode_batch`] and [`encode_batch_each`], the same ids as
//! encoding the texts one by one.

use super::{Encoder, SpecialPolicy};
use crate::{Error, TokenId};
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
    encode_batch_each(enc, texts, policy, threads, &mut |(start, chunk)| {
        for (slot, ids) in out[start..].iter_mut().zip(chunk) {
            *slot = ids;
        }
        Ok(())
    })?;
    Ok(out)
}

/// Input bytes per chunk of [`encode_batch_each`]: small enough that the caller gets its
/// first results early, big enough that a chunk's hand-off costs nothing next to it.
const BATCH_CHUNK: usize = 64 << 10;
/// The smaller chunks at the end of a batch, and how many big chunks' worth per thread.
const TAIL_CHUNK: usize = 8 << 10;
const TAIL_CHUNKS: usize = 2;

/// The ids of one chunk of texts and the index of its first text.
pub type ChunkIds = (usize, Vec<Vec<TokenId>>);

/// [`encode_batch`] that hands each chunk of results to `sink` on the calling thread, as
/// chunks finish (in any order), while other threads encode the chunks after it. Whatever the
/// caller does with the results (the Python binding builds lists: a third of the work) then
/// overlaps the encoding instead of following it. The calling thread is one of the
/// `threads`: it encodes chunks too, and hands over its own and the others' results between
/// them, so the threads never outnumber the cores. Over a loop of `encode` on 2 idle cores
/// (paired runs, 3 MB of 20-line documents): o200k English 2.2-2.6x, gpt2 code 2.3-2.6x,
/// o200k Chinese 1.9-2.0x. `sink` stops the work by returning an error.
pub fn encode_batch_each<T: AsRef<[u8]> + Sync>(
    enc: &Encoder,
    texts: &[T],
    policy: &SpecialPolicy,
    threads: usize,
    sink: &mut dyn FnMut(ChunkIds) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    // Chunks of consecutive texts of about BATCH_CHUNK bytes, then TAIL_CHUNK for the last
    // TAIL_CHUNKS chunks' worth per thread: whoever finishes first then waits less for the
    // last chunk of another thread (and its lists). Paired batches of 3 MB, medians of
    // 21-31: 1.00-1.04x over 64 KB chunks to the end (gpt2, cl100k, o200k; English,
    // Chinese, code), median about 1.02x.
    let tail = TAIL_CHUNKS
        .saturating_mul(threads)
        .saturating_mul(BATCH_CHUNK);
    let mut left: usize = texts.iter().map(|t| t.as_ref().len()).sum();
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        bytes += t.as_ref().len();
        let size = if left > tail { BATCH_CHUNK } else { TAIL_CHUNK };
        if bytes >= size || i + 1 == texts.len() {
            chunks.push(start..i + 1);
            left -= bytes;
            (start, bytes) = (i + 1, 0);
        }
    }
    let encode_chunk = |n: usize| -> Result<Vec<Vec<TokenId>>, Error> {
        texts[chunks[n].clone()]
            .iter()
            .map(|t| enc.encode(t.as_ref(), policy))
            .collect()
    };
    if chunks.len() <= 1 || threads == 1 {
        for (n, b) in chunks.iter().enumerate() {
            sink((b.start, encode_chunk(n)?))?;
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
            let (claim, stop, encode_chunk, count) = (&claim, &stop, &encode_chunk, chunks.len());
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
                for (n, ids) in rx.try_iter() {
                    sink((chunks[n].start, ids?))?;
                }
                let n = claim.fetch_add(1, Relaxed);
                if n >= chunks.len() {
                    break;
                }
                sink((chunks[n].start, encode_chunk(n)?))?;
            }
            // The helpers' last chunks: the channel closes when the last helper stops.
            for (n, ids) in rx.iter() {
                sink((chunks[n].start, ids?))?;
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
            assert_eq!(encode_batch(&enc, &texts, &policy, threads).unwrap(), want);
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
