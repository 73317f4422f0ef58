//! The corpus files a Rust bench reads: its arguments, or defaults in `../data` beside the
//! repository (as `../shared/corpora/unpack.sh ../data` makes them), each cut to its first
//! `BYTEPAIR_BENCH_MB` MB (default 20) and then after its last newline.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The files named on the command line, or `defaults` (names in `../data`).
pub fn files(defaults: &[&str]) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if !files.is_empty() {
        return files;
    }
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    defaults.iter().map(|name| data.join(name)).collect()
}

/// `BYTEPAIR_BENCH_MB`: how many MB of each file to read.
pub fn megabytes() -> u64 {
    std::env::var("BYTEPAIR_BENCH_MB").map_or(20, |v| v.parse().expect("a number"))
}

/// The first `mb` MB of `file`, cut after its last newline.
pub fn prefix(file: &Path, mb: u64) -> Vec<u8> {
    let mut text = Vec::new();
    std::fs::File::open(file)
        .unwrap_or_else(|e| panic!("{}: {e}; pass corpus files as arguments", file.display()))
        .take(mb << 20)
        .read_to_end(&mut text)
        .unwrap();
    if let Some(nl) = text.iter().rposition(|&b| b == b'\n') {
        text.truncate(nl + 1);
    }
    text
}
