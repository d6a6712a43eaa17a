use super::*;

const MANIFEST: &str = r#"name = "NAME"
language = "Python"
framework = "http.server"
framework_version = "3.11"
description = "A fixture."
implements = ["hello"]
tuning = "none"

[requires]
commands = ["sh"]
LOCK

[commands]
run = "exec python3 server.py"
version = "python3 --version"
"#;

fn write_server(root: &Path, id: &str, name: &str, lock: &str) -> PathBuf {
    let dir = root.join("servers").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let text = MANIFEST.replace("NAME", name).replace("LOCK", lock);
    std::fs::write(dir.join("server.toml"), text).unwrap();
    dir
}

fn manifest_error(err: CatalogError) -> (PathBuf, usize, String, String) {
    match err {
        CatalogError::Manifest {
            file,
            line,
            key,
            message,
        } => (file, line, key, message),
        other => panic!("expected a manifest error, got {other}"),
    }
}

#[test]
fn name_differing_from_the_folder_is_an_error_on_the_name_line() {
    let root = tempfile::tempdir().unwrap();
    write_server(root.path(), "py/a", "py/b", "");
    let catalog = Catalog::load(root.path()).unwrap();
    assert!(catalog.servers.is_empty());
    let (file, line, key, message) = manifest_error(catalog.get("py/a").unwrap_err());
    assert!(file.ends_with("servers/py/a/server.toml"));
    assert_eq!((line, key.as_str()), (1, "name"), "{message}");
}

#[test]
fn missing_lockfile_is_an_error_naming_the_lockfile() {
    let root = tempfile::tempdir().unwrap();
    write_server(
        root.path(),
        "py/a",
        "py/a",
        "lockfiles = [\"requirements.lock\"]",
    );
    let catalog = Catalog::load(root.path()).unwrap();
    let (_, line, key, message) = manifest_error(catalog.get("py/a").unwrap_err());
    assert_eq!((line, key.as_str()), (11, "requires.lockfiles"));
    assert!(message.contains("requirements.lock"), "{message}");
}

#[test]
fn present_lockfile_passes_validation() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_server(root.path(), "py/a", "py/a", "lockfiles = [\"r.lock\"]");
    std::fs::write(dir.join("r.lock"), "x").unwrap();
    let catalog = Catalog::load(root.path()).unwrap();
    assert_eq!(catalog.get("py/a").unwrap().id, "py/a");
}

#[test]
fn a_broken_manifest_does_not_hide_the_others() {
    let root = tempfile::tempdir().unwrap();
    write_server(root.path(), "py/good", "py/good", "");
    write_server(root.path(), "py/bad", "py/bad", "pip = []");
    let catalog = Catalog::load(root.path()).unwrap();
    assert_eq!(catalog.servers.len(), 1);
    assert_eq!(catalog.broken.len(), 1);
    let msg = catalog.broken[0].error.to_string();
    assert!(msg.contains("server.toml:11: key `requires.pip`"), "{msg}");
    assert_eq!(catalog.ids(), vec!["py/bad", "py/good"]);
}

#[test]
fn unknown_server_lists_the_closest_ids() {
    let root = tempfile::tempdir().unwrap();
    write_server(root.path(), "node/http", "node/http", "");
    write_server(root.path(), "rust/hyper", "rust/hyper", "");
    let catalog = Catalog::load(root.path()).unwrap();
    let err = catalog.get("node/htp").unwrap_err();
    match &err {
        CatalogError::UnknownServer { closest, .. } => assert_eq!(closest[0], "node/http"),
        other => panic!("unexpected {other}"),
    }
    assert!(err.to_string().contains("closest: node/http"), "{err}");
}

#[test]
fn folders_without_a_manifest_are_ignored() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("servers/go/empty")).unwrap();
    let catalog = Catalog::load(root.path()).unwrap();
    assert!(catalog.ids().is_empty());
}

#[test]
fn features_round_trip_through_their_spelling() {
    for f in Feature::ALL {
        assert_eq!(Feature::parse(f.as_str()), Some(f));
    }
    assert!(!Feature::Echo.is_http());
}

