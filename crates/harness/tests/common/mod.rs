//! Shared helpers for the harness integration tests (included with `mod common;`).

#![allow(dead_code)]

use serverbench_catalog::paths::Paths;
use serverbench_catalog::{Catalog, Server};
use std::path::PathBuf;

/// The fixture catalog's root.
pub fn fixture_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog")
}

/// Paths with the fixture root and a fresh temporary cache.
pub fn fixture_paths() -> (Paths, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    (Paths::new(fixture_root(), cache.path()), cache)
}

/// A fixture server by id.
pub fn server(id: &str) -> Server {
    let catalog = Catalog::load(&fixture_root()).unwrap();
    catalog.get(id).unwrap().clone()
}
