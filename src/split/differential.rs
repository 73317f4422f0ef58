//! Differential tests: each hand-written splitter cuts exactly where fancy-regex, running the
//! same regex, cuts (for `deepseek`, fancy-regex running its three splits one after
//! another; for `superword`, SuperBPE's stage-2 regex): on random Unicode biased toward the characters the patterns treat specially, on
//! random bytes (invalid UTF-8), on a prefix of every shared corpus and on documents drawn
//! from across each.
//!
//! - `BYTEPAIR_PROPTEST_CASES` sets the cases per property (default 2,000; `make fuzz`: 20,000).
//! - `BYTEPAIR_CORPUS_BYTES` sets how much of each corpus to compare (default 2 MB); the
//!   ignored test `every_corpus_whole` (run by `make fuzz`) compares all of them.
//! - A failure prints the shrunk input and both splits; proptest saves its seed under
//!   `proptest-regressions/` and replays it first on the next run. To replay one by hand, paste
//!   the input into `assert_same(...)` in a unit test.

use super::{Splitter, DEEPSEEK_SPLITS};
use proptest::prelude::*;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

/// The built-in patterns, each with a hand-written splitter (and the built-in safe-cut rule).
pub(crate) const BUILT_IN: [&str; 8] = [
    "gpt2", "cl100k", "o200k", "llama3", "qwen2", "qwen3.5", "tekken", "deepseek",
];

/// The patterns with a hand-written splitter: the built-in ones and `superword`.
pub(crate) fn hand_written() -> impl Iterator<Item = &'static str> {
    BUILT_IN.into_iter().chain(["superword"])
}

/// A text's pieces, one `piece_end` after another (a hand-written splitter's own loop).
pub(crate) fn pieces(text: &str, piece_end: fn(&[u8], usize) -> usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let end = piece_end(text.as_bytes(), i);
        out.push(&text[i..end]);
        i = end;
    }
    out
}

/// For each pattern with a hand-written splitter (see [`hand_written`]): its name, the
/// hand-written splitter and the fancy-regex splits it stands for (one regex, or DeepSeek's
/// three in turn).
static SPLITTERS: LazyLock<Vec<(&str, Splitter, Vec<Splitter>)>> = LazyLock::new(|| {
    hand_written()
        .map(|name| {
            let fast = Splitter::new(name).unwrap();
            assert!(fast.is_hand_written(), "{name} runs fancy-regex");
            let steps = if name == "deepseek" {
                DEEPSEEK_SPLITS
                    .iter()
                    .map(|p| Splitter::with_regex(p).unwrap())
                    .collect()
            } else {
                vec![Splitter::with_regex(name).unwrap()]
            };
            (name, fast, steps)
        })
        .collect()
});

/// The pieces of `text` after each step in turn, as HuggingFace's Sequence of isolated Splits
/// makes them: each step splits every piece of the one before, its matches and the gaps
/// between them all pieces.
fn split_in_turn<'a>(steps: &[Splitter], text: &'a [u8]) -> Vec<&'a [u8]> {
    let mut pieces = vec![text];
    for step in steps {
        pieces = pieces.into_iter().flat_map(|p| step.split(p)).collect();
    }
    pieces
}

/// Pieces, readable in a failure message: as strings when they are UTF-8.
fn show(pieces: &[&[u8]]) -> Vec<String> {
    pieces
        .iter()
        .map(|p| match std::str::from_utf8(p) {
            Ok(s) => format!("{s:?}"),
            Err(_) => format!("b\"{}\"", p.escape_ascii()),
        })
        .collect()
}

