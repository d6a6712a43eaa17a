use super::*;

const GOOD: &str = r#"# two machines
[defaults]
ssh_config = "ssh_config"
ssh_options = ["ConnectTimeout=5"]

[hosts.db]
ssh = "bench@10.0.0.2"
address = "10.0.0.2"
cpus = [0, 1, 2, 3]

[hosts.load1]
ssh = "load1"
address = "10.0.0.3"
checkout = "/srv/serverbench"
ssh_options = ["Port=2222"]
"#;

fn local() -> Local {
    Local {
        checkout: PathBuf::from("/home/me/serverbench"),
        binary: PathBuf::from("/home/me/serverbench/target/release/serverbench"),
    }
}

fn parse(text: &str) -> Result<Inventory, InventoryError> {
    Inventory::parse(text, Path::new("/etc/sb/hosts.toml"), &local())
}

fn invalid(text: &str) -> (usize, String, String) {
    match parse(text) {
        Err(InventoryError::Invalid {
            line, key, message, ..
        }) => (line, key, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn hosts_inherit_defaults_and_the_local_checkout() {
    let inv = parse(GOOD).unwrap();
    assert_eq!(inv.names(), ["db", "load1"]);
    let db = inv.host("db").unwrap();
    assert_eq!(db.checkout, PathBuf::from("/home/me/serverbench"));
    assert_eq!(
        db.binary,
        PathBuf::from("/home/me/serverbench/target/release/serverbench")
    );
    assert_eq!(db.cpus, [0, 1, 2, 3]);
    assert_eq!(db.ssh_config, Some(PathBuf::from("/etc/sb/ssh_config")));
    assert_eq!(db.ssh_options, ["ConnectTimeout=5"]);
    let l1 = inv.host("load1").unwrap();
    assert_eq!(
        l1.binary,
        PathBuf::from("/srv/serverbench/target/release/serverbench"),
        "the same relative path inside the host's own checkout"
    );
    assert_eq!(l1.ssh_options, ["ConnectTimeout=5", "Port=2222"]);
    assert!(l1.cpus.is_empty());
}

#[test]
fn an_unknown_key_names_its_line_and_table() {
    let text = GOOD.replace("cpus = [0, 1, 2, 3]", "cpu = [0]");
    let (line, key, message) = invalid(&text);
    assert_eq!((line, key.as_str()), (9, "hosts.db.cpu"));
    assert!(message.starts_with("unknown field `cpu`"), "{message}");
}

#[test]
fn a_missing_address_names_the_host() {
    let text = GOOD.replace("address = \"10.0.0.3\"\n", "");
    let (line, key, message) = invalid(&text);
    assert_eq!(key, "hosts.load1.address", "{message}");
    assert_eq!(line, 11, "the line of its table");
}

#[test]
fn a_wrong_type_names_the_key() {
    let text = GOOD.replace("cpus = [0, 1, 2, 3]", "cpus = \"all\"");
    let (line, key, _) = invalid(&text);
    assert_eq!((line, key.as_str()), (9, "hosts.db.cpus"));
}

#[test]
fn a_relative_checkout_is_refused_on_its_line() {
    let text = GOOD.replace("/srv/serverbench", "srv/serverbench");
    let (line, key, message) = invalid(&text);
    assert_eq!((line, key.as_str()), (14, "hosts.load1.checkout"));
    assert!(message.contains("absolute"), "{message}");
}

#[test]
fn an_option_without_a_value_is_refused() {
    let text = GOOD.replace("Port=2222", "-p2222");
    let (_, key, message) = invalid(&text);
    assert_eq!(key, "hosts.load1.ssh_options");
    assert!(message.contains("Key=value"), "{message}");
}

#[test]
fn an_inventory_without_hosts_is_an_error() {
    let (line, key, _) = invalid("[defaults]\nssh_options = []\n");
    assert_eq!((line, key.as_str()), (1, "hosts"));
}

#[test]
fn an_unknown_host_lists_the_known_ones() {
    let inv = parse(GOOD).unwrap();
    let err = inv.select(&["db".into(), "web".into()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/etc/sb/hosts.toml: no host `web` (hosts: db, load1)"
    );
}

#[test]
fn a_binary_outside_the_checkout_keeps_its_absolute_path() {
    let local = Local {
        checkout: PathBuf::from("/home/me/serverbench"),
        binary: PathBuf::from("/usr/local/bin/serverbench"),
    };
    let inv = Inventory::parse(GOOD, Path::new("hosts.toml"), &local).unwrap();
    assert_eq!(
        inv.host("load1").unwrap().binary,
        PathBuf::from("/usr/local/bin/serverbench")
    );
}
