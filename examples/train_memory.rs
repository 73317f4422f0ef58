//! Peak anonymous memory and time of the merge loop on saved counts.
//!
//! `cargo run --release --example train_memory -- COUNTS.bin [VOCAB]`, where COUNTS.bin
//! is `PretokenCounts::to_bytes` output (Python: `open(p, "wb").write(counts.to_bytes())`).
//! A thread samples `RssAnon` from /proc/self/status every 5 ms.

use bytepair::count::PretokenCounts;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rss_anon_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: train_memory COUNTS.bin [VOCAB]");
    let vocab: usize = args.get(2).map_or(32_000, |v| v.parse().expect("vocab"));
    let peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_anon_kb(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let counts = {
        let data = std::fs::read(path).expect("read counts");
        PretokenCounts::from_bytes(&data).expect("parse counts")
    };
    let loaded = rss_anon_kb();
    peak.store(0, Ordering::Relaxed);
    let base = rss_anon_kb();
    let pretokens = counts.into_pretokens();
    let t = Instant::now();
    let (merges, _) =
        bytepair::train::train_from(pretokens, vocab - 257, 1, &mut |_, _| true).expect("train");
    let secs = t.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let mut seen = std::collections::HashSet::new();
    let dups = merges
        .iter()
        .filter(|(a, b)| !seen.insert([a.as_slice(), b].concat()))
        .count();
    println!("merges whose bytes already exist: {dups}");
    let mut h: u64 = 0xcbf29ce484222325;
    for (a, b) in &merges {
        for &x in a
            .iter()
            .chain([0xffu8].iter())
            .chain(b.iter())
            .chain([0xfe].iter())
        {
            h = (h ^ x as u64).wrapping_mul(0x100000001b3);
        }
    }
    println!(
        "merges {} hash {h:016x} time {secs:.2} s; RssAnon loaded {} MB, before train {} MB, peak {} MB",
        merges.len(),
        loaded / 1024,
        base / 1024,
        peak.load(Ordering::Relaxed) / 1024
    );
}
