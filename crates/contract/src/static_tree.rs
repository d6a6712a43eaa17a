//! The tree of the `static` feature: 20 files of a fixed seed (HTML, CSS, JS, JSON, SVG, PNG,
//! WOFF2; 1 KiB to 1 MiB) that the harness writes once into its cache and hands to a server in
//! `STATIC_DIR`, and that verify rebuilds in memory to compare every byte served.
//!
//! The bytes come from a hand-written xorshift generator seeded by each file's name, so they
//! are the same on every machine and in every version of every crate (a `rand` upgrade would
//! change them). Text files are words (they compress like real text); PNG and WOFF2 files are
//! their format's signature and random bytes (they do not).

use std::io;
use std::path::{Path, PathBuf};

/// The version of the tree: a change of names, sizes or generator bumps it, so a cache written
/// by an older serverbench is never served as this one.
pub const VERSION: u32 = 2;
/// The file beside `STATIC_DIR` a `..` traversal would reach (named like a manifest).
pub const SENTINEL_NAME: &str = "server.toml";
/// Its content: verify fails any answer that contains it.
pub const SENTINEL: &[u8] =
    b"# serverbench traversal sentinel: never served\nsecret = \"f0e1d2c3\"\n";
/// Written last: a tree without it is incomplete and written again.
const COMPLETE: &str = ".complete";

/// One file of the tree: its path under `STATIC_DIR` and its size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticFile {
    /// Path under `STATIC_DIR`, `/`-separated (also the URL path under `/static/`).
    pub path: &'static str,
    /// Size in bytes.
    pub size: usize,
}

const KIB: usize = 1024;

/// The 20 files, smallest 1 KiB, largest 1 MiB.
pub const FILES: [StaticFile; 20] = [
    f("home.html", 8 * KIB),
    f("about.html", 3 * KIB),
    f("docs/guide.html", 60 * KIB),
    f("css/site.css", 40 * KIB),
    f("css/theme.css", 12 * KIB),
    f("css/print.css", 3 * KIB / 2),
    f("js/app.js", 200 * KIB),
    f("js/vendor.js", 1024 * KIB),
    f("js/chunk.js", 64 * KIB),
    f("js/worker.js", 5 * KIB),
    f("data/items.json", 100 * KIB),
    f("data/config.json", 2 * KIB),
    f("manifest.json", KIB),
    f("img/logo.svg", 6 * KIB),
    f("img/icons.svg", 30 * KIB),
    f("img/hero.png", 500 * KIB),
    f("img/thumb.png", 20 * KIB),
    f("img/avatar.png", KIB),
    f("fonts/inter.woff2", 90 * KIB),
    f("fonts/mono.woff2", 40 * KIB),
];

const fn f(path: &'static str, size: usize) -> StaticFile {
    StaticFile { path, size }
}

/// The kinds of file, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.html`
    Html,
    /// `.css`
    Css,
    /// `.js`
    Js,
    /// `.json`
    Json,
    /// `.svg`
    Svg,
    /// `.png`
    Png,
    /// `.woff2`
    Woff2,
}

impl Kind {
    /// The kind of a path, by its extension.
    pub fn of(path: &str) -> Option<Kind> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "html" => Kind::Html,
            "css" => Kind::Css,
            "js" => Kind::Js,
            "json" => Kind::Json,
            "svg" => Kind::Svg,
            "png" => Kind::Png,
            "woff2" => Kind::Woff2,
            _ => return None,
        })
    }

    /// The media types a server may answer (the first is the registered one; the others are
    /// what widespread MIME tables still say).
    pub fn media_types(self) -> &'static [&'static str] {
        match self {
            Kind::Html => &["text/html"],
            Kind::Css => &["text/css"],
            Kind::Js => &[
                "text/javascript",
                "application/javascript",
                "application/x-javascript",
            ],
            Kind::Json => &["application/json"],
            Kind::Svg => &["image/svg+xml"],
            Kind::Png => &["image/png"],
            Kind::Woff2 => &["font/woff2", "application/font-woff2"],
        }
    }

    /// True for text, which a server is asked to compress.
    pub fn is_text(self) -> bool {
        !matches!(self, Kind::Png | Kind::Woff2)
    }
}

impl StaticFile {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        Kind::of(self.path).expect("every file of the tree has a known extension")
    }

    /// Its bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut rng = XorShift::new(self.path);
        let kind = self.kind();
        let mut out: Vec<u8> = match kind {
            Kind::Png => b"\x89PNG\r\n\x1a\n".to_vec(),
            Kind::Woff2 => b"wOF2".to_vec(),
            _ => prefix(kind).as_bytes().to_vec(),
        };
        if kind.is_text() {
            while out.len() < self.size {
                text_line(&mut rng, kind, &mut out);
            }
        } else {
            while out.len() < self.size {
                out.extend_from_slice(&rng.next().to_le_bytes());
            }
        }
        out.truncate(self.size);
        out
    }
}

