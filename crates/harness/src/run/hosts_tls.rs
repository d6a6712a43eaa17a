//! `run --hosts` over TLS. The run's certificate is made for the server host's address (the
//! one the client hosts reach it at) and copied over ssh into a folder of the run's own on each
//! host, removed when the run ends or its controller dies (serverbench_hosts::files): the
//! certificate and its key on the server host, whose `serve` hands them to servers as
//! `TLS_CERT` and `TLS_KEY`; the certificate alone on each client host, whose load trusts it
//! with `--cacert`. The key goes nowhere else, and nothing runs with `-k`.

use super::errors::HostsError;
use crate::certs::TlsFiles;
use serverbench_hosts::{Host, RemoteDir, Transport};
use std::path::{Path, PathBuf};

/// The run's certificate, here and on the hosts.
#[derive(Debug)]
pub struct HostsTls {
    /// The certificate on this machine (the quick check trusts it from here).
    pub local_cert: PathBuf,
    /// The certificate and key on the server host.
    pub server: TlsFiles,
    /// The certificate on each client host, in the order of the run's client hosts.
    pub clients: Vec<PathBuf>,
    /// The folders holding them; dropping them removes the folders.
    _dirs: Vec<RemoteDir>,
}

impl HostsTls {
    /// Copies `local`, made for the server host's address, to `server` (certificate and key)
    /// and to each of `clients` (the certificate), over `transport`.
    pub fn copy(
        transport: &Transport,
        server: &Host,
        clients: &[Host],
        local: &TlsFiles,
    ) -> Result<HostsTls, HostsError> {
        let h = transport;
        let read = |p: &Path| {
            std::fs::read(p).map_err(|source| HostsError::ReadCert {
                path: p.to_path_buf(),
                source,
            })
        };
        let (cert, key) = (read(&local.cert)?, read(&local.key)?);
        let mut dirs = Vec::new();
        let dir = make_dir(h, server)?;
        let server = TlsFiles {
            cert: put(h, &dir, "cert.pem", &cert)?,
            key: put(h, &dir, "key.pem", &key)?,
        };
        dirs.push(dir);
        let mut copies = Vec::new();
        for host in clients {
            let dir = make_dir(h, host)?;
            copies.push(put(h, &dir, "cert.pem", &cert)?);
            dirs.push(dir);
        }
        Ok(HostsTls {
            local_cert: local.cert.clone(),
            server,
            clients: copies,
            _dirs: dirs,
        })
    }
}

#[cfg(test)]
impl HostsTls {
    /// Copies that `copy` would have made, without any folder to remove.
    pub(super) fn without_folders(
        local_cert: PathBuf,
        server: TlsFiles,
        clients: Vec<PathBuf>,
    ) -> HostsTls {
        HostsTls {
            local_cert,
            server,
            clients,
            _dirs: Vec::new(),
        }
    }
}

fn make_dir(t: &Transport, host: &Host) -> Result<RemoteDir, HostsError> {
    RemoteDir::create(t, host).map_err(HostsError::CopyCert)
}

fn put(t: &Transport, dir: &RemoteDir, name: &str, bytes: &[u8]) -> Result<PathBuf, HostsError> {
    dir.put(t, name, bytes)
        .map(PathBuf::from)
        .map_err(HostsError::CopyCert)
}
