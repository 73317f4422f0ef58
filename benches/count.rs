//! Pre-tokenization + counting speed on one core: the splitter alone, then splitting and
//! counting (`Counter::count_serial`), on the same bytes.
//!
//! `cargo bench --bench count [-- FILE...]` (default: `../data/en-prose.txt` beside the
//! repository). Reads the first `BYTEPAIR_BENCH_MB` MB (default 20), cut after a newline.
//! Times are process CPU time (`CLOCK_PROCESS_CPUTIME_ID`), not wall time, because the
//! machine is shared; prints the median MB/s of `BYTEPAIR_BENCH_RUNS` runs (default 5).
//! `BYTEPAIR_BENCH_PATTERNS` (default `gpt2,cl100k,o200k`) picks the patterns.

mod corpus;

use bytepair::count::{Counter, WordCounts};
use bytepair::split::Splitter;
use std::hint::black_box;

/// CPU seconds used by this process so far.
fn cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Median CPU seconds of `runs` calls of `f`.
fn median_cpu_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = cpu_secs();
            f();
            cpu_secs() - start
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let files = corpus::files(&["en-prose.txt"]);
    let mb = corpus::megabytes();
    let runs: usize =
        std::env::var("BYTEPAIR_BENCH_RUNS").map_or(5, |v| v.parse().expect("a number"));
    println!("count: median MB/s of CPU time on one core, first {mb} MB of each file");
    println!(
        "{:<16} {:<7} {:>10} {:>10} {:>10} {:>10}",
        "file", "pattern", "split", "count", "pieces", "distinct"
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
            let split_secs = median_cpu_secs(runs, || {
                n = 0;
                splitter.for_each(&text, |p| {
                    black_box(p);
                    n += 1;
                });
            });
            let mut distinct = 0;
            let count_secs = median_cpu_secs(runs, || {
                let mut wc = WordCounts::new();
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
