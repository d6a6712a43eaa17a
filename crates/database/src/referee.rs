//! The referee's role ([`REFEREE_USER`]): made once per cluster with a password of its own
//! (mode 0600 in the cache), a superuser so that it may read every role's statements, change
//! `world` and `fortune` behind a server's back and put them back. serverbench's snapshots and
//! verify's reads run as this role, so a server's statements are told from ours by `userid`.

use crate::init::{new_password, write_private};
use crate::layout::Layout;
use crate::{process, DbError, DbUrl, Result, REFEREE_USER};
use postgres::Client;

/// The referee's password: read from the cache, or the role made (on the running postmaster,
/// or on one started for it with `start`) and its password written.
pub(crate) fn ensure(
    layout: &Layout,
    admin: &DbUrl,
    start: impl FnOnce() -> Result<crate::RunningDb>,
) -> Result<String> {
    let file = layout.referee_password_file();
    if let Ok(p) = std::fs::read_to_string(&file) {
        if !p.trim().is_empty() {
            return Ok(p.trim().to_owned());
        }
    }
    let password = new_password()?;
    let mut admin = admin.clone();
    admin.dbname = "postgres".into();
    match process::read_postmaster_pid(&layout.data()) {
        Some(pm) => {
            admin.port = pm.port;
            let mut c = crate::connect(&admin)?;
            create_role(&mut c, &admin, &password)?;
            // The new pg_hba.conf (written by prepare) lets the role in.
            query(&mut c, &admin, "SELECT pg_reload_conf()")?;
        }
        None => {
            let running = start()?;
            admin.port = running.url().port;
            let made =
                crate::connect(&admin).and_then(|mut c| create_role(&mut c, &admin, &password));
            running.stop()?;
            made?;
        }
    }
    write_private(&file, &password)?;
    Ok(password)
}

fn create_role(c: &mut Client, url: &DbUrl, password: &str) -> Result<()> {
    let exists = c
        .query_opt(
            "SELECT 1 FROM pg_roles WHERE rolname = $1",
            &[&REFEREE_USER],
        )
        .map_err(|source| DbError::Query {
            url: url.to_string(),
            source,
        })?
        .is_some();
    // The password is 48 hex digits: nothing to escape.
    let verb = if exists { "ALTER" } else { "CREATE" };
    let sql = format!(
        "{verb} ROLE {REFEREE_USER} LOGIN SUPERUSER PASSWORD '{password}'; \
         GRANT ALL ON DATABASE hello_world TO {REFEREE_USER}"
    );
    query(c, url, &sql)?;
    Ok(())
}

fn query(c: &mut Client, url: &DbUrl, sql: &str) -> Result<()> {
    c.batch_execute(sql).map_err(|source| DbError::Query {
        url: url.to_string(),
        source,
    })
}
