//! Importing a results folder: its testbed (from `env.json`), its source (git commit, branch,
//! dirty flag), the run, and every cell with its successful laps, medians, intervals and merged
//! latency histogram. One transaction per folder: a killed import leaves nothing half-written.
//!
//! Idempotent: a run is known by its folder's name and first lap, so importing a folder again
//! changes nothing, and importing it after more laps finished replaces its cells.

use crate::db::{History, HistoryError};
use crate::series::{CellKey, CellStats, LapSeries};
use rusqlite::{params, OptionalExtension, Transaction};
use serverbench_analysis::figure;
use serverbench_model::histo;
use serverbench_results::env::Env;
use serverbench_results::record::{LapRecord, LapStatus};
use serverbench_results::{load_laps, read_env};
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// The source a run measured; fields given here win over `env.json`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The commit (`--commit`, or the checkout's).
    pub commit: Option<String>,
    /// The branch (`--branch`, or the checkout's).
    pub branch: Option<String>,
    /// Uncommitted changes.
    pub dirty: Option<bool>,
}

/// What an import did with a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportOutcome {
    /// A new run.
    Added,
    /// The run was known with fewer laps: its cells were replaced.
    Updated,
    /// The run was known with the same laps.
    Unchanged,
}

/// The result of importing one folder.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    /// The folder.
    pub dir: PathBuf,
    /// The run's id in the history.
    pub run: i64,
    /// What happened.
    pub outcome: ImportOutcome,
    /// Cells and successful laps recorded.
    pub cells: usize,
    pub laps: usize,
    /// What was left out, one short line each (failed laps, a cut-short last line, no env.json).
    pub skipped: Vec<String>,
}

/// One cell's successful laps.
#[derive(Default)]
struct CellLaps {
    settings: String,
    laps: Vec<LapRow>,
    histograms: Vec<String>,
}

/// One lap's row of the `laps` table.
struct LapRow {
    lap: u32,
    rps: Option<f64>,
    p99_us: Option<f64>,
    cpu_us: Option<f64>,
    requests: Option<u64>,
}

