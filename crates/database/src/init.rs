//! Making a cluster: PostgreSQL installed, older schema versions removed, `initdb` as the
//! `postgres` user with a generated password, files written with the owner and mode they need.

use crate::layout::Layout;
use crate::process;
use crate::{DbError, Result, DB_USER, PACKAGES, PG_BIN};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) fn ensure_installed(install: bool) -> Result<()> {
    let missing = serverbench_provision::missing_packages(&PACKAGES);
    if missing.is_empty() || !install {
        return program("postgres").map(drop);
    }
    serverbench_provision::install(
        &PACKAGES,
        serverbench_provision::Update::OnFailure,
        &mut |_| {},
    )
    .map_err(|source| DbError::NotInstallable {
        package: missing.join(" "),
        source,
    })?;
    program("postgres").map(drop)
}

/// `program`, pinned with `taskset -c CPUS` when `cpus` is not empty (so is every process it
/// starts); the postmaster and pgbench both start this way.
pub(crate) fn pinned(program: &Path, cpus: &[usize]) -> Command {
    if cpus.is_empty() {
        return Command::new(program);
    }
    let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
    let mut c = Command::new("taskset");
    c.args(["-c", &list.join(",")]).arg(program);
    c
}

pub(crate) fn program(name: &str) -> Result<PathBuf> {
    let p = Path::new(PG_BIN).join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(DbError::MissingProgram(p))
    }
}

/// Removes `postgres/<n>` folders of older schema versions (stopping their postmaster).
pub(crate) fn remove_old_versions(cache: &Path) -> Result<()> {
    let Ok(entries) = fs::read_dir(cache.join("postgres")) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(v) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // A newer version's cluster belongs to a newer serverbench: left alone.
        if v >= crate::SCHEMA_VERSION {
            continue;
        }
        let old = Layout {
            dir: e.path(),
            home: old_home(&e.path()),
            moved: None,
        };
        if let Some(pm) = process::read_postmaster_pid(&old.data()) {
            process::stop(pm.pid, None)?;
        }
        for d in [&old.home, &old.dir] {
            if d.exists() {
                fs::remove_dir_all(d).map_err(DbError::io(d))?;
            }
        }
    }
    Ok(())
}

/// Where an old version's data is: in its folder, or where its `home` file points.
pub(crate) fn old_home(dir: &Path) -> PathBuf {
    match fs::read_to_string(dir.join("home")) {
        Ok(h) if !h.trim().is_empty() => PathBuf::from(h.trim()),
        _ => dir.to_owned(),
    }
}

/// initdb as the postgres user, with the role's new password (mode 0600 in the cache; a copy
/// for initdb in the data's home, owned by postgres, removed right after).
pub(crate) fn init(layout: &Layout) -> Result<()> {
    let password = new_password()?;
    let pw = layout.password_file();
    write_private(&pw, &password)?;
    let home_file = layout.dir.join("home");
    fs::write(&home_file, layout.home.display().to_string()).map_err(DbError::io(&home_file))?;
    let pwfile = layout.home.join("initdb.pw");
    write_private(&pwfile, &password)?;
    process::give_to_postgres(&pwfile, 0o600)?;
    let mut cmd = Command::new(program("initdb")?);
    cmd.arg("-D")
        .arg(layout.data())
        .args([
            "-U",
            DB_USER,
            "-A",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
        ])
        .args(["--no-instructions", "--pwfile"])
        .arg(&pwfile);
    if let Some((uid, gid)) = process::postgres_ids()? {
        cmd.uid(uid).gid(gid);
    }
    let out = cmd
        .current_dir(&layout.home)
        .stdin(Stdio::null())
        .output()
        .map_err(DbError::io(PG_BIN));
    let _ = fs::remove_file(&pwfile);
    let out = out?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(DbError::Step {
            step: format!("initdb -D {}", layout.data().display()),
            detail: err.lines().last().unwrap_or("").to_owned(),
        });
    }
    let conf = layout.data().join("postgresql.conf");
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(&conf)
        .map_err(DbError::io(&conf))?;
    writeln!(f, "\ninclude 'serverbench.conf'").map_err(DbError::io(&conf))
}

pub(crate) fn read_password(layout: &Layout) -> Result<String> {
    let p = layout.password_file();
    fs::read_to_string(&p)
        .map(|s| s.trim().to_owned())
        .map_err(DbError::io(p))
}

/// 24 random bytes as 48 hex digits (no character that needs escaping anywhere).
pub(crate) fn new_password() -> Result<String> {
    let mut bytes = [0u8; 24];
    let mut f = fs::File::open("/dev/urandom").map_err(DbError::io("/dev/urandom"))?;
    std::io::Read::read_exact(&mut f, &mut bytes).map_err(DbError::io("/dev/urandom"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

pub(crate) fn write_private(path: &Path, text: &str) -> Result<()> {
    let _ = fs::remove_file(path);
    let mut f = fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(DbError::io(path))?;
    f.write_all(text.as_bytes()).map_err(DbError::io(path))
}

pub(crate) fn write_owned(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(DbError::io(path))?;
    process::give_to_postgres(path, 0o600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_password_is_48_hex_digits_and_differs_each_time() {
        let (a, b) = (new_password().unwrap(), new_password().unwrap());
        assert_eq!(a.len(), 48);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_cpu_list_is_given_as_taskset_takes_it() {
        let unpinned = pinned(Path::new("/bin/postgres"), &[]);
        assert_eq!(unpinned.get_program(), "/bin/postgres");
        let cmd = pinned(Path::new("/bin/postgres"), &[0, 2]);
        assert_eq!(cmd.get_program(), "taskset");
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["-c", "0,2", "/bin/postgres"]);
    }
}
