//! For the unit tests: a database in memory that counts the statements its server runs (as
//! `pg_stat_statements` would), and a small HTTP server of the four workloads on it, correct or
//! caching. The real thing, with deliberately wrong servers on PostgreSQL, is in
//! `tests/database.rs`.

use super::{Referee, Statements, World};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The tables and the statement counters, shared by the server and the referee.
#[derive(Debug, Default)]
pub struct Memory {
    world: World,
    ran: Statements,
    marked: Statements,
}

/// The referee's view of a [`Memory`].
#[derive(Debug, Clone)]
pub struct MemoryReferee(pub Arc<Mutex<Memory>>);

pub const FORTUNES: [(i32, &str); 3] = [
    (1, "fortune: No such file or directory"),
    (11, "<script>alert(\"x\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

impl Referee for MemoryReferee {
    fn world(&mut self) -> Result<World, String> {
        Ok(self.0.lock().unwrap().world.clone())
    }
    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, String> {
        Ok(FORTUNES
            .iter()
            .map(|(i, m)| (*i, (*m).to_owned()))
            .collect())
    }
    fn mark(&mut self) -> Result<(), String> {
        let mut m = self.0.lock().unwrap();
        m.marked = m.ran;
        Ok(())
    }
    fn since_mark(&mut self) -> Result<Statements, String> {
        let m = self.0.lock().unwrap();
        Ok(Statements {
            world_single_reads: m.ran.world_single_reads - m.marked.world_single_reads,
            world_multi_reads: m.ran.world_multi_reads - m.marked.world_multi_reads,
            world_updates: m.ran.world_updates - m.marked.world_updates,
            world_rows_updated: m.ran.world_rows_updated - m.marked.world_rows_updated,
            fortune_reads: m.ran.fortune_reads - m.marked.fortune_reads,
            other: 0,
        })
    }
}

/// A server on a fresh memory database; `caching` answers reads without counting them.
pub fn serve(caching: bool) -> (SocketAddr, MemoryReferee) {
    let world = (1..=10_000).map(|i| (i, (i * 7919) % 10_000 + 1)).collect();
    let mem = Arc::new(Mutex::new(Memory {
        world,
        ..Memory::default()
    }));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let shared = Arc::clone(&mem);
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mem = Arc::clone(&shared);
            std::thread::spawn(move || connection(s, &mem, caching));
        }
    });
    (addr, MemoryReferee(mem))
}

fn connection(mut s: TcpStream, mem: &Mutex<Memory>, caching: bool) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let mut seed = u64::from(s.peer_addr().map(|a| a.port()).unwrap_or(1));
    loop {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut tmp) {
                Ok(n) if n > 0 => buf.extend_from_slice(&tmp[..n]),
                _ => return,
            }
        }
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let target = head.split(' ').nth(1).unwrap_or("/").to_owned();
        let mut rand = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 10_000) as i32 + 1
        };
        let (ctype, body) = answer(&target, &mut mem.lock().unwrap(), caching, &mut rand);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if s.write_all((head + &body).as_bytes()).is_err() {
            return;
        }
    }
}

fn answer(
    target: &str,
    m: &mut Memory,
    caching: bool,
    rand: &mut dyn FnMut() -> i32,
) -> (&'static str, String) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let n = super::clamp_queries(query.strip_prefix("queries="));
    let mut read = |m: &mut Memory| {
        let id = rand();
        m.ran.world_single_reads += u64::from(!caching);
        (id, m.world[&id])
    };
    let row = |(id, n): (i32, i32)| format!("{{\"id\":{id},\"randomNumber\":{n}}}");
    let rows: Vec<(i32, i32)> = match path {
        "/db" => return ("application/json", row(read(m))),
        "/queries" => (0..n).map(|_| read(m)).collect(),
        "/updates" => {
            let mut rows: Vec<(i32, i32)> = (0..n).map(|_| read(m)).collect();
            for r in &mut rows {
                r.1 = rand();
                m.world.insert(r.0, r.1);
                m.ran.world_updates += 1;
                m.ran.world_rows_updated += 1;
            }
            rows
        }
        _ => {
            m.ran.fortune_reads += 1;
            return ("text/html; charset=utf-8", page());
        }
    };
    let items: Vec<String> = rows.into_iter().map(row).collect();
    ("application/json", format!("[{}]", items.join(",")))
}

fn page() -> String {
    let mut rows: Vec<(i32, String)> = FORTUNES.iter().map(|(i, m)| (*i, (*m).into())).collect();
    rows.push((0, super::fortunes::ADDED.into()));
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    let cells: String = rows
        .iter()
        .map(|(i, m)| {
            let m = m
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            format!("<tr><td>{i}</td><td>{}</td></tr>", m.replace('"', "&#34;"))
        })
        .collect();
    format!("<!DOCTYPE html><table><tr><th>id</th><th>message</th></tr>{cells}</table>")
}
