use super::*;

fn no_files(p: &Path) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::other(format!("no file {}", p.display())))
}

fn parse(text: &str, file: &str) -> Result<Mix, MixError> {
    Mix::parse(text, Path::new(file), &no_files)
}

const API: &str = "[[request]]\n\
                   path = \"/baseline?a=1&b=2\"\n\
                   weight = 3\n\
                   [[request]]\n\
                   name = \"json-comp\"\n\
                   path = \"/json\"\n\
                   headers = { Accept-Encoding = \"gzip, br\" }\n\
                   [[request]]\n\
                   method = \"post\"\n\
                   path = \"/upload\"\n\
                   body_size = 5\n\
                   weight = 0.5\n";

#[test]
fn a_toml_mix_resolves_names_methods_headers_bodies_and_weights() {
    let mix = parse(API, "dir/api.toml").unwrap();
    assert_eq!(mix.file, "api.toml");
    let names: Vec<&str> = mix.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["/baseline?a=1&b=2", "json-comp", "POST /upload"]);
    assert_eq!(mix.entries[1].headers, ["Accept-Encoding: gzip, br"]);
    assert_eq!(mix.entries[2].body.as_deref(), Some(&b"abcde"[..]));
    assert_eq!(mix.shares(), [3.0 / 4.5, 1.0 / 4.5, 0.5 / 4.5]);
}

#[test]
fn a_json_mix_reads_the_same_keys() {
    let text = r#"{"request": [{"path": "/a", "weight": 2, "headers": ["X-A: 1"]},
                              {"path": "/b", "method": "PUT", "body": "hi"}]}"#;
    let mix = parse(text, "m.json").unwrap();
    assert_eq!(mix.entries[1].method, "PUT");
    assert_eq!(mix.entries[1].body.as_deref(), Some(&b"hi"[..]));
}

#[test]
fn a_body_file_is_read_through_the_reader_and_a_missing_one_names_its_line() {
    let text = "[[request]]\npath = \"/a\"\n\n[[request]]\npath = \"/u\"\nbody_file = \"up.bin\"\n";
    let read = |p: &Path| match p.to_str() {
        Some("up.bin") => Ok(vec![1, 2, 3]),
        _ => Err(std::io::Error::other("missing")),
    };
    let mix = Mix::parse(text, Path::new("m.toml"), &read).unwrap();
    assert_eq!(mix.entries[1].body.as_deref(), Some(&[1u8, 2, 3][..]));
    let err = parse(text, "m.toml").unwrap_err().to_string();
    assert!(err.starts_with("m.toml:6: up.bin"), "{err}");
}

#[test]
fn bad_entries_name_the_file_and_the_line() {
    let cases = [
        (
            "[[request]]\npath = \"/a\"\nmethod = \"FETCH\"\n",
            "m.toml:3: unknown method `FETCH`",
        ),
        (
            "[[request]]\npath = \"a\"\n",
            "m.toml:2: path `a` must start with /",
        ),
        (
            "[[request]]\npath = \"/a\"\nweight = 0\n",
            "m.toml:1: the weights add up to 0",
        ),
        (
            "[[request]]\npath = \"/a\"\nweight = -1\n",
            "m.toml:3: -1 is not a weight",
        ),
        (
            "[[request]]\npath = \"/a\"\nmethod = \"HEAD\"\n",
            "m.toml:3: HEAD cannot be mixed",
        ),
        (
            "[[request]]\npath = \"/a\"\n\n[[request]]\npath = \"/a\"\n",
            "m.toml:4: the name `/a`",
        ),
        (
            "[[request]]\npath = \"/a\"\nwieght = 2\n",
            "m.toml:3: unknown field `wieght`",
        ),
        ("[[request]]\npath = \"/a\n", "m.toml:2:"),
        ("", "m.toml:1: no [[request]] entry"),
    ];
    for (text, want) in cases {
        let err = parse(text, "m.toml").unwrap_err().to_string();
        assert!(err.starts_with(want), "{text:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_json_parse_error_names_its_line_once() {
    let err = parse("{\"request\": [\n{\"path\": \"/a\",}\n]}", "m.json").unwrap_err();
    let err = err.to_string();
    assert!(err.starts_with("m.json:2: "), "{err}");
    assert!(!err.contains("at line"), "{err}");
}

#[test]
fn a_mix_round_trips_through_json_with_its_body_in_base64() {
    let mix = parse(API, "api.toml").unwrap();
    let line = serde_json::to_string(&mix).unwrap();
    assert!(line.contains(r#""body":"YWJjZGU=""#), "{line}");
    assert_eq!(serde_json::from_str::<Mix>(&line).unwrap(), mix);
}
