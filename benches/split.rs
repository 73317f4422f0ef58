//! Pre-tokenization speed: the hand-written splitters against fancy-regex running the same
//! regex (tiktoken's, or SuperBPE's stage-2 `superword`), on the same bytes, one core.
//!
//! `cargo bench --bench split [-- FILE...]` (default: `../data/en-prose.txt` and
//! `../data/zh-prose.txt` beside the repository, as `../shared/corpora/unpack.sh ../data` makes
//! them). Reads the first `BYTEPAIR_BENCH_MB` MB of each file (default 20), cut after a newline.
//! Prints the median MB/s of each engine and their ratio.
//!
//! `-- --hand-only` times only the hand-written splitters (`BYTEPAIR_BENCH_RUNS` runs each,
//! default 5), by this thread's CPU time, steadier than wall time on a shared machine. With
//! one run it is what instruction counts need (deterministic on a busy machine, unlike time):
//!
//!     BYTEPAIR_BENCH_MB=2 BYTEPAIR_BENCH_RUNS=1 valgrind --tool=callgrind \
//!         --toggle-collect='split::pretokens*' target/release/deps/split-* --hand-only FILE
//!
//! With `BYTEPAIR_BENCH_PATTERNS=o200k` (comma-separated) only those patterns run.

mod corpus;
mod timing;

use bytepair::split::Splitter;
use std::hint::black_box;

/// Wall seconds since an arbitrary start.
fn wall_secs() -> f64 {
    timing::clock_secs(libc::CLOCK_MONOTONIC)
}

/// This thread's CPU seconds.
fn thread_cpu_secs() -> f64 {
    timing::clock_secs(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The number of pre-tokens of `text` (not inlined, so callgrind can count just this).
#[inline(never)]
fn pretokens(splitter: &Splitter, text: &[u8]) -> usize {
    let mut n = 0;
    splitter.for_each(text, |p| {
        black_box(p);
        n += 1;
    });
    n
}

fn main() {
    let files = corpus::files(&["en-prose.txt", "zh-prose.txt"]);
    let mb = corpus::megabytes();
    let hand_only = std::env::args().any(|a| a == "--hand-only");
    let runs = std::env::var("BYTEPAIR_BENCH_RUNS").map_or(5, |v| v.parse().expect("a number"));
    let patterns: Vec<String> = std::env::var("BYTEPAIR_BENCH_PATTERNS")
        .unwrap_or_else(|_| "gpt2,cl100k,o200k,superword".into())
        .split(',')
        .map(String::from)
        .collect();
    println!("split: median MB/s on one core, first {mb} MB of each file");
    println!(
        "{:<16} {:<9} {:>12} {:>12} {:>7} {:>10}",
        "file", "pattern", "hand-written", "fancy-regex", "ratio", "pretokens"
    );
    for file in files {
        let text = corpus::prefix(&file, mb);
        let megabytes = text.len() as f64 / 1e6;
        let name = file.file_name().unwrap().to_string_lossy();
        for pattern in &patterns {
            let fast = Splitter::new(pattern).unwrap();
            if hand_only {
                let mut n = 0;
                let secs =
                    timing::median_secs(runs, thread_cpu_secs, || n = pretokens(&fast, &text));
                println!(
                    "{name:<16} {pattern:<9} {:>12.1} {:>12} {:>7} {n:>10}   ({} bytes)",
                    megabytes / secs,
                    "-",
                    "-",
                    text.len()
                );
                continue;
            }
            let regex = Splitter::with_regex(pattern).unwrap();
            let n = pretokens(&fast, &text);
            assert_eq!(
                n,
                pretokens(&regex, &text),
                "{pattern}: the engines disagree"
            );
            let fast_mbs = megabytes
                / timing::median_secs(5, wall_secs, || assert_eq!(pretokens(&fast, &text), n));
            let regex_mbs = megabytes
                / timing::median_secs(3, wall_secs, || assert_eq!(pretokens(&regex, &text), n));
            println!(
                "{name:<16} {pattern:<9} {fast_mbs:>12.1} {regex_mbs:>12.1} {:>6.1}x {n:>10}",
                fast_mbs / regex_mbs
            );
        }
    }
}
