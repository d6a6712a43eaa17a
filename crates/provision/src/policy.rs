//! `/usr/sbin/policy-rc.d` exiting 101 while packages install: Debian's maintainer scripts ask it
//! before starting a service (invoke-rc.d), and 101 means "action forbidden". Whatever was there
//! before (a file, or nothing) is put back when the guard drops.

use crate::ProvisionError;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where Debian's invoke-rc.d looks.
pub const POLICY_RC_PATH: &str = "/usr/sbin/policy-rc.d";

const DENY: &str =
    "#!/bin/sh\n# written by serverbench while installing packages: start no service\nexit 101\n";

/// While alive, services of packages being installed are not started; dropped, the previous
/// policy (or none) is restored.
#[derive(Debug)]
pub struct PolicyRc {
    path: PathBuf,
    previous: Option<(Vec<u8>, u32)>,
}

impl PolicyRc {
    /// Writes the deny policy at [`POLICY_RC_PATH`].
    pub fn deny_services() -> Result<PolicyRc, ProvisionError> {
        PolicyRc::deny_at(Path::new(POLICY_RC_PATH))
    }

    /// Writes the deny policy at `path` (tests use a temporary file).
    pub fn deny_at(path: &Path) -> Result<PolicyRc, ProvisionError> {
        let err = |source| ProvisionError::Policy {
            path: path.display().to_string(),
            source,
        };
        let previous = match fs::read(path) {
            Ok(bytes) => {
                let mode = fs::metadata(path).map_err(err)?.permissions().mode();
                Some((bytes, mode))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err(e)),
        };
        fs::write(path, DENY).map_err(err)?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(err)?;
        Ok(PolicyRc {
            path: path.to_owned(),
            previous,
        })
    }
}

impl Drop for PolicyRc {
    fn drop(&mut self) {
        match &self.previous {
            Some((bytes, mode)) => {
                let _ = fs::write(&self.path, bytes);
                let _ = fs::set_permissions(&self.path, fs::Permissions::from_mode(*mode));
            }
            None => {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_denies_while_alive_and_leaves_nothing_when_there_was_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("policy-rc.d");
        {
            let _g = PolicyRc::deny_at(&p).unwrap();
            assert!(fs::read_to_string(&p).unwrap().ends_with("exit 101\n"));
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o755
            );
        }
        assert!(!p.exists());
    }

    #[test]
    fn a_previous_policy_is_restored_with_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("policy-rc.d");
        fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o700)).unwrap();
        drop(PolicyRc::deny_at(&p).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "#!/bin/sh\nexit 0\n");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
}
