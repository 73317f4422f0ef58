//! Pre-tokenization speed: the hand-written splitters against fancy-regex running the same
//! tiktoken regex, on the same bytes, one core.
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
//!         --toggle-collect='split::pieces*' target/release/deps/split-* --hand-only FILE
//!
//! With `BYTEPAIR_BENCH_PATTERNS=o200k` (comma-separated) only those patterns run.

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

/// This thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`: nanoseconds, where
/// `/proc/thread-self/schedstat` moves in whole scheduler ticks on this VM).
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Median CPU seconds of this thread over `runs` calls of `f`.
fn median_cpu_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = thread_cpu_secs();
            f();
            thread_cpu_secs() - start
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

/// The number of pieces of `text` (not inlined, so callgrind can count just this).
#[inline(never)]
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
    let hand_only = std::env::args().any(|a| a == "--hand-only");
    let runs = std::env::var("BYTEPAIR_BENCH_RUNS").map_or(5, |v| v.parse().expect("a number"));
    let patterns: Vec<String> = std::env::var("BYTEPAIR_BENCH_PATTERNS")
        .unwrap_or_else(|_| "gpt2,cl100k,o200k".into())
        .split(',')
        .map(String::from)
        .collect();
    println!("split: median MB/s on one core, first {mb} MB of each file");
    println!(
        "{:<16} {:<7} {:>12} {:>12} {:>7} {:>10}",
        "file", "pattern", "hand-written", "fancy-regex", "ratio", "pieces"
    );
    for file in files {
        let text = corpus::prefix(&file, mb);
        let megabytes = text.len() as f64 / 1e6;
        let name = file.file_name().unwrap().to_string_lossy();
        for pattern in &patterns {
            let fast = Splitter::new(pattern).unwrap();
            if hand_only {
                let mut n = 0;
                let secs = median_cpu_secs(runs, || n = pieces(&fast, &text));
                println!(
                    "{name:<16} {pattern:<7} {:>12.1} {:>12} {:>7} {n:>10}   ({} bytes)",
                    megabytes / secs,
                    "-",
                    "-",
                    text.len()
                );
                continue;
            }
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
