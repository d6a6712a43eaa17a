//! `serverbench report --format html` opened in headless Chromium: the page renders its tables
//! and charts (the screenshot is not blank, the DOM holds the rows and the `<svg>` elements) and
//! makes no network request (the HTML references nothing outside itself, and Chromium's NetLog
//! shows no request but the browser's own background ones, with every host name unresolvable).
//!
//! Needs Debian's `chromium` (or `SERVERBENCH_CHROMIUM=/path/to/chrome`); without it the test
//! fails, unless `SERVERBENCH_SKIP_BROWSER=1` is set, in which case it says it skipped.

mod skip;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium run may take before it is killed.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);
const SERVERS: [&str; 5] = [
    "node/uws",
    "rust/hyper",
    "go/stdlib",
    "node/http",
    "node/express",
];

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/basic")
}

/// The Chromium binary, or `None` when the test should be skipped.
fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("SERVERBENCH_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["chromium", "chromium-browser"].map(PathBuf::from));
    for c in candidates {
        let found = Command::new(&c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return Some(c);
        }
    }
    if std::env::var("SERVERBENCH_SKIP_BROWSER").as_deref() == Ok("1") {
        skip::say_skipped("no chromium found and SERVERBENCH_SKIP_BROWSER=1");
        return None;
    }
    panic!(
        "html_render needs headless Chromium: install Debian's `chromium` package \
         (apt-get install chromium), point SERVERBENCH_CHROMIUM at a Chrome binary, or set \
         SERVERBENCH_SKIP_BROWSER=1 to skip this test"
    );
}

/// Runs `cmd` in its own process group with stdout and stderr in files under `logs` (a pipe
/// could fill up and stall the browser), killing the whole group after [`BROWSER_TIMEOUT`].
fn run_bounded(mut cmd: Command, logs: &Path) -> Output {
    use std::os::unix::process::CommandExt;
    let (out_file, err_file) = (logs.join("stdout"), logs.join("stderr"));
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            // SAFETY: kill(2) on the process group we created above; no memory is shared.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("chromium did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(out_file).unwrap(),
        stderr: std::fs::read(err_file).unwrap(),
    }
}

/// Headless Chromium with a fresh profile, as little background traffic as it allows, every
/// host name unresolvable, and a NetLog (`profile/netlog.json`) of every URL request it made.
fn browser(bin: &Path, profile: &Path, args: &[&str], url: &str) -> Output {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!(
        "--log-net-log={}",
        profile.join("netlog.json").display()
    ))
    .args(args)
    .arg(url);
    std::fs::create_dir_all(profile).unwrap();
    run_bounded(cmd, profile)
}

/// Writes the HTML report of a copy of the fixture folder (its default place: DIR/report.html).
fn write_report(dir: &Path) -> PathBuf {
    for f in ["results.jsonl", "env.json"] {
        std::fs::copy(fixture().join(f), dir.join(f)).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["report", dir.to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "serverbench report failed: {stderr}");
    let file = dir.join("report.html");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        file.to_str().unwrap()
    );
    file
}

/// (pixels, non-white pixels, pixels of the charts' first palette colour #0072B2).
fn count_pixels(png_file: &Path) -> (usize, usize, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(png_file).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(
        channels >= 3,
        "expected an RGB(A) screenshot, got {:?}",
        info.color_type
    );
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()].chunks(channels);
    let (mut total, mut ink, mut blue) = (0, 0, 0);
    for p in pixels {
        total += 1;
        if p[0] < 235 || p[1] < 235 || p[2] < 235 {
            ink += 1;
        }
        let near = |v: u8, want: i32| (i32::from(v) - want).abs() < 12;
        if near(p[0], 0x00) && near(p[1], 0x72) && near(p[2], 0xB2) {
            blue += 1;
        }
    }
    (total, ink, blue)
}

