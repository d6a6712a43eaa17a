//! serverbench's shared model: the types every crate passes around, with no I/O and no
//! networking (no mio, no rustls), so reports and analysis build without the load generator.
//!
//! - [`answers`]: whether a load's server answered (no answer, outnumbered, stall);
//! - [`result`]: the load result schema (`spec/load-result.schema.json`): the common figures,
//!   one protocol block per [`Workload`] with its exact merge, and [`histo`] its HdrHistogram
//!   V2 codec;
//! - [`duration`]: the one duration grammar; [`cpus`]: CPU lists (`0-3,5`);
//! - [`Workload`]: which protocol driver a load runs (one variant per driver);
//! - [`Mode`], [`Transport`] ([`Protocol`], [`TlsResume`]) and [`Tool`]: what a lap runs;
//! - [`spec::LoadSpec`]: one load, described once, every rule about it checked once
//!   ([`spec::LoadSpec::validate`]), and built for a lap from a scenario's [`spec::Work`] and
//!   [`Transport`] ([`spec::LoadSpec::lap`]); [`suite::Suite`]: the suites, parsed and checked,
//!   as `env.json` records them.

pub mod answers;
pub mod capacity;
pub mod cpus;
pub mod disturbance;
pub mod doctor;
pub mod duration;
pub mod failure;
mod feature;
pub mod histo;
pub mod io;
pub mod live;
mod method;
pub mod mix;
pub mod result;
mod silence;
pub mod size;
pub mod slo;
pub mod spec;
pub mod suite;
pub mod toml_pos;
mod tool;
pub mod transport;
mod workload;

pub use cpus::{parse_cpu_list, BadCpuList, CpuList};
pub use duration::{format_duration, parse_duration, BadDuration};
pub use failure::{FailureKind, LapFailure};
pub use feature::Feature;
pub use io::{BadIo, Io, IoBackend};
pub use method::{BadMethod, Method};
pub use mix::{Mix, MixEntry, MixError};
pub use result::{LoadResult, Mode};
pub use size::{parse_size, BadSize, SizeRange};
pub use slo::Slo;
pub use spec::{BadTlsVersion, LoadSpec, TlsVersion};
pub use tool::{BadTool, Tool};
pub use transport::{BadTlsResume, Protocol, TlsResume, Transport};
pub use workload::Workload;