#[test]
fn a_manifest_declaring_ws_echo_parses_and_listens_on_port() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_server(tmp.path(), "python/ws", "python/ws", "");
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(r#"implements = ["hello"]"#, r#"implements = ["ws-echo"]"#);
    std::fs::write(&path, text).unwrap();
    let catalog = Catalog::load(tmp.path()).unwrap();
    let server = catalog.get("python/ws").unwrap();
    assert_eq!(server.manifest.implements, vec![Feature::WsEcho]);
    assert!(server.serves_http(), "the upgrade is on PORT");
    assert!(!Feature::WsEcho.is_http() && Feature::WsEcho.is_websocket());
}

#[test]
fn a_declared_http10_deviation_is_parsed_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_server(tmp.path(), "python/dev", "python/dev", "");
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "[requires]",
        "[deviations]\nhttp10 = \"answers 505\"\n\n[requires]",
    );
    std::fs::write(&path, text).unwrap();
    let catalog = Catalog::load(tmp.path()).unwrap();
    let server = catalog.get("python/dev").unwrap();
    let reason = server.manifest.deviations.get(&Deviation::Http10);
    assert_eq!(reason.map(String::as_str), Some("answers 505"));
    assert!(Deviation::Http10.covers("HTTP/1.0 GET /hello"));
    assert!(!Deviation::Http10.covers("GET /hello"));
}

#[test]
fn a_deviation_covers_its_checks_over_tls_too() {
    let ka = "HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS";
    assert!(Deviation::Http10.covers("HTTP/1.0 GET /hello over TLS"));
    assert!(Deviation::Http10KeepAlive.covers(ka));
    assert!(!Deviation::Http10KeepAlive.covers("HTTP/1.0 GET /hello over TLS"));
    assert!(!Deviation::Http10.covers("GET /hello over TLS"));
    assert!(!Deviation::Http10.covers("TLS 1.2 handshake, ALPN http/1.1 offered over TLS"));
}

#[test]
fn the_unmasked_frame_deviation_covers_only_its_check() {
    let unmasked = "ws unmasked client frame closed with 1002";
    assert!(Deviation::WsUnmasked.covers(unmasked));
    assert!(!Deviation::WsUnmasked.covers("ws message in 3 fragments, echoed whole"));
    assert!(!Deviation::Http10.covers(unmasked));
    assert!(!Deviation::SplitRequestLine.covers(unmasked));
}

#[test]
fn each_grpc_deviation_covers_only_its_check_on_both_ports() {
    let malformed = "grpc malformed Sum message -> 13 INTERNAL or 3 INVALID_ARGUMENT";
    assert!(Deviation::GrpcMalformed.covers(malformed));
    assert!(Deviation::GrpcMalformed.covers(&format!("{malformed} over TLS")));
    assert!(!Deviation::GrpcMalformed
        .covers("grpc unknown method /serverbench.Bench/Nope -> 12 UNIMPLEMENTED"));
    assert_eq!(Deviation::GrpcMalformed.as_str(), "grpc_malformed");
    let limit = "grpc Echo of 5 MiB (above the 4 MiB limit) -> 8 RESOURCE_EXHAUSTED";
    assert!(Deviation::GrpcMessageLimit.covers(limit));
    assert!(Deviation::GrpcMessageLimit.covers(&format!("{limit} over TLS")));
    assert!(!Deviation::GrpcMessageLimit.covers(malformed));
    assert!(!Deviation::GrpcMalformed.covers(limit));
}

#[test]
fn a_manifest_declaring_only_grpc_listens_on_port() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_server(tmp.path(), "go/g", "go/g", "");
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        r#"implements = ["hello"]"#,
        r#"implements = ["grpc", "tls"]"#,
    );
    std::fs::write(&path, text).unwrap();
    let catalog = Catalog::load(tmp.path()).unwrap();
    let server = catalog.get("go/g").unwrap();
    assert_eq!(
        server.manifest.implements,
        vec![Feature::Grpc, Feature::Tls]
    );
    assert!(server.serves_http(), "h2c is on PORT");
    assert!(Feature::Grpc.is_grpc() && !Feature::Grpc.is_http());
}

