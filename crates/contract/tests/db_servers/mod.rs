//! Small HTTP/1.1 servers of the database workloads on a real PostgreSQL, one correct and some
//! deliberately wrong ([`Flaw`]), for verify's tests. Threads and a blocking client: a pool of
//! connections shared by the connection threads; they die with the test process. Also the
//! private cluster they use ([`database`]). Shared with the CLI's tests (`#[path]`).

use serverbench_database::{connect, Cluster, Config, DbUrl, RunningDb, PG_BIN};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What a server does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flaw {
    /// Nothing: the contract's server.
    None,
    /// Reads the whole `world` table once and answers reads from memory.
    Cache,
    /// Reads the rows of `/queries` and `/updates` with one `WHERE id IN (…)`.
    InList,
    /// Renders fortunes without escaping.
    NoEscape,
    /// Returns new numbers for `/updates` without writing them.
    SkipUpdates,
    /// Answers `/db` with a made-up number, without a query.
    MadeUp,
    /// Answers reads from a write-through cache loaded at start, still sending one decoy
    /// `SELECT … WHERE id = $1` per row (the old audit's counts match exactly).
    DecoyCache,
    /// Renders the fortunes page once at start; each request sends a decoy read of `fortune`.
    FortunesOnce,
    /// Reads the rows of a request in one `WHERE id = ANY($1)` marked `/* serverbench */` (the
    /// comment verify's own reads once carried), plus one decoy single-row `SELECT` per row.
    Comment,
    /// Opens a connection of its own for every request (beyond its pool).
    ConnectionPerRequest,
    /// Sends the reads of `/queries` and `/updates` as several statements in one query string.
    SeveralInOne,
    /// Reads the rows of `/queries` in one explicit transaction (as queries pipelined under one
    /// Sync would share one).
    OneTransaction,
    /// Updates one row of 20 with a new number; writes the others back unchanged.
    OneOfTwenty,
}

const BY_ID: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const UPDATE: &str = "UPDATE world SET randomnumber = $1 WHERE id = $2";
/// The test servers' pool (their `DATABASE_POOL`).
pub const POOL: usize = 4;

struct State {
    flaw: Flaw,
    url: DbUrl,
    pool: Mutex<Vec<postgres::Client>>,
    cache: Mutex<Option<HashMap<i32, i32>>>,
    page: Mutex<Option<String>>,
}

/// A server started by [`start`]; dropped, it closes its database connections (its listener
/// then answers 503), so the next server's connections are counted alone.
pub struct Served {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.state.pool.lock().expect("pool").clear();
    }
}

/// Starts a server with `flaw` on a free port for the life of the test process; its address.
#[allow(dead_code)] // the tests of the other crates use it
pub fn serve(url: &DbUrl, flaw: Flaw) -> SocketAddr {
    let served = start(url, flaw);
    let addr = served.addr;
    std::mem::forget(served);
    addr
}

/// Starts a server with `flaw` on a free port, until the value is dropped.
pub fn start(url: &DbUrl, flaw: Flaw) -> Served {
    let clients: Vec<postgres::Client> = (0..POOL)
        .map(|_| connect(url).expect("the test server connects"))
        .collect();
    let state = Arc::new(State {
        flaw,
        url: url.clone(),
        pool: Mutex::new(clients),
        cache: Mutex::new(None),
        page: Mutex::new(None),
    });
    if matches!(flaw, Flaw::DecoyCache) {
        let mut client = connect(url).expect("the test server connects");
        let rows = client
            .query("SELECT id, randomnumber FROM world", &[])
            .expect("all rows");
        *state.cache.lock().expect("cache") =
            Some(rows.iter().map(|r| (r.get(0), r.get(1))).collect());
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the test server");
    let addr = listener.local_addr().expect("its address");
    let shared = Arc::clone(&state);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let state = Arc::clone(&shared);
            std::thread::spawn(move || connection(stream, &state));
        }
    });
    Served { addr, state }
}