impl History {
    /// Imports the results folder `dir` (see the module comment).
    pub fn import(&mut self, dir: &Path, source: &Source) -> Result<ImportReport, HistoryError> {
        let folder = |e: &dyn std::fmt::Display| HistoryError::Folder(e.to_string());
        let loaded = load_laps(dir).map_err(|e| folder(&e))?;
        let env = read_env(dir).map_err(|e| folder(&e))?;
        let mut skipped = Vec::new();
        if loaded.partial_tail {
            skipped.push("a cut-short last line of results.jsonl (a lap in progress)".into());
        }
        if env.is_none() {
            skipped.push("no env.json: testbed unknown".into());
        }
        let records = &loaded.records;
        let failed = records.iter().filter(|r| r.status != LapStatus::Ok).count();
        if failed > 0 {
            skipped.push(format!("{failed} failed lap(s)"));
        }
        let cells = group_cells(records, &mut skipped);
        let first = &records[0];
        let name = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let uid = format!("{name}@{}", first.started_at);
        let laps: usize = cells.values().map(|c| c.laps.len()).sum();
        let env = env.unwrap_or_default();
        let run = RunRow {
            uid,
            dir: dir.display().to_string(),
            suite: first.suite.clone(),
            settings: hash_text(
                &env.suite
                    .as_ref()
                    .map_or("null".into(), |s| s.settings_json()),
            ),
            version: env.serverbench_version.clone(),
            started_at: env
                .started_at
                .clone()
                .unwrap_or_else(|| first.started_at.clone()),
            commit: source.commit.clone().or(env.git.commit.clone()),
            branch: source.branch.clone(),
            dirty: source.dirty.or(env.git.dirty),
            laps,
        };
        let path = self.path.clone();
        let sql = |e| HistoryError::Sql {
            path: path.clone(),
            source: e,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        let known: Option<(i64, i64)> = tx
            .query_row(
                "SELECT id, laps FROM runs WHERE uid = ?1",
                [&run.uid],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql)?;
        let outcome = match known {
            Some((id, n)) if n as usize == laps => {
                return Ok(ImportReport {
                    dir: dir.to_path_buf(),
                    run: id,
                    outcome: ImportOutcome::Unchanged,
                    cells: cells.len(),
                    laps,
                    skipped,
                })
            }
            Some((id, _)) => {
                tx.execute("DELETE FROM runs WHERE id = ?1", [id])
                    .map_err(sql)?;
                ImportOutcome::Updated
            }
            None => ImportOutcome::Added,
        };
        let testbed = insert_testbed(&tx, &env).map_err(sql)?;
        let run_id = insert_run(&tx, &run, testbed).map_err(sql)?;
        for (key, c) in &cells {
            insert_cell(&tx, run_id, key, c).map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(ImportReport {
            dir: dir.to_path_buf(),
            run: run_id,
            outcome,
            cells: cells.len(),
            laps,
            skipped,
        })
    }
}

struct RunRow {
    uid: String,
    dir: String,
    suite: String,
    settings: String,
    version: Option<String>,
    started_at: String,
    commit: Option<String>,
    branch: Option<String>,
    dirty: Option<bool>,
    laps: usize,
}

/// The successful laps by cell; laps without a measurement are counted in `skipped`.
fn group_cells(records: &[LapRecord], skipped: &mut Vec<String>) -> BTreeMap<CellKey, CellLaps> {
    let mut cells: BTreeMap<CellKey, CellLaps> = BTreeMap::new();
    let mut unmeasured = 0;
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some(m) = &r.load else {
            unmeasured += 1;
            continue;
        };
        let rps = m.rps.or_else(|| {
            let d = m.duration_s.filter(|d| *d > 0.0)?;
            Some(m.requests? as f64 / d)
        });
        let transport = match r.params.transport_label() {
            t if t.is_empty() => "h1".to_string(),
            t => t,
        };
        let key = CellKey {
            server: r.server.clone(),
            scenario: r.scenario.clone(),
            profile: r.profile.clone(),
            transport,
        };
        let cell = cells.entry(key).or_default();
        let tool = serde_json::to_string(&r.tool).unwrap_or_default();
        cell.settings = hash_text(&format!("[{tool},{}]", r.params.settings_json()));
        cell.laps.push(LapRow {
            lap: r.lap,
            rps: rps.filter(|x| x.is_finite()),
            p99_us: m.latency_us.p99.filter(|x| x.is_finite()),
            cpu_us: cost(r),
            requests: m.requests,
        });
        if let Some(h) = &m.histograms {
            cell.histograms.push(h.latency_us.clone());
        }
    }
    if unmeasured > 0 {
        skipped.push(format!("{unmeasured} lap(s) without a measurement"));
    }
    cells
}

/// The lap's CPU µs per request, server's tree plus database's, where it answers the cost
/// question (see [`crate::Measure::Cpu`]): a lap at a fixed rate, or a capacity search (whose
/// server figure is its capacity step's).
fn cost(r: &LapRecord) -> Option<f64> {
    let open_loop = r.params.rate.is_some() || r.params.find_max.is_some();
    open_loop.then(|| figure::lap_cost(r))?
}

/// FNV-1a of the value's JSON, in hex: equal settings, equal hash.
fn hash_json<T: serde::Serialize>(value: &T) -> String {
    hash_text(&serde_json::to_string(value).unwrap_or_default())
}

/// FNV-1a of a canonical JSON text (a lap's or a suite's settings), in hex.
fn hash_text(text: &str) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

/// The machine as a fingerprint: CPU model, cores, kernel, governor and the hosts of a
/// multi-host run. Two runs share a testbed when all of these agree.
fn fingerprint(env: &Env) -> (String, Option<String>) {
    let hosts = env.hosts.as_ref().map(|h| {
        let mut names = vec![format!("server={}:{}", h.server.name, h.server.cpus)];
        names.extend(
            h.clients
                .iter()
                .map(|c| format!("client={}:{}", c.name, c.cpus)),
        );
        names.join(",")
    });
    let m = &env.machine;
    (hash_json(&(m, &hosts)), hosts)
}

fn insert_testbed(tx: &Transaction, env: &Env) -> rusqlite::Result<i64> {
    let (fp, hosts) = fingerprint(env);
    let m = &env.machine;
    tx.execute(
        "INSERT OR IGNORE INTO testbeds (fingerprint, cpu_model, cores, kernel, governor, hosts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            fp,
            m.cpu_model,
            m.cpus_available.map(|c| c as i64),
            m.kernel,
            m.governor,
            hosts
        ],
    )?;
    tx.query_row(
        "SELECT id FROM testbeds WHERE fingerprint = ?1",
        [fp],
        |r| r.get(0),
    )
}

fn insert_run(tx: &Transaction, run: &RunRow, testbed: i64) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (uid, dir, suite, settings_hash, version, started_at, testbed_id,
                           git_commit, branch, dirty, laps)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            run.uid,
            run.dir,
            run.suite,
            run.settings,
            run.version,
            run.started_at,
            testbed,
            run.commit,
            run.branch,
            run.dirty,
            run.laps as i64
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

fn insert_cell(tx: &Transaction, run: i64, key: &CellKey, c: &CellLaps) -> rusqlite::Result<()> {
    let laps = LapSeries {
        rps: c.laps.iter().filter_map(|l| l.rps).collect(),
        p99: c.laps.iter().filter_map(|l| l.p99_us).collect(),
        cpu: c.laps.iter().filter_map(|l| l.cpu_us).collect(),
    };
    let stats = CellStats::of(&laps, &key.to_string());
    let histogram = merged(&c.histograms);
    tx.execute(
        "INSERT INTO cells (run_id, server, scenario, profile, transport, settings_hash, stats,
                            histogram)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            run,
            key.server,
            key.scenario,
            key.profile,
            key.transport,
            c.settings,
            serde_json::to_string(&stats).unwrap_or_default(),
            histogram
        ],
    )?;
    let cell = tx.last_insert_rowid();
    let mut st = tx.prepare_cached(
        "INSERT OR REPLACE INTO laps (cell_id, lap, rps, p99_us, cpu_us, requests)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for l in &c.laps {
        st.execute(params![cell, l.lap, l.rps, l.p99_us, l.cpu_us, l.requests])?;
    }
    Ok(())
}

/// The exact merge of the laps' histograms, re-encoded (V2 compressed, base64); `None` when
/// there are none or one cannot be read.
fn merged(texts: &[String]) -> Option<String> {
    if texts.is_empty() {
        return None;
    }
    let h = histo::merge(texts.iter().map(String::as_str)).ok()?;
    Some(histo::encode(&h))
}