/// Fails, naming the pattern and where the two splits first differ, unless the two engines
/// split `text` alike.
fn assert_same(text: &[u8]) -> Result<(), String> {
    for (name, fast, steps) in SPLITTERS.iter() {
        let (got, want) = (fast.split(text), split_in_turn(steps, text));
        if got != want {
            let first = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
            let offset: usize = got[..first].iter().map(|p| p.len()).sum();
            let window =
                |pieces: &[&[u8]]| show(&pieces[first..pieces.len().min(first + 6)]).join(", ");
            let text_shown = if text.len() <= 200 {
                format!("{:?}", String::from_utf8_lossy(text))
            } else {
                format!("{} bytes", text.len())
            };
            return Err(format!(
                "{name} on {text_shown}: from byte {offset} (piece {first}):\n  \
                 hand-written [{}]\n  fancy-regex  [{}]",
                window(&got),
                window(&want)
            ));
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("BYTEPAIR_PROPTEST_CASES").map_or(2_000, |v| {
        v.parse().expect("BYTEPAIR_PROPTEST_CASES is a number")
    })
}

/// Characters the patterns treat specially, each a reason a splitter could go wrong.
const INTERESTING: &[char] = &[
    // Whitespace of every kind (Unicode White_Space), and look-alikes that are not `\s`.
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r',
    '\x0b',
    '\x0c',
    '\u{85}',
    '\u{a0}',
    '\u{1680}',
    '\u{2000}',
    '\u{200a}',
    '\u{2028}',
    '\u{2029}',
    '\u{202f}',
    '\u{205f}',
    '\u{3000}',
    '\x1c',
    '\x1f',
    '\u{200b}',
    '\u{feff}',
    '\0',
    '\x7f',
    // Contractions, in every case, and `ſ`, which `(?i)s` matches; a curly apostrophe.
    '\'',
    '\'',
    '’',
    's',
    'S',
    'ſ',
    't',
    'T',
    'd',
    'D',
    'm',
    'M',
    'l',
    'L',
    'v',
    'V',
    'e',
    'E',
    'r',
    'R',
    // Letters: Lu, Ll, Lt, Lm, Lo in several scripts.
    'a',
    'Z',
    'é',
    'É',
    'ß',
    'ω',
    'Ω',
    'д',
    'Д',
    'ǅ',
    'ᾈ',
    'ʰ',
    'ー',
    'ᵃ',
    '中',
    'あ',
    'א',
    'ا',
    'ก',
    'ㄱ',
    // Numbers: Nd of several scripts, No, Nl, in and beyond the Basic Multilingual Plane.
    '0',
    '7',
    '٣',
    '۴',
    '५',
    '０',
    '９',
    '²',
    '¹',
    '½',
    'Ⅻ',
    'ⅰ',
    '〇',
    '①',
    '⑳',
    '𝟙',
    '𐄇',
    // Marks: Mn, Mc, Me.
    '\u{301}',
    '\u{308}',
    '\u{64b}',
    '\u{93f}',
    '\u{20dd}',
    '\u{1ab0}',
    // Punctuation and symbols, `/` (o200k's tail), emoji and their joiners, a noncharacter.
    '.',
    ',',
    '!',
    '?',
    '/',
    '"',
    '-',
    '(',
    '$',
    '€',
    '©',
    '_',
    '\\',
    '@',
    '😀',
    '\u{200d}',
    '\u{fe0f}',
    '\u{1f3fb}',
    '🇺',
    '\u{10ffff}',
    // DeepSeek's second step, `[一-龥぀-ゟ゠-ヿ]+`: the ends of its ranges and their
    // neighbours outside, and in them the marks, symbols, punctuation and unassigned code
    // points that its third step splits apart again.
    '\u{4dff}',
    '一',
    '龥',
    '\u{9fa6}',
    '\u{9fff}',
    '\u{303f}',
    '\u{3040}',
    'ぁ',
    'か',
    '\u{3097}',
    '\u{3099}',
    '\u{309a}',
    '゛',
    'ゝ',
    'ゟ',
    '゠',
    'ア',
    '・',
    'ヿ',
    '\u{3100}',
    // Punctuation and symbols that are not ASCII, and characters that are none of letter,
    // mark, number, punctuation, symbol or whitespace: controls, format, private use,
    // unassigned.
    '、',
    '，',
    '「',
    '“',
    '«',
    '¨',
    '\u{1}',
    '\u{1b}',
    '\u{ad}',
    '\u{600}',
    '\u{2060}',
    '\u{e000}',
    '\u{378}',
];

/// Runs of text the patterns have rules for.
const FRAGMENTS: &[&str] = &[
    "n't",
    "'ll",
    "'LL",
    "'Re",
    "'ve",
    "'s",
    "'S",
    "'ſ",
    " the",
    " The",
    "HTML",
    "IBM's",
    "don'T",
    "\r\n",
    " \n",
    "\n\n",
    "  ",
    "   x",
    "1234567",
    "12345678901",
    "１２３４",
    "1²3",
    "①②③④",
    "\u{1d7d9}\u{1d7da}",
    " 42",
    "://",
    "/\n/",
    ")\n",
    "e\u{301}",
    "A\u{301}b",
    "\u{301}A",
    " \u{301}",
    ".\u{301}x",
    "\u{93f}\u{301}1",
    "\n \n",
    "ǅa",
    "Aʰ",
    "ʰA",
    "中文",
    " ...",
    "\t\t",
    "\u{3000}x",
    "東京・大阪",
    "か\u{3099}",
    "\u{3099}か",
    "a\u{3099}",
    "123中",
    "中123",
    " 中",
    "1 2",
    ".com",
    "(café",
    "\u{0}a",
    "・\n",
    " ・",
    "\u{3000}中",
];

fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::sample::select(INTERESTING),
        3 => prop::char::range('\0', '\x7f'),
        1 => prop::char::range('\u{4e00}', '\u{9fff}'),
        // Kana and the ends of DeepSeek's ideograph range.
        1 => prop::char::range('\u{3030}', '\u{3110}'),
        1 => prop::char::range('\u{9f98}', '\u{9fb0}'),
        2 => any::<char>(),
    ]
}