/// Answers requests on one keep-alive connection until the client closes it.
fn connection(mut s: TcpStream, state: &State) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut tmp) {
                Ok(n) if n > 0 => buf.extend_from_slice(&tmp[..n]),
                _ => return,
            }
        }
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let target = head.split(' ').nth(1).unwrap_or("/").to_owned();
        let (status, ctype, body) = route(&target, state);
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if s.write_all(reply.as_bytes())
            .and_then(|()| s.write_all(body.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

fn route(target: &str, state: &State) -> (&'static str, &'static str, String) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let n = || {
        let v = query.split('&').find_map(|kv| kv.strip_prefix("queries="));
        v.and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(1)
            .clamp(1, 500) as usize
    };
    if state.flaw == Flaw::ConnectionPerRequest {
        let mut own = connect(&state.url).expect("a connection of its own");
        // Held a moment, as a slow request would: the connections pile up.
        std::thread::sleep(std::time::Duration::from_millis(20));
        return answer(path, n(), &mut own, state);
    }
    let mut pool = state.pool.lock().expect("pool");
    let Some(mut client) = pool.pop() else {
        return ("503 Busy", "text/plain", "no connection".into());
    };
    drop(pool);
    let out = answer(path, n(), &mut client, state);
    state.pool.lock().expect("pool").push(client);
    out
}

fn answer(
    path: &str,
    n: usize,
    client: &mut postgres::Client,
    state: &State,
) -> (&'static str, &'static str, String) {
    let json = "application/json";
    match path {
        "/db" => ("200 OK", json, row_json(db(client, state))),
        "/queries" => ("200 OK", json, rows_json(&reads(client, state, n))),
        "/updates" => ("200 OK", json, rows_json(&updates(client, state, n))),
        "/fortunes" => (
            "200 OK",
            "text/html; charset=utf-8",
            fortunes(client, state),
        ),
        _ => ("404 Not Found", "text/plain", "Not Found".into()),
    }
}

fn random_id() -> i32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    (h.finish() % 10_000) as i32 + 1
}

fn read(client: &mut postgres::Client, state: &State, id: i32) -> (i32, i32) {
    if state.flaw == Flaw::DecoyCache {
        client.query_one(BY_ID, &[&id]).expect("a decoy read");
        return (
            id,
            state.cache.lock().expect("cache").as_ref().expect("loaded")[&id],
        );
    }
    if state.flaw == Flaw::Cache {
        let mut cache = state.cache.lock().expect("cache");
        let all = cache.get_or_insert_with(|| {
            let rows = client
                .query("SELECT id, randomnumber FROM world", &[])
                .expect("all rows");
            rows.iter().map(|r| (r.get(0), r.get(1))).collect()
        });
        return (id, all[&id]);
    }
    let r = client.query_one(BY_ID, &[&id]).expect("a world row");
    (r.get(0), r.get(1))
}

fn db(client: &mut postgres::Client, state: &State) -> (i32, i32) {
    match state.flaw {
        Flaw::MadeUp => (random_id(), random_id()),
        _ => read(client, state, random_id()),
    }
}

fn reads(client: &mut postgres::Client, state: &State, n: usize) -> Vec<(i32, i32)> {
    let ids: Vec<i32> = (0..n).map(|_| random_id()).collect();
    match state.flaw {
        Flaw::InList => {}
        Flaw::Comment => return commented(client, &ids),
        Flaw::SeveralInOne => return several_in_one(client, &ids),
        Flaw::OneTransaction => {
            let mut tx = client.transaction().expect("a transaction");
            let rows = ids
                .iter()
                .map(|id| {
                    let r = tx.query_one(BY_ID, &[id]).expect("a world row");
                    (r.get(0), r.get(1))
                })
                .collect();
            tx.commit().expect("commit");
            return rows;
        }
        _ => return ids.iter().map(|&id| read(client, state, id)).collect(),
    }
    let params: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT id, randomnumber FROM world WHERE id IN ({})",
        params.join(", ")
    );
    let args: Vec<&(dyn postgres::types::ToSql + Sync)> = ids
        .iter()
        .map(|id| id as &(dyn postgres::types::ToSql + Sync))
        .collect();
    let found: HashMap<i32, i32> = client
        .query(&sql, &args)
        .expect("the rows")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    ids.iter().map(|id| (*id, found[id])).collect()
}

/// The rows in one `ANY($1)` read hidden behind verify's old comment, and one decoy per row.
fn commented(client: &mut postgres::Client, ids: &[i32]) -> Vec<(i32, i32)> {
    let found: HashMap<i32, i32> = client
        .query(
            "/* serverbench */ SELECT id, randomnumber FROM world WHERE id = ANY($1)",
            &[&ids],
        )
        .expect("the rows")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    for id in ids {
        client.query_one(BY_ID, &[id]).expect("a decoy read");
    }
    ids.iter().map(|id| (*id, found[id])).collect()
}

