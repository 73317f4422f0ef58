//! Pre-tokenization speed: the hand-written splitters against fancy-regex running the same
//! tiktoken regex, on the same bytes, one core.
//!
//! `cargo bench --bench split [-- FILE...]` (default: `../data/en-prose.txt` and
//! `../data/zh-prose.txt` beside the repository, as `../shared/corpora/unpack.sh ../data` makes
//! them). Reads the first `BYTEPAIR_BENCH_MB` MB of each file (default 20), cut after a newline.
//! Prints the median MB/s of each engine and their ratio.

mod corpus;

use bytepair::split::Splitter;
use std::hint::black_box;
use std::time::Instant;

/// Median seconds of `runs` calls of `f`.
fn median_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn pieces(splitter: &Splitter, text: &[u8]) -> usize {
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
    println!("split: median MB/s on one core, first {mb} MB of each file");
    println!(
        "{:<16} {:<7} {:>12} {:>12} {:>7} {:>10}",
        "file", "pattern", "hand-written", "fancy-regex", "ratio", "pieces"
    );
    for file in files {
        let text = corpus::prefix(&file, mb);
        let megabytes = text.len() as f64 / 1e6;
        let name = file.file_name().unwrap().to_string_lossy();
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let fast = Splitter::new(pattern).unwrap();
            let regex = Splitter::with_regex(pattern).unwrap();
            let n = pieces(&fast, &text);
            assert_eq!(n, pieces(&regex, &text), "{pattern}: the engines disagree");
            let fast_mbs = megabytes / median_secs(5, || assert_eq!(pieces(&fast, &text), n));
            let regex_mbs = megabytes / median_secs(3, || assert_eq!(pieces(&regex, &text), n));
            println!(
                "{name:<16} {pattern:<7} {fast_mbs:>12.1} {regex_mbs:>12.1} {:>6.1}x {n:>10}",
                fast_mbs / regex_mbs
            );
        }
    }
}