fn prefix(kind: Kind) -> &'static str {
    match kind {
        Kind::Html => "<!DOCTYPE html>\n<html><head><title>serverbench</title></head><body>\n",
        Kind::Css => "/* serverbench static tree */\n",
        Kind::Js => "\"use strict\";\n",
        Kind::Json => "{\"items\":[\n",
        Kind::Svg => "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 100 100\">\n",
        Kind::Png | Kind::Woff2 => "",
    }
}

const WORDS: [&str; 24] = [
    "alpha",
    "bench",
    "server",
    "static",
    "request",
    "answer",
    "header",
    "length",
    "stream",
    "buffer",
    "socket",
    "thread",
    "worker",
    "latency",
    "throughput",
    "connection",
    "keep",
    "alive",
    "chunk",
    "gzip",
    "brotli",
    "cache",
    "etag",
    "modified",
];

/// One line of text in the style of the kind (so it compresses like the real thing).
fn text_line(rng: &mut XorShift, kind: Kind, out: &mut Vec<u8>) {
    let w = |rng: &mut XorShift| WORDS[(rng.next() % WORDS.len() as u64) as usize];
    let n = rng.next() % 1000;
    let line = match kind {
        Kind::Html => format!("<p class=\"{}\">{} {} {n}</p>\n", w(rng), w(rng), w(rng)),
        Kind::Css => format!(
            ".{}-{n} {{ margin: {}px; color: #{:06x}; }}\n",
            w(rng),
            n % 40,
            n * 997
        ),
        Kind::Js => format!(
            "function {}{n}(x) {{ return x.{} + {n}; }}\n",
            w(rng),
            w(rng)
        ),
        Kind::Json => format!(
            "{{\"id\":{n},\"name\":\"{} {}\",\"ok\":true}},\n",
            w(rng),
            w(rng)
        ),
        _ => format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" class=\"{}\"/>\n",
            n % 100,
            n % 97,
            n % 13,
            w(rng)
        ),
    };
    out.extend_from_slice(line.as_bytes());
}

/// xorshift64*: small, fast, and fixed forever.
struct XorShift(u64);

impl XorShift {
    fn new(seed: &str) -> XorShift {
        // FNV-1a of the seed string, never zero.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        XorShift(h | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Where the tree of this version lives under a cache folder: `<cache>/static/v<N>`; the
/// served folder (`STATIC_DIR`) is its `www`, the sentinel sits beside it.
pub fn root_under(cache: &Path) -> PathBuf {
    cache.join("static").join(format!("v{VERSION}"))
}

/// Writes the tree under `root` unless a complete one is there, and returns `STATIC_DIR`
/// (`root/www`). Written into a temporary sibling and renamed, so a reader never sees half.
pub fn ensure(root: &Path) -> io::Result<PathBuf> {
    let www = root.join("www");
    if root.join(COMPLETE).is_file() {
        return Ok(www);
    }
    let parent = root.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        root.file_name().and_then(|n| n.to_str()).unwrap_or("tree"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    for file in &FILES {
        let path = tmp.join("www").join(file.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, file.bytes())?;
    }
    std::fs::write(tmp.join(SENTINEL_NAME), SENTINEL)?;
    std::fs::write(tmp.join(COMPLETE), b"")?;
    let _ = std::fs::remove_dir_all(root);
    match std::fs::rename(&tmp, root) {
        Ok(()) => Ok(www),
        // Another process finished the same tree first.
        Err(_) if root.join(COMPLETE).is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(www)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_has_twenty_files_from_one_kib_to_one_mib_of_seven_kinds() {
        assert_eq!(FILES.len(), 20);
        assert_eq!(FILES.iter().map(|f| f.size).min(), Some(1024));
        assert_eq!(FILES.iter().map(|f| f.size).max(), Some(1 << 20));
        let mut kinds: Vec<String> = FILES.iter().map(|f| format!("{:?}", f.kind())).collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), 7);
    }

    #[test]
    fn file_bytes_are_fixed_by_the_seed_and_of_the_stated_size() {
        for f in &FILES {
            let b = f.bytes();
            assert_eq!(b.len(), f.size, "{}", f.path);
            assert_eq!(b, f.bytes(), "{}", f.path);
        }
        // Pinned: a change of the generator must bump VERSION.
        let index = FILES[0].bytes();
        assert!(index.starts_with(b"<!DOCTYPE html>"));
        let sum: u64 = index.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum, 692_360, "the generator changed: bump VERSION");
    }

    #[test]
    fn ensure_writes_the_tree_once_with_the_sentinel_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = root_under(dir.path());
        let www = ensure(&root).unwrap();
        for f in &FILES {
            assert_eq!(std::fs::read(www.join(f.path)).unwrap(), f.bytes());
        }
        assert_eq!(std::fs::read(root.join(SENTINEL_NAME)).unwrap(), SENTINEL);
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
        let before = mtime(&www.join("home.html"));
        ensure(&root).unwrap();
        assert_eq!(mtime(&www.join("home.html")), before);
    }
}
