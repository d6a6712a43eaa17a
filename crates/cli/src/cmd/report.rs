//! `serverbench report` (not written yet).

/// Arguments of `serverbench report`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench report`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench report` is not implemented yet")
}