fn interesting_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        5 => interesting_char().prop_map(String::from),
        1 => prop::sample::select(FRAGMENTS).prop_map(String::from),
    ];
    prop::collection::vec(part, 0..40).prop_map(|parts| parts.concat())
}

fn interesting_bytes() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        4 => interesting_char().prop_map(|c| c.to_string().into_bytes()),
        1 => prop::sample::select(FRAGMENTS).prop_map(|s| s.as_bytes().to_vec()),
        2 => any::<u8>().prop_map(|b| vec![b]),
        // A multi-byte character cut short, or missing its first byte.
        1 => (any::<char>(), any::<bool>()).prop_map(|(c, head)| {
            let b = c.to_string().into_bytes();
            if head { b[..b.len() - 1].to_vec() } else { b[1..].to_vec() }
        }),
    ];
    prop::collection::vec(part, 0..40).prop_map(|parts| parts.concat())
}

/// Pieces of ASCII text: words, contractions, indentation, code.
const ASCII_PARTS: &[&str] = &[
    " the",
    "word",
    "HTML",
    "camelCase",
    "'s",
    "'ll",
    "'VE",
    "  ",
    "    ",
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    "123",
    "4567",
    "//",
    " (",
    ");\n",
    "{\n",
    "x = y;",
    "\n    ",
    "!\n/",
    " 's",
    "a.b",
    "'",
    "\x0b",
    "\x1f",
];

