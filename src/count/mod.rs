//! Parallel counting of distinct pre-tokens over files and batches of texts.
//!
//! The input is cut into chunks of about `chunk_size` bytes (`chunks.rs`: at safe cuts,
//! [`crate::safe_cut`], and at special tokens), counted on all cores into one table per
//! thread behind a small cache (`hot.rs`), with keys owned, so memory is bounded by the
//! distinct pre-tokens, not the corpus; the per-thread tables are merged at the end into
//! [`PretokenCounts`] (`pretoken_counts.rs`). Files are memory-mapped (`files.rs`).
//!
//! A cut changes no count: text with no safe cut (a long line of Chinese with no ASCII
//! space, say, or any text under a custom regex without special tokens) stays one chunk:
//! exact counts beat parallelism.

mod chunks;
mod files;
mod hot;
mod pretoken_counts;

pub use pretoken_counts::{Pretoken, PretokenCounts};

use crate::safe_cut::CutRule;
use crate::special::{Segment, SpecialMatcher};
use crate::split::Splitter;
use crate::{Error, Progress};
use chunks::Span;
use hot::Hot;
use pretoken_counts::Map;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Default chunk size: 1 MiB keeps 2 threads busy on a 50 MB file (50 chunks, at most one
/// chunk of imbalance at the end) while per-chunk overhead stays negligible.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

/// Counts pre-tokens with one pattern and one set of special tokens. Build once; `Sync`.
pub struct Counter {
    splitter: Splitter,
    specials: SpecialMatcher,
    /// Where the pattern's pieces provably allow a cut ([`crate::safe_cut`]); `None` for a
    /// custom regex, which is cut only at special tokens.
    cut_rule: Option<CutRule>,
    pool: Option<rayon::ThreadPool>,
    chunk_size: usize,
    /// Whether each line is a text of its own (see [`Counter::line_by_line`]).
    lines: bool,
}

impl Counter {
    /// `threads: None` uses rayon's global pool (all cores). `chunk_size: None` is
    /// [`DEFAULT_CHUNK_SIZE`]; tests force tiny chunks to prove cuts don't change counts.
    pub fn new<T: AsRef<[u8]>>(
        pattern: &str,
        special_tokens: &[T],
        threads: Option<usize>,
        chunk_size: Option<usize>,
    ) -> Result<Self, Error> {
        let splitter = Splitter::new(pattern)?;
        let cut_rule = splitter.cut_rule();
        let pool = match threads {
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build()
                    .map_err(|e| Error::Io {
                        path: "<thread pool>".into(),
                        reason: e.to_string(),
                    })?,
            ),
            None => None,
        };
        let specials = SpecialMatcher::new(special_tokens);
        Ok(Counter {
            splitter,
            specials,
            cut_rule,
            pool,
            chunk_size: chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE).max(1),
            lines: false,
        })
    }

    /// This counter with each line, up to and including its `\n`, counted as a text of its
    /// own: no pre-token spans two lines (a run of blank lines is one `\n` a line). This is
    /// how HuggingFace's `BpeTrainer` reads a text file: `Tokenizer.train(files)` gives the
    /// merges of `train_from_iterator` over the file's lines, `\n` kept.
    pub fn line_by_line(mut self) -> Self {
        self.lines = true;
        self
    }

    fn threads(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Counts one text on the calling thread (no chunking): the plain definition the
    /// parallel paths must agree with.
    pub fn count_serial(&self, text: &[u8], into: &mut PretokenCounts) {
        let mut hot = Hot::for_bytes(text.len());
        self.count_span(text, &mut hot, &mut into.map);
        hot.flush(&mut into.map);
    }

    /// Counts `text` into `hot` (which spills into `map`); the caller flushes `hot`.
    fn count_span(&self, text: &[u8], hot: &mut Hot, map: &mut Map) {
        self.specials.for_each_segment(text, |seg| {
            let Segment::Plain(plain) = seg else {
                return;
            };
            if self.lines {
                // A cut (chunks, special tokens) is never inside a pre-token, so it cuts a
                // line only where the line's own pieces end.
                for line in plain.split_inclusive(|&b| b == b'\n') {
                    self.splitter
                        .for_each(line, |pretoken| hot.bump(map, pretoken));
                }
            } else {
                self.splitter
                    .for_each(plain, |pretoken| hot.bump(map, pretoken));
            }
        });
    }

    /// Counts every chunk on the pool into per-thread tables. `after(span)` runs once a
    /// span is counted (files drop its pages there).
    fn run_chunks(
        &self,
        sources: &[&[u8]],
        spans: &[Span],
        chunks: &[Range<usize>],
        state: &State,
        after: &(dyn Fn(&Span) + Sync),
    ) {
        let State { maps, done, cancel } = state;
        self.install(|| {
            chunks.par_iter().with_max_len(1).for_each(|chunk| {
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
                let slot = rayon::current_thread_index().unwrap_or(0) % maps.len();
                let mut guard = maps[slot].lock().expect("a counting thread panicked");
                // The thread's cache stays warm across its chunks; `finish` flushes it.
                let (map, hot) = &mut *guard;
                for s in &spans[chunk.clone()] {
                    self.count_span(&sources[s.src][s.start..s.end], hot, map);
                    after(s);
                    done.fetch_add((s.end - s.start) as u64, Ordering::Relaxed);
                }
            })
        });
    }

    /// Per-thread tables and caches for counting `total` bytes.
    fn new_state(&self, total: u64) -> State {
        let threads = self.threads().max(1);
        let per_thread = usize::try_from(total).unwrap_or(usize::MAX) / threads;
        State {
            maps: (0..threads)
                .map(|_| Mutex::new((Map::default(), Hot::for_bytes(per_thread))))
                .collect(),
            done: AtomicU64::new(0),
            cancel: AtomicBool::new(false),
        }
    }

    fn finish(&self, state: State, into: &mut PretokenCounts) {
        let maps: Vec<Map> = state
            .maps
            .into_iter()
            .map(|m| {
                let (mut map, mut hot) = m.into_inner().expect("a counting thread panicked");
                hot.flush(&mut map);
                map
            })
            .collect();
        let merged = self.install(|| maps.into_par_iter().reduce(Map::default, Map::merge));
        into.merge(PretokenCounts { map: merged });
    }

    /// Counts each text as its own document (no pre-token spans two texts).
    ///
    /// `progress(bytes_done, bytes_total)` runs on the calling thread about every 100 ms;
    /// returning `false` stops the work and returns [`Error::Interrupted`].
    pub fn count_texts(
        &self,
        texts: &[&[u8]],
        into: &mut PretokenCounts,
        progress: &mut Progress<'_>,
    ) -> Result<(), Error> {
        let total: u64 = texts.iter().map(|t| t.len() as u64).sum();
        let (spans, chunks) = self.plan(texts, &|_, _, _| {});
        let state = self.new_state(total);
        with_progress(total, &state, progress, || {
            self.run_chunks(texts, &spans, &chunks, &state, &|_| {})
        })?;
        self.finish(state, into);
        Ok(())
    }
}

