//! Where single-thread encoding time goes: splitting alone, then splitting + encoding the
//! whole text, then the benchmark's 20-line documents one call each, on a rank table from
//! `.tiktoken` files, for profiling and quick timing without Python.
//!
//!     cargo run --release --example encode_profile -- FILE.tiktoken PATTERN TEXT [MB]
//!
//! `CHARS=0` switches the start from whole characters off; `RUNS=1` runs once, for
//! `valgrind --tool=callgrind --toggle-collect='*encode_ordinary*'` (instruction counts are
//! repeatable on a busy machine, wall time is not). `WARM=FILE` first encodes FILE's
//! documents untimed, as the benchmark's earlier rounds fill the per-thread caches; then
//! `--toggle-collect='*encode_documents*'` counts the documents of TEXT alone, which is
//! new text to those caches (the benchmark's `--stream` row) when FILE is another slice.

use bytepair::encode::Encoder;
use bytepair::split::Splitter;

/// This thread's CPU time in seconds (the machine is shared: wall time is mostly others').
/// `clock_gettime`, not `/proc/thread-self/schedstat`: the file is updated once per 4 ms
/// tick here, which quantised 3 MB runs to steps of 6-9%.
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime failed");
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn b64(s: &[u8]) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    } as u32;
    let s: Vec<u8> = s.iter().copied().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c) << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

/// The benchmark's loop: one call per document; its own function so that callgrind can
/// count it alone (`--toggle-collect='*encode_documents*'`).
#[inline(never)]
fn encode_documents(enc: &Encoder, docs: &[Vec<u8>]) -> usize {
    docs.iter().map(|d| enc.encode_ordinary(d).len()).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks = std::fs::read(&args[1]).unwrap();
    let vocab: Vec<(u32, Vec<u8>)> = ranks
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let sp = l.iter().position(|&c| c == b' ').unwrap();
            let rank = std::str::from_utf8(&l[sp + 1..]).unwrap().parse().unwrap();
            (rank, b64(&l[..sp]))
        })
        .collect();
    let mb: usize = args.get(4).map_or(3, |s| s.parse().unwrap());
    let mut text = std::fs::read(&args[3]).unwrap();
    text.truncate(mb * 1_000_000);
    while std::str::from_utf8(&text).is_err() {
        text.pop();
    }
    // CHARS=0 switches the start from whole characters off, to compare.
    let on = std::env::var("CHARS").map_or(true, |v| v != "0");
    let enc = Encoder::new(vocab, None, vec![], &args[2])
        .unwrap()
        .with_char_start(on);
    let splitter = Splitter::new(&args[2]).unwrap();
    let mut best_split = f64::MAX;
    let mut best_enc = f64::MAX;
    let mut best_docs = f64::MAX;
    // The benchmark's documents: 20 lines each, one call per document.
    let lines: Vec<&[u8]> = text.split_inclusive(|&c| c == b'\n').collect();
    let docs: Vec<Vec<u8>> = lines.chunks(20).map(|c| c.concat()).collect();
    if let Ok(warm) = std::env::var("WARM") {
        let warm = std::fs::read(warm).unwrap();
        let lines: Vec<&[u8]> = warm.split_inclusive(|&c| c == b'\n').collect();
        let warm_docs: Vec<Vec<u8>> = lines.chunks(20).map(|c| c.concat()).collect();
        std::hint::black_box(
            warm_docs
                .iter()
                .map(|d| enc.encode_ordinary(d).len())
                .sum::<usize>(),
        );
    }
    let mut n = 0;
    // RUNS=1 for valgrind.
    let runs = std::env::var("RUNS").map_or(5, |v| v.parse().unwrap());
    for _ in 0..runs {
        let t = cpu();
        std::hint::black_box(encode_documents(&enc, &docs));
        best_docs = best_docs.min(cpu() - t);
        let t = cpu();
        let mut pretokens = 0usize;
        splitter.for_each(&text, |_| pretokens += 1);
        best_split = best_split.min(cpu() - t);
        let t = cpu();
        n = enc.encode_ordinary(&text).len();
        best_enc = best_enc.min(cpu() - t);
    }
    let mbs = |s: f64| text.len() as f64 / s / 1e6;
    println!(
        "{} bytes -> {n} ids; split {:.1} MB/s, split+encode {:.1} MB/s, {} documents {:.1} MB/s (CPU time, best of 5)",
        text.len(),
        mbs(best_split),
        mbs(best_enc),
        docs.len(),
        mbs(best_docs)
    );
}