#[test]
fn deviation_keys_are_snake_case() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_server(tmp.path(), "python/dev", "python/dev", "");
    let path = dir.join("server.toml");
    let keys = "http10_keep_alive = \"a\"\nsplit_request_line = \"b\"\ndeep_pipelining = \"c\"\n\
                ws_unmasked = \"d\"";
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("[requires]", &format!("[deviations]\n{keys}\n\n[requires]"));
    std::fs::write(&path, text).unwrap();
    let catalog = Catalog::load(tmp.path()).unwrap();
    let declared: Vec<&str> = catalog
        .get("python/dev")
        .unwrap()
        .manifest
        .deviations
        .keys()
        .map(|d| d.as_str())
        .collect();
    assert_eq!(
        declared,
        vec![
            "http10_keep_alive",
            "split_request_line",
            "deep_pipelining",
            "ws_unmasked"
        ]
    );
}

#[test]
fn an_unknown_deviation_is_a_manifest_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_server(tmp.path(), "python/dev", "python/dev", "");
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("[requires]", "[deviations]\nhttp2 = \"no\"\n\n[requires]");
    std::fs::write(&path, text).unwrap();
    let err = load_server("python/dev", &dir).unwrap_err();
    let (file, line, _, _) = manifest_error(err);
    assert!(file.ends_with("server.toml"));
    assert!(line > 0);
}

#[test]
fn without_a_root_the_catalog_is_absent_and_a_server_of_it_says_how_to_point_at_one() {
    let paths = paths::Paths {
        root: None,
        cache: "/c".into(),
    };
    let catalog = Catalog::of(&paths).unwrap();
    assert!(catalog.absent && catalog.servers.is_empty());
    let err = catalog.get("node/http").unwrap_err().to_string();
    assert!(
        err.starts_with("not a server of yours; running a catalog server needs"),
        "{err}"
    );
    assert!(
        err.ends_with("pass --root DIR or set SERVERBENCH_ROOT"),
        "{err}"
    );
    let err = Catalog::required(&paths, "serverbench list").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("serverbench list needs the catalog"),
        "{err}"
    );
}

fn with_features(tmp: &Path, id: &str, features: &str) -> Catalog {
    let dir = write_server(tmp, id, id, "");
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        r#"implements = ["hello"]"#,
        &format!("implements = [{features}]"),
    );
    std::fs::write(&path, text).unwrap();
    Catalog::load(tmp).unwrap()
}

#[test]
fn a_manifest_declaring_h3_without_tls_is_an_error_naming_implements() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = with_features(tmp.path(), "rust/q", r#""hello", "h3""#);
    let (_, line, key, message) = manifest_error(catalog.get("rust/q").unwrap_err());
    assert_eq!(key, "implements", "{message}");
    assert!(line > 0 && message.contains("h3 without tls"), "{message}");
}

#[test]
fn a_manifest_declaring_h3_with_tls_is_valid_and_h3_is_a_transport() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = with_features(tmp.path(), "rust/q", r#""hello", "tls", "h3""#);
    let server = catalog.get("rust/q").unwrap();
    assert!(server.implements(Feature::H3) && server.serves_http());
    assert!(Feature::H3.is_transport() && !Feature::H3.is_http());
    assert_eq!(Feature::parse("h3"), Some(Feature::H3));
}

#[test]
fn each_h3_deviation_covers_only_its_check() {
    let malformed =
        "request without :path -> H3_MESSAGE_ERROR or 400, then the connection serves over h3";
    let stop = "GOAWAY or CONNECTION_CLOSE (H3_NO_ERROR) when the server stops over h3";
    assert!(Deviation::H3Malformed.covers(malformed) && !Deviation::H3Malformed.covers(stop));
    assert!(Deviation::H3Shutdown.covers(stop) && !Deviation::H3Shutdown.covers(malformed));
    assert!(!Deviation::H3Shutdown.covers("GET /hello over h3"));
    assert_eq!(Deviation::H3Malformed.as_str(), "h3_malformed");
    assert_eq!(Deviation::H3Shutdown.as_str(), "h3_shutdown");
}
