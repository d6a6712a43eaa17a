//! `serverbench load` (not written yet).

/// Arguments of `serverbench load`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench load`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench load` is not implemented yet")
}
