//! For the unit tests: a database in memory that counts the statements its server runs (as
//! `pg_stat_statements` would), and a small HTTP server of the four workloads on it, correct or
//! caching. The real thing, with deliberately wrong servers on PostgreSQL, is in
//! `tests/database.rs`.

use super::{Referee, RefereeError, Statements, World};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The tables and the statement counters, shared by the server and the referee.
#[derive(Debug, Default)]
pub struct Memory {
    world: World,
    fortunes: Vec<(i32, String)>,
    ran: Statements,
    marked: Statements,
    before: Option<(World, Vec<(i32, String)>)>,
    changes: i32,
}

/// The referee's view of a [`Memory`].
#[derive(Debug, Clone)]
pub struct MemoryReferee(pub Arc<Mutex<Memory>>);

pub const FORTUNES: [(i32, &str); 3] = [
    (1, "fortune: No such file or directory"),
    (11, "<script>alert(\"x\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

impl Memory {
    fn save(&mut self) {
        if self.before.is_none() {
            self.before = Some((self.world.clone(), self.fortunes.clone()));
        }
    }
}

impl Referee for MemoryReferee {
    fn world(&mut self) -> Result<World, RefereeError> {
        let mut m = self.0.lock().unwrap();
        m.save();
        Ok(m.world.clone())
    }
    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError> {
        let mut m = self.0.lock().unwrap();
        m.save();
        Ok(m.fortunes.clone())
    }
    fn change_world(&mut self) -> Result<World, RefereeError> {
        let mut m = self.0.lock().unwrap();
        m.save();
        m.changes += 1;
        let k = m.changes;
        for (id, n) in m.world.iter_mut() {
            *n = (id * 31 + k * 977) % 10_000 + 1;
        }
        Ok(m.world.clone())
    }
    fn change_fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError> {
        let mut m = self.0.lock().unwrap();
        m.save();
        m.fortunes.push((13, "Added by verify".into()));
        m.fortunes[0].1 = "Changed by verify".into();
        Ok(m.fortunes.clone())
    }
    fn restore(&mut self) -> Result<(), RefereeError> {
        let mut m = self.0.lock().unwrap();
        if let Some((w, f)) = m.before.clone() {
            m.world = w;
            m.fortunes = f;
        }
        Ok(())
    }
    fn mark(&mut self) -> Result<(), RefereeError> {
        let mut m = self.0.lock().unwrap();
        m.marked = m.ran.clone();
        Ok(())
    }
    fn since_mark(&mut self) -> Result<Statements, RefereeError> {
        let m = self.0.lock().unwrap();
        let d = |f: fn(&Statements) -> u64| f(&m.ran) - f(&m.marked);
        Ok(Statements {
            world_single_reads: d(|s| s.world_single_reads),
            world_single_rows: d(|s| s.world_single_reads),
            world_updates: d(|s| s.world_updates),
            world_rows_updated: d(|s| s.world_rows_updated),
            fortune_reads: d(|s| s.fortune_reads),
            fortune_rows: d(|s| s.fortune_reads) * FORTUNES.len() as u64,
            ..Statements::default()
        })
    }
    fn server_connections(&mut self) -> Result<u32, RefereeError> {
        Ok(1)
    }
    fn pool(&self) -> Option<u32> {
        Some(1)
    }
}

/// A server on a fresh memory database; `caching` answers reads without counting them.
pub fn serve(caching: bool) -> (SocketAddr, MemoryReferee) {
    let world = (1..=10_000).map(|i| (i, (i * 7919) % 10_000 + 1)).collect();
    let fortunes = FORTUNES.iter().map(|(i, m)| (*i, (*m).into())).collect();
    let mem = Arc::new(Mutex::new(Memory {
        world,
        fortunes,
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
            m.ran.fortune_reads += u64::from(!caching);
            return ("text/html; charset=utf-8", page(&m.fortunes));
        }
    };
    let items: Vec<String> = rows.into_iter().map(row).collect();
    ("application/json", format!("[{}]", items.join(",")))
}

fn page(table: &[(i32, String)]) -> String {
    let mut rows = table.to_vec();
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