/// Mostly ASCII and long enough for the splitters' windows of up to 63 bytes
/// (`split/window.rs`), with now and then a character that ends one.
fn ascii_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        10 => prop::char::range('\0', '\x7f').prop_map(String::from),
        6 => prop::sample::select(ASCII_PARTS).prop_map(String::from),
        1 => interesting_char().prop_map(String::from),
    ];
    prop::collection::vec(part, 0..120).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn property_ascii_splits_like_fancy_regex(text in ascii_text()) {
        assert_same(text.as_bytes()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn property_unicode_splits_like_fancy_regex(text in interesting_text()) {
        assert_same(text.as_bytes()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn property_any_string_splits_like_fancy_regex(text in any::<String>()) {
        assert_same(text.as_bytes()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn property_bytes_split_like_fancy_regex(bytes in interesting_bytes()) {
        assert_same(&bytes).map_err(TestCaseError::fail)?;
    }
}

/// Pieces the fast paths (eight-byte ASCII runs, the CJK run, whitespace runs) treat apart
/// from the general path, and their edges: 0x7F/0x80, the ends of U+4E00..U+9FFF, non-ASCII
/// whitespace, runs across an eight-byte boundary, cut-short characters; DeepSeek's ranges'
/// ends.
const EDGES: &[&str] = &[
    "a",
    "Z",
    "abcdefghi",
    "ABCDEFGHIJ",
    "HTMLParser",
    "xY",
    "7",
    "12345",
    "'s",
    "'LL",
    "'",
    " ",
    "         ",
    "\t",
    "\r\n",
    "\n",
    "\u{7f}",
    "\u{80}",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "中",
    "中文字",
    "\u{4dff}",
    "\u{4e00}",
    "\u{9fff}",
    "\u{a000}",
    "。",
    "é",
    "\u{301}",
    "/",
    ".",
    "\u{9fa5}",
    "\u{9fa6}",
    "\u{3040}",
    "\u{303f}",
    "\u{309f}",
    "\u{30a0}",
    "\u{30ff}",
    "\u{3100}",
    "・",
    "\u{3099}",
    "\u{0}",
    "(a",
];

#[test]
fn every_triple_of_edge_pieces_splits_like_fancy_regex() {
    let mut text = Vec::new();
    for a in EDGES {
        for b in EDGES {
            for c in EDGES {
                text.clear();
                text.extend_from_slice(a.as_bytes());
                text.extend_from_slice(b.as_bytes());
                text.extend_from_slice(c.as_bytes());
                assert_same(&text).unwrap();
                // Each one cut short by a byte: an invalid sequence at the end or inside.
                assert_same(&text[..text.len() - 1]).unwrap();
            }
        }
    }
}

/// Runs of numbers of every length up to 40 (`superword` groups them in threes from the
/// right, the others in threes from the left or one by one), of ASCII digits and of numbers
/// of 1 to 4 bytes mixed, between text, invalid bytes and the text's ends.
#[test]
fn number_runs_of_every_length_split_like_fancy_regex() {
    let numbers = ["7", "０", "²", "Ⅻ", "①", "٣", "\u{1d7d9}", "〇"];
    let around: [&[u8]; 5] = [b"", b"a b", b"\xff", "中。".as_bytes(), b"\xe2\x91"];
    for len in 0..40 {
        for mix in 0..numbers.len() {
            let run: Vec<u8> = (0..len)
                .flat_map(|k| {
                    let n = if mix == 0 {
                        "7"
                    } else {
                        numbers[(k * mix + k / 3) % numbers.len()]
                    };
                    n.bytes()
                })
                .collect();
            for before in around {
                for after in around {
                    let mut text = before.to_vec();
                    text.extend_from_slice(&run);
                    text.extend_from_slice(after);
                    text.extend_from_slice(&run);
                    assert_same(&text).unwrap();
                }
            }
        }
    }
}

/// The shared corpora, `*.txt.xz` in `$BYTEPAIR_SHARED/corpora` (default `../shared`, beside
/// the repository). Panics, rather than passing vacuously, when there are none.
pub(crate) fn corpora() -> Vec<PathBuf> {
    let shared = std::env::var_os("BYTEPAIR_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from,
    );
    let dir = shared.join("corpora");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; set BYTEPAIR_SHARED", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".txt.xz"))
        .collect();
    paths.sort();
    assert!(
        !paths.is_empty(),
        "no *.txt.xz corpora in {}",
        dir.display()
    );
    paths
}

/// `xz -dc path`, its output piped.
fn xz(path: &Path) -> std::process::Child {
    Command::new("xz")
        .arg("-dc")
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `xz -dc {}`: {e}", path.display()))
}

/// `n` documents of 20 lines drawn evenly from the whole of the xz-compressed `path`
/// (a reservoir sample with a fixed seed), read by the `xz` tool as a stream.
pub(crate) fn documents(path: &Path, n: usize) -> Vec<Vec<u8>> {
    let mut child = xz(path);
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut rng = crate::test_rng::Lcg(22);
    let (mut docs, mut seen) = (Vec::new(), 0);
    loop {
        let mut doc = Vec::new();
        for _ in 0..20 {
            if lines.read_until(b'\n', &mut doc).unwrap() == 0 {
                break;
            }
        }
        if doc.is_empty() {
            break;
        }
        seen += 1;
        if docs.len() < n {
            docs.push(doc);
        } else {
            let slot = rng.below(seen);
            if slot < n {
                docs[slot] = doc;
            }
        }
    }
    assert!(child.wait().unwrap().success(), "xz -dc {}", path.display());
    docs
}

/// Compares the engines on the first `limit` bytes of the xz-compressed `path`, decompressed by
/// the `xz` tool as a stream, one block of about 1 MB (cut after a newline) at a time.
fn compare_corpus(path: &Path, limit: u64) {
    let mut child = xz(path);
    let mut stream = child.stdout.take().unwrap().take(limit);
    let mut block = Vec::new();
    let mut compared = 0;
    loop {
        let read = (&mut stream).take(1 << 20).read_to_end(&mut block).unwrap();
        let cut = match block.iter().rposition(|&b| b == b'\n') {
            Some(nl) if read > 0 => nl + 1,
            _ => block.len(),
        };
        if cut == 0 {
            break;
        }
        if let Err(msg) = assert_same(&block[..cut]) {
            panic!("{} near byte {compared}: {msg}", path.display());
        }
        compared += cut;
        block.drain(..cut);
    }
    drop(stream);
    let _ = child.kill();
    let _ = child.wait();
    assert!(compared > 0, "{} is empty", path.display());
}

#[test]
fn every_corpus_prefix_splits_like_fancy_regex() {
    let limit = std::env::var("BYTEPAIR_CORPUS_BYTES").map_or(2 << 20, |v| {
        v.parse().expect("BYTEPAIR_CORPUS_BYTES is a number")
    });
    for path in corpora() {
        compare_corpus(&path, limit);
    }
}

#[test]
fn corpus_documents_split_like_fancy_regex() {
    // 200 documents of 20 lines from all over each corpus (the multilingual one is grouped
    // by language, so its prefix alone would be a few languages).
    for path in corpora() {
        for (k, doc) in documents(&path, 200).iter().enumerate() {
            if let Err(msg) = assert_same(doc) {
                panic!("{} document {k}: {msg}", path.display());
            }
        }
    }
}

#[test]
#[ignore = "minutes: every byte of every corpus; `make fuzz` runs it"]
fn every_corpus_whole() {
    for path in corpora() {
        compare_corpus(&path, u64::MAX);
    }
}