fn assert_no_external_reference(html: &str) {
    let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in ["http://", "https://", "<link", "src=", "url(", "@import"] {
        assert!(
            !without_xmlns.contains(bad),
            "the page references something outside itself: `{bad}`"
        );
    }
}

/// Domains of Chromium's own services (component updater, time and account checks), which it
/// contacts whatever the page; everything else in the NetLog was asked for by the page.
const BROWSER_SERVICES: [&str; 3] = ["google.com", "googleapis.com", "gstatic.com"];

/// Asserts the NetLog of a run holds no http(s) request other than the browser's own.
fn assert_no_page_request(profile: &Path) {
    let log = std::fs::read_to_string(profile.join("netlog.json")).expect("chromium's NetLog");
    let page_requests: Vec<&str> = log
        .split("\"url\":\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|url| url.starts_with("http://") || url.starts_with("https://"))
        .filter(|url| {
            let host = url.split('/').nth(2).unwrap_or("");
            let host = host.split(':').next().unwrap_or(host);
            !BROWSER_SERVICES
                .iter()
                .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        })
        .collect();
    assert!(
        page_requests.is_empty(),
        "the page made network requests: {page_requests:#?}"
    );
}

#[test]
fn html_report_renders_tables_and_charts_in_headless_chromium_offline() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let file = write_report(tmp.path());
    let html = std::fs::read_to_string(&file).unwrap();
    assert_no_external_reference(&html);
    let url = format!("file://{}", file.display());

    let shot = tmp.path().join("shot.png");
    let out = browser(
        &bin,
        &tmp.path().join("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,2400",
        ],
        &url,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        shot.exists(),
        "no screenshot written; chromium said:\n{stderr}"
    );
    assert_no_page_request(&tmp.path().join("profile-shot"));
    let (total, ink, blue) = count_pixels(&shot);
    assert!(
        ink * 20 > total,
        "the page looks blank: {ink} of {total} pixels are not white"
    );
    assert!(
        blue > 2_000,
        "no chart bars visible: {blue} pixels of the bar colour"
    );

    let profile = tmp.path().join("profile-dom");
    let out = browser(&bin, &profile, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_no_page_request(&profile);
    for server in SERVERS {
        assert!(
            dom.contains(&format!("<td class=\"l\">{server}</td>")),
            "no table row for {server} in the rendered DOM"
        );
    }
    assert!(
        dom.matches("<svg ").count() >= 9,
        "the charts are missing from the DOM"
    );
    assert!(
        dom.contains("title=\"Sort by this column\""),
        "the sort script did not run"
    );
}

/// Measures the page laid out in a `width` x 1000 window: writes, into `<body data-layout>`,
/// the right edge of each summary table's `req/s` (or `Mbps down`) heading, and the widest of
/// the page's and the tables' scroll widths, then returns `(headline right edges, widest,
/// window width)` as read back from the rendered DOM.
fn layout_at(bin: &Path, tmp: &Path, html: &str, width: u32) -> (Vec<f64>, f64, f64) {
    let measure = "<script>var r=[],w=document.documentElement.scrollWidth;\
        document.querySelectorAll('table.sortable').forEach(function(t){\
        Array.prototype.slice.call(t.tHead.rows[0].cells).forEach(function(h){\
        if(h.textContent==='req/s'||h.textContent==='Mbps down'){\
        r.push(h.getBoundingClientRect().right);}});\
        w=Math.max(w,t.parentNode.scrollWidth);});\
        document.body.setAttribute('data-layout',r.join(' ')+';'+w+';'+window.innerWidth);\
        </script></body>";
    let page = tmp.join(format!("layout-{width}.html"));
    std::fs::write(&page, html.replace("</body>", measure)).unwrap();
    let url = format!("file://{}", page.display());
    let size = format!("--window-size={width},1000");
    let profile = tmp.join(format!("profile-layout-{width}"));
    let out = browser(bin, &profile, &["--dump-dom", &size], &url);
    let dom = String::from_utf8_lossy(&out.stdout);
    let layout = dom
        .split("data-layout=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("the layout script did not run:\n{dom}"));
    let parts: Vec<&str> = layout.split(';').collect();
    let number = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("{layout}"));
    let edges = parts[0].split(' ').map(number).collect();
    (edges, number(parts[1]), number(parts[2]))
}

#[test]
fn at_1280_pixels_every_table_fits_and_req_per_second_is_in_view() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(write_report(tmp.path())).unwrap();
    let (edges, widest, window) = layout_at(&bin, tmp.path(), &html, 1280);
    assert_eq!(window, 1280.0, "the window is not 1280 px wide");
    assert_eq!(edges.len(), 2, "one headline heading per table: {edges:?}");
    for right in &edges {
        assert!(*right <= window, "req/s ends at {right} px, out of view");
    }
    assert!(
        widest <= window,
        "a horizontal scroll bar: content {widest} px wide in a {window} px window"
    );
    assert!(
        !html.contains("<th class=\"l\">version</th>"),
        "a version column in the ranking"
    );
    assert!(html.contains("<h3 id=\"versions\">"), "no server versions");
}

