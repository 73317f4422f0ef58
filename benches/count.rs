//! Pre-tokenization + counting speed on one core: the splitter alone, then splitting and
//! counting (`Counter::count_serial`), on the same bytes.
//!
//! `cargo bench --bench count [-- FILE...]` (default: `../data/en-prose.txt` beside the
//! repository). Reads the first `BYTEPAIR_BENCH_MB` MB (default 20), cut after a newline.
//! Times are process CPU time (`CLOCK_PROCESS_CPUTIME_ID`), not wall time, because the
//! machine is shared; prints the median MB/s of `BYTEPAIR_BENCH_RUNS` runs (default 5).
//! `BYTEPAIR_BENCH_PATTERNS` (default `gpt2,cl100k,o200k`) picks the patterns.

mod corpus;
mod timing;

use bytepair::count::{Counter, PretokenCounts};
use bytepair::split::Splitter;
use std::hint::black_box;

/// CPU seconds used by this process so far.
fn cpu_secs() -> f64 {
    timing::clock_secs(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn main() {
    let files = corpus::files(&["en-prose.txt"]);
    let mb = corpus::megabytes();
    let runs: usize =
        std::env::var("BYTEPAIR_BENCH_RUNS").map_or(5, |v| v.parse().expect("a number"));
    println!("count: median MB/s of CPU time on one core, first {mb} MB of each file");
    println!(
        "{:<16} {:<7} {:>10} {:>10} {:>10} {:>10}",
        "file", "pattern", "split", "count", "pretokens", "distinct"
    );
    for file in files {
        let text = corpus::prefix(&file, mb);
        let megabytes = text.len() as f64 / 1e6;
        let name = file.file_name().unwrap().to_string_lossy();
        let patterns =
            std::env::var("BYTEPAIR_BENCH_PATTERNS").unwrap_or("gpt2,cl100k,o200k".into());
        for pattern in patterns.split(',') {
            let splitter = Splitter::new(pattern).unwrap();
            let counter = Counter::new(pattern, &["<|endoftext|>"], Some(1), None).unwrap();
            let mut n = 0u64;
            let split_secs = timing::median_secs(runs, cpu_secs, || {
                n = 0;
                splitter.for_each(&text, |p| {
                    black_box(p);
                    n += 1;
                });
            });
            let mut distinct = 0;
            let count_secs = timing::median_secs(runs, cpu_secs, || {
                let mut wc = PretokenCounts::new();
                counter.count_serial(&text, &mut wc);
                distinct = wc.len();
                black_box(wc);
            });
            println!(
                "{name:<16} {pattern:<7} {:>10.1} {:>10.1} {n:>10} {distinct:>10}",
                megabytes / split_secs,
                megabytes / count_secs
            );
        }
    }
}
