//! Setup stamps: a hash of a server folder's content (and its identity), recorded once its
//! `setup`/`build` ran, so availability can tell whether it needs setting up again without
//! running anything.

use crate::paths::Paths;
use crate::Server;
use fnv::FnvHasher;
use std::hash::Hasher;
use std::path::Path;

/// Folder names ignored by the content hash (spec/manifest.md, plus `.git` and `__pycache__`).
pub const IGNORED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "_build",
    "build",
    "bin",
    "obj",
    "zig-cache",
    "dist",
    ".git",
    "__pycache__",
];

/// True when the server has `setup`/`build` commands and its stamp does not match its content.
pub fn needs_setup(server: &Server, paths: &Paths) -> bool {
    let c = &server.manifest.commands;
    if c.setup.trim().is_empty() && c.build.trim().is_empty() {
        return false;
    }
    match stamp_of(server) {
        Ok(h) => read_stamp(paths, &server.id).as_deref() != Some(h.as_str()),
        Err(_) => true,
    }
}

/// The stamp recorded for a server, if any.
pub fn read_stamp(paths: &Paths, server_id: &str) -> Option<String> {
    std::fs::read_to_string(paths.stamp_file(server_id))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Records `hash` as the server's stamp.
pub fn write_stamp(paths: &Paths, server_id: &str, hash: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(paths.stamps_dir())?;
    std::fs::write(paths.stamp_file(server_id), format!("{hash}\n"))
}

/// What a stamp records: the content hash of the server folder ([`content_hash`]) and of the
/// files outside it its build reads ([`shared_inputs`]), and the identity (device, inode) of
/// the folder. The identity makes a fresh checkout (e.g. CI's clone, which may share the build
/// cache through `SERVERBENCH_CACHE`) set itself up even where the content is the same,
/// because its `node_modules`, `.venv` or `_build` do not exist yet.
pub fn stamp_of(server: &Server) -> std::io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&server.dir)?;
    let mut content = content_hash(&server.dir)?;
    for input in shared_inputs(server) {
        content.push('+');
        content.push_str(&file_hash(&input)?);
    }
    Ok(format!("{content}@{}:{}", meta.dev(), meta.ino()))
}

/// The files outside a server's folder that its setup or build reads: a `grpc` server's code
/// is generated from (or checked against) the contract's `spec/serverbench.proto`, so a change
/// there sets it up again.
pub fn shared_inputs(server: &Server) -> Vec<std::path::PathBuf> {
    if server.implements(serverbench_model::Feature::Grpc) {
        vec![server.dir.join("../../../spec/serverbench.proto")]
    } else {
        Vec::new()
    }
}

/// A 64-bit FNV-1a hash (hex) of one file's content.
fn file_hash(path: &Path) -> std::io::Result<String> {
    let mut h = FnvHasher::default();
    h.write(&std::fs::read(path)?);
    Ok(format!("{:016x}", h.finish()))
}

/// A 64-bit FNV-1a hash (hex) of every file under `dir` (relative path, size and content, in
/// sorted order), ignoring [`IGNORED_DIRS`] and documentation (`*.md`), which no build reads.
/// Symlinks are hashed by their target path.
pub fn content_hash(dir: &Path) -> std::io::Result<String> {
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files)?;
    files.sort();
    let mut h = FnvHasher::default();
    for rel in &files {
        let full = dir.join(rel);
        h.write(rel.as_bytes());
        h.write(&[0]);
        let meta = std::fs::symlink_metadata(&full)?;
        if meta.file_type().is_symlink() {
            h.write(b"->");
            h.write(std::fs::read_link(&full)?.to_string_lossy().as_bytes());
        } else {
            let data = std::fs::read(&full)?;
            h.write(&(data.len() as u64).to_le_bytes());
            h.write(&data);
        }
    }
    Ok(format!("{:016x}", h.finish()))
}