#[test]
fn the_layout_check_catches_a_table_wider_than_the_window() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(write_report(tmp.path())).unwrap();
    // A whole `--version` banner in a cell before req/s, as the page once had.
    let banner = "openjdk version 21.0.5 2024-10-15 LTS OpenJDK Runtime Environment Temurin-21.0.5+11 \
                  (build 21.0.5+11-LTS) OpenJDK 64-Bit Server VM Temurin-21.0.5+11 mixed mode sharing";
    let wide = html.replacen(
        "<td class=\"l\">node/uws</td>",
        &format!("<td class=\"l\">node/uws</td><td class=\"l\">{banner}</td>"),
        1,
    );
    let (edges, widest, window) = layout_at(&bin, tmp.path(), &wide, 1280);
    assert!(
        widest > window || edges.iter().any(|r| *r > window),
        "a {widest} px table went unnoticed: {edges:?}"
    );
}

#[test]
fn the_request_check_catches_a_page_that_fetches_an_image() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("fetches.html");
    std::fs::write(&page, "<p>x<img src=\"https://example.com/x.png\"></p>").unwrap();
    let profile = tmp.path().join("profile");
    let url = format!("file://{}", page.display());
    browser(&bin, &profile, &["--dump-dom"], &url);
    let caught = std::panic::catch_unwind(|| assert_no_page_request(&profile));
    assert!(caught.is_err(), "the request to example.com went unnoticed");
}

#[test]
fn clicking_a_column_header_sorts_the_table_by_it() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(write_report(tmp.path())).unwrap();
    // Click "req/s" in the first table once: ascending order.
    let click = "<script>Array.prototype.slice.call(document.querySelector('table.sortable')\
                 .tHead.rows[0].cells).filter(function(h){return h.textContent==='req/s';})[0]\
                 .click();</script></body>";
    let page = tmp.path().join("clicked.html");
    std::fs::write(&page, html.replace("</body>", click)).unwrap();
    let url = format!("file://{}", page.display());
    let out = browser(&bin, &tmp.path().join("profile"), &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&out.stdout);
    let first_table = dom.split("</table>").next().unwrap();
    let order: Vec<&str> = SERVERS
        .iter()
        .copied()
        // A server's cell may carry its marks after the name (`?` noisy, `~` deviations).
        .filter_map(|s| {
            let cell = |end: &str| first_table.find(&format!(">{s}{end}</td>"));
            cell("").or_else(|| cell(" ?")).map(|at| (at, s))
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .collect();
    let slowest_first = [
        "node/express",
        "node/http",
        "go/stdlib",
        "rust/hyper",
        "node/uws",
    ];
    assert_eq!(order, slowest_first, "rows after sorting by req/s");
    assert!(
        first_table.contains("data-sort=\"asc\""),
        "the header shows no sort arrow"
    );
}