/// What the counting threads share: one map and hot cache per thread, bytes done, and
/// the stop flag.
struct State {
    maps: Vec<Mutex<(Map, Hot)>>,
    done: AtomicU64,
    cancel: AtomicBool,
}

/// Runs `work` on a helper thread while the calling thread reports progress about every
/// 100 ms (so a Python caller can check for Ctrl-C between reports).
fn with_progress(
    total: u64,
    state: &State,
    progress: &mut Progress<'_>,
    work: impl FnOnce() + Send,
) -> Result<(), Error> {
    let (done, cancel) = (&state.done, &state.cancel);
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            work();
            let _ = tx.send(());
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if !cancel.load(Ordering::Relaxed)
                        && !progress(done.load(Ordering::Relaxed), total)
                    {
                        cancel.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    });
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    // A last report, so a caller always sees 100% (and a callback error is not lost).
    if !progress(total, total) {
        return Err(Error::Interrupted);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn serial(counter: &Counter, text: &[u8]) -> PretokenCounts {
        let mut wc = PretokenCounts::new();
        counter.count_serial(text, &mut wc);
        wc
    }

    pub(crate) fn chunked(counter: &Counter, text: &[u8]) -> PretokenCounts {
        let mut wc = PretokenCounts::new();
        counter
            .count_texts(&[text], &mut wc, &mut |_, _| true)
            .unwrap();
        wc
    }

    /// English, accents, Chinese, digits, contractions, CRLF, a special token, invalid
    /// bytes and whitespace runs.
    pub(crate) const SAMPLE: &[u8] =
        b"Hello world!  It's 2024.\n\n  Tabs\there, \xc3\xa9t\xc3\xa9 \
        caf\xc3\xa9's 12345 \xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82\nend<|endoftext|>next \
        doc's line\r\na.\nb \xff\xfe bad bytes 'll 've \n\n\n   trailing   ";

    #[test]
    fn tiny_chunks_count_the_same_as_one_chunk() {
        let mut text = Vec::new();
        for i in 0..40 {
            text.extend_from_slice(SAMPLE);
            text.extend_from_slice(format!("line {i}  x\n").as_bytes());
            // Chinese lines ("。\n" then a Han letter, an ideographic space U+3000, or
            // o200k's "/" that a punctuation run takes after newlines).
            text.extend_from_slice(
                "中文。\n中文。\n/路径。\n\u{3000}\u{3000}第一 。\n\n中\u{3000}\n中\u{2028}\n中 \n中\r\n中".as_bytes(),
            );
        }
        text.extend_from_slice(b"\xff\xfe");
        let custom = [r"\w+|\s+|[^\w\s]+"];
        for pattern in crate::split::differential::hand_written().chain(custom) {
            for specials in [vec![], vec!["<|endoftext|>"], vec!["<|endoftext|>", "doc"]] {
                let whole = Counter::new(pattern, &specials, Some(2), None).unwrap();
                let want = serial(&whole, &text);
                for chunk in [1, 2, 3, 7, 64] {
                    let c = Counter::new(pattern, &specials, Some(2), Some(chunk)).unwrap();
                    assert!(c.cuts(&text).len() > 1 || c.cut_rule.is_none() && specials.is_empty());
                    assert_eq!(chunked(&c, &text), want, "{pattern} {specials:?} {chunk}");
                }
            }
        }
    }

    /// Counting line by line is counting each line (its `\n` kept) as a text of its own,
    /// whatever the chunks, for every built-in pattern and a custom one.
    #[test]
    fn line_by_line_counts_each_line_as_a_text() {
        let mut text = Vec::new();
        for i in 0..20 {
            text.extend_from_slice(SAMPLE);
            text.extend_from_slice(format!("\n\n\n    indented {i}  \n\t\n  \r\n").as_bytes());
        }
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        let custom = [r"\w+|\s+|[^\w\s]+"];
        for pattern in crate::split::differential::hand_written().chain(custom) {
            for specials in [vec![], vec!["<|endoftext|>"]] {
                let each = Counter::new(pattern, &specials, Some(2), None).unwrap();
                let mut want = PretokenCounts::new();
                each.count_texts(&lines, &mut want, &mut |_, _| true)
                    .unwrap();
                let whole = serial(&each, &text);
                assert_ne!(whole, want, "{pattern}: lines change no count here");
                for chunk in [3, 64, 1 << 20] {
                    let c = Counter::new(pattern, &specials, Some(2), Some(chunk))
                        .unwrap()
                        .line_by_line();
                    assert_eq!(chunked(&c, &text), want, "{pattern} {specials:?} {chunk}");
                    assert_eq!(serial(&c, &text), want, "{pattern} {specials:?}");
                }
            }
        }
    }

    #[test]
    fn progress_false_interrupts() {
        let text = SAMPLE.repeat(20_000);
        let c = Counter::new("gpt2", &[] as &[&str], Some(1), Some(64)).unwrap();
        let err = c
            .count_texts(&[&text], &mut PretokenCounts::new(), &mut |_, _| false)
            .unwrap_err();
        assert_eq!(err, Error::Interrupted);
    }
}
