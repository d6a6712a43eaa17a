//! `serverbench verify` (not written yet).

/// Arguments of `serverbench verify`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench verify`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench verify` is not implemented yet")
}