/// Every row's `SELECT` in one simple query string.
fn several_in_one(client: &mut postgres::Client, ids: &[i32]) -> Vec<(i32, i32)> {
    let sql: Vec<String> = ids
        .iter()
        .map(|id| format!("SELECT id, randomnumber FROM world WHERE id = {id}"))
        .collect();
    let messages = client.simple_query(&sql.join("; ")).expect("the rows");
    messages
        .iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some((
                r.get(0).and_then(|v| v.parse().ok()).expect("an id"),
                r.get(1).and_then(|v| v.parse().ok()).expect("a number"),
            )),
            _ => None,
        })
        .collect()
}

fn updates(client: &mut postgres::Client, state: &State, n: usize) -> Vec<(i32, i32)> {
    let mut rows = reads(client, state, n);
    for (i, r) in rows.iter_mut().enumerate() {
        if state.flaw == Flaw::OneOfTwenty && i > 0 {
            // Written back as read: the UPDATE counts its row, the number does not change.
            client.execute(UPDATE, &[&r.1, &r.0]).expect("the update");
            continue;
        }
        r.1 = random_id();
        if state.flaw != Flaw::SkipUpdates {
            client.execute(UPDATE, &[&r.1, &r.0]).expect("the update");
        }
        if let Some(all) = state.cache.lock().expect("cache").as_mut() {
            all.insert(r.0, r.1);
        }
    }
    rows
}

fn fortunes(client: &mut postgres::Client, state: &State) -> String {
    if state.flaw == Flaw::FortunesOnce {
        client
            .query("SELECT id, message FROM fortune", &[])
            .expect("a decoy read");
        let mut page = state.page.lock().expect("page");
        if let Some(p) = page.as_ref() {
            return p.clone();
        }
        let p = render_fortunes(client, state);
        *page = Some(p.clone());
        return p;
    }
    render_fortunes(client, state)
}

fn render_fortunes(client: &mut postgres::Client, state: &State) -> String {
    let mut rows: Vec<(i32, String)> = client
        .query("SELECT id, message FROM fortune", &[])
        .expect("the fortunes")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    rows.push((0, "Additional fortune added at request time.".into()));
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    let esc = |s: &str| -> String {
        if state.flaw == Flaw::NoEscape {
            return s.to_owned();
        }
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let mut page = String::from(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for (id, m) in rows {
        page.push_str(&format!("<tr><td>{id}</td><td>{}</td></tr>", esc(&m)));
    }
    page + "</table></body></html>"
}

fn row_json((id, n): (i32, i32)) -> String {
    format!("{{\"id\":{id},\"randomNumber\":{n}}}")
}

fn rows_json(rows: &[(i32, i32)]) -> String {
    let items: Vec<String> = rows.iter().map(|r| row_json(*r)).collect();
    format!("[{}]", items.join(","))
}

/// True when SERVERBENCH_SKIP_DB=1: the test says so with a `SKIP: <binary>::<test>: <why>`
/// line (written past the harness's capture, counted by `make test`, as
/// crates/cli/tests/skip/mod.rs does). Without the switch, PostgreSQL 15 missing fails the test
/// and says why.
pub fn skip_without_postgres() -> bool {
    if std::env::var("SERVERBENCH_SKIP_DB").as_deref() == Ok("1") {
        use std::io::Write;
        let test = std::thread::current().name().unwrap_or("main").to_owned();
        let line = format!(
            "SKIP: {}::{test}: SERVERBENCH_SKIP_DB=1 (no PostgreSQL 15 for the db tests)\n",
            env!("CARGO_CRATE_NAME")
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        return true;
    }
    let postgres = std::path::Path::new(PG_BIN).join("postgres");
    assert!(
        postgres.exists(),
        "{} is missing (install Debian's postgresql-15); set SERVERBENCH_SKIP_DB=1 to skip the \
         database tests",
        postgres.display()
    );
    false
}

/// A private cluster in a fresh cache folder on a free port, logging every statement (as
/// verify's does), or `None` when SERVERBENCH_SKIP_DB=1 (with the `SKIP:` line).
pub fn database() -> Option<(tempfile::TempDir, RunningDb)> {
    if skip_without_postgres() {
        return None;
    }
    let cache = tempfile::Builder::new()
        .prefix("serverbench-verify-db")
        .tempdir()
        .expect("a cache folder");
    make_reachable(cache.path());
    let mut config = Config::new(cache.path()).size_for_pool(8);
    config.port = free_port();
    config.shared_buffers_mb = 32;
    config.install = false;
    config.log_statements = true;
    let cluster = Cluster::prepare(&config).expect("a private cluster prepared");
    let db = cluster.start().expect("the private cluster started");
    Some((cache, db))
}

/// The postgres user must reach the cluster's folder under the temporary one.
pub fn make_reachable(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod 755");
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}
