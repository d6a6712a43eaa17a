//! `serverbench serve` (not written yet).

/// Arguments of `serverbench serve`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench serve`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench serve` is not implemented yet")
}