fn collect_files(base: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let ft = entry.file_type()?;
        let path = entry.path();
        if ft.is_dir() {
            if !IGNORED_DIRS.iter().any(|i| name == *i) {
                collect_files(base, &path, out)?;
            }
        } else if (ft.is_file() || ft.is_symlink()) && !is_documentation(&path) {
            let rel = path.strip_prefix(base).unwrap_or(&path);
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

/// Markdown files: a README edit must not make a built server "need setup" again.
fn is_documentation(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("server.toml"), "x").unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/main.rs"), "fn main() {}").unwrap();
        d
    }

    #[test]
    fn hash_is_stable_for_the_same_content() {
        let d = folder();
        assert_eq!(
            content_hash(d.path()).unwrap(),
            content_hash(d.path()).unwrap()
        );
    }

    #[test]
    fn hash_is_the_one_existing_stamps_hold() {
        // Changing the hash would make every set-up server "need setup" again.
        assert_eq!(content_hash(folder().path()).unwrap(), "fd917af7136e3b74");
    }

    #[test]
    fn hash_changes_when_a_source_file_changes() {
        let d = folder();
        let before = content_hash(d.path()).unwrap();
        std::fs::write(d.path().join("src/main.rs"), "fn main() { }").unwrap();
        assert_ne!(before, content_hash(d.path()).unwrap());
    }

    #[test]
    fn hash_ignores_a_readme_edit() {
        let d = folder();
        let before = content_hash(d.path()).unwrap();
        std::fs::write(d.path().join("README.md"), "# what it is, how it is tuned").unwrap();
        assert_eq!(before, content_hash(d.path()).unwrap());
    }

    #[test]
    fn hash_ignores_build_outputs_and_dependencies() {
        let d = folder();
        let before = content_hash(d.path()).unwrap();
        for ignored in ["node_modules", "target", ".venv", "__pycache__"] {
            std::fs::create_dir_all(d.path().join(ignored)).unwrap();
            std::fs::write(d.path().join(ignored).join("f"), "junk").unwrap();
        }
        assert_eq!(before, content_hash(d.path()).unwrap());
    }

    #[test]
    fn a_copy_of_a_folder_has_the_same_content_but_not_the_same_stamp() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for d in [&a, &b] {
            std::fs::write(d.path().join("server.toml"), "x").unwrap();
        }
        assert_eq!(
            content_hash(a.path()).unwrap(),
            content_hash(b.path()).unwrap()
        );
        let (a, b) = (server(a.path(), "hello"), server(b.path(), "hello"));
        assert_ne!(stamp_of(&a).unwrap(), stamp_of(&b).unwrap());
        assert_eq!(stamp_of(&a).unwrap(), stamp_of(&a).unwrap());
    }

    /// A server in `<root>/servers/x/y` implementing `feature`, and the contract's proto file.
    fn server(dir: &Path, feature: &str) -> Server {
        let text = format!(
            "name = \"x/y\"\nlanguage = \"Go\"\nframework = \"f\"\nframework_version = \"1\"\n\
             description = \"d\"\nimplements = [\"{feature}\"]\ntuning = \"t\"\n\
             [requires]\ncommands = [\"sh\"]\n[commands]\nrun = \"true\"\nversion = \"true\"\n"
        );
        let file = dir.join("server.toml");
        std::fs::write(&file, &text).unwrap();
        Server {
            id: "x/y".into(),
            dir: dir.to_path_buf(),
            manifest: crate::Manifest::parse(&text, &file).unwrap(),
        }
    }

    #[test]
    fn a_grpc_servers_stamp_changes_with_the_contracts_proto_and_another_servers_does_not() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("servers/x/y");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(root.path().join("spec")).unwrap();
        let proto = root.path().join("spec/serverbench.proto");
        std::fs::write(&proto, "syntax = \"proto3\";").unwrap();
        let (grpc, hello) = (server(&dir, "grpc"), server(&dir, "hello"));
        let before = (stamp_of(&grpc).unwrap(), stamp_of(&hello).unwrap());
        std::fs::write(&proto, "syntax = \"proto3\"; package p;").unwrap();
        assert_ne!(stamp_of(&grpc).unwrap(), before.0);
        assert_eq!(stamp_of(&hello).unwrap(), before.1);
    }

    #[test]
    fn renaming_a_file_changes_the_hash() {
        let d = folder();
        let before = content_hash(d.path()).unwrap();
        std::fs::rename(d.path().join("src/main.rs"), d.path().join("src/lib.rs")).unwrap();
        assert_ne!(before, content_hash(d.path()).unwrap());
    }

    #[test]
    fn stamps_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path(), d.path().join("cache"));
        assert_eq!(read_stamp(&paths, "a/b"), None);
        write_stamp(&paths, "a/b", "00ff").unwrap();
        assert_eq!(read_stamp(&paths, "a/b").as_deref(), Some("00ff"));
    }
}
